//! One compiled program of the Array API additions with symbolic lengths, run twice with other
//! sizes (empty included) on every linked backend, outputs named like the inputs; expected values
//! from plain loops written here.

use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim};
use pytato_frontend::{self as pt, Side};
use pytato_runtime::backend::NamedData;

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

/// numpy's sort order: NaN after everything.
fn before(a: f64, b: f64) -> bool {
    a < b || (b.is_nan() && !a.is_nan())
}

#[test]
fn searchsorted_and_argmax_run_again_with_other_sizes() {
    let a = pt::placeholder("a", [Dim::param("n")], DType::F64).unwrap();
    let v = pt::placeholder("v", [Dim::param("m")], DType::F64).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("a", pt::searchsorted(&a, &v, Side::Right, None).unwrap()),
        ("v", pt::argmax(&pt::concatenate(&[a.clone(), v.clone()], 0).unwrap(), None, false).unwrap()),
    ])
    .unwrap();
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    let runs: [(&[f64], &[f64]); 2] = [
        (&[-1.0, -0.0, 0.0, 2.0, 2.0, f64::INFINITY, f64::NAN], &[0.0, f64::NAN, 2.0, -5.0, f64::INFINITY]),
        (&[], &[f64::NEG_INFINITY]),
    ];
    for (name, backend) in instances {
        let program = backend.compile(&(&outputs).into()).unwrap();
        for (sorted, values) in runs {
            let inputs = NamedData::from([("a".to_string(), f64s(sorted)), ("v".to_string(), f64s(values))]);
            let got = program.run(&inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
            let positions: Vec<i64> =
                values.iter().map(|&x| sorted.iter().filter(|&&s| !before(x, s)).count() as i64).collect();
            let got_positions: Vec<i64> = got["a"].to_scalars().iter().map(|s| s.to_f64() as i64).collect();
            assert_eq!(got_positions, positions, "{name}: searchsorted of {values:?} in {sorted:?}");
            // The first NaN, else the first maximum.
            let all: Vec<f64> = sorted.iter().chain(values).copied().collect();
            let best = all.iter().position(|x| x.is_nan()).unwrap_or_else(|| {
                let m = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                all.iter().position(|&x| x == m).expect("non-empty")
            });
            assert_eq!(got["v"].to_scalars()[0].to_f64() as usize, best, "{name}: argmax of {all:?}");
        }
    }
}

/// A stable insertion sort of the indices of `x` by `first` (whether one element goes before
/// another).
fn stable_order(x: &[f64], first: impl Fn(f64, f64) -> bool) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::new();
    for i in 0..x.len() {
        let at = order.iter().position(|&j| first(x[i], x[j])).unwrap_or(order.len());
        order.insert(at, i);
    }
    order
}

#[test]
fn sort_argsort_and_unique_counts_run_again_with_other_sizes() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let unique = pt::unique_counts(&x).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("x", pt::sort(&x, pt::SortOptions::default()).unwrap()),
        ("order", pt::argsort(&x, pt::SortOptions::default().descending(true)).unwrap()),
        ("values", unique.values),
        ("counts", unique.counts),
    ])
    .unwrap();
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    let nan = f64::NAN;
    let runs: [&[f64]; 3] = [&[2.0, nan, -0.0, 1.0, 0.0, nan, 2.0, f64::NEG_INFINITY, 1.0], &[], &[5.0]];
    for (name, backend) in instances {
        let program = backend.compile(&(&outputs).into()).unwrap();
        for data in runs {
            let got = program
                .run(&NamedData::from([("x".to_string(), f64s(data))]))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let ascending: Vec<f64> = stable_order(data, before).into_iter().map(|i| data[i]).collect();
            let got_sorted: Vec<f64> = got["x"].to_scalars().iter().map(|s| s.to_f64()).collect();
            let same = |a: &[f64], b: &[f64]| {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
            };
            assert!(same(&got_sorted, &ascending), "{name}: sort of {data:?} gave {got_sorted:?}");
            let descending: Vec<i64> = stable_order(data, |a, b| before(b, a)).into_iter().map(|i| i as i64).collect();
            let got_order: Vec<i64> = got["order"].to_scalars().iter().map(|s| s.to_f64() as i64).collect();
            assert_eq!(got_order, descending, "{name}: descending argsort of {data:?}");
            // Runs of equal values in the sorted array (NaNs all distinct, -0.0 == 0.0).
            let (mut values, mut counts) = (Vec::new(), Vec::new());
            for (i, &v) in ascending.iter().enumerate() {
                if i == 0 || v != ascending[i - 1] {
                    values.push(v);
                    counts.push(0i64);
                }
                *counts.last_mut().expect("a run") += 1;
            }
            let got_values: Vec<f64> = got["values"].to_scalars().iter().map(|s| s.to_f64()).collect();
            assert!(same(&got_values, &values), "{name}: unique values of {data:?} gave {got_values:?}");
            let got_counts: Vec<i64> = got["counts"].to_scalars().iter().map(|s| s.to_f64() as i64).collect();
            assert_eq!(got_counts, counts, "{name}: unique counts of {data:?}");
        }
    }
}

