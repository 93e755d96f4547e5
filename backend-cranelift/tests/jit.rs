//! The Cranelift backend beyond the conformance suite: traps that must not happen, bad indices,
//! threads, the program cache, shape polymorphism, reuse of temporaries and deep DAGs.
//!
//! Expected values come from the reference interpreter (an independent implementation), from
//! `ndarray`, or from numpy's rules written out by hand.

use ndarray::{Array1, Array2, ArrayD};
use pytato_backend_cranelift::{Cranelift, cache_stats, is_cached, kernels_split};
use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, Dim, Error, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs};

fn inputs<const N: usize>(items: [(&str, ArrayData); N]) -> NamedData {
    items.into_iter().map(|(n, d)| (n.to_string(), d)).collect()
}

fn run(backend: &dyn Backend, outputs: impl Into<Outputs>, inputs: &NamedData) -> pytato_core::Result<ArrayData> {
    let mut out = backend.compile(&outputs.into())?.run(inputs)?;
    Ok(out.remove("_pt_out").expect("one output"))
}

fn scalars(d: &ArrayData) -> Vec<Scalar> {
    d.to_scalars()
}

/// Bit-exact equality of two results, NaNs included.
fn same_bits(a: &ArrayData, b: &ArrayData) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape() && scalars(a) == scalars(b)
}

#[test]
fn integer_division_by_zero_and_min_over_minus_one_do_not_trap() {
    // numpy: np.array([MIN, -7, 7, 5, MIN]) // np.array([-1, 0, -2, 3, 1]) and % likewise.
    let x = pt::placeholder("x", [5], DType::I64).unwrap();
    let y = pt::placeholder("y", [5], DType::I64).unwrap();
    let data = inputs([
        ("x", ArrayData::from(Array1::from(vec![i64::MIN, -7, 7, 5, i64::MIN]).into_dyn())),
        ("y", ArrayData::from(Array1::from(vec![-1i64, 0, -2, 3, 1]).into_dyn())),
    ]);
    let q = run(&Cranelift::new(), pt::floor_divide(&x, &y).unwrap(), &data).unwrap();
    let r = run(&Cranelift::new(), pt::remainder(&x, &y).unwrap(), &data).unwrap();
    assert_eq!(q.as_array::<i64>().unwrap().as_slice().unwrap(), &[i64::MIN, 0, -4, 1, i64::MIN]);
    assert_eq!(r.as_array::<i64>().unwrap().as_slice().unwrap(), &[0, 0, -1, 2, 0]);
}

#[test]
fn integer_division_matches_the_interpreter_for_every_integer_dtype() {
    let edge: Vec<i64> =
        vec![i64::MIN, i64::MIN + 1, -129, -128, -127, -7, -2, -1, 0, 1, 2, 3, 7, 127, 128, 255, 256, i64::MAX];
    let n = edge.len();
    let xs: Vec<Scalar> = edge.iter().flat_map(|&a| edge.iter().map(move |_| Scalar::I64(a))).collect();
    let ys: Vec<Scalar> = edge.iter().flat_map(|_| edge.iter().map(|&b| Scalar::I64(b))).collect();
    for dtype in [DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64] {
        let x = pt::placeholder("x", [(n * n) as i64], dtype).unwrap();
        let y = pt::placeholder("y", [(n * n) as i64], dtype).unwrap();
        let data = inputs([
            ("x", ArrayData::from_scalars(dtype, &[n * n], xs.iter().copied()).unwrap()),
            ("y", ArrayData::from_scalars(dtype, &[n * n], ys.iter().copied()).unwrap()),
        ]);
        for (name, e) in [
            ("//", pt::floor_divide(&x, &y).unwrap()),
            ("%", pt::remainder(&x, &y).unwrap()),
            ("**", pt::power(&x, pt::remainder(&y, 5).unwrap()).unwrap()),
        ] {
            let jit = run(&Cranelift::new(), &e, &data).unwrap();
            let reference = run(&Interpreter, &e, &data).unwrap();
            assert!(same_bits(&jit, &reference), "{dtype} {name}");
        }
    }
}

