//! Host steps as kernels on device data: on wgpu, a program in phases run with `run_device` scans,
//! sorts and searches its arrays on the GPU (`DeviceSteps`). For every dtype, with NaN, ±0.0, ±inf,
//! subnormals, integer extremes and empty arrays, the results are the host steps' bits (the
//! interpreter's, which the conformance suite holds to numpy's), and the runs enqueue work without
//! a single host wait; rows longer than a driver's loop cap scan whole.

use num_complex::Complex64;
use pytato_backend_wgpu::{REQUIRE_VAR, Wgpu};
use pytato_core::{Array, ArrayData, DType, Dim, Scalar, ScanOp, Side};
use pytato_frontend as pt;
use pytato_frontend::ScanOptions;
use pytato_runtime::backend::{Backend, NamedData, Outputs};
use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};

/// The tests count the process's waits for the GPU: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn wgpu() -> Option<Wgpu> {
    match Wgpu::new() {
        Ok(w) => Some(w),
        Err(e) if std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0") => {
            panic!("{REQUIRE_VAR} is set but the wgpu backend cannot start: {e}")
        }
        Err(e) => {
            eprintln!("device steps test skipped: {e}");
            None
        }
    }
}

/// Values of `dtype` and `shape` that mix the edge cases in with ordinary ones (a fixed pseudo-random walk).
fn values(dtype: DType, shape: &[usize], seed: u64) -> ArrayData {
    let n: usize = shape.iter().product();
    let special = [
        f64::NAN,
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        5e-324,
        1e-40,
        -1e-45,
        6e-8,
        1.0,
        -1.0,
        1e300,
        -3e38,
        65504.0,
        i64::MIN as f64,
        u64::MAX as f64,
    ];
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        state >> 33
    };
    let scalars = (0..n).map(|_| {
        let r = next();
        let value = |r: u64| {
            if r.is_multiple_of(3) {
                special[(r / 3) as usize % special.len()]
            } else {
                (r % 2001) as f64 / 64.0 - 15.0
            }
        };
        match dtype {
            DType::C64 | DType::C128 => Scalar::C128(Complex64::new(value(r), value(next()))).cast(dtype),
            d if d.is_inexact() => Scalar::F64(value(r)).cast(dtype),
            // Integers: their extremes, small values and wrapping arithmetic.
            DType::Bool => Scalar::Bool(r.is_multiple_of(3)),
            DType::U64 => Scalar::U64(if r.is_multiple_of(5) { u64::MAX - r % 7 } else { r % 100 }),
            DType::I64 => Scalar::I64(match r % 5 {
                0 => i64::MIN + (r % 3) as i64,
                1 => i64::MAX - (r % 3) as i64,
                _ => (r % 200) as i64 - 100,
            }),
            d => Scalar::I64((r % 600) as i64 - 300 + if r.is_multiple_of(7) { 1 << 31 } else { 0 }).cast(d),
        }
    });
    ArrayData::from_scalars(dtype, shape, scalars).expect("one value per element")
}

/// The interpreter, the reference.
/// A program's outputs, by name.
fn named<'a>(entries: impl IntoIterator<Item = (&'a str, Array)>) -> Outputs {
    Outputs::Named(pytato_core::DictOfNamedArrays::new(entries).unwrap())
}

fn interp() -> Box<dyn Backend> {
    let (mut instances, _) = pytato_conformance::instantiate(&["interp".to_string()]).unwrap();
    instances.remove(0).1
}

/// Each value's bits and text: exact for every dtype, signs of zero included; every NaN alike
/// (numpy leaves a NaN's sign and payload to the hardware, and so does the conformance suite).
fn bits(a: &ArrayData) -> Vec<(u64, u64, String)> {
    let exact = |x: f64| if x.is_nan() { u64::MAX } else { x.to_bits() };
    a.to_scalars()
        .iter()
        .map(|s| {
            let z = s.to_complex64();
            (exact(z.re), exact(z.im), s.to_string())
        })
        .collect()
}

