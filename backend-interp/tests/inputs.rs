//! Bad run-time input is a typed error on the interpreter, never a panic or an abort.

use pytato_backend_interp::Interpreter;
use pytato_core::backend::{Backend, NamedData};
use pytato_core::frontend as pt;
use pytato_core::{ArrayData, DType, Dim, Error, Scalar};

#[test]
fn sizes_too_large_to_address_are_rejected_before_running() {
    let n = Dim::param("n");
    let big = pt::zeros([n.clone(), n], DType::F64).unwrap();
    let program = Interpreter.compile(&(&big).into()).unwrap();
    let inputs = NamedData::from([("n".to_string(), ArrayData::from_scalar(Scalar::I64(1 << 32)))]);
    let err = program.run(&inputs).unwrap_err();
    assert!(matches!(err, Error::InvalidForSizes { .. }), "{err}");
    assert!(err.to_string().contains("too large"), "{err}");
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
    let ok = program.run(&NamedData::from([("n".to_string(), ArrayData::from_scalar(Scalar::I32(3)))])).unwrap();
    assert_eq!(ok["_pt_out"].shape(), &[3]);
}
