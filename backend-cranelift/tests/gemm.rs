//! Matrix products that run through the GEMM (module `contraction`): every operand layout the
//! recognizer accepts, batched and not, float64, complex128 and (widened) float32 and complex64,
//! sizes 0, 1 and odd ones, on one thread and on two, against a triple loop written here, within
//! the classical error bound of a reordered sum of products; and special values against the
//! interpreter.

use ndarray::{ArrayD, Dimension, IxDyn};
use num_complex::Complex64;
use pytato_backend_cranelift::{Cranelift, gemm_kernels_run};
use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, Dim, Result, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

/// Held by each test while it reads the process-wide GEMM counter.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Deterministic values of both signs in [-1, 1) with inexact products (a xorshift generator).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn array(shape: &[usize], seed: u64, dtype: DType) -> ArrayData {
    let n: usize = shape.iter().product();
    let (re, im) = (values(n, seed), values(n, seed + 1000));
    let scalars = (0..n).map(|i| match dtype {
        DType::C128 | DType::C64 => Scalar::C128(Complex64::new(re[i], im[i])),
        _ => Scalar::F64(re[i]),
    });
    ArrayData::from_scalars(dtype, shape, scalars).expect("float data")
}

fn complex_values(data: &ArrayData) -> ArrayD<Complex64> {
    let v: Vec<Complex64> = data.to_scalars().iter().map(Scalar::to_complex64).collect();
    ArrayD::from_shape_vec(IxDyn(data.shape()), v).expect("shape")
}

/// `einsum(spec, a, b)` for a spec with one summed letter, as a plain loop over every index: the
/// value and the sum of the absolute values of the products (for the error bound).
fn reference(spec: &str, a: &ArrayData, b: &ArrayData) -> (ArrayD<Complex64>, ArrayD<f64>, usize) {
    let (_, out) = spec.split_once("->").expect("explicit output");
    let (sa, sb) = operand_letters(spec);
    let (a, b) = (complex_values(a), complex_values(b));
    let mut extent = std::collections::BTreeMap::new();
    for (letters, shape) in [(sa, a.shape()), (sb, b.shape())] {
        for (c, &n) in letters.chars().zip(shape) {
            extent.insert(c, n);
        }
    }
    let summed = sa.chars().find(|c| sb.contains(*c) && !out.contains(*c)).expect("one summed letter");
    let out_shape: Vec<usize> = out.chars().map(|c| extent[&c]).collect();
    let (mut value, mut magnitude) = (ArrayD::zeros(IxDyn(&out_shape)), ArrayD::zeros(IxDyn(&out_shape)));
    for (index, v) in value.indexed_iter_mut() {
        let mut at: std::collections::BTreeMap<char, usize> = out.chars().zip(index.slice().iter().copied()).collect();
        let mut size = 0.0;
        for r in 0..extent[&summed] {
            at.insert(summed, r);
            let ia: Vec<usize> = sa.chars().map(|c| at[&c]).collect();
            let ib: Vec<usize> = sb.chars().map(|c| at[&c]).collect();
            let p = a[IxDyn(&ia)] * b[IxDyn(&ib)];
            *v += p;
            size += a[IxDyn(&ia)].norm() * b[IxDyn(&ib)].norm();
        }
        magnitude[&index] = size;
    }
    (value, magnitude, extent[&summed])
}

fn product(spec: &str, a_shape: &[Dim], b_shape: &[Dim], dtype: DType) -> Result<Array> {
    let a = pt::placeholder("a", a_shape.to_vec(), dtype)?;
    let b = pt::placeholder("b", b_shape.to_vec(), dtype)?;
    pt::einsum(spec, &[&a, &b])
}

/// The operands' letters of an explicit two-operand spec (`"ij,jk->ik"`: `("ij", "jk")`).
fn operand_letters(spec: &str) -> (&str, &str) {
    let (inputs, _) = spec.split_once("->").expect("explicit output");
    inputs.split_once(',').expect("two operands")
}

