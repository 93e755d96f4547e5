//! Data-dependent lengths and scatters on every linked backend (`pytato_runtime::phases`): one
//! compiled program runs with other counts and sizes, writes into caller arrays, refuses step
//! results and counts as inputs, reads a count as a value, and chains many phases. Expected values
//! come from plain Rust loops over the same data.

use pytato_core::tags::CountNamed;
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim, Error, s};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs, views};

fn backends() -> Vec<(String, Box<dyn Backend>)> {
    let instances = pytato_conformance::linked_backends();
    assert!(instances.iter().any(|(n, _)| n == "interp"), "the interpreter is linked");
    instances
}

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn i64s(values: &[i64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn values(data: &ArrayData) -> Vec<f64> {
    data.to_scalars().iter().map(|s| s.to_f64()).collect()
}

#[test]
fn one_program_runs_with_other_counts_and_sizes() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let positive = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("doubled", &positive * 2.0),
        ("total", pt::sum(&positive, None).unwrap()),
        ("count", pt::count_nonzero(&pt::greater(&x, 0.0).unwrap(), None).unwrap()),
    ])
    .unwrap();
    let inputs: [&[f64]; 4] = [&[1.0, -2.0, 3.0], &[-1.0, -0.0, -5.0, -2.0, -1.0], &[0.5; 7], &[]];
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Named(outputs.clone())).unwrap();
        assert_eq!(program.input_names(), ["x"], "{name}");
        for data in inputs {
            let got = program.run(&NamedData::from([("x".to_string(), f64s(data))])).unwrap();
            let kept: Vec<f64> = data.iter().copied().filter(|v| *v > 0.0).collect();
            let doubled: Vec<f64> = kept.iter().map(|v| v * 2.0).collect();
            assert_eq!(values(&got["doubled"]), doubled, "{name} on {data:?}");
            assert_eq!(values(&got["total"]), [kept.iter().sum::<f64>()], "{name} on {data:?}");
            assert_eq!(values(&got["count"]), [kept.len() as f64], "{name} on {data:?}");
        }
    }
}

#[test]
fn a_selection_is_written_into_a_callers_array() {
    let x = pt::placeholder("x", [6], DType::F64).unwrap();
    let small = x.index(s![&pt::less(&x, 0.0).unwrap()]).unwrap();
    let data = [3.0, -1.0, 2.0, -4.0, -0.5, 9.0];
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Single(small.clone())).unwrap();
        let inputs = NamedData::from([("x".to_string(), f64s(&data))]);
        let mut out = ArrayData::zeros(DType::F64, &[3]);
        let mut outputs = pytato_runtime::backend::NamedViewsMut::new();
        outputs.insert(pytato_runtime::backend::SINGLE_OUTPUT_NAME, out.view_mut());
        program.run_into(&views(&inputs), &mut outputs).unwrap();
        drop(outputs);
        assert_eq!(values(&out), [-1.0, -4.0, -0.5], "{name}");
        // An array of another length is refused before anything runs.
        let mut wrong = ArrayData::zeros(DType::F64, &[2]);
        let mut outputs = pytato_runtime::backend::NamedViewsMut::new();
        outputs.insert(pytato_runtime::backend::SINGLE_OUTPUT_NAME, wrong.view_mut());
        let err = program.run_into(&views(&inputs), &mut outputs).unwrap_err();
        assert!(matches!(err, Error::OutputArray { .. }), "{name}: {err}");
    }
}

#[test]
fn step_results_and_counts_are_no_inputs() {
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let mask = pt::greater(&x, 0.0).unwrap().tagged(CountNamed("k".into())).unwrap();
    let selected = x.index(s![&mask]).unwrap();
    // `k` read as a value: the count bound by the first phase.
    let k = pt::size_param("k").unwrap();
    let outputs = DictOfNamedArrays::new([("selected", selected.clone()), ("k", k)]).unwrap();
    let data = f64s(&[1.0, -1.0, 2.0, 0.0]);
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Named(outputs.clone())).unwrap();
        assert_eq!(program.input_names(), ["x"], "{name}");
        let got = program.run(&NamedData::from([("x".to_string(), data.clone())])).unwrap();
        assert_eq!(values(&got["selected"]), [1.0, 2.0], "{name}");
        assert_eq!(values(&got["k"]), [2.0], "{name}");
        for extra in ["_pt_in_step0", "k", "zz"] {
            let inputs = NamedData::from([("x".to_string(), data.clone()), (extra.to_string(), i64s(&[1]))]);
            match program.run(&inputs) {
                Err(Error::UnknownInput { name: n, known }) => {
                    assert_eq!((n.as_str(), known), (extra, vec!["x".to_string()]), "{name}")
                }
                other => panic!("{name}: passing {extra} gave {other:?}"),
            }
        }
        assert!(matches!(program.run(&NamedData::new()), Err(Error::MissingInput { .. })), "{name}");
    }
}

