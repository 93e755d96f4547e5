//! Arrays kept with a backend between runs (`Backend::upload`, `Program::run_device`,
//! `DeviceArray::to_host`) on every linked backend: a time loop whose state never leaves the
//! device gives the bits of the same loop run through the host; inputs are checked as `run`
//! checks them; device arrays of one backend are accepted by another.

use pytato_conformance::linked_backends as backends;
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim, Error, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{NamedData, Outputs};
use pytato_runtime::device::{DeviceArray, DeviceInput, NamedDeviceInputs};

/// Every backend that can run here (wgpu may have no adapter outside CI).
/// One step of a smoothing loop over `u` (named like its own output, as a time loop names its
/// state), with a count of the positive entries and the step's input as a second output.
fn step(dtype: DType) -> Outputs {
    let u = pt::placeholder("u", [Dim::param("n")], dtype).unwrap();
    let next = if dtype.is_inexact() {
        let left = pt::roll(&u, 1, None).unwrap();
        let right = pt::roll(&u, -1, None).unwrap();
        pt::multiply(pt::add(&left, &right).unwrap(), 0.5).unwrap()
    } else {
        pt::subtract(pt::roll(&u, 1, None).unwrap(), &u).unwrap()
    };
    let positive = pt::sum(&pt::greater(&next, 0).unwrap(), None).unwrap();
    Outputs::Named(DictOfNamedArrays::new([("u", next), ("positive", positive), ("previous", u)]).unwrap())
}

fn initial(dtype: DType, n: usize) -> ArrayData {
    let values = (0..n).map(|i| Scalar::F64(((i * 37) % 11) as f64 - 4.5 + if i == 3 { 1e300 } else { 0.0 }));
    ArrayData::from_scalars(dtype, &[n], values.map(|v| v.cast(dtype))).unwrap()
}

/// Every conformance case with its inputs uploaded and run on device data: the same values as
/// through the host (numpy's), on every backend. On wgpu this covers programs in phases whose
/// scans and searches run as kernels on the device (`DeviceSteps`), and the errors a run on
/// device data reports at the next wait.
#[test]
fn every_case_passes_on_device_data() {
    let matrix = pytato_conformance::report::run_all_on_device(&backends());
    let text = matrix.to_text();
    let failures: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(matrix.all_passed(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_time_loop_on_the_device_gives_the_bits_of_the_loop_through_the_host() {
    for (name, backend) in backends() {
        for dtype in [DType::F64, DType::F32, DType::C128, DType::I8, DType::U16, DType::I64] {
            for n in [0, 1, 7, 300] {
                let outputs = step(dtype);
                let program = match backend.compile(&outputs) {
                    Err(Error::Unsupported { .. }) => continue,
                    other => other.unwrap(),
                };
                let u0 = initial(dtype, n);
                // Through the host.
                let mut host = u0.clone();
                let mut host_positive = None;
                for _ in 0..5 {
                    let mut out = program.run(&NamedData::from([("u".to_string(), host.clone())])).unwrap();
                    assert_eq!(out["previous"], host, "{name}: an input returned as an output");
                    host = out.remove("u").unwrap();
                    host_positive = out.remove("positive");
                }
                // On the device: uploaded once, read back once.
                let mut u = backend.upload(&u0.view()).unwrap();
                assert_eq!((u.dtype(), u.shape()), (dtype, &[n][..]));
                let mut positive = None;
                for _ in 0..5 {
                    let mut out =
                        program.run_device(&NamedDeviceInputs::from([("u", DeviceInput::Device(&u))])).unwrap();
                    assert_eq!(out["previous"].to_host().unwrap(), u.to_host().unwrap(), "{name}");
                    u = out.remove("u").unwrap();
                    positive = out.remove("positive");
                }
                let what = format!("{name}, {dtype}, n = {n}");
                assert_eq!(u.to_host().unwrap(), host, "{what}");
                assert_eq!(positive.unwrap().to_host().unwrap(), host_positive.unwrap(), "{what}");
            }
        }
    }
}

#[test]
fn host_inputs_and_device_arrays_of_other_backends_are_accepted() {
    let instances = backends();
    let outputs = step(DType::F64);
    let u0 = initial(DType::F64, 9);
    let want =
        instances[0].1.compile(&outputs).unwrap().run(&NamedData::from([("u".to_string(), u0.clone())])).unwrap();
    for (from, source) in &instances {
        let held = source.upload(&u0.view()).unwrap();
        for (to, target) in &instances {
            let program = target.compile(&outputs).unwrap();
            for input in [DeviceInput::Device(&held), DeviceInput::Host(u0.view())] {
                let out = program.run_device(&NamedDeviceInputs::from([("u", input)])).unwrap();
                let got: NamedData = out.iter().map(|(k, v)| (k.clone(), v.to_host().unwrap())).collect();
                assert_eq!(got, want, "an array of {from} run by {to}");
            }
        }
    }
}

#[test]
fn device_inputs_are_checked_like_host_inputs() {
    for (name, backend) in backends() {
        let program = backend.compile(&step(DType::F64)).unwrap();
        let run = |a: &DeviceArray| program.run_device(&NamedDeviceInputs::from([("u", DeviceInput::Device(a))]));
        let wrong_dtype = backend.upload(&initial(DType::F32, 4).view()).unwrap();
        assert!(matches!(run(&wrong_dtype), Err(Error::InputDType { .. })), "{name}");
        let wrong_ndim = backend.upload(&ArrayData::zeros(DType::F64, &[2, 2]).view()).unwrap();
        assert!(matches!(run(&wrong_ndim), Err(Error::InputShape { .. })), "{name}");
        let held = backend.upload(&initial(DType::F64, 4).view()).unwrap();
        let unknown = program.run_device(&NamedDeviceInputs::from([("u", (&held).into()), ("w", (&held).into())]));
        assert!(matches!(unknown, Err(Error::UnknownInput { .. })), "{name}");
        assert!(matches!(program.run_device(&NamedDeviceInputs::new()), Err(Error::MissingInput { .. })), "{name}");
    }
}

#[test]
fn out_of_range_indices_are_errors_on_the_device_too() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let idx = pt::placeholder("idx", [Dim::new(2)], DType::I64).unwrap();
    let gathered = x.index([pt::Idx::from(&idx)]).unwrap();
    for (name, backend) in backends() {
        let program = backend.compile(&(&gathered).into()).unwrap();
        let x = backend.upload(&initial(DType::F64, 5).view()).unwrap();
        let idx_data = ArrayData::from_scalars(DType::I64, &[2], [Scalar::I64(1), Scalar::I64(5)]).unwrap();
        let idx = backend.upload(&idx_data.view()).unwrap();
        // A backend that only enqueues device runs (wgpu) reports at the next synchronization.
        let result = program
            .run_device(&NamedDeviceInputs::from([("x", (&x).into()), ("idx", (&idx).into())]))
            .and_then(|_| backend.synchronize());
        assert!(matches!(result, Err(Error::IndexOutOfBounds { .. })), "{name}: {result:?}");
        assert!(backend.synchronize().is_ok(), "{name}: an error is reported once");
    }
}