/// Runs `outputs` on wgpu with `inputs` uploaded, checks that no run waited for the GPU, and
/// compares every output with the interpreter's on the host, bit for bit.
fn assert_on_device_without_waits(wgpu: &Wgpu, what: &str, outputs: &Outputs, inputs: &NamedData) {
    assert_on_device(wgpu, what, outputs, inputs, Some(0));
}

/// As [`assert_on_device_without_waits`], with `allowed` waits for the GPU (counted; `None`: not
/// counted, for steps that run on the host).
fn assert_on_device(wgpu: &Wgpu, what: &str, outputs: &Outputs, inputs: &NamedData, allowed: Option<u64>) {
    let what = format!("{what} (workgroup sorts: {})", wgpu.workgroup_sorts());
    let interp = interp();
    let want = interp.compile(outputs).unwrap().run(inputs).unwrap();
    let program = wgpu.compile(outputs).unwrap();
    let held: Vec<(&str, _)> = inputs.iter().map(|(n, d)| (n.as_str(), wgpu.upload(&d.view()).unwrap())).collect();
    let named: NamedDeviceInputs<'_> = held.iter().map(|(n, d)| (*n, DeviceInput::Device(d))).collect();
    let waits = wgpu.host_waits();
    let got = program.run_device(&named).unwrap();
    if let Some(allowed) = allowed {
        assert_eq!(wgpu.host_waits() - waits, allowed, "{what}: the run on device data waited for the GPU");
    }
    for (name, expected) in &want {
        let value = got[name].to_host().unwrap();
        let (g, w) = (bits(&value), bits(expected));
        let first = g.iter().zip(&w).position(|(a, b)| a != b);
        assert!(
            g.len() == w.len() && first.is_none(),
            "{what}, output {name}: first difference at {first:?}: {:?} on wgpu, {:?} on the host",
            g.get(first.unwrap_or(0)).map(|t| &t.2),
            w.get(first.unwrap_or(0)).map(|t| &t.2),
        );
    }
}

/// The backend with each way of ranking a block's items in a sort pass (see
/// `Wgpu::workgroup_sorts`): sorts and scatters are tested both ways.
fn both_rankings(wgpu: Wgpu) -> [Wgpu; 2] {
    [wgpu.clone().with_workgroup_sorts(false), wgpu.with_workgroup_sorts(true)]
}

/// Scans of `x` in its own dtype (the nodes themselves: the frontend accumulates bools and small
/// integers in 64 bits, as numpy does, and rejects a `bool` accumulator).
fn scans(x: &Array) -> Outputs {
    named([
        ("sum0", Array::new_scan(x, 0, ScanOp::Sum).unwrap()),
        ("prod1", Array::new_scan(x, 1, ScanOp::Product).unwrap()),
        ("sum1", Array::new_scan(x, 1, ScanOp::Sum).unwrap()),
    ])
}

#[test]
fn scans_of_every_dtype_run_on_the_device_with_the_hosts_bits() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    // Scans accumulate numbers: a `bool` scan is no node.
    for dtype in DType::ALL.into_iter().filter(|&d| d != DType::Bool) {
        if !wgpu.has_f64() && matches!(dtype, DType::F64 | DType::C128) {
            continue;
        }
        let x = pt::placeholder("x", [Dim::param("n"), Dim::from(3)], dtype).unwrap();
        for (n, seed) in [(0, 1), (1, 2), (7, 3), (300, 4)] {
            let data = values(dtype, &[n, 3], seed);
            let inputs = NamedData::from([("x".to_string(), data)]);
            assert_on_device_without_waits(&wgpu, &format!("scans of {dtype} ({n}, 3)"), &scans(&x), &inputs);
        }
    }
}