#[test]
fn scatters_keep_the_last_write_and_add_in_order() {
    let x = pt::placeholder("x", [5], DType::I32).unwrap();
    let i = pt::placeholder("i", [Dim::param("m")], DType::I64).unwrap();
    let v = pt::placeholder("v", [Dim::param("m")], DType::I32).unwrap();
    let outputs =
        DictOfNamedArrays::new([("set", x.set_index(s![&i], &v).unwrap()), ("add", x.add_at(s![&i], &v).unwrap())])
            .unwrap();
    let base = [10i32, 20, 30, 40, 50];
    let runs: [(&[i64], &[i32]); 3] = [(&[1, -1, 1], &[7, 8, 9]), (&[0, 0, 0, 0], &[1, 2, 3, i32::MAX]), (&[], &[])];
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Named(outputs.clone())).unwrap();
        for (idx, vals) in runs {
            let (mut set, mut add) = (base, base);
            for (&p, &value) in idx.iter().zip(vals) {
                let p = p.rem_euclid(5) as usize;
                set[p] = value;
                add[p] = add[p].wrapping_add(value);
            }
            let inputs = NamedData::from([
                ("x".to_string(), ArrayData::from(ndarray::Array1::from(base.to_vec()).into_dyn())),
                ("i".to_string(), i64s(idx)),
                ("v".to_string(), ArrayData::from(ndarray::Array1::from(vals.to_vec()).into_dyn())),
            ]);
            let got = program.run(&inputs).unwrap();
            let ints = |d: &ArrayData| d.as_array::<i32>().unwrap().iter().copied().collect::<Vec<_>>();
            assert_eq!(ints(&got["set"]), set, "{name} on {idx:?}");
            assert_eq!(ints(&got["add"]), add, "{name} on {idx:?}");
        }
        let bad = NamedData::from([
            ("x".to_string(), ArrayData::from(ndarray::Array1::from(base.to_vec()).into_dyn())),
            ("i".to_string(), i64s(&[5])),
            ("v".to_string(), ArrayData::from(ndarray::Array1::from(vec![1i32]).into_dyn())),
        ]);
        assert!(matches!(program.run(&bad), Err(Error::IndexOutOfBounds { .. })), "{name}");
    }
}

#[test]
fn many_chained_selections_run_in_as_many_phases() {
    // y = x; repeatedly y = y[y > t] for rising thresholds: each mask needs the count before it.
    let x = pt::placeholder("x", [200], DType::F64).unwrap();
    let thresholds: Vec<f64> = (0..40).map(|k| k as f64 * 4.0).collect();
    let mut y = x.clone();
    for &t in &thresholds {
        y = y.index(s![&pt::greater(&y, t).unwrap()]).unwrap();
    }
    let data: Vec<f64> = (0..200).map(|k| ((k * 37) % 200) as f64).collect();
    let mut expected = data.clone();
    for &t in &thresholds {
        expected.retain(|v| *v > t);
    }
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Single(y.clone())).unwrap();
        let got = program.run(&NamedData::from([("x".to_string(), f64s(&data))])).unwrap();
        assert_eq!(values(&got[pytato_runtime::backend::SINGLE_OUTPUT_NAME]), expected, "{name}");
    }
}

