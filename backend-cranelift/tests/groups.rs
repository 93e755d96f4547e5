//! Launch groups (kernels over the same first axis compiled into one function and run row by
//! row): a Runge–Kutta stage's `k` and `u` updates run as one group, with the interpreter's bits
//! on 1, 2 and 3 threads and at every number of rows (none included); kernels that read another
//! row of an earlier kernel's output are not grouped, and give the interpreter's values too.

use ndarray::{ArrayD, Dimension};
use pytato_backend_cranelift::{Cranelift, grouped_kernels_run};
use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, s};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

/// Values with NaN, ±inf, -0.0 and a float64 subnormal among ordinary ones.
fn values(shape: &[usize], seed: usize) -> ArrayData {
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324];
    let a = ArrayD::from_shape_fn(ndarray::IxDyn(shape), |i: ndarray::IxDyn| {
        let flat = i.as_array_view().iter().fold(seed, |acc: usize, &k| acc * 31 + k);
        match flat % 41 {
            k @ 0..=4 => specials[k],
            k => (k as f64 - 20.0) / 7.0,
        }
    });
    ArrayData::from(a)
}

/// Runs `outputs` on every backend configuration and compares every output with the
/// interpreter's, bit for bit.
fn assert_like_interpreter(outputs: &DictOfNamedArrays, inputs: &NamedData, what: &str) {
    let reference = Interpreter.compile(&outputs.into()).unwrap().run(inputs).unwrap();
    for threads in [1, 2, 3] {
        let program = Cranelift::new().with_threads(threads).compile(&outputs.into()).unwrap();
        let got = program.run(inputs).unwrap();
        for (name, expected) in &reference {
            let (a, b) = (got[name].to_scalars(), expected.to_scalars());
            assert_eq!(got[name].shape(), expected.shape(), "{what}: {name}");
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(x.to_f64().to_bits(), y.to_f64().to_bits(), "{what}: {name}[{k}] on {threads} threads");
            }
        }
    }
}

/// A low-storage Runge–Kutta stage on `(e, 5, 4)` fields: `k ← αk + f(u)`, `u ← u + βk`, and a
/// third output reading `k` reversed along the rows (another element of the same first index).
fn stage() -> DictOfNamedArrays {
    let shape = [Dim::param("e"), Dim::new(5), Dim::new(4)];
    let u = pt::placeholder("u", shape.clone(), DType::F64).unwrap();
    let k = pt::placeholder("k", shape, DType::F64).unwrap();
    let d = pt::placeholder("d", [5, 5], DType::F64).unwrap();
    let alpha = pt::placeholder("alpha", pytato_core::Shape::scalar(), DType::F64).unwrap();
    let rhs = pt::einsum("ij,ejk->eik", &[&d, &u]).unwrap() - pt::maximum(&u, 0.5).unwrap();
    let k_next = &(&alpha * &k) + &(0.25 * &rhs);
    let u_next = &u + &(-0.5 * &k_next);
    let flipped = k_next.index(s![.., ..;-1, ..]).unwrap() * &u_next;
    DictOfNamedArrays::new([("k", k_next), ("u", u_next), ("flipped", flipped)]).unwrap()
}

fn stage_inputs(e: usize) -> NamedData {
    NamedData::from([
        ("u".to_string(), values(&[e, 5, 4], 1)),
        ("k".to_string(), values(&[e, 5, 4], 2)),
        ("d".to_string(), values(&[5, 5], 3)),
        ("alpha".to_string(), ArrayData::from(ArrayD::from_elem(vec![], -0.75))),
    ])
}

#[test]
fn a_stage_runs_as_one_group_with_the_interpreters_bits() {
    let outputs = stage();
    for e in [0, 1, 2, 7, 64, 1000] {
        assert_like_interpreter(&outputs, &stage_inputs(e), &format!("stage on {e} elements"));
    }
    // The counter is the process's, and the other tests here run beside this one: 50 runs of
    // three grouped kernels each are more than all of theirs together (a few dozen).
    let program = Cranelift::new().with_threads(1).compile(&(&outputs).into()).unwrap();
    let inputs = stage_inputs(3);
    let before = grouped_kernels_run();
    for _ in 0..50 {
        program.run(&inputs).unwrap();
    }
    assert!(grouped_kernels_run() >= before + 150, "k, u and the flipped product run as one group");
}

/// A kernel reading another first index of an earlier kernel's output (rolled along the first
/// axis, or all rows summed) needs that kernel finished everywhere: not grouped, and the values
/// are the interpreter's on every thread count (a grouped run would read rows not yet written).
#[test]
fn kernels_reading_other_rows_are_not_grouped() {
    let shape = [Dim::param("n"), Dim::new(3)];
    let x = pt::placeholder("x", shape, DType::F64).unwrap();
    let first = pt::exp(&x).unwrap() + 1.0;
    let rolled = pt::roll(&first, 1, Some(0)).unwrap() * &x;
    let totals = pt::sum(&first, 0).unwrap();
    let broadcast = &x - &totals;
    let rolled_after = DictOfNamedArrays::new([("first", first.clone()), ("rolled", rolled)]).unwrap();
    let summed_after = DictOfNamedArrays::new([("first", first), ("broadcast", broadcast)]).unwrap();
    for n in [1, 2, 5, 33, 4096] {
        let inputs = NamedData::from([("x".to_string(), values(&[n, 3], 4))]);
        assert_like_interpreter(&rolled_after, &inputs, &format!("rolled, {n} rows"));
        assert_like_interpreter(&summed_after, &inputs, &format!("summed, {n} rows"));
    }
}

/// An index out of range in the second kernel of a group is the same error as without groups.
#[test]
fn an_index_out_of_range_in_a_group_is_an_error() {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::new(4)], DType::F64).unwrap();
    let idx = pt::placeholder("idx", [Dim::new(4)], DType::I64).unwrap();
    let first = &x * 2.0;
    let gathered: Array = first.index(s![.., &idx]).unwrap() + &x;
    let outputs = DictOfNamedArrays::new([("first", first), ("gathered", gathered)]).unwrap();
    let program = Cranelift::new().with_threads(1).compile(&(&outputs).into()).unwrap();
    let mut inputs = NamedData::from([
        ("x".to_string(), values(&[6, 4], 5)),
        ("idx".to_string(), ArrayData::from(ndarray::arr1(&[3_i64, -1, 0, 2]).into_dyn())),
    ]);
    assert_like_interpreter(&outputs, &inputs, "gather within the row");
    inputs.insert("idx".to_string(), ArrayData::from(ndarray::arr1(&[0_i64, 4, 0, 0]).into_dyn()));
    let error = program.run(&inputs).unwrap_err();
    assert_eq!(error.kind(), "IndexOutOfBounds", "{error}");
}
