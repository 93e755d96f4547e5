//! The vector loop against the reference interpreter, bit for bit: every expression form the
//! vectorizer accepts (and some it must refuse), at row lengths that leave every possible
//! remainder for the scalar loop, in float64 and float32.

use ndarray::ArrayD;
use pytato_backend_cranelift::{Cranelift, kernels_split};
use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, Dim, Scalar, s};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

fn values(shape: &[usize], seed: usize, dtype: DType) -> ArrayData {
    let n: usize = shape.iter().product();
    // Mixed signs, a zero and a NaN now and then: enough to tell operations apart. Each value is
    // off the grid of eighths by a factor 1 + j / 1024 (j < 64), so that sums and products round
    // and an addition out of order changes the bits.
    let v = (0..n).map(move |i| {
        let k = (i * 7919 + seed * 104_729) % 97;
        let wobble = 1.0 + ((i * 31 + seed * 17) % 64) as f64 / 1024.0;
        Scalar::F64(if k == 13 { f64::NAN } else { (k as f64 - 40.0) / 8.0 * wobble })
    });
    ArrayData::from_scalars(dtype, shape, v).expect("float data")
}

fn run(backend: &dyn Backend, e: &Array, inputs: &NamedData) -> pytato_core::Result<ArrayData> {
    Ok(backend.compile(&e.into())?.run(inputs)?.remove("_pt_out").expect("one output"))
}

/// Equal bit patterns (so NaN matches NaN), or, where the platform's libm may round a
/// transcendental function differently from the interpreter's single-precision one, within a few
/// units in the last place.
fn assert_agree(jit: &ArrayData, reference: &ArrayData, what: &str) {
    assert_eq!(jit.shape(), reference.shape(), "{what}");
    let ulp = if jit.dtype() == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
    for (k, (a, b)) in jit.to_scalars().into_iter().zip(reference.to_scalars()).enumerate() {
        let (a, b) = (a.to_f64(), b.to_f64());
        let same = a.to_bits() == b.to_bits() || (a - b).abs() <= 4.0 * ulp * a.abs().max(b.abs());
        assert!(same, "{what}: element {k}: {a} vs {b}");
    }
}

fn expressions(dtype: DType) -> Vec<(&'static str, Array)> {
    expressions_with(dtype, Dim::param("m"))
}

/// [`expressions`] with rows of length `m` (a size parameter, or a length known when compiling).
fn expressions_with(dtype: DType, m: Dim) -> Vec<(&'static str, Array)> {
    let n = Dim::param("n");
    let x = pt::placeholder("x", [n.clone(), m.clone()], dtype).unwrap();
    let y = pt::placeholder("y", [n, m.clone()], dtype).unwrap();
    let row = pt::placeholder("row", [m.clone()], dtype).unwrap();
    let idx = pt::placeholder("idx", [m], DType::I64).unwrap();
    let c = pt::placeholder("c", [3, 3], dtype).unwrap();
    vec![
        ("arithmetic", (&x * &y - &x / &(&y + 2.5)) * -&x),
        ("broadcast row", &x * &row + &row),
        ("functions", pt::sin(&x).unwrap() + pt::sqrt(&pt::abs(&y).unwrap()).unwrap() * pt::floor(&x).unwrap()),
        ("binary helpers", pt::floor_divide(&x, &y).unwrap() + pt::remainder(&x, &y).unwrap()),
        ("power", pt::power(pt::abs(&x).unwrap(), &y).unwrap()),
        ("max and min", pt::maximum(&x, &y).unwrap() - pt::minimum(&x, 0.5).unwrap()),
        ("where", pt::where_(pt::greater(&x, &y).unwrap(), &x, &(&y * 2.0)).unwrap()),
        ("isnan", pt::where_(pt::isnan(&x).unwrap(), &y, &x).unwrap()),
        ("shifted", x.index(s![.., 1..]).unwrap() - x.index(s![.., ..-1]).unwrap()),
        ("reversed", x.index(s![.., ..;-1]).unwrap() + &x),
        ("rolled", pt::roll(&x, 2, Some(1)).unwrap() * &y),
        ("gather", x.index(s![.., &idx]).unwrap() + &y),
        // A factor computed inline keeps these products on the loop nest (stored operands make
        // them contractions, which the GEMM sums in its own order: `tests/gemm.rs`).
        ("sum over rows", pt::sum(&(&(&x * 2.0) * &y), 0).unwrap()),
        ("matmul", pt::einsum("ij,jk->ik", &[&pt::transpose(&(&x * 2.0), None).unwrap(), &y]).unwrap()),
        ("transposed", pt::transpose(&(&x + 1.0), None).unwrap()),
        // Padding reads out of range in the branch not taken: must not be vectorized unsafely.
        ("pad", pt::pad(&x, (1, 2), 0.0).unwrap() * 3.0),
        ("small constant matrix", pt::einsum("ij,jk->ik", &[&c, &c]).unwrap()),
    ]
}