#[test]
fn inputs_are_checked_across_phases_before_anything_runs() {
    // The mask's length and the array's are one size `n`, though different phases read them.
    let n = Dim::param("n");
    let x = pt::placeholder("x", [n.clone()], DType::F64).unwrap();
    let m = pt::placeholder("m", [n], DType::Bool).unwrap();
    let selected = x.index(s![&m]).unwrap();
    let bools = |v: &[bool]| ArrayData::from(ndarray::Array1::from(v.to_vec()).into_dyn());
    // An unnamed input takes the name a program of the whole DAG gives it.
    let unnamed = pytato_core::Array::new_placeholder(None, [2].into(), DType::F64).unwrap();
    let outputs = DictOfNamedArrays::new([("selected", selected), ("other", &unnamed * 2.0)]).unwrap();
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Named(outputs.clone())).unwrap();
        let mut names = program.input_names();
        names.sort();
        assert_eq!(names, ["_pt_in0", "m", "x"], "{name}");
        let run = |x: &[f64], m: &[bool]| {
            program.run(&NamedData::from([
                ("x".to_string(), f64s(x)),
                ("m".to_string(), bools(m)),
                ("_pt_in0".to_string(), f64s(&[1.0, 2.0])),
            ]))
        };
        let got = run(&[1.0, 2.0, 3.0], &[true, false, true]).unwrap();
        assert_eq!(values(&got["selected"]), [1.0, 3.0], "{name}");
        assert_eq!(values(&got["other"]), [2.0, 4.0], "{name}");
        // numpy: "boolean index did not match indexed array"; here the sizes disagree.
        let err = run(&[1.0, 2.0, 3.0], &[true, false, true, false, false]).unwrap_err();
        assert!(matches!(err, Error::InputShape { .. }), "{name}: {err}");
        let err = program
            .run(&NamedData::from([("x".to_string(), f64s(&[1.0])), ("m".to_string(), f64s(&[1.0]))]))
            .unwrap_err();
        assert!(matches!(err, Error::MissingInput { .. } | Error::InputDType { .. }), "{name}: {err}");
    }
}

#[test]
fn float16_scatter_adds_values_of_other_dtypes_in_numpys_order() {
    // np.add.at of a float16 array and values of another dtype: each sum in the promoted dtype
    // (float16 for bools, float32, float64 for int32), rounded to float16 before the next one.
    // (A float16 array with values of another dtype panicked in the host scatter, found by a
    // fuzz campaign, seed 10045390.)
    use half::f16;
    let base = [0.5f32, 1.0, 2048.0].map(f16::from_f32);
    let idx: [i64; 6] = [0, 0, 2, 2, -1, 1];
    let x = pt::placeholder("x", [3], DType::F16).unwrap();
    let i = pt::placeholder("i", [6], DType::I64).unwrap();
    // The values, as numbers, and whether numpy's promoted sum is float64 (else float32 or float16,
    // both exact in float32 before the one rounding to float16).
    let cases = [
        (ArrayData::from(ndarray::arr1(&[true, true, true, false, true, true]).into_dyn()), false),
        (ArrayData::from(ndarray::arr1(&[0.1f32, 0.1, 1.0, 1.0, 0.5, -3.0]).into_dyn()), false),
        (ArrayData::from(ndarray::arr1(&[1i32, 2, 1, 1, 3, -70000]).into_dyn()), true),
    ];
    for (values, in_float64) in cases {
        let dtype = values.dtype();
        let numbers = values.to_scalars().iter().map(|s| s.to_f64()).collect::<Vec<_>>();
        let add = |a: f16, k: usize| {
            if in_float64 {
                f16::from_f64(a.to_f64() + numbers[k])
            } else {
                f16::from_f32(a.to_f32() + numbers[k] as f32)
            }
        };
        let v = pt::placeholder("v", [6], dtype).unwrap();
        let outputs = Outputs::Single(x.add_at(s![&i], &v).unwrap());
        let mut expected = base;
        for (k, &p) in idx.iter().enumerate() {
            let slot = p.rem_euclid(3) as usize;
            expected[slot] = add(expected[slot], k);
        }
        for (name, backend) in backends() {
            let program = backend.compile(&outputs).unwrap();
            let inputs = NamedData::from([
                ("x".to_string(), ArrayData::from(ndarray::Array1::from(base.to_vec()).into_dyn())),
                ("i".to_string(), i64s(&idx)),
                ("v".to_string(), values.clone()),
            ]);
            let got = program.run(&inputs).unwrap_or_else(|e| panic!("{name} with {dtype} values: {e}"));
            let bits: Vec<u16> =
                got.values().next().unwrap().as_array::<f16>().unwrap().iter().map(|h| h.to_bits()).collect();
            assert_eq!(bits, expected.map(|h| h.to_bits()), "{name} with {dtype} values");
        }
    }
}