#[test]
fn searches_of_every_dtype_run_on_the_device_with_the_hosts_bits() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    // Complex numbers order by class (which part is NaN), then real, then imaginary part; the
    // values come from the same edge cases in both parts.
    for dtype in DType::ALL {
        if !wgpu.has_f64() && matches!(dtype, DType::F64 | DType::C128) {
            continue;
        }
        let a = pt::placeholder("a", [Dim::param("n")], dtype).unwrap();
        let v = pt::placeholder("v", [Dim::param("m")], dtype).unwrap();
        let sorted = pt::sort(&a, pt::SortOptions::default()).unwrap();
        let outputs = named([
            ("left", pt::searchsorted(&sorted, &v, Side::Left, None).unwrap()),
            ("right", pt::searchsorted(&sorted, &v, Side::Right, None).unwrap()),
        ]);
        for (n, m, seed) in [(0, 5, 1), (5, 0, 2), (1, 9, 3), (40, 200, 4), (1000, 300, 5)] {
            // Values drawn from the same edge cases as the sorted array, so many are equal to
            // some of its elements (ties: NaN, -0.0 against 0.0).
            let inputs = NamedData::from([
                ("a".to_string(), values(dtype, &[n], seed)),
                ("v".to_string(), values(dtype, &[m], seed + 100)),
            ]);
            // The searches compiled apart from the sort, given its result: the same bits.
            let interp = interp();
            let only_a = NamedData::from([("a".to_string(), inputs["a"].clone())]);
            let sorted_values = interp.compile(&(&sorted).into()).unwrap().run(&only_a).unwrap().remove("_pt_out");
            let s = pt::placeholder("s", [Dim::param("n")], dtype).unwrap();
            let searches = named([
                ("left", pt::searchsorted(&s, &v, Side::Left, None).unwrap()),
                ("right", pt::searchsorted(&s, &v, Side::Right, None).unwrap()),
            ]);
            let mut search_inputs = inputs.clone();
            search_inputs.remove("a");
            search_inputs.insert("s".into(), sorted_values.unwrap());
            let what = format!("searches of {dtype} (n = {n}, m = {m})");
            assert_on_device_without_waits(&wgpu, &what, &searches, &search_inputs);
            // With the sort in the same program (also on the device): the same results.
            assert_on_device_without_waits(&wgpu, &format!("{what}, sorted in the program"), &outputs, &inputs);
        }
    }
}

#[test]
fn sorts_of_every_dtype_run_on_the_device_with_the_hosts_bits() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    for wgpu in both_rankings(wgpu) {
        // Rows of one element and none, rows in one block and in several (256 items a block), the
        // sorted axis first, in the middle and last; many equal keys (the values repeat their edge
        // cases: NaNs, -0.0 and 0.0), so a pass that is not stable shows in the values and indices.
        let cases: [(&[usize], usize); 8] = [
            (&[0], 0),
            (&[1], 0),
            (&[7], 0),
            (&[300], 0),
            (&[4, 0], 1),
            (&[5, 40], 0),
            (&[5, 40], 1),
            (&[3, 700, 2], 1),
        ];
        for dtype in DType::ALL {
            if !wgpu.has_f64() && matches!(dtype, DType::F64 | DType::C128) {
                continue;
            }
            for (k, (shape, axis)) in cases.into_iter().enumerate() {
                let dims: Vec<Dim> = shape.iter().map(|&d| Dim::from(d as i64)).collect();
                let x = pt::placeholder("x", dims, dtype).unwrap();
                let mut outputs = Vec::new();
                for descending in [false, true] {
                    let options = pt::SortOptions { axis: Some(axis as i64), descending };
                    outputs.push((format!("sort{descending}"), pt::sort(&x, options).unwrap()));
                    outputs.push((format!("argsort{descending}"), pt::argsort(&x, options).unwrap()));
                }
                let outputs = named(outputs.iter().map(|(n, a)| (n.as_str(), a.clone())));
                let inputs = NamedData::from([("x".to_string(), values(dtype, shape, k as u64 + 20))]);
                let what = format!("sorts of {dtype} {shape:?} along axis {axis}");
                assert_on_device_without_waits(&wgpu, &what, &outputs, &inputs);
            }
        }
    }
}

