//! Running out of GPU memory is a typed error (`Error::OutOfMemory`), never a run that reports
//! success with outputs no kernel wrote, and the backend works on afterwards.
//!
//! wgpu does not fail a buffer's creation: a buffer the device could not have is invalid, and a
//! submission that uses it does nothing. The backend creates every buffer in an error scope; this
//! test makes the device run out. On lavapipe device memory is the process's memory, so the test
//! runs itself again in a child whose address space it then limits (`prlimit`) to a little more
//! than it uses: a gigabyte on the "GPU" cannot be had. On a real GPU the host's limit does not
//! bound device memory, so there the test says it was skipped.

mod support;
use support::gpu;

use ndarray::ArrayD;
use pytato_backend_wgpu::Wgpu;
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim, Error, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Program};
use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};

const TEST: &str = "running_out_of_device_memory_is_a_typed_error_and_the_backend_goes_on";
const CHILD_VAR: &str = "PYTATO_TEST_OUT_OF_MEMORY_CHILD";

/// Room the limited child has beyond what it uses when the limit is set.
const HEADROOM: u64 = 96 << 20;
/// Elements of the large arrays: 128 MiB of float64 (as large as lavapipe binds), more than the
/// headroom.
const LARGE: usize = 1 << 24;
/// Outputs of the large program: a gigabyte in all.
const OUTPUTS: usize = 8;

#[test]
fn running_out_of_device_memory_is_a_typed_error_and_the_backend_goes_on() {
    if std::env::var_os(CHILD_VAR).is_none() {
        let Some(w) = gpu() else { return };
        if w.loop_limit().is_none() {
            eprintln!("skipped: {} is not llvmpipe, whose device memory a limit on the host's can bound", w.adapter());
            return;
        }
        let (passed, text) = support::run_test_in_child(TEST, CHILD_VAR, "1");
        assert!(passed, "the child with limited memory failed:\n{text}");
        assert!(text.contains("limited to"), "the child did not limit itself:\n{text}");
        return;
    }
    let w = Wgpu::new().expect("the parent found an adapter");

    // Outputs `s + k` of length `n`, large ones from a 0-d input.
    let s = pt::placeholder("s", [0i64; 0], DType::F64).unwrap();
    let filled = &pt::full([Dim::param("n")], 1.0, DType::F64).unwrap() * &s;
    let names: Vec<String> = (0..OUTPUTS).map(|k| format!("y{k}")).collect();
    let outputs = names.iter().enumerate().map(|(k, name)| (name.as_str(), &filled + k as f64));
    let program = w.compile(&DictOfNamedArrays::new(outputs).unwrap().into()).unwrap();
    let inputs = |n: usize, value: f64| {
        NamedData::from([
            ("n".to_string(), ArrayData::from_scalar(Scalar::I64(n as i64))),
            ("s".to_string(), ArrayData::from_scalar(Scalar::F64(value))),
        ])
    };
    let check_small = |program: &dyn Program, value: f64| {
        let out = program.run(&inputs(1000, value)).expect("a small run after running out of memory");
        for (k, name) in names.iter().enumerate() {
            assert_eq!(out[name].to_scalars(), vec![Scalar::F64(value + k as f64); 1000]);
        }
    };
    check_small(&*program, 2.0);
    // Made before the limit: the host side of a large upload, and a large array on the device
    // with a program that sorts it (on the device: `crate::steps`).
    let host_large = ArrayData::from(ArrayD::from_elem(vec![LARGE], 3.0f64));
    let device_large = w.upload(&host_large.view()).unwrap();
    let x = pt::placeholder("x", [Dim::param("m")], DType::F64).unwrap();
    let sort = w.compile(&(&pt::sort(&x, Default::default()).unwrap()).into()).unwrap();
    let sort_small = |values: &[f64]| {
        let data = ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn());
        let small = w.upload(&data.view()).unwrap();
        let out = sort.run_device(&NamedDeviceInputs::from([("x", DeviceInput::Device(&small))])).unwrap();
        out["_pt_out"].to_host().unwrap().to_scalars()
    };
    assert_eq!(sort_small(&[3.0, -1.0, 2.0]), [-1.0, 2.0, 3.0].map(Scalar::F64));

    limit_address_space();

    let expect_out_of_memory = |result: pytato_core::Result<()>, what: &str| match result {
        Err(e @ Error::OutOfMemory { .. }) => {
            println!("{what}: {e}");
            let text = e.to_string();
            assert!(text.contains("134217728 bytes") && text.contains("on the GPU"), "{what}: {text}");
        }
        Err(e) => panic!("{what}: expected OutOfMemory, got {e}"),
        Ok(()) => panic!("{what}: succeeded beyond the limit"),
    };
    // A run on host data: its output buffers on the device.
    expect_out_of_memory(program.run(&inputs(LARGE, 5.0)).map(drop), "run");
    check_small(&*program, 7.0);
    // A run that leaves its output on the device.
    let (n, value) = (ArrayData::from_scalar(Scalar::I64(LARGE as i64)), ArrayData::from_scalar(Scalar::F64(5.0)));
    let device_inputs: NamedDeviceInputs<'_> =
        NamedDeviceInputs::from([("n", DeviceInput::Host(n.view())), ("s", DeviceInput::Host(value.view()))]);
    expect_out_of_memory(program.run_device(&device_inputs).map(drop), "run_device");
    check_small(&*program, 11.0);
    // An upload.
    expect_out_of_memory(w.upload(&host_large.view()).map(drop), "upload");
    check_small(&*program, 13.0);
    // A sort on the device: its passes' buffers.
    let on_device = NamedDeviceInputs::from([("x", DeviceInput::Device(&device_large))]);
    expect_out_of_memory(sort.run_device(&on_device).map(drop), "a sort on device data");
    assert_eq!(sort_small(&[0.5, -0.0, -7.0, 0.0]), [-7.0, -0.0, 0.0, 0.5].map(Scalar::F64));
    // A new program of the same kind compiles and runs (pipelines, constant tables).
    let other = w.compile(&(&(&filled + 0.5)).into()).unwrap();
    let out = other.run(&inputs(3, 1.0)).unwrap();
    assert_eq!(out["_pt_out"].to_scalars(), vec![Scalar::F64(1.5); 3]);
}

/// Limits this process's address space to what it uses now plus [`HEADROOM`], with `prlimit`
/// (util-linux): the test needs no `unsafe` of its own.
fn limit_address_space() {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux's /proc");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let limit = kib * 1024 + HEADROOM;
    let done = std::process::Command::new("prlimit")
        .args(["--pid", &std::process::id().to_string(), &format!("--as={limit}")])
        .status()
        .expect("prlimit runs");
    assert!(done.success(), "prlimit failed");
    println!("address space limited to {limit} bytes");
}