#[test]
fn host_step_results_that_are_outputs_are_handed_over_by_run_and_run_into() {
    use pytato_runtime::ArrayDataViewMut;
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let sorted = pt::sort(&x, pt::SortOptions::default()).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("x", sorted.clone()),
        ("again", sorted),
        ("running", pt::cumsum(&x, None).unwrap()),
        ("twice", &x * 2.0),
    ])
    .unwrap();
    let data = [3.0, -1.0, 2.0, f64::NAN, 0.5];
    let running: Vec<f64> = data
        .iter()
        .scan(0.0, |acc, v| {
            *acc += v;
            Some(*acc)
        })
        .collect();
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for (name, backend) in instances {
        let program = backend.compile(&(&outputs).into()).unwrap();
        assert_eq!(program.output_names().len(), 4, "{name}");
        let inputs = NamedData::from([("x".to_string(), f64s(&data))]);
        let got = program.run(&inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
        let values = |d: &ArrayData| d.to_scalars().iter().map(|s| s.to_f64()).collect::<Vec<f64>>();
        for key in ["x", "again"] {
            let v = values(&got[key]);
            assert!(v[..4] == [-1.0, 0.5, 2.0, 3.0] && v[4].is_nan(), "{name}: {key} = {v:?}");
        }
        let same = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(p, q)| p == q || (p.is_nan() && q.is_nan()));
        assert!(same(&values(&got["running"]), &running), "{name}: {:?} vs {running:?}", values(&got["running"]));
        // run_into writes the same values into the caller's arrays.
        fn views_of(arrays: &mut [ndarray::ArrayD<f64>]) -> pytato_runtime::backend::NamedViewsMut<'_> {
            let names = ["x", "again", "running", "twice"];
            names.into_iter().zip(arrays.iter_mut().map(|a| ArrayDataViewMut::from(a.view_mut()))).collect()
        }
        let mut arrays: Vec<ndarray::ArrayD<f64>> = (0..4).map(|_| ndarray::ArrayD::zeros(vec![5])).collect();
        {
            let mut views = views_of(&mut arrays);
            let views_in = pytato_runtime::backend::views(&inputs);
            program.run_into(&views_in, &mut views).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(same(arrays[0].as_slice().unwrap(), &values(&got["x"])), "{name}");
        assert!(same(arrays[1].as_slice().unwrap(), &values(&got["again"])), "{name}");
        assert!(same(arrays[2].as_slice().unwrap(), &running), "{name}");
        assert_eq!(arrays[3][[0]], 6.0, "{name}");
        // A wrong array for a handed-over output is the typed error.
        let mut wrong: Vec<ndarray::ArrayD<f64>> =
            [4, 5, 5, 5].into_iter().map(|n| ndarray::ArrayD::zeros(vec![n])).collect();
        let mut views = views_of(&mut wrong);
        let err = program.run_into(&pytato_runtime::backend::views(&inputs), &mut views).unwrap_err();
        assert_eq!(err.kind(), "OutputArray", "{name}: {err}");
        assert_eq!(views.len(), 4, "{name}: the caller's views are all given back");
    }
}
