//! Runs on device data only enqueue work (issue: every run synchronized): a time loop of
//! `run_device` calls makes the host wait for nothing, and an error a kernel finds is reported at
//! the next wait, naming the run.
//!
//! One test function, run alone in this binary: the count of waits is the process's.

mod support;
use support::gpu;

use pytato_core::{ArrayData, DType, Dim, Error, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::Backend;
use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

#[test]
fn device_runs_wait_for_nothing_and_report_errors_at_the_next_wait() {
    let Some(w) = gpu() else { return };

    // A time loop: u <- u / 2 + 1, 50 steps on the device (and 20 more below).
    let u = pt::placeholder("u", [Dim::param("n")], DType::F64).unwrap();
    let step = pt::add(pt::multiply(&u, 0.5).unwrap(), 1.0).unwrap();
    let program = w.compile(&(&step).into()).unwrap();
    let start = [3.0, -1.0, 0.0, 1e300, -0.0];
    let mut state = w.upload(&f64s(&start).view()).unwrap();
    let waits = w.host_waits();
    for _ in 0..50 {
        let inputs = NamedDeviceInputs::from([("u", DeviceInput::Device(&state))]);
        state = program.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    }
    assert_eq!(w.host_waits(), waits, "50 device runs waited for the GPU");
    // Each step's output takes the buffer of an array an earlier step dropped: after the first
    // steps, no new buffer (which wgpu would zero-fill before the kernel writes it), and so no
    // new bind group either (the program keeps those of its last runs).
    let (created, groups) = (w.storage_buffers_created(), w.bind_groups_created());
    for _ in 0..20 {
        let inputs = NamedDeviceInputs::from([("u", DeviceInput::Device(&state))]);
        state = program.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    }
    assert_eq!(w.storage_buffers_created(), created, "a time loop on device data made new buffers");
    assert_eq!(w.bind_groups_created(), groups, "a time loop on device data made new bind groups");
    let got = state.to_host().unwrap();
    assert!(w.host_waits() > waits, "a download waits");
    // The same steps on the host, in the same order of operations.
    let want: Vec<f64> = start
        .iter()
        .map(|&x| {
            let mut x = x;
            for _ in 0..70 {
                x = x * 0.5 + 1.0;
            }
            x
        })
        .collect();
    let got: Vec<f64> = got.to_scalars().iter().map(Scalar::to_f64).collect();
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );

    // With an input from the host at every step too (through the program's upload staging
    // buffer, which a run that did not wait cannot reuse: each takes a fresh one instead of
    // waiting): no wait either, and the same values as on the host.
    let f = pt::placeholder("f", [Dim::param("n")], DType::F64).unwrap();
    let forced = w.compile(&(&pt::add(pt::multiply(&u, 0.5).unwrap(), &f).unwrap()).into()).unwrap();
    let forcing = [1.0, 2.0, -3.0, 0.5, f64::MIN_POSITIVE / 4.0];
    let forcing_data = f64s(&forcing);
    let mut forced_state = w.upload(&f64s(&start).view()).unwrap();
    let waits = w.host_waits();
    for _ in 0..20 {
        let inputs = NamedDeviceInputs::from([
            ("u", DeviceInput::Device(&forced_state)),
            ("f", DeviceInput::Host(forcing_data.view())),
        ]);
        forced_state = forced.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    }
    assert_eq!(w.host_waits(), waits, "20 device runs on a host input waited for the GPU");
    let want: Vec<u64> =
        start.iter().zip(forcing).map(|(&x, f)| (0..20).fold(x, |x, _| x * 0.5 + f).to_bits()).collect();
    let got = forced_state.to_host().unwrap().to_scalars().iter().map(|s| s.to_f64().to_bits()).collect::<Vec<_>>();
    assert_eq!(got, want);

    // A loop that never waits is held to one wait per MAX_PENDING (256) runs: the queue and the
    // unread checks stay bounded.
    let waits = w.host_waits();
    for _ in 0..600 {
        let inputs = NamedDeviceInputs::from([("u", DeviceInput::Device(&state))]);
        state = program.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    }
    assert_eq!(w.host_waits() - waits, 2, "600 device runs wait twice, after 256 and 512");
    w.synchronize().unwrap();
    // The staging buffers their checks were copied into are kept once read: the next loop
    // creates none.
    let staging = w.staging_buffers_created();
    for _ in 0..100 {
        let inputs = NamedDeviceInputs::from([("u", DeviceInput::Device(&state))]);
        state = program.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    }
    assert_eq!(w.staging_buffers_created(), staging, "a time loop made staging buffers for its checks");
    w.synchronize().unwrap();

    // An index out of range on the device: run_device returns at once; the error comes at the
    // next wait, once, naming the run.
    let x = pt::placeholder("x", [Dim::param("m")], DType::F64).unwrap();
    let idx = pt::placeholder("idx", [2], DType::I64).unwrap();
    let gather = w.compile(&(&x.index([pt::Idx::from(&idx)]).unwrap()).into()).unwrap();
    let xs = w.upload(&f64s(&[1.0, 2.0, 3.0]).view()).unwrap();
    let bad = ArrayData::from_scalars(DType::I64, &[2], [Scalar::I64(0), Scalar::I64(7)]).unwrap();
    let bad = w.upload(&bad.view()).unwrap();
    let waits = w.host_waits();
    let inputs = NamedDeviceInputs::from([("x", DeviceInput::Device(&xs)), ("idx", DeviceInput::Device(&bad))]);
    let out = gather.run_device(&inputs).expect("an enqueued run returns without waiting");
    let again = gather.run_device(&inputs).expect("an enqueued run returns without waiting");
    assert_eq!(w.host_waits(), waits);
    match w.synchronize() {
        Err(Error::IndexOutOfBounds { op, index: 7, length: 3, .. }) => {
            assert!(op.contains("on device data") && op.contains("1 later run(s) failed too"), "{op}");
        }
        other => panic!("{other:?}"),
    }
    w.synchronize().expect("each error is reported once");
    drop((out, again));

    // A download reports an earlier failed run too, and a run on host data does.
    let out = gather.run_device(&inputs).unwrap();
    assert!(matches!(out["_pt_out"].to_host(), Err(Error::IndexOutOfBounds { .. })));
    let _ = gather.run_device(&inputs).unwrap();
    let host = pytato_runtime::backend::NamedData::from([("u".to_string(), f64s(&[1.0]))]);
    assert!(matches!(program.run(&host), Err(Error::IndexOutOfBounds { .. })));
    // And a good run on host data after that is fine.
    assert_eq!(program.run(&host).unwrap()["_pt_out"].to_scalars(), vec![Scalar::F64(1.5)]);

    // The outputs of a failed run hold what it left, not numpy's values: they report its error
    // whenever they are read or used, not only at the wait that first reports it (they were
    // downloaded as if good after that), and so does what is computed from them before the wait.
    let failed = gather.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    let from_failed = program.run_device(&NamedDeviceInputs::from([("u", DeviceInput::Device(&failed))])).unwrap();
    let good = program.run_device(&NamedDeviceInputs::from([("u", DeviceInput::Device(&xs))])).unwrap();
    assert!(matches!(w.synchronize(), Err(Error::IndexOutOfBounds { index: 7, .. })));
    w.synchronize().expect("the wait reports each failed run once");
    for _ in 0..2 {
        match failed.to_host() {
            Err(Error::IndexOutOfBounds { op, index: 7, length: 3, .. }) => {
                assert!(op.contains("which computed this array"), "{op}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(from_failed["_pt_out"].to_host(), Err(Error::IndexOutOfBounds { index: 7, .. })));
    }
    let reuse = program.run_device(&NamedDeviceInputs::from([("u", DeviceInput::Device(&failed))]));
    assert!(
        matches!(reuse, Err(Error::IndexOutOfBounds { index: 7, .. })),
        "a failed run's output is refused as an input"
    );
    // As data wrapped into a DAG, on host and device runs alike.
    let wrapped = pt::add(pt::data_wrapper(failed.clone(), None).unwrap(), 1.0).unwrap();
    let wrapped = w.compile(&(&wrapped).into()).unwrap();
    assert!(matches!(wrapped.run(&Default::default()), Err(Error::IndexOutOfBounds { .. })));
    assert!(matches!(wrapped.run_device(&NamedDeviceInputs::new()), Err(Error::IndexOutOfBounds { .. })));
    // What good runs computed meanwhile is unaffected.
    let good: Vec<f64> = good["_pt_out"].to_host().unwrap().to_scalars().iter().map(Scalar::to_f64).collect();
    assert_eq!(good, vec![1.5, 2.0, 2.5]);

    // A good run right after a failed one of the same program and sizes, both enqueued: the
    // error the failed run's kernel recorded in the control block is not the good run's (with
    // the sizes unchanged, a run zeroes the block's header on the GPU instead of staging it all).
    let good_idx = ArrayData::from_scalars(DType::I64, &[2], [Scalar::I64(2), Scalar::I64(-3)]).unwrap();
    let good_idx = w.upload(&good_idx.view()).unwrap();
    let good_inputs =
        NamedDeviceInputs::from([("x", DeviceInput::Device(&xs)), ("idx", DeviceInput::Device(&good_idx))]);
    for _ in 0..2 {
        drop(gather.run_device(&inputs).unwrap());
        let after = gather.run_device(&good_inputs).unwrap();
        assert!(matches!(w.synchronize(), Err(Error::IndexOutOfBounds { index: 7, .. })));
        let after: Vec<f64> = after["_pt_out"].to_host().unwrap().to_scalars().iter().map(Scalar::to_f64).collect();
        assert_eq!(after, vec![3.0, 1.0]);
    }
    // And on host data, where each run reads its own header back.
    let host_x = f64s(&[1.0, 2.0, 3.0]);
    let bad_idx = ArrayData::from_scalars(DType::I64, &[2], [Scalar::I64(0), Scalar::I64(-4)]).unwrap();
    let ok_idx = ArrayData::from_scalars(DType::I64, &[2], [Scalar::I64(-1), Scalar::I64(0)]).unwrap();
    for _ in 0..2 {
        let bad =
            pytato_runtime::backend::NamedData::from([("x".into(), host_x.clone()), ("idx".into(), bad_idx.clone())]);
        assert!(matches!(gather.run(&bad), Err(Error::IndexOutOfBounds { index: -4, .. })));
        let ok =
            pytato_runtime::backend::NamedData::from([("x".into(), host_x.clone()), ("idx".into(), ok_idx.clone())]);
        assert_eq!(gather.run(&ok).unwrap()["_pt_out"].to_scalars(), vec![Scalar::F64(3.0), Scalar::F64(1.0)]);
    }
}