fn dims(letters: &str) -> Vec<Dim> {
    letters.chars().map(|c| Dim::param(format!("n_{c}"))).collect()
}

/// Every layout, at sizes from empty to above the threshold for threads.
#[test]
fn products_of_every_layout_agree_with_a_plain_loop() -> Result<()> {
    let specs = [
        "ij,jk->ik",
        "ji,jk->ik",
        "ij,kj->ik",
        "ji,kj->ki",
        "ij,ej->ei",
        "ij,j->i",
        "j,jk->k",
        "bij,bjk->bik",
        "bji,bkj->ibk",
        "ibj,jk->bki",
        "aij,jb->bia",
    ];
    let lengths = [0usize, 1, 3, 17, 70];
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = gemm_kernels_run();
    let mut products = 0;
    for dtype in [DType::F64, DType::C128, DType::F32, DType::C64] {
        for spec in specs {
            let (sa, sb) = operand_letters(spec);
            let expr = product(spec, &dims(sa), &dims(sb), dtype)?;
            for threads in [1, 2] {
                let program = Cranelift::new().with_threads(threads).compile(&(&expr).into())?;
                // Every letter its own length, rotating through `lengths`, then all of them long
                // enough for threads; the batch short.
                for k in 0..=lengths.len() {
                    let length = |c: char| match c {
                        'b' => 3,
                        _ if k == lengths.len() => 70,
                        _ => lengths[(k + c as usize) % lengths.len()],
                    };
                    let shape = |letters: &str| letters.chars().map(length).collect::<Vec<_>>();
                    let (a, b) = (array(&shape(sa), 1 + k as u64, dtype), array(&shape(sb), 50 + k as u64, dtype));
                    let inputs = NamedData::from([("a".to_string(), a.clone()), ("b".to_string(), b.clone())]);
                    let got = complex_values(&program.run(&inputs)?["_pt_out"]);
                    let (want, magnitude, terms) = reference(spec, &a, &b);
                    assert_eq!(got.shape(), want.shape(), "{spec} {dtype} {threads} threads");
                    // A sum of `terms` products in any order, with or without fused multiply-adds,
                    // is within `(terms + 1) * eps * sum |a_r| |b_r|` of the exact value.
                    // Single precision: the same in float64, then one rounding to float32
                    // (`reference` computes from the float32 operands, widened exactly).
                    let rounding = if matches!(dtype, DType::F32 | DType::C64) { f32::EPSILON as f64 } else { 0.0 };
                    let bound = |m: f64, w: f64| (terms as f64 + 2.0) * f64::EPSILON * m * 2.0 + rounding * w;
                    for ((g, w), m) in got.iter().zip(&want).zip(&magnitude) {
                        assert!(
                            (g - w).norm() <= bound(*m, w.norm()),
                            "{spec} {dtype} shapes {:?} {:?}: {g} vs {w}",
                            shape(sa),
                            shape(sb)
                        );
                    }
                    products += usize::from(!got.is_empty());
                }
            }
        }
    }
    assert!(gemm_kernels_run() - before >= products as u64, "every non-empty product ran through the GEMM");
    Ok(())
}