#[test]
fn the_counts_of_two_masks_broadcast_when_the_program_runs() {
    // numpy broadcasts the positions of the masks in `x[m0, m1]` like any index arrays: a count of
    // 1 stretches to the other, whichever mask has it; unequal counts other than 1 are an error.
    let x = pt::placeholder("x", [3, 4], DType::F64).unwrap();
    let m0 = pt::placeholder("m0", [3], DType::Bool).unwrap();
    let m1 = pt::placeholder("m1", [4], DType::Bool).unwrap();
    let selected = x.index(s![&m0, &m1]).unwrap();
    let data: Vec<f64> = (0..12).map(f64::from).collect();
    let bools = |v: &[bool]| ArrayData::from(ndarray::Array1::from(v.to_vec()).into_dyn());
    let positions = |m: &[bool]| m.iter().enumerate().filter(|(_, t)| **t).map(|(i, _)| i).collect::<Vec<_>>();
    let cases: [(&[bool], &[bool]); 5] = [
        (&[true, false, false], &[false, true, false, true]),
        (&[true, false, true], &[false, false, true, false]),
        (&[false, true, true], &[true, false, false, true]),
        (&[false, false, false], &[false, true, false, false]),
        (&[true, true, true], &[true, true, false, false]),
    ];
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Single(selected.clone())).unwrap();
        for (a, b) in cases {
            let inputs = NamedData::from([
                (
                    "x".to_string(),
                    ArrayData::from(ndarray::Array2::from_shape_vec((3, 4), data.clone()).unwrap().into_dyn()),
                ),
                ("m0".to_string(), bools(a)),
                ("m1".to_string(), bools(b)),
            ]);
            let (rows, cols) = (positions(a), positions(b));
            let got = program.run(&inputs);
            if rows.len() != cols.len() && rows.len() != 1 && cols.len() != 1 {
                let err = got.unwrap_err();
                assert!(matches!(err, Error::BroadcastMismatch { .. }), "{name} on {a:?} {b:?}: {err}");
                continue;
            }
            let n = rows.len().max(cols.len()) * usize::from(!rows.is_empty() && !cols.is_empty());
            let at = |p: &[usize], j: usize| if p.len() == 1 { p[0] } else { p[j] };
            let expected: Vec<f64> = (0..n).map(|j| data[4 * at(&rows, j) + at(&cols, j)]).collect();
            assert_eq!(
                values(&got.unwrap()[pytato_runtime::backend::SINGLE_OUTPUT_NAME]),
                expected,
                "{name} on {a:?} {b:?}"
            );
        }
    }
}

#[test]
fn a_length_that_is_a_sum_of_counts_binds_each_count() {
    // Two selections joined: their sort's length is the sum of two counts, which alone
    // determines neither; the last phase reads only the sort, so it is given the counts the
    // steps found (it failed with "no input shape determines it").
    let x = pt::placeholder("x", [6], DType::F64).unwrap();
    let positive = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let small = x.index(s![&pt::less(&x, -1.0).unwrap()]).unwrap();
    let joined = pt::sort(&pt::concatenate(&[positive, small], 0).unwrap(), pt::SortOptions::axis(0)).unwrap();
    let padded = pt::concatenate(&[joined.clone(), pt::zeros([1], DType::F64).unwrap()], 0).unwrap();
    let inputs: [&[f64]; 3] = [&[3.0, -2.0, 0.5, -0.5, -4.0, 1.0], &[0.0; 6], &[-3.0; 6]];
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Single(padded.clone())).unwrap();
        assert_eq!(program.input_names(), ["x"], "{name}");
        for data in inputs {
            let got = program.run(&NamedData::from([("x".to_string(), f64s(data))])).unwrap();
            let mut expected: Vec<f64> = data.iter().copied().filter(|v| *v > 0.0 || *v < -1.0).collect();
            expected.sort_by(f64::total_cmp);
            expected.push(0.0);
            assert_eq!(values(&got[pytato_runtime::backend::SINGLE_OUTPUT_NAME]), expected, "{name} on {data:?}");
        }
    }
    // A placeholder whose length is `n + m` alone asks for both sizes; beside one of length `n`,
    // for neither.
    let (n, m) = (Dim::param("n"), Dim::param("m"));
    let sum = pt::placeholder("s", [n.add(&m).unwrap()], DType::F64).unwrap();
    let alone = backends().remove(0).1.compile(&Outputs::Single(&sum * 2.0)).unwrap();
    assert_eq!(alone.input_names(), ["s", "m", "n"]);
    let beside = pt::placeholder("b", [n], DType::F64).unwrap();
    let outputs = DictOfNamedArrays::new([("a", &sum * 2.0), ("b", beside)]).unwrap();
    let both = backends().remove(0).1.compile(&Outputs::Named(outputs)).unwrap();
    let mut names = both.input_names();
    names.sort();
    assert_eq!(names, ["b", "s"]);
}