#[test]
fn long_rows_sort_on_the_device_in_many_blocks() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    for wgpu in both_rankings(wgpu) {
        // 70,001 items: 274 blocks, so the counts (16 a block) are scanned in blocks too; values from
        // a small set, so most keys are equal to many others and their order is the stable one.
        let n = 70_001;
        for dtype in [DType::F64, DType::F32, DType::I64, DType::U8] {
            if !wgpu.has_f64() && dtype == DType::F64 {
                continue;
            }
            let x = pt::placeholder("x", [Dim::param("n")], dtype).unwrap();
            let options = pt::SortOptions { axis: Some(0), descending: false };
            let outputs =
                named([("sorted", pt::sort(&x, options).unwrap()), ("order", pt::argsort(&x, options).unwrap())]);
            let inputs = NamedData::from([("x".to_string(), values(dtype, &[n], 5))]);
            assert_on_device_without_waits(&wgpu, &format!("a sort of {n} {dtype}"), &outputs, &inputs);
            // Blocks whose 256 items all share a digit (every 1,000th element differs): a block's
            // count of one digit reaches 256, one more than a packed counter holds.
            let mostly_equal = (0..n).map(|i| Scalar::F64(if i % 1000 == 999 { -2.0 } else { 3.0 }).cast(dtype));
            let inputs =
                NamedData::from([("x".to_string(), ArrayData::from_scalars(dtype, &[n], mostly_equal).unwrap())]);
            assert_on_device_without_waits(&wgpu, &format!("a sort of {n} mostly equal {dtype}"), &outputs, &inputs);
        }
    }
}

#[test]
fn rows_longer_than_a_drivers_loop_cap_scan_whole_on_the_device() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    // Past llvmpipe's 65,535 iterations per invocation: products in several dispatches, each
    // continuing from the last (elsewhere one); sums in blocks.
    let n = 150_001;
    for dtype in [DType::F64, DType::F32, DType::F16, DType::I32, DType::C64] {
        if !wgpu.has_f64() && dtype == DType::F64 {
            continue;
        }
        let x = pt::placeholder("x", [Dim::param("n")], dtype).unwrap();
        let keep = ScanOptions { axis: Some(0), dtype: Some(dtype), include_initial: false };
        let outputs =
            named([("sum", pt::cumulative_sum(&x, keep).unwrap()), ("prod", pt::cumulative_prod(&x, keep).unwrap())]);
        // Values near 1, so the running product stays finite for a while, then over- or underflows.
        let data = ArrayData::from_scalars(
            dtype,
            &[n],
            (0..n).map(|i| Scalar::F64(1.0 + ((i * 7919) % 201) as f64 / 2000.0 - 0.05).cast(dtype)),
        )
        .unwrap();
        let inputs = NamedData::from([("x".to_string(), data)]);
        assert_on_device_without_waits(&wgpu, &format!("scans of {n} {dtype}"), &outputs, &inputs);
    }
}

#[test]
fn masks_compact_on_the_device_with_one_wait_for_the_count() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    let shapes: [&[usize]; 9] =
        [&[0], &[1], &[7], &[3, 0, 2], &[5, 1, 4], &[1000, 3], &[70_001], &[2, 3, 4, 5, 6], &[256]];
    for (k, shape) in shapes.into_iter().enumerate() {
        let dims: Vec<Dim> = shape.iter().map(|&d| Dim::from(d as i64)).collect();
        let x = pt::placeholder("x", dims, DType::F64).unwrap();
        // With NaN, -0.0 and the rest: about a third positive; nothing below -inf; everything
        // not below -inf (NaN included).
        let nothing = pt::less(&x, f64::NEG_INFINITY).unwrap();
        let masks = [("positive", pt::greater(&x, 0.0).unwrap()), ("nothing", nothing.clone())];
        let masks = masks.into_iter().chain([("everything", pt::logical_not(&nothing).unwrap())]);
        for (what, mask) in masks {
            let mut outputs: Vec<(String, Array)> = pt::nonzero(&mask)
                .unwrap()
                .into_iter()
                .enumerate()
                .map(|(axis, positions)| (format!("axis{axis}"), positions))
                .collect();
            outputs.push(("selected".into(), x.index(pytato_core::s![&mask]).unwrap()));
            let outputs = named(outputs.iter().map(|(n, a)| (n.as_str(), a.clone())));
            let inputs = NamedData::from([("x".to_string(), values(DType::F64, shape, k as u64 + 7))]);
            // One wait per mask with elements: its count, a length the host needs.
            let waits = u64::from(shape.iter().product::<usize>() > 0);
            assert_on_device(&wgpu, &format!("{what} of shape {shape:?}"), &outputs, &inputs, Some(waits));
        }
    }
}