/// NaN, infinities and signed zeros: where each shows up in a product does not depend on the
/// order of the sum, so the GEMM must agree with the interpreter exactly in kind (no product here
/// overflows: inside a fused multiply-add one would not become ±inf, see the crate docs).
/// NaN, ±inf and -0.0 through float64 and complex128 products: each part of each element is NaN
/// where the interpreter's is, and else equal to it with its sign. A complex sum with an infinite
/// product is `inf + NaN i` as in the interpreter and numpy's loops (`(inf + 0i) · (1 + 0i)`),
/// not the `NaN + NaN i` the GEMM's scaling by `1 + 0i` makes of it.
#[test]
fn special_values_propagate_as_in_the_interpreter() -> Result<()> {
    let a = [
        [1.0, f64::NAN, 0.0],
        [f64::INFINITY, 2.0, 0.0],
        [-0.0, -0.0, -0.0],
        [f64::INFINITY, -1.0, 1.0],
        [f64::NEG_INFINITY, 1.0, 1.0],
    ];
    let b = [[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, 1.0], [5.0, 0.0, 3.0, f64::NEG_INFINITY]];
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for dtype in [DType::F64, DType::C128] {
        let to_data = |rows: &[[f64; 4]], columns: usize| {
            let values = rows.iter().flat_map(|r| &r[..columns]).map(|&v| Scalar::F64(v).cast(dtype));
            ArrayData::from_scalars(dtype, &[rows.len(), columns], values).expect("data")
        };
        let a: Vec<[f64; 4]> = a.iter().map(|r| [r[0], r[1], r[2], 0.0]).collect();
        let inputs = NamedData::from([("a".to_string(), to_data(&a, 3)), ("b".to_string(), to_data(&b, 4))]);
        let expr =
            product("ij,jk->ik", &[Dim::param("n"), Dim::param("k")], &[Dim::param("k"), Dim::param("m")], dtype)?;
        let reference = Interpreter.compile(&(&expr).into())?.run(&inputs)?.remove("_pt_out").expect("output");
        let before = gemm_kernels_run();
        let got = Cranelift::new().compile(&(&expr).into())?.run(&inputs)?.remove("_pt_out").expect("output");
        assert!(gemm_kernels_run() > before, "{dtype}: the product ran through the GEMM");
        let mut infinite = 0;
        for (g, r) in got.to_scalars().iter().zip(reference.to_scalars()) {
            let (g, r) = (g.to_complex64(), r.to_complex64());
            for (g, r) in [(g.re, r.re), (g.im, r.im)] {
                let same_kind = (g.is_nan() && r.is_nan()) || (g == r && g.is_sign_negative() == r.is_sign_negative());
                assert!(same_kind, "{dtype}: {g} vs {r}");
                infinite += usize::from(r.is_infinite());
            }
        }
        assert!(infinite > 0, "{dtype}: some sums are infinite");
    }
    Ok(())
}

/// float32 and complex64 products whose operands are large enough for a product to overflow
/// single precision run on the loop nest: the overflows give the interpreter's ±inf and NaN bits
/// (numpy 2.4.6: `np.einsum("ij,jk->ik", a, b)` of the float32 and complex64 cases is
/// `[[nan, inf, inf]]`; its `a @ b` through sgemm gives `inf` first), where the double precision
/// GEMM gave finite values (fuzz seed 9110501: `x @ x` of float32 values near 3e38). Products of
/// smaller operands still run through the GEMM.
#[test]
fn single_precision_products_that_may_overflow_run_on_the_loop_nest() -> Result<()> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for dtype in [DType::F32, DType::C64] {
        let expr =
            product("ij,jk->ik", &[Dim::param("n"), Dim::param("k")], &[Dim::param("k"), Dim::param("m")], dtype)?;
        let cranelift = Cranelift::new().compile(&(&expr).into())?;
        let interpreter = Interpreter.compile(&(&expr).into())?;
        for (big, through_gemm) in [(3e38, false), (1e19, true)] {
            // For big = 3e38, products big * 3 and big * -3 overflow single precision (their sum
            // is NaN there, and 0 in double precision), and so do the sums of the other columns.
            let a = [[big, big, 1.0]];
            let b = [[3.0, 1.0, 4.0], [-3.0, 2.0, 1e-30], [0.0, 3.0, 1.0]];
            let to_data = |rows: &[[f64; 3]]| {
                let values = rows.iter().flatten().map(|&v| Scalar::F64(v).cast(dtype));
                ArrayData::from_scalars(dtype, &[rows.len(), 3], values).expect("data")
            };
            let inputs = NamedData::from([("a".to_string(), to_data(&a)), ("b".to_string(), to_data(&b))]);
            let before = gemm_kernels_run();
            let got = cranelift.run(&inputs)?.remove("_pt_out").expect("output");
            assert_eq!(gemm_kernels_run() > before, through_gemm, "{dtype} with operands up to {big}");
            let reference = interpreter.run(&inputs)?.remove("_pt_out").expect("output");
            if through_gemm {
                continue; // to rounding: the other tests
            }
            assert_eq!(format!("{:?}", got.to_scalars()), format!("{:?}", reference.to_scalars()), "{dtype}");
            let first = got.to_scalars()[0].to_complex64();
            assert!(first.re.is_nan(), "{dtype}: {first} (inf - inf in single precision)");
        }
    }
    Ok(())
}