fn inputs(n: usize, m: usize, dtype: DType) -> NamedData {
    let idx: ArrayD<i64> = ArrayD::from_shape_fn(vec![m], |i| ((i[0] * 5 + 3) % m) as i64 - (m as i64) / 2);
    NamedData::from([
        ("x".to_string(), values(&[n, m], 1, dtype)),
        ("y".to_string(), values(&[n, m], 2, dtype)),
        ("row".to_string(), values(&[m], 3, dtype)),
        ("idx".to_string(), ArrayData::from(idx)),
        ("c".to_string(), values(&[3, 3], 4, dtype)),
    ])
}

#[test]
fn vector_loops_compute_what_the_interpreter_computes() {
    for dtype in [DType::F64, DType::F32] {
        for (name, e) in expressions(dtype) {
            let program = Cranelift::new().with_threads(1).compile(&(&e).into()).unwrap();
            for (n, m) in [(1, 1), (2, 2), (3, 3), (2, 5), (3, 6), (2, 7), (4, 9), (1, 16), (3, 17), (2, 33), (1, 40)] {
                let names = program.input_names();
                let data: NamedData = inputs(n, m, dtype).into_iter().filter(|(k, _)| names.contains(k)).collect();
                let jit = program.run(&data).unwrap().remove("_pt_out").unwrap();
                let reference = run(&Interpreter, &e, &data).unwrap();
                assert_agree(&jit, &reference, &format!("{name} ({dtype}) at {n}x{m}"));
            }
        }
    }
}

/// Rows of a length known when compiling and at most 32 elements are unrolled (their index a
/// constant in every address; whole vectors first, then single elements): every expression form
/// above at every such length (and one more), bit for bit with the interpreter, and an index array with a value
/// out of range is still an `IndexOutOfBounds` error.
#[test]
fn unrolled_rows_compute_what_the_interpreter_computes() {
    for dtype in [DType::F64, DType::F32] {
        for m in 1..=33 {
            for (name, e) in expressions_with(dtype, Dim::new(m as i64)) {
                let program = Cranelift::new().with_threads(1).compile(&(&e).into()).unwrap();
                let names = program.input_names();
                for n in [1, 3, 7] {
                    let data: NamedData = inputs(n, m, dtype).into_iter().filter(|(k, _)| names.contains(k)).collect();
                    let jit = program.run(&data).unwrap().remove("_pt_out").unwrap();
                    let reference = run(&Interpreter, &e, &data).unwrap();
                    assert_agree(&jit, &reference, &format!("{name} ({dtype}) at {n}x{m}, m known"));
                }
                if names.iter().any(|k| k == "idx") {
                    let mut data: NamedData =
                        inputs(3, m, dtype).into_iter().filter(|(k, _)| names.contains(k)).collect();
                    let bad = ArrayD::from_shape_fn(vec![m], |i| if i[0] + 1 == m { m as i64 } else { 0 });
                    data.insert("idx".to_string(), ArrayData::from(bad));
                    let error = program.run(&data).unwrap_err();
                    assert_eq!(error.kind(), "IndexOutOfBounds", "{name} at 3x{m}: {error}");
                    assert_eq!(run(&Interpreter, &e, &data).unwrap_err().kind(), "IndexOutOfBounds");
                }
            }
        }
    }
}