#[test]
fn long_integer_rows_scan_in_parallel_blocks_with_the_hosts_bits() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    // Integers wrap, so blocks scanned apart and combined give the running loop's bits: a middle
    // axis with rows on both sides, a last axis after rows, a first axis, and a row long enough
    // that its block totals are scanned in blocks again.
    let cases: [(&[usize], usize); 4] = [(&[2, 3000, 3], 1), (&[3, 2500], 1), (&[2049, 2], 0), (&[2_200_001], 0)];
    for dtype in [DType::I8, DType::U16, DType::I32, DType::U32, DType::I64, DType::U64] {
        for (shape, axis) in cases {
            let dims: Vec<Dim> = shape.iter().map(|&d| Dim::from(d as i64)).collect();
            let x = pt::placeholder("x", dims, dtype).unwrap();
            let outputs = named([
                ("sum", Array::new_scan(&x, axis, ScanOp::Sum).unwrap()),
                ("prod", Array::new_scan(&x, axis, ScanOp::Product).unwrap()),
            ]);
            let inputs = NamedData::from([("x".to_string(), values(dtype, shape, 99))]);
            let what = format!("scans of {dtype} {shape:?} along axis {axis}");
            assert_on_device_without_waits(&wgpu, &what, &outputs, &inputs);
        }
    }
}

#[test]
fn long_float_sums_scan_in_the_hosts_blocks_with_its_bits() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    // Rows of more than 2048 run in blocks of 1024 on both sides (`pytato_runtime::scan`): a
    // middle axis with rows on both sides, a last axis after rows, a first axis, and a row whose
    // totals are scanned in blocks again. Finite values of both signs whose running sums round at most steps.
    let cases: [(&[usize], usize); 4] = [(&[2, 3000, 3], 1), (&[3, 2500], 1), (&[2049, 2], 0), (&[2_200_001], 0)];
    for dtype in [DType::F64, DType::F32, DType::F16, DType::C64, DType::C128] {
        if !wgpu.has_f64() && matches!(dtype, DType::F64 | DType::C128) {
            continue;
        }
        for (shape, axis) in cases {
            let dims: Vec<Dim> = shape.iter().map(|&d| Dim::from(d as i64)).collect();
            let x = pt::placeholder("x", dims, dtype).unwrap();
            let outputs = named([("sum", Array::new_scan(&x, axis, ScanOp::Sum).unwrap())]);
            let n: usize = shape.iter().product();
            let part = |i: usize| ((i * 7919) % 1013) as f64 / 97.0 - 5.2 + 1e-3 / (i + 1) as f64;
            let scalars = (0..n).map(|i| match dtype {
                DType::C64 | DType::C128 => Scalar::C128(Complex64::new(part(i), part(i + 17))).cast(dtype),
                _ => Scalar::F64(part(i)).cast(dtype),
            });
            let inputs = NamedData::from([("x".to_string(), ArrayData::from_scalars(dtype, shape, scalars).unwrap())]);
            let what = format!("sums of {dtype} {shape:?} along axis {axis}");
            assert_on_device_without_waits(&wgpu, &what, &outputs, &inputs);
        }
    }
}