/// Sums whose products are all zeros, some or all of them `-0.0` (`-1 * 0`, and for complex
/// numbers `(-1 - 0i) * 0` has imaginary part `-0.0`), are `+0.0` in every component, as numpy's
/// (2.4.6: `a @ b`, `np.einsum`, `np.sum(a[:, :, None] * b, 1)` with `a = -1`, `b = 0`) and as the
/// summation scheme's, which start from `+0.0`: on every path of the GEMM (sums of one, two and
/// more terms; matrix-vector and vector-matrix shapes; float and complex kernels) and on one and
/// two threads. The GEMM's complex kernels, its short sums and its matrix-vector paths start from
/// the first product, and left `-0.0` here.
#[test]
fn sums_of_zero_products_are_positive_zero_on_every_path() -> Result<()> {
    let specs = ["ij,jk->ik", "ji,kj->ki", "ij,j->i", "j,jk->k", "bij,bjk->bik"];
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = gemm_kernels_run();
    for dtype in [DType::F64, DType::C128, DType::F32, DType::C64] {
        for spec in specs {
            let (sa, sb) = operand_letters(spec);
            let expr = product(spec, &dims(sa), &dims(sb), dtype)?;
            for threads in [1, 2] {
                let program = Cranelift::new().with_threads(threads).compile(&(&expr).into())?;
                for (terms, rows, columns) in
                    [(1, 5, 7), (2, 5, 7), (3, 5, 7), (3, 1, 9), (70, 1, 9), (70, 9, 1), (70, 70, 70)]
                {
                    let length = |c: char| match c {
                        'j' => terms,
                        'i' => rows,
                        'b' => 2,
                        _ => columns,
                    };
                    let shape = |letters: &str| letters.chars().map(length).collect::<Vec<_>>();
                    let (a_shape, b_shape) = (shape(sa), shape(sb));
                    let count = |s: &[usize]| s.iter().product::<usize>();
                    // `a` is -1 (with a -0.0 imaginary part), `b` zeros, their signs alternating
                    // in the second case: products of -0.0 only, then of both zeros.
                    for mixed in [false, true] {
                        let a = (0..count(&a_shape)).map(|_| Scalar::C128(Complex64::new(-1.0, -0.0)));
                        let b = (0..count(&b_shape)).map(|i| {
                            let zero = if mixed && i % 2 == 1 { -0.0 } else { 0.0 };
                            Scalar::C128(Complex64::new(zero, zero))
                        });
                        let real = |s: Scalar| if dtype.is_complex() { s } else { Scalar::F64(s.to_complex64().re) };
                        let a = ArrayData::from_scalars(dtype, &a_shape, a.map(real)).expect("data");
                        let b = ArrayData::from_scalars(dtype, &b_shape, b.map(real)).expect("data");
                        let inputs = NamedData::from([("a".to_string(), a), ("b".to_string(), b)]);
                        let got = program.run(&inputs)?.remove("_pt_out").expect("output");
                        for value in got.to_scalars() {
                            let z = value.to_complex64();
                            assert!(
                                z.re.to_bits() == 0 && z.im.to_bits() == 0,
                                "{spec} {dtype} {a_shape:?} {b_shape:?} on {threads} threads (mixed: {mixed}): {z}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(gemm_kernels_run() > before, "the products ran through the GEMM");
    Ok(())
}

/// A product whose factor is computed inline (not a stored array) stays on the loop nest, bit for
/// bit with the interpreter.
#[test]
fn other_products_stay_on_the_loop_nest() -> Result<()> {
    let n = Dim::param("n");
    let a = pt::placeholder("a", [n.clone(), n.clone()], DType::F64)?;
    let expr = pt::matmul(&pt::multiply(&a, 2.0)?, &a)?;
    let data =
        ArrayData::from_scalars(DType::F64, &[5, 5], values(25, 3).into_iter().map(Scalar::F64)).expect("float data");
    let inputs = NamedData::from([("a".to_string(), data)]);
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = gemm_kernels_run();
    let got = Cranelift::new().with_threads(1).compile(&(&expr).into())?.run(&inputs)?.remove("_pt_out");
    let reference = Interpreter.compile(&(&expr).into())?.run(&inputs)?.remove("_pt_out");
    assert_eq!(gemm_kernels_run(), before, "the loop nest computed it");
    assert_eq!(got, reference);
    Ok(())
}

/// The GEMM's order of each sum depends on the number of terms only: every thread count gives
/// the same bits, for products cut into blocks of rows, of columns or both, sums longer than
/// one pass of the GEMM (512 terms), outputs small enough for its dot-product path and single
/// rows and columns (its matrix-vector paths).
#[test]
fn every_thread_count_gives_the_same_bits() -> Result<()> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for spec in ["ij,jk->ik", "ij,kj->ik", "ji,jk->ik"] {
        for dtype in [DType::F64, DType::C128] {
            let (sa, sb) = operand_letters(spec);
            let expr = product(spec, &dims(sa), &dims(sb), dtype)?;
            let programs: Vec<_> = [1, 2, 3, 7, 16]
                .into_iter()
                .map(|t| Cranelift::new().with_threads(t).compile(&(&expr).into()))
                .collect::<Result<_>>()?;
            for (rows, terms, columns) in
                [(300, 1100, 170), (1000, 700, 40), (40, 1300, 900), (16, 2000, 16), (1, 5000, 300), (300, 600, 1)]
            {
                let length = |c: char| match c {
                    'i' => rows,
                    'j' => terms,
                    _ => columns,
                };
                let shape = |letters: &str| letters.chars().map(length).collect::<Vec<_>>();
                let a = array(&shape(sa), rows as u64, dtype);
                let b = array(&shape(sb), columns as u64 + 7, dtype);
                let inputs = NamedData::from([("a".to_string(), a.clone()), ("b".to_string(), b.clone())]);
                let before = gemm_kernels_run();
                let results: Vec<ArrayData> = programs
                    .iter()
                    .map(|p| Ok(p.run(&inputs)?.remove("_pt_out").expect("output")))
                    .collect::<Result<_>>()?;
                assert_eq!(gemm_kernels_run() - before, programs.len() as u64, "{spec}: every run a GEMM");
                let bits = |d: &ArrayData| {
                    d.to_scalars()
                        .iter()
                        .map(|s| {
                            let z = s.to_complex64();
                            (z.re.to_bits(), z.im.to_bits())
                        })
                        .collect::<Vec<_>>()
                };
                let one_thread = bits(&results[0]);
                for (threads, got) in [2, 3, 7, 16].iter().zip(&results[1..]) {
                    assert!(
                        bits(got) == one_thread,
                        "{spec} {dtype} {rows}x{terms}x{columns}: {threads} threads differ from one"
                    );
                }
                // And the bits are a product's (sums of several of the GEMM's passes too):
                // within the bound of a reordered sum; the large shapes only to the other test's
                // sizes, for time.
                if rows * terms * columns > 2_000_000 {
                    continue;
                }
                let (want, magnitude, terms) = reference(spec, &a, &b);
                let got = complex_values(&results[0]);
                for ((g, w), m) in got.iter().zip(&want).zip(&magnitude) {
                    assert!((g - w).norm() <= (terms as f64 + 2.0) * f64::EPSILON * m * 2.0, "{spec}: {g} vs {w}");
                }
            }
        }
    }
    Ok(())
}
