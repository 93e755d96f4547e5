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
