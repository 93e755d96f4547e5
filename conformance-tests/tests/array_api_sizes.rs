//! One compiled program of the Array API additions with symbolic lengths, run twice with other
//! sizes (empty included) on every linked backend, outputs named like the inputs; expected values
//! from plain loops written here.

use pytato_core::backend::NamedData;
use pytato_core::frontend::{self as pt, Side};
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim};

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