#[test]
fn steps_on_another_backends_arrays_run_on_the_host_with_the_same_values() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    // Arrays held by the interpreter (host memory) passed to a wgpu program in phases: the steps
    // decline them (no GPU buffer) and run on the host; the programs upload what they need.
    let x = pt::placeholder("x", [Dim::param("n")], DType::I32).unwrap();
    let s = pt::placeholder("s", [Dim::param("m")], DType::I32).unwrap();
    let outputs = named([
        ("running", Array::new_scan(&x, 0, ScanOp::Sum).unwrap()),
        ("places", pt::searchsorted(&s, &x, Side::Right, None).unwrap()),
        ("positive", x.index(pytato_core::s![&pt::greater(&x, 0).unwrap()]).unwrap()),
    ]);
    let sorted = ArrayData::from(ndarray::Array1::from_iter((-50..50).map(|v| v * 7)).into_dyn());
    let inputs = NamedData::from([("x".to_string(), values(DType::I32, &[3000], 5)), ("s".to_string(), sorted)]);
    let reference = interp();
    let want = reference.compile(&outputs).unwrap().run(&inputs).unwrap();
    let held: Vec<(&str, _)> = inputs.iter().map(|(n, d)| (n.as_str(), reference.upload(&d.view()).unwrap())).collect();
    let named: NamedDeviceInputs<'_> = held.iter().map(|(n, d)| (*n, DeviceInput::Device(d))).collect();
    let program = wgpu.compile(&outputs).unwrap();
    let got = program.run_device(&named).unwrap();
    for (name, expected) in &want {
        assert_eq!(bits(&got[name].to_host().unwrap()), bits(expected), "{name}");
    }
    // A device array of the wrong dtype is refused before anything runs, naming the input.
    let wrong = wgpu.upload(&values(DType::F64, &[3], 1).view()).unwrap();
    let mut bad = named.clone();
    bad.insert("x", DeviceInput::Device(&wrong));
    let error = program.run_device(&bad).unwrap_err();
    assert!(error.kind() != "Internal" && error.to_string().contains('x'), "{}: {error}", error.kind());
}

#[test]
fn one_program_runs_on_the_device_again_with_other_sizes_and_an_output_named_like_its_input() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let k = pt::placeholder("k", [Dim::param("n")], DType::I64).unwrap();
    // The running sums are named like the input they come from, as a time loop names its state.
    let outputs = named([
        ("x", Array::new_scan(&x, 0, ScanOp::Sum).unwrap()),
        ("k", Array::new_scan(&k, 0, ScanOp::Product).unwrap()),
    ]);
    let program = wgpu.compile(&outputs).unwrap();
    for n in [5usize, 70_001, 0, 2_500] {
        // Finite values whose running sums round differently in another order.
        let xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1013) as f64 / 97.0 - 5.0 + 1e-3 / (i + 1) as f64).collect();
        let ks: Vec<i64> = (0..n as i64).map(|i| if i % 5 == 0 { -3 } else { i % 7 + 1 }).collect();
        // Independent of the library: numpy's running loop for the products and for sums of at
        // most 2048 terms, and for longer ones the order of blocks of 1024 that
        // `pytato_runtime::scan` defines, written here plainly.
        let want_x: Vec<u64> = blocked_running_sums(&xs).iter().map(|v| v.to_bits()).collect();
        let mut prod = 1i64;
        let want_k: Vec<i64> = ks
            .iter()
            .map(|v| {
                prod = prod.wrapping_mul(*v);
                prod
            })
            .collect();
        let held_x = wgpu.upload(&ArrayData::from(ndarray::Array1::from(xs).into_dyn()).view()).unwrap();
        let held_k = wgpu.upload(&ArrayData::from(ndarray::Array1::from(ks).into_dyn()).view()).unwrap();
        let inputs =
            NamedDeviceInputs::from([("x", DeviceInput::Device(&held_x)), ("k", DeviceInput::Device(&held_k))]);
        let got = program.run_device(&inputs).unwrap();
        let got_x: Vec<u64> = got["x"].to_host().unwrap().to_scalars().iter().map(|s| s.to_f64().to_bits()).collect();
        let got_k: Vec<i64> = got["k"].to_host().unwrap().as_array::<i64>().unwrap().iter().copied().collect();
        assert_eq!(got_x, want_x, "running sums of {n} float64");
        assert_eq!(got_k, want_k, "running products of {n} int64");
    }
}

