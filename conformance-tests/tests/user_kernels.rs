//! User kernels (`pytato_core::user_kernel`) on every linked backend, inlined and outlined:
//! values from plain Rust loops written here, apart from the library.

use pytato_conformance::linked_backends as backends;
use pytato_core::expr::{BinaryOp, ReduceOp, ReductionBounds};
use pytato_core::function::InlineRule;
use pytato_core::user_kernel::{Statement, UserKernel};
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim, Error, Expr, Shape};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, WithInlineRule};

fn values(data: &ArrayData) -> Vec<f64> {
    data.to_scalars().iter().map(|s| s.to_f64()).collect()
}

fn sub(name: &str, indices: Vec<Expr>) -> Expr {
    Expr::subscript(name, indices)
}

fn bin(a: Expr, op: BinaryOp, b: Expr) -> Expr {
    Expr::binary(a, op, b)
}

/// An element-local operator, as a DG code applies one: `du[e, i] = sum_j D[i, j] * u[e, j]`,
/// then `flux[e] = du[e, n-1] - du[(e + 1) % E, 0]` (a neighbour's value by index arithmetic),
/// over symbolic sizes `E` (elements) and `n` (nodes per element).
fn element_kernel() -> UserKernel {
    let (e, n) = (Dim::param("E"), Dim::param("n"));
    let r0 = Expr::var("_r0");
    let product = bin(sub("D", vec![Expr::iname(1), r0.clone()]), BinaryOp::Mul, sub("u", vec![Expr::iname(0), r0]));
    let bounds = ReductionBounds { iname: "_r0".into(), lower: Dim::new(0), upper: n.clone() };
    let du = Expr::reduce(ReduceOp::Sum, vec![bounds], product);
    let last = bin(Expr::var("n"), BinaryOp::Sub, Expr::i64(1));
    let next = bin(bin(Expr::iname(0), BinaryOp::Add, Expr::i64(1)), BinaryOp::Rem, Expr::var("E"));
    let flux = bin(sub("du", vec![Expr::iname(0), last]), BinaryOp::Sub, sub("du", vec![next, Expr::i64(0)]));
    UserKernel::new(
        "element_op",
        vec![
            ("D", Shape::from(vec![n.clone(), n.clone()]), DType::F64),
            ("u", Shape::from(vec![e.clone(), n.clone()]), DType::F64),
        ],
        vec![Statement::new("du", vec![e.clone(), n], du), Statement::new("flux", vec![e], flux)],
        &["du", "flux"],
    )
    .unwrap()
}

#[test]
fn a_user_kernel_computes_its_statements_on_every_backend_inlined_and_outlined() {
    let kernel = element_kernel();
    let d = pt::placeholder("d", [Dim::param("n"), Dim::param("n")], DType::F64).unwrap();
    let u = pt::placeholder("u", [Dim::param("E"), Dim::param("n")], DType::F64).unwrap();
    let first = kernel.call(&[("D", &d), ("u", &u)]).unwrap();
    // The kernel's outputs feed the DAG, and the kernel runs again on a DAG value.
    let scaled = &first["du"] * 0.5;
    let second = kernel.call(&[("D", &d), ("u", &scaled)]).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("du", first["du"].clone()),
        ("flux", &first["flux"] + 1.0),
        ("flux2", second["flux"].clone()),
    ])
    .unwrap();
    // Inlined, each statement is a loop nest of its own, named after the kernel and the target.
    let inlined = pytato_core::function::inline_calls(&(&outputs).into()).unwrap();
    let program = pytato_transform::kernel::build_kernel_program(&inlined, Default::default()).unwrap();
    let names: Vec<&str> = program.buffers.iter().map(|b| &*b.name).collect();
    assert!(names.iter().any(|n| n.starts_with("element_op_du")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("element_op_flux")), "{names:?}");
    for (elements, nodes) in [(5usize, 3usize), (1, 1), (4, 2)] {
        let dm: Vec<f64> = (0..nodes * nodes).map(|k| (k as f64 * 0.7).sin()).collect();
        let um: Vec<f64> = (0..elements * nodes).map(|k| (k as f64 * 0.3).cos() - 0.2).collect();
        // The loops, written out.
        let apply = |u: &[f64]| -> (Vec<f64>, Vec<f64>) {
            let mut du = vec![0.0; elements * nodes];
            for e in 0..elements {
                for i in 0..nodes {
                    du[e * nodes + i] = (0..nodes).map(|j| dm[i * nodes + j] * u[e * nodes + j]).sum();
                }
            }
            let flux = (0..elements).map(|e| du[e * nodes + nodes - 1] - du[((e + 1) % elements) * nodes]).collect();
            (du, flux)
        };
        let (du, flux) = apply(&um);
        let half: Vec<f64> = du.iter().map(|v| v * 0.5).collect();
        let (_, flux2) = apply(&half);
        let data = NamedData::from([
            (
                "d".to_string(),
                ArrayData::from(ndarray::Array2::from_shape_vec((nodes, nodes), dm.clone()).unwrap().into_dyn()),
            ),
            (
                "u".to_string(),
                ArrayData::from(ndarray::Array2::from_shape_vec((elements, nodes), um.clone()).unwrap().into_dyn()),
            ),
        ]);
        let close = |got: &[f64], want: &[f64]| {
            got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 1e-12 * (1.0 + w.abs()))
        };
        for rule in [InlineRule::Always, InlineRule::Never] {
            for (name, backend) in backends() {
                let backend = WithInlineRule::new(backend, rule);
                let got = backend.compile(&(&outputs).into()).unwrap().run(&data).unwrap();
                let what = format!("{name}, {rule:?}, E={elements}, n={nodes}");
                assert!(close(&values(&got["du"]), &du), "{what}: du {:?} vs {du:?}", values(&got["du"]));
                let plus: Vec<f64> = flux.iter().map(|v| v + 1.0).collect();
                assert!(close(&values(&got["flux"]), &plus), "{what}: flux");
                assert!(close(&values(&got["flux2"]), &flux2), "{what}: flux2");
            }
        }
    }
}

