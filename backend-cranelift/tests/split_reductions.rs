//! Whole-array reductions split into parts for threads (`pytato_transform::split_reductions`):
//! the same bits on 1, 2 and 3 threads as the reference interpreter's, for every operation and
//! dtype the pass splits, at lengths that leave every kind of last part, with the values that
//! tell orders apart (NaN, -0.0, infinities, terms that cancel, integer wrap-around); and the
//! reductions it must not split still computed whole.

use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};
use pytato_backend_cranelift::{Cranelift, kernels_split};
use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, Dim, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

/// The elements' bit patterns (real and imaginary parts), so that NaN matches NaN and -0.0 does
/// not match 0.0.
fn bits(a: &ArrayData) -> Vec<(u64, u64)> {
    a.to_scalars()
        .into_iter()
        .map(|s| {
            let c = s.to_complex64();
            (c.re.to_bits(), c.im.to_bits())
        })
        .collect()
}

/// Terms whose sum depends on their order: large ones that cancel, small ones lost next to them,
/// with a special value at `special` where given.
fn terms(n: usize, seed: u64, special: Option<(usize, f64)>) -> Vec<f64> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (0..n)
        .map(|i| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            match special {
                Some((at, v)) if at == i => v,
                _ if i % 1000 == 7 => 1e16 * (u - 0.5),
                _ => u - 0.5,
            }
        })
        .collect()
}

/// Held while a test runs split launches: [`kernels_split`] counts for the whole process, and the
/// tests of this file run in parallel, so one test's count would include another's launches.
static SPLITTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn splitting_alone() -> std::sync::MutexGuard<'static, ()> {
    SPLITTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `e` on the interpreter and on Cranelift with 1, 2 and 3 threads; asserts equal bits and
/// returns how many kernel launches the threaded runs split.
fn agree(what: &str, e: &Array, inputs: &NamedData) -> u64 {
    let _alone = splitting_alone();
    let expected = Interpreter.compile(&e.into()).unwrap().run(inputs).unwrap().remove("_pt_out").unwrap();
    let before = kernels_split();
    for threads in [1, 2, 3] {
        let program = Cranelift::new().with_threads(threads).compile(&e.into()).unwrap();
        let got = program.run(inputs).unwrap().remove("_pt_out").unwrap();
        assert_eq!(got.dtype(), expected.dtype(), "{what} on {threads} threads");
        assert_eq!(got.shape(), expected.shape(), "{what} on {threads} threads");
        assert_eq!(bits(&got), bits(&expected), "{what} on {threads} threads: {got:?} vs {expected:?}");
    }
    kernels_split() - before
}

fn vector(values: Vec<f64>, dtype: DType) -> ArrayData {
    let n = values.len();
    ArrayData::from_scalars(dtype, &[n], values.into_iter().map(Scalar::F64)).unwrap()
}

fn one_input(name: &str, data: ArrayData) -> NamedData {
    NamedData::from([(name.to_string(), data)])
}