#[test]
fn a_step_that_reads_a_count_but_not_its_selection_runs_after_the_counts_step() {
    // `cumsum(ones(selected.shape))` and a mask compared with the count read as a value depend
    // on the count but have no path to the selection: they ran in the first phase, before the
    // count was known, and failed with "no input shape determines it".
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let mask = pt::greater(&x, 0.0).unwrap().tagged(CountNamed("k".into())).unwrap();
    let selected = x.index(s![&mask]).unwrap();
    let k = pt::size_param("k").unwrap();
    let running = pt::cumsum(&pt::ones(selected.shape().clone(), DType::F64).unwrap(), None).unwrap();
    let above_count = x.index(s![&pt::greater(&x, &k).unwrap()]).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("running", &running + &selected),
        ("above_count", pt::sum(&above_count, None).unwrap()),
    ])
    .unwrap();
    let inputs: [&[f64]; 4] = [&[1.0, -2.0, 3.0, 2.5], &[-1.0, -0.0], &[0.5; 5], &[]];
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Named(outputs.clone())).unwrap();
        assert_eq!(program.input_names(), ["x"], "{name}");
        for data in inputs {
            let got = program.run(&NamedData::from([("x".to_string(), f64s(data))])).unwrap();
            let kept: Vec<f64> = data.iter().copied().filter(|v| *v > 0.0).collect();
            let running: Vec<f64> = kept.iter().enumerate().map(|(i, v)| (i + 1) as f64 + v).collect();
            let count = kept.len() as f64;
            let above: f64 = data.iter().copied().filter(|v| *v > count).sum();
            assert_eq!(values(&got["running"]), running, "{name} on {data:?}");
            assert_eq!(values(&got["above_count"]), [above], "{name} on {data:?}");
        }
    }
    // Without the selection, the program has no mask whose count it could compute: the count is
    // a size parameter no input determines, and the error says so.
    let unnamed = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let x_free = pt::cumsum(&pt::ones(unnamed.shape().clone(), DType::F64).unwrap(), None).unwrap();
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Single(x_free.clone())).unwrap();
        match program.run(&NamedData::new()) {
            Err(Error::SizeBinding { param, detail }) => {
                assert!(param.starts_with(pytato_core::names::COUNT_PREFIX), "{name}: {param}");
                assert!(detail.contains("mask that this program does not compute"), "{name}: {detail}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // A mask that reads the count it decides has no phase to run in.
    let cyclic = pt::greater(&x, &k).unwrap().tagged(CountNamed("k".into())).unwrap();
    let outputs = Outputs::Single(x.index(s![&cyclic]).unwrap());
    for (name, backend) in backends() {
        match backend.compile(&outputs) {
            Err(Error::InvalidArgument { op, message }) => {
                assert_eq!(op, "compile", "{name}");
                assert!(message.contains("\"k\""), "{name}: {message}");
            }
            Err(other) => panic!("{name}: {other}"),
            Ok(_) => panic!("{name}: a mask reading its own count compiled"),
        }
    }
}

/// Step results that only later phases read (the positions of a selection, a running sum that is
/// scaled, a sort and a binary search computed on, a scatter-add, a running sum and a sort along
/// the first axis of a 2-d array) are written into the memory of the last run's
/// (`pytato_runtime::spare`): runs with fewer and more elements than the run before must see none
/// of its values.
#[test]
fn step_results_reuse_the_last_runs_memory_and_none_of_its_values() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let positive = x.index(s![&pt::greater(&x, 0.0).unwrap()]).unwrap();
    let running = pt::cumulative_sum(&x, pt::ScanOptions::default()).unwrap();
    let sorted = pt::sort(&x, pt::SortOptions::default()).unwrap();
    let places = pt::searchsorted(&sorted, &x, pt::Side::Left, None).unwrap();
    // `x` added at its ascending order (a permutation), twice: each slot gets two terms.
    let order = pt::argsort(&x, pt::SortOptions::default()).unwrap();
    let twice = pt::concatenate(&[order.clone(), order], 0).unwrap();
    let scattered = pt::zeros_like(&x, None)
        .unwrap()
        .add_at(s![&twice], pt::concatenate(&[x.clone(), -&x * 3.0], 0).unwrap())
        .unwrap();
    // Along the first axis of (n, 2): computed with that axis last, then copied back into place.
    let columns = pt::stack(&[x.clone(), -&x], 1).unwrap();
    let first_axis = pt::ScanOptions { axis: Some(0), ..Default::default() };
    let running_columns = pt::cumulative_sum(&columns, first_axis).unwrap();
    let sorted_columns = pt::sort(&columns, pt::SortOptions { axis: Some(0), descending: false }).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("doubled", &positive * 2.0),
        ("halved", &running * 0.5),
        ("sorted_plus_one", &sorted + 1.0),
        ("places", pt::astype(&places, DType::F64).unwrap()),
        ("scattered", &scattered * 0.5),
        ("running_columns", &running_columns * 0.5),
        ("sorted_columns", &sorted_columns + 1.0),
    ])
    .unwrap();
    // Counts of 3000, 1600 (in the same memory), 1900 (grown within it), 0 and 3000 again.
    let runs: Vec<Vec<f64>> = [(3000, 3000), (3000, 1600), (2500, 1900), (40, 0), (3000, 3000)]
        .iter()
        .enumerate()
        .map(|(run, &(n, kept))| {
            (0..n).map(|i| if i < kept { (i + run) as f64 + 0.5 } else { -1.0 - i as f64 }).collect()
        })
        .collect();
    for (name, backend) in backends() {
        let program = backend.compile(&Outputs::Named(outputs.clone())).unwrap();
        let reused_before = pytato_runtime::spare::results_reused();
        for data in &runs {
            let got = program.run(&NamedData::from([("x".to_string(), f64s(data))])).unwrap();
            let doubled: Vec<f64> = data.iter().filter(|v| **v > 0.0).map(|v| v * 2.0).collect();
            assert_eq!(values(&got["doubled"]), doubled, "{name}: {} elements", data.len());
            let mut sum = 0.0;
            let halved: Vec<f64> = data
                .iter()
                .map(|v| {
                    sum += v;
                    sum * 0.5
                })
                .collect();
            assert_eq!(values(&got["halved"]), halved, "{name}: {} elements", data.len());
            let mut ascending = data.clone();
            ascending.sort_by(f64::total_cmp);
            let plus_one: Vec<f64> = ascending.iter().map(|v| v + 1.0).collect();
            assert_eq!(values(&got["sorted_plus_one"]), plus_one, "{name}: {} elements", data.len());
            let places: Vec<f64> = data.iter().map(|v| ascending.partition_point(|s| s < v) as f64).collect();
            assert_eq!(values(&got["places"]), places, "{name}: {} elements", data.len());
            let mut scattered = vec![0.0; data.len()];
            let mut order: Vec<usize> = (0..data.len()).collect();
            order.sort_by(|&i, &j| data[i].total_cmp(&data[j]));
            for (value, &slot) in
                data.iter().chain(&data.iter().map(|v| -v * 3.0).collect::<Vec<_>>()).zip(order.iter().cycle())
            {
                scattered[slot] += value;
            }
            let halved: Vec<f64> = scattered.iter().map(|v| v * 0.5).collect();
            assert_eq!(values(&got["scattered"]), halved, "{name}: {} elements", data.len());
            // Row-major (n, 2): column 0 is `x`, column 1 is `-x`.
            let (mut plus, mut minus) = (0.0, 0.0);
            let running_columns: Vec<f64> = data
                .iter()
                .flat_map(|v| {
                    (plus, minus) = (plus + v, minus - v);
                    [plus * 0.5, minus * 0.5]
                })
                .collect();
            assert_eq!(values(&got["running_columns"]), running_columns, "{name}: {} elements", data.len());
            let mut descending: Vec<f64> = data.iter().map(|v| -v).collect();
            descending.sort_by(f64::total_cmp);
            let sorted_columns: Vec<f64> =
                ascending.iter().zip(&descending).flat_map(|(a, d)| [a + 1.0, d + 1.0]).collect();
            assert_eq!(values(&got["sorted_columns"]), sorted_columns, "{name}: {} elements", data.len());
        }
        // The second and third runs reuse the eight results' memory (the fourth's are too small
        // for it to be kept, and the last needs more than those).
        assert!(pytato_runtime::spare::results_reused() >= reused_before + 16, "{name}: step results not reused");
    }
}