#[test]
fn index_values_out_of_range_are_errors() {
    let x = pt::placeholder("x", [5], DType::F64).unwrap();
    let idx = pt::placeholder("idx", [3], DType::I32).unwrap();
    let gathered = x.index(pytato_core::s![&idx]).unwrap();
    let xs = ArrayData::from(Array1::from(vec![10.0, 11.0, 12.0, 13.0, 14.0]).into_dyn());
    let ok = run(
        &Cranelift::new(),
        &gathered,
        &inputs([("x", xs.clone()), ("idx", ArrayData::from(Array1::from(vec![4i32, -5, 0]).into_dyn()))]),
    )
    .unwrap();
    assert_eq!(ok.as_array::<f64>().unwrap().as_slice().unwrap(), &[14.0, 10.0, 10.0]);
    for bad in [5i32, -6, i32::MAX, i32::MIN] {
        let data = inputs([("x", xs.clone()), ("idx", ArrayData::from(Array1::from(vec![0i32, bad, 1]).into_dyn()))]);
        let err = run(&Cranelift::new(), &gathered, &data).unwrap_err();
        assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{bad}: {err}");
        assert_eq!(err.kind(), run(&Interpreter, &gathered, &data).unwrap_err().kind());
    }
}

/// Work big enough to be split across threads, of several kernel shapes.
fn threaded_workload() -> (Array, NamedData) {
    let (n, m) = (300usize, 7000usize);
    let a = pt::placeholder("a", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let b = pt::placeholder("b", [Dim::param("m"), Dim::new(64)], DType::F64).unwrap();
    let elementwise = pt::sin(&a).unwrap() * 2.0 + &a;
    let product = pt::einsum("ij,jk->ik", &[&elementwise, &b]).unwrap();
    let total = pt::sum(&product, 1).unwrap();
    let values = Array2::from_shape_fn((n, m), |(i, j)| ((i * 31 + j * 7) % 101) as f64 / 50.0 - 1.0);
    let bvalues = Array2::from_shape_fn((m, 64), |(i, j)| ((i * 13 + j * 3) % 37) as f64 / 18.0 - 1.0);
    (total, inputs([("a", ArrayData::from(values.into_dyn())), ("b", ArrayData::from(bvalues.into_dyn()))]))
}

#[test]
fn threads_compute_what_one_thread_computes() {
    let (total, data) = threaded_workload();
    let one = run(&Cranelift::new().with_threads(1), &total, &data).unwrap();
    for threads in [2, 3, 8] {
        let split = kernels_split();
        let many = run(&Cranelift::new().with_threads(threads), &total, &data).unwrap();
        assert!(kernels_split() > split, "the workload is split across {threads} threads");
        assert!(same_bits(&one, &many), "{threads} threads");
    }
    let reference = run(&Interpreter, &total, &data).unwrap();
    for (j, i) in one.as_array::<f64>().unwrap().iter().zip(reference.as_array::<f64>().unwrap()) {
        assert!((j - i).abs() <= 1e-9 * i.abs().max(1.0), "{j} vs {i}");
    }
}

#[test]
fn reductions_give_the_same_bits_on_1_2_and_3_threads() {
    // Whole-array, column and row sums, a maximum and a mean of values that round differently
    // in another order (with -0.0 and a NaN row for the maximum's NaN rule).
    let (n, m) = (1500usize, 700usize);
    let values = Array2::from_shape_fn((n, m), |(i, j)| match (i * m + j) % 89 {
        0 => 1e16,
        1 => -1e16,
        2 => -0.0,
        k => ((k * 7 + i) as f64 * 0.618).sin() * 10f64.powi((j % 7) as i32 - 3),
    });
    let a = pt::placeholder("a", [n as i64, m as i64], DType::F64).unwrap();
    let outputs = pytato_core::DictOfNamedArrays::new([
        ("all", pt::sum(&a, pt::Axes::All).unwrap()),
        ("columns", pt::sum(&a, 0).unwrap()),
        ("rows", pt::sum(&a, 1).unwrap()),
        ("max", pt::max(&a, 0).unwrap()),
        ("mean", pt::mean(&a, pt::Axes::All).unwrap()),
    ])
    .unwrap();
    let data = inputs([("a", ArrayData::from(values.into_dyn()))]);
    let on = |threads: usize| {
        Cranelift::new().with_threads(threads).compile(&(&outputs).into()).unwrap().run(&data).unwrap()
    };
    let one = on(1);
    for threads in [2, 3] {
        let many = on(threads);
        for (name, result) in &one {
            assert!(same_bits(result, &many[name]), "{name} on {threads} threads");
        }
    }
}

#[test]
fn a_structurally_equal_dag_is_compiled_once() {
    let build = || {
        let x = pt::placeholder("cache_probe", [Dim::param("n")], DType::F32).unwrap();
        pt::exp(&(&x * 3.0)).unwrap() - 1.25
    };
    let (first, second) = (build(), build());
    assert!(!first.ptr_eq(&second), "two separately built DAGs");
    // `is_cached` is exact; the global counters also move with the tests running beside this one.
    assert!(!is_cached(&(&second).into()), "nothing equal compiled yet");
    let before = cache_stats();
    Cranelift::new().compile(&(&first).into()).unwrap();
    assert!(is_cached(&(&second).into()), "an equal DAG, separately built, is found");
    let middle = cache_stats();
    Cranelift::new().with_threads(1).compile(&(&second).into()).unwrap();
    let after = cache_stats();
    assert!(middle.misses > before.misses, "the first compilation compiles");
    assert!(after.hits > middle.hits, "the second is a hit: {middle:?} -> {after:?}");
}

#[test]
fn a_dag_rebuilt_over_new_data_is_compiled_once_and_reads_the_new_data() {
    let x = pt::placeholder("data_probe", [3], DType::F64).unwrap();
    let build = |v: [f64; 3], w: f64| {
        let d = pt::data_wrapper(ArrayData::from(Array1::from(v.to_vec()).into_dyn()), None).unwrap();
        let e = pt::data_wrapper(ArrayData::from(ndarray::arr0(w).into_dyn()), Some("scale")).unwrap();
        &(&x * &d) + &e
    };
    let (first, second) = (build([1.0, 2.0, 3.0], 0.5), build([-4.0, 5.0, 0.25], 8.0));
    assert!(!is_cached(&(&second).into()), "nothing like it compiled yet");
    let data = inputs([("data_probe", ArrayData::from(Array1::from(vec![2.0, 3.0, 4.0]).into_dyn()))]);
    let a = run(&Cranelift::new(), &first, &data).unwrap();
    assert!(is_cached(&(&second).into()), "the same program over other data");
    let b = run(&Cranelift::new(), &second, &data).unwrap();
    // The expected values: each DAG's own data, computed here.
    assert_eq!(scalars(&a), [2.5, 6.5, 12.5].map(Scalar::F64));
    assert_eq!(scalars(&b), [0.0, 23.0, 9.0].map(Scalar::F64));

    // The data is not an input the user passes, nor one they may pass.
    let program = Cranelift::new().compile(&(&second).into()).unwrap();
    assert_eq!(program.input_names(), ["data_probe"]);
    let mut extra = data.clone();
    extra.insert("_pt_data0".into(), ArrayData::from(Array1::from(vec![0.0; 3]).into_dyn()));
    match program.run(&extra) {
        Err(Error::UnknownInput { name, known }) => {
            assert_eq!((name.as_str(), known), ("_pt_data0", vec!["data_probe".to_string()]))
        }
        other => panic!("expected UnknownInput, got {other:?}"),
    }
}

#[test]
fn one_program_runs_every_size() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    // A shifted difference and a full reduction: both depend on n.
    let diff = x.index(pytato_core::s![1..]).unwrap() - x.index(pytato_core::s![..-1]).unwrap();
    let outputs =
        pytato_core::DictOfNamedArrays::new([("diff", diff), ("total", pt::sum(&x, pt::Axes::All).unwrap())]).unwrap();
    let program = Cranelift::new().compile(&(&outputs).into()).unwrap();
    for n in [1usize, 2, 7, 1000] {
        let values = Array1::from_shape_fn(n, |i| (i * i) as f64);
        let out = program.run(&inputs([("x", ArrayData::from(values.clone().into_dyn()))])).unwrap();
        let expected_diff: Vec<f64> = (1..n).map(|i| (2 * i - 1) as f64).collect();
        assert_eq!(out["diff"].as_array::<f64>().unwrap().as_slice().unwrap(), expected_diff.as_slice(), "n = {n}");
        assert_eq!(out["total"].as_array::<f64>().unwrap().first(), Some(&values.sum()), "n = {n}");
    }
}