/// Float64 sums of one long axis (a sum, a norm, a dot product): exactly 64 parts, parts and a
/// rest of every size, a length just past a power of two; with NaN, infinities or only negative
/// zeros among the terms (whose sum is 0.0, as numpy's). One program serves every length.
#[test]
fn float64_sums_have_the_bits_of_one_loop_on_any_number_of_threads() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let sum = pt::sum(&x, pt::Axes::All).unwrap();
    let norm = pt::sqrt(&pt::sum(&(&x * &x), pt::Axes::All).unwrap()).unwrap();
    let y = pt::placeholder("y", [Dim::param("n")], DType::F64).unwrap();
    let dot = pt::dot(&x, &y).unwrap();
    let mut split = 0;
    for n in [1 << 21, (1 << 21) + 1, (1 << 21) + 12_345, 3_000_017, (1 << 22) - 129] {
        let x_data = vector(terms(n, n as u64, None), DType::F64);
        split += agree(&format!("sum of {n}"), &sum, &one_input("x", x_data.clone()));
        split += agree(&format!("norm of {n}"), &norm, &one_input("x", x_data.clone()));
        let y_data = vector(terms(n, 1 + n as u64, None), DType::F64);
        let both = NamedData::from([("x".to_string(), x_data), ("y".to_string(), y_data)]);
        split += agree(&format!("dot product of {n}"), &dot, &both);
    }
    let n = 2_500_000;
    for (at, special) in [(1_234_567, f64::NAN), (2_499_999, f64::INFINITY), (3, f64::NEG_INFINITY)] {
        let data = vector(terms(n, 5, Some((at, special))), DType::F64);
        split += agree(&format!("sum with {special} at {at}"), &sum, &one_input("x", data));
    }
    let zeros = vector(vec![-0.0; n], DType::F64);
    split += agree("sum of negative zeros", &sum, &one_input("x", zeros));
    assert!(split >= 2 * 16, "every threaded run split its parts: {split} launches");
}

/// float32 and complex sums are summed wide and rounded once, after the tree.
#[test]
fn float32_and_complex_sums_split_in_their_wide_dtype() {
    let n = 2_200_003;
    let re = terms(n, 11, None);
    let im = terms(n, 12, Some((77, -0.0)));
    let mut split = 0;
    for dtype in [DType::F32, DType::C64, DType::C128] {
        let x = pt::placeholder("x", [Dim::param("n")], dtype).unwrap();
        let sum = pt::sum(&x, pt::Axes::All).unwrap();
        let data = match dtype {
            DType::F32 => vector(re.clone(), DType::F32),
            DType::C64 => {
                ArrayData::from(ArrayD::from_shape_fn(vec![n], |i| Complex32::new(re[i[0]] as f32, im[i[0]] as f32)))
            }
            _ => ArrayData::from(ArrayD::from_shape_fn(vec![n], |i| Complex64::new(re[i[0]], im[i[0]]))),
        };
        split += agree(&format!("{dtype} sum"), &sum, &one_input("x", data));
    }
    assert!(split >= 6, "{split} split launches");
}

/// Sums over several axes split along the first: where the terms per row are a power of two (a
/// part is a subtree of the summation tree), and not where they are not; a keepdims sum (an
/// output of unit axes) splits too.
#[test]
fn sums_over_several_axes_split_where_parts_are_subtrees() {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let sum = pt::sum(&x, pt::Axes::All).unwrap();
    let kept = pt::sum(&x, pt::ReduceOptions::axes(pt::Axes::All).keepdims(true)).unwrap();
    let data = |n: usize, m: usize| {
        let t = terms(n * m, (n + m) as u64, None);
        one_input("x", ArrayData::from(ArrayD::from_shape_vec(vec![n, m], t).unwrap()))
    };
    for (n, m) in [(4099, 512), (1025, 2048), (3, 1 << 20)] {
        assert!(agree(&format!("sum of {n}x{m}"), &sum, &data(n, m)) > 0, "{n}x{m} is split");
    }
    assert!(agree("keepdims sum", &kept, &data(4099, 512)) > 0, "a keepdims sum is split");
    // 1000 terms per row: no run of rows is a whole number of blocks of a power of two.
    assert_eq!(agree("sum of 3001x1000", &sum, &data(3001, 1000)), 0, "rows of 1000 are not split");
}