/// Running sums of `row`: left to right for at most 2048 terms; else each block of 1024 left to
/// right from its first term, the blocks' totals summed the same way, and each block's running
/// sums added to the total of the blocks before it.
fn blocked_running_sums(row: &[f64]) -> Vec<f64> {
    let left_to_right = |row: &[f64]| {
        let mut sums: Vec<f64> = Vec::with_capacity(row.len());
        for &v in row {
            sums.push(sums.last().map_or(v, |s| s + v));
        }
        sums
    };
    if row.len() <= 2048 {
        return left_to_right(row);
    }
    let blocks: Vec<Vec<f64>> = row.chunks(1024).map(left_to_right).collect();
    let before = blocked_running_sums(&blocks.iter().map(|b| b[b.len() - 1]).collect::<Vec<_>>());
    let mut sums = blocks[0].clone();
    for (b, block) in blocks.iter().enumerate().skip(1) {
        sums.extend(block.iter().map(|s| before[b - 1] + s));
    }
    sums
}

/// Flat positions into an array of `n` elements, `m` of them: repeated, many negative (from the
/// end), all in range; none where `n` is 0.
fn positions(n: usize, m: usize, seed: u64) -> ArrayData {
    let positions = (0..m as u64).map(|k| {
        let r = (k + seed).wrapping_mul(2654435761) % 1_000_003;
        Scalar::I64((r % (2 * n as u64).max(1)) as i64 - n as i64)
    });
    ArrayData::from_scalars(DType::I64, &[m], positions).unwrap()
}

#[test]
fn scatters_of_every_dtype_run_on_the_device_with_the_hosts_bits() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    for wgpu in both_rankings(wgpu) {
        let idx = pt::placeholder("idx", [Dim::param("m")], DType::I64).unwrap();
        // Values of another dtype added: each sum in the promoted dtype, cast back (numpy's add.at),
        // booleans counted as 0 and 1 (`+ False` makes `-0.0` into `0.0`) and integers into
        // booleans or'ed in.
        let promoted = [
            (DType::F16, DType::F64),
            (DType::I8, DType::F64),
            (DType::F32, DType::I64),
            (DType::U8, DType::I64),
            (DType::F64, DType::Bool),
            (DType::F32, DType::Bool),
            (DType::F16, DType::Bool),
            (DType::C64, DType::Bool),
            (DType::I64, DType::Bool),
            (DType::U8, DType::Bool),
            (DType::Bool, DType::I32),
            (DType::Bool, DType::F64),
        ];
        let pairs = DType::ALL.into_iter().map(|d| (d, d)).chain(promoted);
        for (own, given) in pairs {
            if !wgpu.has_f64() && [own, given].iter().any(|d| matches!(d, DType::F64 | DType::C128)) {
                continue;
            }
            let x = pt::placeholder("x", [Dim::param("n")], own).unwrap();
            let v = pt::placeholder("v", [Dim::param("m")], given).unwrap();
            let mut outputs = vec![("add", pt::add_at(&x, &[pt::Idx::from(&idx)], &v).unwrap())];
            if own == given {
                outputs.push(("set", x.set_index(pytato_core::s![&idx], &v).unwrap()));
            }
            let outputs = named(outputs);
            for (n, m, seed) in [(0, 0, 1), (5, 0, 2), (1, 7, 3), (40, 300, 4), (300, 40, 5), (7, 2000, 6)] {
                let inputs = NamedData::from([
                    ("x".to_string(), values(own, &[n], seed)),
                    ("idx".to_string(), positions(n, m, seed)),
                    ("v".to_string(), values(given, &[m], seed + 50)),
                ]);
                let what = format!("scatters of {given} into {own} (n = {n}, m = {m})");
                assert_on_device_without_waits(&wgpu, &what, &outputs, &inputs);
            }
        }
    }
}