/// Values in [-1, 1) with 52 random bits (a xorshift generator): their sums round, so two
/// summation orders give different bits (the grid of `values` sums exactly in any order, and
/// its NaN every 97 elements makes every long column NaN).
fn inexact(shape: &[usize], seed: u64) -> ArrayData {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v = ArrayD::from_shape_simple_fn(shape, || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    });
    ArrayData::from(v)
}

/// Sums down the columns, which stream rows through the output in strips (as wide as the sum's
/// scratch allows: 6544 float64 elements for up to 127 rows, 5944 for 128 to 383, 5448 for 512
/// to 895) and flush block sums every 128 rows into the tree: every combination of whole and
/// partial strips and blocks, empty and single rows, a deeper tree (4099 rows: 33 blocks), bit
/// for bit with the interpreter on inexact values (so the order of every addition is checked);
/// on two threads, which split the row. (`sum(x * y, 0)` is a contraction: it runs through the
/// GEMM, see `tests/gemm.rs`.)
#[test]
fn column_sums_in_strips_compute_what_the_interpreter_computes() {
    let (n, m) = (Dim::param("n"), Dim::param("m"));
    let x = pt::placeholder("x", [n.clone(), m.clone()], DType::F64).unwrap();
    let y = pt::placeholder("y", [n, m], DType::F64).unwrap();
    let sums = [pt::sum(&(&(&x * 1.5) - &y), 0).unwrap(), pt::sum(&(&x - 0.5), 0).unwrap()];
    let split = kernels_split();
    for e in sums {
        for threads in [1, 2] {
            let program = Cranelift::new().with_threads(threads).compile(&(&e).into()).unwrap();
            let shapes = [
                (127, 255),
                (128, 1024),
                (129, 1025),
                (300, 600),
                (257, 513),
                (130, 2100),
                (260, 8200),
                (600, 12000),
                (1, 20000),
                (0, 7000),
                (127, 6545),
                (4099, 70),
            ];
            for (n, m) in shapes {
                let names = program.input_names();
                let data: NamedData = [("x", inexact(&[n, m], 1)), ("y", inexact(&[n, m], 2))]
                    .into_iter()
                    .filter(|(k, _)| names.iter().any(|name| name == k))
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
                let jit = program.run(&data).unwrap().remove("_pt_out").unwrap();
                let reference = run(&Interpreter, &e, &data).unwrap();
                let bits = |a: &ArrayData| a.to_scalars().iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&jit), bits(&reference), "column sums at {n}x{m} on {threads} threads");
            }
        }
    }
    assert!(kernels_split() > split, "the longest rows are split across threads");
}

/// `CodegenOptions::simd = false` compiles the scalar loop only: the same bits as the vector
/// loop for every expression form above, sums along their terms included (equal bits, not just
/// close: the vector path does the scalar path's operations in the same order).
#[test]
fn the_scalar_loop_alone_gives_the_vector_loops_bits() {
    use pytato_transform::kernel::CodegenOptions;
    let scalar = Cranelift::new().with_threads(1).with_codegen(CodegenOptions { simd: false, ..Default::default() });
    let vector = Cranelift::new().with_threads(1);
    let t = pt::placeholder("t", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let mut cases = expressions(DType::F64);
    cases.extend(expressions(DType::F32));
    cases.push(("sum along terms", pt::sum(&(&t * 1.5), 1).unwrap()));
    for (name, e) in cases {
        let (p, q) = (scalar.compile(&(&e).into()).unwrap(), vector.compile(&(&e).into()).unwrap());
        for (n, m) in [(1, 1), (3, 7), (2, 16), (3, 33), (2, 64)] {
            let names = p.input_names();
            let dtype = e.dtype();
            let mut data: NamedData = inputs(n, m, dtype).into_iter().filter(|(k, _)| names.contains(k)).collect();
            if names.iter().any(|k| k == "t") {
                data.insert("t".to_string(), values(&[n, m], 5, DType::F64));
            }
            let bits = |a: &ArrayData| a.to_scalars().iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
            let (a, b) = (p.run(&data).unwrap(), q.run(&data).unwrap());
            assert_eq!(bits(&a["_pt_out"]), bits(&b["_pt_out"]), "{name} ({dtype}) at {n}x{m}");
        }
    }
}