/// Kernels with a few output elements split their parts side by side: sums along the long axis
/// of three rows, down the long axis of three columns (one term per row), over two long axes per
/// component, and maxima per row.
#[test]
fn a_few_output_elements_split_side_by_side() {
    let matrix = |shape: &[usize], seed: u64| {
        let t = terms(shape.iter().product(), seed, Some((5, f64::NAN)));
        ArrayData::from(ArrayD::from_shape_vec(shape.to_vec(), t).unwrap())
    };
    let n = Dim::param("n");
    let rows = pt::placeholder("x", [Dim::new(3), n.clone()], DType::F64).unwrap();
    let columns = pt::placeholder("x", [n.clone(), Dim::new(3)], DType::F64).unwrap();
    let blocks = pt::placeholder("x", [Dim::new(2), n, Dim::new(8)], DType::F64).unwrap();
    let mut split = 0;
    split += agree("row sums", &pt::sum(&rows, 1).unwrap(), &one_input("x", matrix(&[3, 1_400_001], 1)));
    split += agree("row maxima", &pt::max(&rows, 1).unwrap(), &one_input("x", matrix(&[3, 1_400_001], 2)));
    split += agree("column sums", &pt::sum(&columns, 0).unwrap(), &one_input("x", matrix(&[1_400_001, 3], 3)));
    let per_component = pt::sum(&blocks, pt::Axes::from(vec![1i64, 2])).unwrap();
    split += agree("sums over two axes", &per_component, &one_input("x", matrix(&[2, 300_007, 8], 4)));
    assert!(split >= 2 * 4, "{split} split launches");
}

/// Several reductions in one kernel (each split with its own sizes) and in several kernels of
/// one program: a mean and a maximum of one array, a ratio of two sums, and an output per
/// statistic.
#[test]
fn several_reductions_split_side_by_side() {
    let n = 2_300_001;
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let y = pt::placeholder("y", [Dim::param("n")], DType::F64).unwrap();
    let data = NamedData::from([
        ("x".to_string(), vector(terms(n, 21, None), DType::F64)),
        ("y".to_string(), vector(terms(n, 22, Some((2_000_000, f64::NAN))), DType::F64)),
    ]);
    let (sx, sy) = (pt::sum(&x, pt::Axes::All).unwrap(), pt::sum(&y, pt::Axes::All).unwrap());
    let spread = &pt::max(&x, pt::Axes::All).unwrap() - &pt::min(&x, pt::Axes::All).unwrap();
    let mut split = 0;
    split += agree("a ratio of two sums", &(&sx / &sy), &data);
    let x_only: NamedData = data.iter().filter(|(k, _)| *k == "x").map(|(k, v)| (k.clone(), v.clone())).collect();
    split += agree("max minus min", &spread, &x_only);
    split +=
        agree("mean plus max", &(&pt::mean(&x, pt::Axes::All).unwrap() + &pt::max(&y, pt::Axes::All).unwrap()), &data);
    let outputs =
        pytato_core::DictOfNamedArrays::new([("sx", sx.clone()), ("sy", sy.clone()), ("spread", spread.clone())])
            .unwrap();
    let expected = Interpreter.compile(&(&outputs).into()).unwrap().run(&data).unwrap();
    for threads in [1, 2, 3] {
        let got = Cranelift::new().with_threads(threads).compile(&(&outputs).into()).unwrap().run(&data).unwrap();
        for name in ["sx", "sy", "spread"] {
            assert_eq!(bits(&got[name]), bits(&expected[name]), "{name} on {threads} threads");
        }
    }
    assert!(split >= 2 * 3, "{split} split launches");
}

