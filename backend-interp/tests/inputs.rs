//! Bad run-time input is a typed error on the interpreter, never a panic or an abort.

use pytato_backend_interp::Interpreter;
use pytato_core::{ArrayData, DType, Dim, Error, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

#[test]
fn sizes_too_large_to_address_are_rejected_before_running() {
    let n = Dim::param("n");
    let big = pt::zeros([n.clone(), n], DType::F64).unwrap();
    let program = Interpreter.compile(&(&big).into()).unwrap();
    let inputs = NamedData::from([("n".to_string(), ArrayData::from_scalar(Scalar::I64(1 << 32)))]);
    let err = program.run(&inputs).unwrap_err();
    assert!(matches!(err, Error::InvalidForSizes { .. }), "{err}");
    assert!(err.to_string().contains("too large"), "{err}");
    // No elements, but the other lengths' product overflows: numpy's "array is too big" (the
    // interpreter's allocation failed with "cannot allocate 0 bytes").
    let m = Dim::param("m");
    let empty = pt::zeros([Dim::new(0), m.clone(), m], DType::F64).unwrap();
    let program = Interpreter.compile(&(&empty).into()).unwrap();
    let inputs = NamedData::from([("m".to_string(), ArrayData::from_scalar(Scalar::I64(1 << 32)))]);
    let err = program.run(&inputs).unwrap_err();
    assert!(matches!(err, Error::InvalidForSizes { .. }), "{err}");
    let inputs = NamedData::from([("m".to_string(), ArrayData::from_scalar(Scalar::I64(1 << 20)))]);
    assert_eq!(program.run(&inputs).unwrap()["_pt_out"].shape(), &[0, 1 << 20, 1 << 20]);
}

#[test]
fn size_parameters_must_be_0d_integers() {
    let n = Dim::param("n");
    let z = pt::zeros([n], DType::F64).unwrap();
    let program = Interpreter.compile(&(&z).into()).unwrap();
    for bad in [ArrayData::from_scalar(Scalar::F64(3.0)), ArrayData::zeros(DType::I64, &[1])] {
        let err = program.run(&NamedData::from([("n".to_string(), bad)])).unwrap_err();
        assert!(matches!(err, Error::SizeBinding { .. }), "{err}");
    }
    let err = program.run(&NamedData::from([("n".to_string(), ArrayData::from_scalar(Scalar::I64(-2)))])).unwrap_err();
    assert!(err.to_string().contains("negative"), "{err}");
    // A uint64 beyond int64 is out of range, not "not an integer".
    let huge = ArrayData::from_scalar(Scalar::U64(u64::MAX));
    let err = program.run(&NamedData::from([("n".to_string(), huge)])).unwrap_err();
    assert!(matches!(err, Error::SizeBinding { .. }), "{err}");
    assert!(err.to_string().contains("18446744073709551615 is out of the range"), "{err}");
    let ok = program.run(&NamedData::from([("n".to_string(), ArrayData::from_scalar(Scalar::I32(3)))])).unwrap();
    assert_eq!(ok["_pt_out"].shape(), &[3]);
}

#[test]
fn a_placeholder_only_zeros_like_reads_binds_its_lengths_where_given() {
    // zeros_like(x) does not read x (seed: zero(...)), but x given says what n is.
    let x = pt::placeholder("x", [Dim::param("n"), Dim::new(3)], DType::F32).unwrap();
    let program = Interpreter.compile(&(&pt::zeros_like(&x, None).unwrap()).into()).unwrap();
    let given = |name: &str, data: ArrayData| NamedData::from([(name.to_string(), data)]);
    let out = program.run(&given("x", ArrayData::zeros(DType::F32, &[2, 3]))).unwrap();
    assert_eq!(out["_pt_out"].shape(), &[2, 3]);
    let out = program.run(&given("n", ArrayData::from_scalar(Scalar::I64(4)))).unwrap();
    assert_eq!(out["_pt_out"].shape(), &[4, 3]);
    // Given, it is checked as a required input is.
    let err = program.run(&given("x", ArrayData::zeros(DType::F64, &[2, 3]))).unwrap_err();
    assert!(matches!(err, Error::InputDType { .. }), "{err}");
    let err = program.run(&given("x", ArrayData::zeros(DType::F32, &[2, 4]))).unwrap_err();
    assert!(matches!(err, Error::InputShape { .. }), "{err}");
    let mut both = given("x", ArrayData::zeros(DType::F32, &[2, 3]));
    both.insert("n".into(), ArrayData::from_scalar(Scalar::I64(5)));
    assert!(program.run(&both).is_err(), "n = 5 contradicts x's 2 rows");
    let err = program.run(&NamedData::new()).unwrap_err();
    assert!(matches!(err, Error::SizeBinding { .. }), "{err}");
}

#[test]
fn million_node_chain_compiles_and_runs_on_a_2mib_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let x = pt::placeholder("x", [2], DType::F64).unwrap();
            let mut a = x.clone();
            for k in 0..1_000_000 {
                a = if k % 2 == 0 { pt::add(&a, 1.0).unwrap() } else { pt::roll(&a, 1, Some(0)).unwrap() };
            }
            let program = Interpreter.compile(&(&a).into()).unwrap();
            let data = ArrayData::from(ndarray::arr1(&[0.0, 10.0]).into_dyn());
            let out = program.run(&NamedData::from([("x".to_string(), data)])).unwrap();
            // 500,000 additions of 1 and an even number of rolls (so no net rotation).
            assert_eq!(out["_pt_out"].as_array::<f64>().unwrap().as_slice().unwrap(), &[500_000.0, 500_010.0]);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn one_input_declared_twice_is_bound_everywhere() {
    // Two equal declarations of "x" are one input (DuplicateName is only for different ones).
    let x1 = pt::placeholder("x", [3], DType::F64).unwrap();
    let x2 = pt::placeholder("x", [3], DType::F64).unwrap();
    let y = &pt::sin(&x1).unwrap() + &x2;
    let program = Interpreter.compile(&(&y).into()).unwrap();
    assert_eq!(program.input_names(), ["x"]);
    let data = ArrayData::from(ndarray::arr1(&[0.0, 1.0, 2.0]).into_dyn());
    let out = program.run(&NamedData::from([("x".to_string(), data)])).unwrap();
    let got = out["_pt_out"].as_array::<f64>().unwrap();
    for (i, v) in [0.0f64, 1.0, 2.0].into_iter().enumerate() {
        assert_eq!(got[[i]], v.sin() + v);
    }
}
