//! Every conformance case on every linked backend (the same run as `cargo xtask conformance`).

#[test]
fn every_case_passes_on_every_linked_backend() {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    assert!(instances.iter().any(|(n, _)| n == "interp"), "the interpreter is always linked");
    let matrix = pytato_conformance::report::run_all(&instances);
    assert!(matrix.rows.len() >= 200, "only {} cases", matrix.rows.len());
    let text = matrix.to_text();
    let failures: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(matrix.all_passed(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Mask positions read without a normalizing copy (`pytato_core::tags::MaskPositions`): numpy's
/// values for `x[mask]` and its sum on every backend, multi-dimensional masks included, and a
/// placeholder that carries the tag with values out of range (a user may tag one) is still an
/// index error where it is read, never a read out of bounds.
#[test]
fn mask_positions_are_read_safely_on_every_backend() {
    use pytato_core::tags::MaskPositions;
    use pytato_core::{ArrayData, DType, Dim, Error, Scalar};
    use pytato_frontend as pt;
    use pytato_runtime::backend::NamedData;
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    let x = pt::placeholder("x", [Dim::param("n"), Dim::new(3)], DType::F64).unwrap();
    let mask = pt::greater(&x, 0.5).unwrap();
    let selected = x.index([pt::Idx::from(&mask)]).unwrap();
    let total = pt::sum(&selected, None).unwrap();
    let n = 5;
    let values: Vec<f64> = (0..n * 3).map(|i| ((i * 7) % 11) as f64 / 10.0 - 0.2).collect();
    let want: Vec<f64> = values.iter().copied().filter(|v| *v > 0.5).collect();
    let data = ArrayData::from_scalars(DType::F64, &[n, 3], values.iter().map(|v| Scalar::F64(*v))).unwrap();
    let inputs = NamedData::from([("x".to_string(), data)]);
    // A tagged placeholder whose values lie: 7 is out of range for an axis of length 5.
    let liar = pt::placeholder("p", [1i64, 2], DType::I64)
        .unwrap()
        .tagged(MaskPositions(pytato_core::Shape::from(vec![Dim::param("n")])))
        .unwrap();
    let y = pt::placeholder("y", [Dim::param("n")], DType::F64).unwrap();
    let lied = y.index([pt::Idx::from(&liar.index([pt::Idx::Int(0), pt::Idx::full()]).unwrap())]).unwrap();
    let lie_inputs = NamedData::from([
        ("y".to_string(), ArrayData::from(ndarray::Array1::from(vec![1.0; 5]).into_dyn())),
        ("p".to_string(), ArrayData::from(ndarray::Array2::from(vec![[0i64, 7]]).into_dyn())),
    ]);
    for (name, backend) in &instances {
        let run = |e: &pytato_core::Array, inputs: &NamedData| {
            backend.compile(&e.into())?.run(inputs).map(|mut out| out.remove("_pt_out").expect("one output"))
        };
        let got: Vec<f64> = run(&selected, &inputs).unwrap().to_scalars().iter().map(|s| s.to_f64()).collect();
        assert_eq!(got, want, "{name}");
        let sum = run(&total, &inputs).unwrap().to_scalars()[0].to_f64();
        assert!((sum - want.iter().sum::<f64>()).abs() < 1e-12, "{name}: {sum}");
        match run(&lied, &lie_inputs) {
            Err(Error::IndexOutOfBounds { .. }) => {}
            other => panic!("{name}: a lying tag gave {other:?}"),
        }
    }
}

/// Python integers no integer dtype holds (the conformance cases' expression language has 64-bit
/// integers only): numpy compares `uint64` with `2**64` and `int64` with `2**63` exactly (every
/// element is below), and divides integers by them in float64. The expected values are computed
/// here with Rust's integers and floats.
#[test]
fn python_integers_beyond_64_bits_compare_exactly_and_divide_in_float64() {
    use pytato_core::{ArrayData, DType, Scalar};
    use pytato_frontend as pt;
    use pytato_runtime::backend::NamedData;
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    let unsigned = [0u64, 1, 1 << 63, u64::MAX];
    let signed = [i64::MIN, -1, 0, i64::MAX];
    let u = pt::placeholder("u", [4], DType::U64).unwrap();
    let i = pt::placeholder("i", [4], DType::I64).unwrap();
    let (two_64, two_63) = (1i128 << 64, 1i128 << 63);
    let int = |v: i128| pytato_core::Operand::Scalar(pytato_core::dtype::WeakScalar::Int(v));
    let inputs = NamedData::from([
        ("u".to_string(), ArrayData::from_scalars(DType::U64, &[4], unsigned.map(Scalar::U64)).unwrap()),
        ("i".to_string(), ArrayData::from_scalars(DType::I64, &[4], signed.map(Scalar::I64)).unwrap()),
    ]);
    let comparisons = [
        ("u < 2**64", pt::less(&u, int(two_64)).unwrap(), unsigned.map(|v| i128::from(v) < two_64)),
        ("u >= 2**64", pt::greater_equal(&u, int(two_64)).unwrap(), unsigned.map(|v| i128::from(v) >= two_64)),
        ("i < 2**63", pt::less(&i, int(two_63)).unwrap(), signed.map(|v| i128::from(v) < two_63)),
        ("-2**63-1 < i", pt::less(int(-two_63 - 1), &i).unwrap(), signed.map(|v| -two_63 - 1 < i128::from(v))),
        ("i == 2**63", pt::equal(&i, int(two_63)).unwrap(), signed.map(|v| i128::from(v) == two_63)),
        ("u != 2**64", pt::not_equal(&u, int(two_64)).unwrap(), unsigned.map(|v| i128::from(v) != two_64)),
    ];
    let quotient = pt::divide(&i, int(two_64)).unwrap();
    assert_eq!(quotient.dtype(), DType::F64);
    let expected_quotient = signed.map(|v| v as f64 / 18446744073709551616.0);
    let mut named: Vec<(String, pytato_core::Array)> =
        comparisons.iter().enumerate().map(|(k, (_, e, _))| (format!("c{k}"), e.clone())).collect();
    named.push(("quotient".to_string(), quotient));
    let outputs = pytato_core::DictOfNamedArrays::new(named.iter().map(|(n, e)| (n.as_str(), e.clone()))).unwrap();
    for (name, backend) in &instances {
        let got = backend.compile(&(&outputs).into()).unwrap().run(&inputs).unwrap();
        for (k, (label, _, expected)) in comparisons.iter().enumerate() {
            let values: Vec<bool> =
                got[&format!("c{k}")].to_scalars().iter().map(|s| matches!(s, Scalar::Bool(true))).collect();
            assert_eq!(values, expected.to_vec(), "{name}: {label}");
        }
        let values: Vec<f64> = got["quotient"].to_scalars().iter().map(|s| s.to_f64()).collect();
        assert_eq!(values, expected_quotient.to_vec(), "{name}: i / 2**64");
    }
}

/// `nanargmax`/`nanargmin` (`Func::RequireNonNegative`): the index of the first extremum with NaNs
/// skipped, computed by a plain loop here; a slice of NaNs only fails the program with numpy's
/// "All-NaN slice encountered", also where the program uses another slice only (numpy checks
/// them all), and the same program runs again on good data after it failed.
#[test]
fn nanargmax_and_nanargmin_refuse_all_nan_slices_on_every_backend() {
    use pytato_core::{ArrayData, DType, Error, Idx, Scalar};
    use pytato_frontend as pt;
    use pytato_runtime::backend::NamedData;
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    let x = pt::placeholder("x", [3, 4], DType::F64).unwrap();
    let rows = |values: &[f64]| {
        let data = ArrayData::from_scalars(DType::F64, &[3, 4], values.iter().map(|v| Scalar::F64(*v))).unwrap();
        NamedData::from([("x".to_string(), data)])
    };
    let nan = f64::NAN;
    let good = [nan, 2.0, -1.0, 2.0, -0.0, 0.0, nan, f64::NEG_INFINITY, 5.0, nan, nan, 3.0];
    // The first index of the extremum among the numbers of each row.
    let first = |row: &[f64], larger: bool| -> i64 {
        let mut best: Option<(usize, f64)> = None;
        for (k, &v) in row.iter().enumerate() {
            if v.is_nan() {
                continue;
            }
            if best.is_none_or(|(_, b)| if larger { v > b } else { v < b }) {
                best = Some((k, v));
            }
        }
        best.expect("a number in the row").0 as i64
    };
    let all_nan_last_row = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, nan, nan, nan, nan];
    for (name, backend) in &instances {
        for (larger, f) in [(true, pt::nanargmax as fn(_, _, _) -> _), (false, pt::nanargmin)] {
            let per_row = f(&x, Some(1), false).unwrap();
            let first_row = per_row.index([Idx::Int(0)]).unwrap();
            let outputs =
                pytato_core::DictOfNamedArrays::new([("rows", per_row.clone()), ("flat", f(&x, None, false).unwrap())])
                    .unwrap();
            let program = backend.compile(&pytato_runtime::backend::Outputs::Named(outputs)).unwrap();
            let got = program.run(&rows(&good)).unwrap();
            let expected: Vec<i64> = good.chunks(4).map(|row| first(row, larger)).collect();
            let values = |d: &ArrayData| d.to_scalars().iter().map(|s| s.to_i128().unwrap() as i64).collect::<Vec<_>>();
            assert_eq!(values(&got["rows"]), expected, "{name} larger={larger}");
            assert_eq!(values(&got["flat"]), [first(&good, larger)], "{name} larger={larger}");
            let partial = backend.compile(&(&first_row).into()).unwrap();
            for program in [&program, &partial] {
                match program.run(&rows(&all_nan_last_row)) {
                    Err(Error::InvalidArgument { op, message }) => {
                        assert_eq!(op, if larger { "nanargmax" } else { "nanargmin" }, "{name}");
                        assert_eq!(message, "All-NaN slice encountered", "{name}");
                    }
                    other => panic!("{name}: an all-NaN row gave {other:?}"),
                }
            }
            assert_eq!(values(&partial.run(&rows(&good)).unwrap()["_pt_out"]), [expected[0]], "{name} after a failure");
        }
    }
}

/// Known lengths up to `2**63 - 1` compile on every backend, and a run is refused with a typed
/// error before anything is allocated: a broadcast of a (3, 4) array to (2**62, 3, 4) made
/// Cranelift's choice of axes to unroll overflow an `i64` (a panic in debug builds).
#[test]
fn arrays_too_large_to_run_compile_and_are_refused_on_every_backend() {
    use pytato_core::{ArrayData, DType, Error};
    use pytato_frontend as pt;
    use pytato_runtime::backend::NamedData;
    let (instances, _) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    let x = pt::placeholder("x", [3, 4], DType::F64).unwrap();
    let inputs = NamedData::from([("x".to_string(), ArrayData::zeros(DType::F64, &[3, 4]))]);
    for huge in [1_i64 << 62, 3 << 61, i64::MAX] {
        let column = x.index([pt::Idx::full(), pt::Idx::Slice { start: Some(0), stop: Some(1), step: 1 }]).unwrap();
        let row = pt::broadcast_to(&column, [3, huge]).unwrap();
        let cases = [
            ("broadcast", pt::broadcast_to(&x, [huge, 3, 4]).unwrap()),
            ("broadcast, middle", pt::broadcast_to(&x, [2, huge, 3, 4]).unwrap()),
            ("sum of a broadcast", pt::sum(&pt::broadcast_to(&x, [huge, 3, 4]).unwrap(), 0).unwrap()),
            ("row sums", pt::sum(&row, 1).unwrap()),
            ("row maxima", pt::max(&row, 1).unwrap()),
            ("running sums", pt::cumsum(&row, Some(1)).unwrap()),
            ("sorted rows", pt::sort(&row, pt::SortOptions::default()).unwrap()),
        ];
        for (what, e) in cases {
            for (name, backend) in &instances {
                let program = backend.compile(&(&e).into()).unwrap_or_else(|e| panic!("{name}, {what}, {huge}: {e}"));
                match program.run(&inputs) {
                    Err(Error::InvalidForSizes { .. }) => {}
                    other => {
                        panic!("{name}, {what}, {huge}: {:?}", other.map(|o| o.keys().cloned().collect::<Vec<_>>()))
                    }
                }
            }
        }
    }
}