/// Integer sums and products wrap, and maxima, minima, `all` and `any` give the same result
/// however the terms are grouped: split at any row; numpy's `maximum` keeps the first NaN and,
/// of equal values, the last (here `0.0` and `-0.0`).
#[test]
fn exact_reductions_split_at_any_row() {
    let n = 3_000_001;
    let ints: Vec<i64> = (0..n as i64).map(|i| i64::MAX / 3 + i * 7_919 % 1_000_003).collect();
    let x = pt::placeholder("x", [Dim::param("n")], DType::I64).unwrap();
    let int_data = one_input("x", ArrayData::from(ArrayD::from_shape_vec(vec![n], ints).unwrap()));
    let mut split = 0;
    split += agree("int64 sum (wraps)", &pt::sum(&x, pt::Axes::All).unwrap(), &int_data);
    split += agree("int64 product", &pt::prod(&x, pt::Axes::All).unwrap(), &int_data);
    split += agree("int64 max", &pt::max(&x, pt::Axes::All).unwrap(), &int_data);

    let f = pt::placeholder("f", [Dim::param("n")], DType::F64).unwrap();
    let mut zeros = vec![0.0; n];
    for (i, z) in zeros.iter_mut().enumerate() {
        if i % 3 == 1 {
            *z = -0.0;
        }
    }
    let zero_data = one_input("f", vector(zeros, DType::F64));
    split += agree("max of signed zeros", &pt::max(&f, pt::Axes::All).unwrap(), &zero_data);
    split += agree("min of signed zeros", &pt::min(&f, pt::Axes::All).unwrap(), &zero_data);
    let mut nans = terms(n, 3, None);
    nans[2_000_000] = f64::NAN;
    nans[2_900_000] = -f64::NAN;
    let nan_data = one_input("f", vector(nans, DType::F64));
    split += agree("max with NaN", &pt::max(&f, pt::Axes::All).unwrap(), &nan_data);
    split += agree("min with NaN", &pt::min(&f, pt::Axes::All).unwrap(), &nan_data);

    let b = pt::placeholder("b", [Dim::param("n")], DType::Bool).unwrap();
    let mut flags = vec![true; n];
    flags[n - 1] = false;
    let flag_data = one_input("b", ArrayData::from(ArrayD::from_shape_vec(vec![n], flags).unwrap()));
    split += agree("all", &pt::all(&b, pt::Axes::All).unwrap(), &flag_data);
    split += agree("any", &pt::any(&pt::logical_not(&b).unwrap(), pt::Axes::All).unwrap(), &flag_data);
    assert!(split >= 2 * 9, "{split} split launches");
}

/// Float products stay in order (numpy's: `inf` then `0` is NaN only where it meets them in that
/// order), so they are never split; and a reduction inside a `where` is evaluated only where its
/// branch is taken, so it stays whole too. Both still compute numpy's value.
#[test]
fn float_products_and_reductions_in_branches_stay_whole() {
    let n = 3_000_000;
    let f = pt::placeholder("f", [Dim::param("n")], DType::F64).unwrap();
    let mut factors = vec![1.0; n];
    factors[10] = 1e300;
    factors[20] = 1e300; // inf from here on
    factors[n - 5] = 0.0; // inf * 0 = NaN
    let data = one_input("f", vector(factors, DType::F64));
    let product = pt::prod(&f, pt::Axes::All).unwrap();
    assert_eq!(agree("float product", &product, &data), 0);
    let branch = pt::where_(
        pt::greater(f.index(pytato_core::s![0]).unwrap(), 0.0).unwrap(),
        pt::sum(&f, pt::Axes::All).unwrap(),
        -1.0,
    )
    .unwrap();
    assert_eq!(agree("sum in a branch", &branch, &data), 0);
}

/// The same program at lengths on both sides of the threshold, in both orders: the derived sizes
/// are set again at every run.
#[test]
fn one_program_runs_split_and_whole_in_turn() {
    let _alone = splitting_alone();
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let sum = pt::sum(&x, pt::Axes::All).unwrap();
    let program = Cranelift::new().with_threads(2).compile(&(&sum).into()).unwrap();
    let interp = Interpreter.compile(&(&sum).into()).unwrap();
    for n in [3_000_000, 1_000, 0, 1, 2_100_000, 129, 3_000_000] {
        let inputs = one_input("x", vector(terms(n, 9, None), DType::F64));
        let got = program.run(&inputs).unwrap().remove("_pt_out").unwrap();
        let expected = interp.run(&inputs).unwrap().remove("_pt_out").unwrap();
        assert_eq!(bits(&got), bits(&expected), "length {n}");
    }
}