#[test]
fn a_kernel_reading_out_of_range_is_an_index_error_on_every_backend() {
    // y[i] = x[i + 1]: reads past the end at the last element.
    let n = Dim::param("n");
    let shifted = sub("x", vec![bin(Expr::iname(0), BinaryOp::Add, Expr::i64(1))]);
    let kernel = UserKernel::new(
        "shift",
        vec![("x", Shape::from(vec![n.clone()]), DType::F64)],
        vec![Statement::new("y", vec![n], shifted)],
        &["y"],
    )
    .unwrap();
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let y = kernel.call(&[("x", &x)]).unwrap().remove("y").unwrap();
    let data =
        NamedData::from([("x".to_string(), ArrayData::from(ndarray::Array1::from(vec![1.0, 2.0, 3.0]).into_dyn()))]);
    for rule in [InlineRule::Always, InlineRule::Never] {
        for (name, backend) in backends() {
            let backend = WithInlineRule::new(backend, rule);
            let result = backend.compile(&(&y).into()).and_then(|p| p.run(&data));
            assert!(matches!(result, Err(Error::IndexOutOfBounds { .. })), "{name}, {rule:?}: {result:?}");
        }
    }
}

#[test]
fn index_arrays_of_every_integer_dtype_gather_on_every_backend() {
    // y[i] = x[idx[i]], idx of each integer dtype: meshmode's element numbers are int32, and
    // an index of a dtype other than the shader's index type once made invalid WGSL. An index
    // out of range is still an error.
    let (n, m) = (Dim::param("n"), Dim::param("m"));
    let x_values = [10.0, 20.0, 30.0, 40.0];
    let picks = [3i64, 0, 2, 2, 1];
    for dtype in [DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64] {
        let gather = sub("x", vec![sub("idx", vec![Expr::iname(0)])]);
        let kernel = UserKernel::new(
            "gather",
            vec![("x", Shape::from(vec![m.clone()]), DType::F64), ("idx", Shape::from(vec![n.clone()]), dtype)],
            vec![Statement::new("y", vec![n.clone()], gather)],
            &["y"],
        )
        .unwrap();
        let x = pt::placeholder("x", [m.clone()], DType::F64).unwrap();
        let idx = pt::placeholder("idx", [n.clone()], dtype).unwrap();
        let y = kernel.call(&[("x", &x), ("idx", &idx)]).unwrap().remove("y").unwrap();
        let inputs = |picks: &[i64]| {
            let as_dtype = picks.iter().map(|&p| pytato_core::Scalar::I64(p).cast(dtype));
            let idx = ArrayData::from_scalars(dtype, &[picks.len()], as_dtype).expect("one scalar per element");
            NamedData::from([
                ("x".to_string(), ArrayData::from(ndarray::Array1::from(x_values.to_vec()).into_dyn())),
                ("idx".to_string(), idx),
            ])
        };
        let expected: Vec<f64> = picks.iter().map(|&p| x_values[p as usize]).collect();
        for (name, backend) in backends() {
            let program = backend.compile(&(&y).into()).unwrap_or_else(|e| panic!("{name}, {dtype}: {e}"));
            let result = program.run(&inputs(&picks)).unwrap_or_else(|e| panic!("{name}, {dtype}: {e}"));
            assert_eq!(values(&result[pytato_runtime::backend::SINGLE_OUTPUT_NAME]), expected, "{name}, {dtype}");
            let out_of_range = program.run(&inputs(&[0, 4]));
            assert!(matches!(out_of_range, Err(Error::IndexOutOfBounds { .. })), "{name}, {dtype}: {out_of_range:?}");
        }
    }
}