#[test]
fn temporaries_are_reused_across_runs_without_leaking_values() {
    // Two stored intermediates: the sum is read by every element, so it is a temporary.
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let centered = &x - &pt::sum(&x, pt::Axes::All).unwrap();
    let program = Cranelift::new().compile(&(&centered).into()).unwrap();
    for (n, scale) in [(1000usize, 1.0), (10, -3.0), (1000, 0.5)] {
        let values = Array1::from_shape_fn(n, |i| scale * i as f64);
        let out = program.run(&inputs([("x", ArrayData::from(values.clone().into_dyn()))])).unwrap();
        let expected: ArrayD<f64> = (&values - values.sum()).into_dyn();
        assert_eq!(out["_pt_out"].as_array::<f64>().unwrap(), &expected, "n = {n}");
    }
}

#[test]
fn million_node_chain_compiles_and_runs_on_a_2mib_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let x = pt::placeholder("x", [3], DType::F64).unwrap();
            let mut a = x.clone();
            for _ in 0..500_000 {
                // Two nodes per step: a multiply and an add.
                a = &(&a * 1.0) + 1.0;
            }
            let data = inputs([("x", ArrayData::from(Array1::from(vec![0.0, 1.0, 2.0]).into_dyn()))]);
            let out = run(&Cranelift::new(), &a, &data).unwrap();
            assert_eq!(out.as_array::<f64>().unwrap().as_slice().unwrap(), &[500_000.0, 500_001.0, 500_002.0]);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn unnamed_placeholders_and_non_contiguous_inputs() {
    // Unnamed placeholders are `_pt_in0`, `_pt_in1`, ... in order, as `input_names` says.
    let a = Array::new_placeholder(None, [2i64, 3].as_slice().into(), DType::F64).unwrap();
    let b = Array::new_placeholder(None, [2i64, 3].as_slice().into(), DType::F64).unwrap();
    let program = Cranelift::new().compile(&(&(&a * 10.0) + &b).into()).unwrap();
    let names = program.input_names();
    assert_eq!(names, vec!["_pt_in0".to_string(), "_pt_in1".to_string()]);
    // The second input is a transposed view: not in C order, so the backend copies it.
    let first = ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let second = ndarray::arr2(&[[0.5, 0.25], [0.125, 1.0], [2.0, 4.0]]).reversed_axes();
    assert!(!second.is_standard_layout());
    let expected = &first * 10.0 + &second;
    let second = ArrayData::from(second.into_dyn());
    assert!(!second.as_array::<f64>().unwrap().is_standard_layout());
    let data = inputs([("_pt_in0", ArrayData::from(first.into_dyn())), ("_pt_in1", second)]);
    let out = program.run(&data).unwrap();
    assert_eq!(out["_pt_out"].as_array::<f64>().unwrap(), &expected.into_dyn());
}