#[test]
fn long_runs_of_one_position_add_in_the_hosts_order() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    for wgpu in both_rankings(wgpu) {
        // 200,001 float64 values into 2 bins: runs of 100,000 additions, past llvmpipe's 65,535
        // iterations per invocation (several dispatches, each continuing the sums), in the host's
        // order: floats added in another order round differently.
        let m = 200_001;
        for dtype in [DType::F64, DType::F32, DType::I64] {
            if !wgpu.has_f64() && dtype == DType::F64 {
                continue;
            }
            let x = pt::zeros([2], dtype).unwrap();
            let idx = pt::placeholder("idx", [Dim::param("m")], DType::I64).unwrap();
            let v = pt::placeholder("v", [Dim::param("m")], dtype).unwrap();
            let outputs = named([("histogram", pt::add_at(&x, &[pt::Idx::from(&idx)], &v).unwrap())]);
            let weights = (0..m).map(|k| Scalar::F64(((k * 7919) % 1000) as f64 / 7.0 - 60.0).cast(dtype));
            let inputs = NamedData::from([
                ("idx".to_string(), positions(2, m, 9)),
                ("v".to_string(), ArrayData::from_scalars(dtype, &[m], weights).unwrap()),
            ]);
            assert_on_device_without_waits(&wgpu, &format!("a histogram of {m} {dtype}"), &outputs, &inputs);
        }
    }
}

#[test]
fn a_scatter_out_of_range_on_the_device_is_the_hosts_error_at_the_next_wait() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(wgpu) = wgpu() else { return };
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let idx = pt::placeholder("idx", [Dim::param("m")], DType::I64).unwrap();
    let v = pt::placeholder("v", [Dim::param("m")], DType::F64).unwrap();
    let interp = interp();
    // The first position out of range, in the positions' order, is the one named, wherever the
    // others are (several out of range, one past either end, the extremes of int64).
    let cases: [&[i64]; 4] = [&[0, 5, -6, 3], &[1, -1, -6], &[i64::MIN, 2, i64::MAX], &[4, 4, 4, 900, 5]];
    for positions in cases {
        for (mode, outputs) in [
            ("add", pt::add_at(&x, &[pt::Idx::from(&idx)], &v).unwrap()),
            ("set", x.set_index(pytato_core::s![&idx], &v).unwrap()),
        ] {
            let outputs: Outputs = (&outputs).into();
            let m = positions.len();
            let inputs = NamedData::from([
                ("x".to_string(), values(DType::F64, &[5], 1)),
                (
                    "idx".to_string(),
                    ArrayData::from_scalars(DType::I64, &[m], positions.iter().map(|&p| Scalar::I64(p))).unwrap(),
                ),
                ("v".to_string(), values(DType::F64, &[m], 2)),
            ]);
            let want = interp.compile(&outputs).unwrap().run(&inputs).unwrap_err();
            let program = wgpu.compile(&outputs).unwrap();
            let held: Vec<(&str, _)> =
                inputs.iter().map(|(n, d)| (n.as_str(), wgpu.upload(&d.view()).unwrap())).collect();
            let named: NamedDeviceInputs<'_> = held.iter().map(|(n, d)| (*n, DeviceInput::Device(d))).collect();
            let waits = wgpu.host_waits();
            let result = program.run_device(&named);
            assert_eq!(wgpu.host_waits(), waits, "{mode} at {positions:?}: the run waited");
            assert!(result.is_ok(), "{mode} at {positions:?}: the error is found on the device, later");
            let got = wgpu.synchronize().unwrap_err();
            let fields = |e: &pytato_core::Error| match e {
                pytato_core::Error::IndexOutOfBounds { index, axis, length, .. } => Some((*index, *axis, *length)),
                _ => None,
            };
            assert!(
                fields(&want).is_some() && fields(&got) == fields(&want),
                "{mode} at {positions:?}: {got} on wgpu, {want} on the host"
            );
            assert!(got.to_string().contains("scatter"), "{got}");
            assert!(wgpu.synchronize().is_ok(), "an error is reported once");
        }
    }
}