#[test]
fn inline_sin_and_cos_agree_with_libm() {
    // The float64 polynomial path (scalar and vector) against the platform libm: within 2 ulps of
    // the result everywhere, also near multiples of pi/2 (up to the inline path's limit of 1e5),
    // where the result is tiny and only an accurate reduction keeps its relative error small
    // (`sin(5 pi)` was 600,000 ulps off with pi/2 in one part); large arguments take libm itself.
    let mut xs: Vec<f64> = (-2000..=2000).map(|k| k as f64 * 0.013_7).collect();
    for k in (1..200).chain((200..63_600).step_by(997)) {
        let near = k as f64 * std::f64::consts::FRAC_PI_2;
        xs.extend([near, near.next_up(), near.next_down(), -near, (k as f64 * std::f64::consts::PI).next_up()]);
    }
    xs.extend([0.0, -0.0, 1e-300, 99_999.9, 100_000.1, -3e7, 1e300, f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
    let x = pt::placeholder("x", [xs.len() as i64], DType::F64).unwrap();
    let out =
        pytato_core::DictOfNamedArrays::new([("sin", pt::sin(&x).unwrap()), ("cos", pt::cos(&x).unwrap())]).unwrap();
    let program = Cranelift::new().with_threads(1).compile(&(&out).into()).unwrap();
    let result = program.run(&inputs([("x", ArrayData::from(Array1::from(xs.clone()).into_dyn()))])).unwrap();
    // Distance in units in the last place, on the line of float64s ordered by value.
    let ordered = |v: f64| if v.is_sign_negative() { -((v.to_bits() & !(1 << 63)) as i64) } else { v.to_bits() as i64 };
    for (name, f) in [("sin", f64::sin as fn(f64) -> f64), ("cos", f64::cos)] {
        for (&x, &got) in xs.iter().zip(result[name].as_array::<f64>().unwrap()) {
            let want = f(x);
            let ok = (got.is_nan() && want.is_nan()) || (ordered(got) - ordered(want)).abs() <= 2;
            assert!(ok, "{name}({x:e}) = {got:e}, libm says {want:e}");
        }
    }
    // Arguments near multiples of pi/2 take a longer reduction, a whole vector at a time where
    // one lane needs it: each element's bits are still its own, next to such a neighbour or not.
    let ordinary: Vec<f64> = (1..=64).map(|k| k as f64 * 0.731).collect();
    let mixed: Vec<f64> =
        ordinary.iter().enumerate().flat_map(|(k, &x)| [x, (k + 1) as f64 * std::f64::consts::PI]).collect();
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let out =
        pytato_core::DictOfNamedArrays::new([("sin", pt::sin(&x).unwrap()), ("cos", pt::cos(&x).unwrap())]).unwrap();
    let program = Cranelift::new().with_threads(1).compile(&(&out).into()).unwrap();
    let run =
        |xs: &[f64]| program.run(&inputs([("x", ArrayData::from(Array1::from(xs.to_vec()).into_dyn()))])).unwrap();
    let (alone, beside) = (run(&ordinary), run(&mixed));
    for name in ["sin", "cos"] {
        let alone: Vec<u64> = alone[name].as_array::<f64>().unwrap().iter().map(|v| v.to_bits()).collect();
        let beside: Vec<u64> = beside[name].as_array::<f64>().unwrap().iter().step_by(2).map(|v| v.to_bits()).collect();
        assert_eq!(alone, beside, "{name} of ordinary arguments beside ones near multiples of pi");
    }
}

/// Neighbour faces gathered through an index array, as DG gathers them: the array is checked
/// once (`normalize_index`) and the gathers read through it unchecked, vector by vector. Negative
/// in-range values read from the end, as numpy's do; a value out of range at either end is an
/// `IndexOutOfBounds` error, on one thread and on several, at the first and the last element.
#[test]
fn gathers_through_a_checked_index_array() {
    let e = Dim::param("e");
    let u = pt::placeholder("u", [e.clone(), Dim::new(5), Dim::new(5)], DType::F64).unwrap();
    let left = pt::placeholder("left", [e], DType::I64).unwrap();
    let face = u.index(pytato_core::s![.., 4, ..]).unwrap();
    let gathered = pt::take(&face, &left, Some(0)).unwrap();
    let jump = &u.index(pytato_core::s![.., 0, ..]).unwrap() - &gathered;
    let lifted = pt::einsum("i,ej->eij", &[&pt::placeholder("lift", [5], DType::F64).unwrap(), &jump]).unwrap();
    let out = &u + &lifted;
    let n = 300_usize;
    let u_data = ArrayData::from(ArrayD::from_shape_fn(vec![n, 5, 5], |i| (i[0] * 25 + i[1] * 5 + i[2]) as f64 - 0.5));
    let lift = ArrayData::from(ArrayD::from_shape_fn(vec![5], |i| [-2.0, 0.5, -0.0, 1e-310, 3.0][i[0]]));
    for threads in [1, 2] {
        let program = Cranelift::new().with_threads(threads).compile(&(&out).into()).unwrap();
        let with = |table: Vec<i64>| {
            inputs([
                ("u", u_data.clone()),
                ("left", ArrayData::from(Array1::from(table).into_dyn())),
                ("lift", lift.clone()),
            ])
        };
        let good = with(
            (0..n as i64).map(|k| if k % 2 == 0 { (k + n as i64 - 1) % n as i64 } else { k - n as i64 }).collect(),
        );
        let expected = run(&Interpreter, &out, &good).unwrap();
        assert!(same_bits(&program.run(&good).unwrap()["_pt_out"], &expected), "{threads} threads");
        for (at, bad) in [(0, n as i64), (n - 1, -(n as i64) - 1)] {
            let mut table: Vec<i64> = (0..n as i64).collect();
            table[at] = bad;
            let error = program.run(&with(table)).unwrap_err();
            assert_eq!(error.kind(), "IndexOutOfBounds", "{bad} at {at} on {threads} threads: {error}");
        }
    }
}

/// A column sum's strips keep their lanes and tree entries in 512 KiB of scratch memory per
/// thread, not on the stack: the sum runs on a thread with a 64 KiB stack (before, its 300 KB of
/// stack slots could not), with the interpreter's bits, and again on another such thread.
#[test]
fn column_sums_run_on_threads_with_small_stacks() {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
    let sums = pt::sum(&(&x - 0.5), 0).unwrap();
    let program = Cranelift::new().with_threads(1).compile(&(&sums).into()).unwrap();
    let data = inputs([(
        "x",
        ArrayData::from(Array2::from_shape_fn((300, 7000), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 3.0).into_dyn()),
    )]);
    let reference = run(&Interpreter, &sums, &data).unwrap();
    for _ in 0..2 {
        let got = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(64 << 10)
                .spawn_scoped(s, || program.run(&data).unwrap().remove("_pt_out").unwrap())
                .unwrap()
                .join()
                .unwrap()
        });
        assert!(same_bits(&got, &reference));
    }
}
