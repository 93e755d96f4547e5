//! The workloads of `cargo xtask bench`, on every linked backend, against the `ndarray` code a
//! Rust user would write and a hand-written Rust loop, measured in the same run.
//!
//! Prints a table of median times and ratios and writes `target/bench/report.json` (rows
//! `{"workload", "backend", "median_ms", "ndarray_ms", "hand_ms"}`, null where a baseline does not
//! apply) and `target/bench/report.md`. `--quick` uses smaller sizes and fewer repetitions.
//!
//! Every backend result is checked against the hand loop before it is timed. Like a backend's
//! `run` and the `ndarray` expression, each hand loop allocates the array it returns (for large
//! arrays, the page faults of a fresh allocation are a sizeable part of the time). Backends: the
//! Cranelift JIT on one thread (`cranelift`) and on every core (`cranelift-threads`); the wgpu
//! backend on its adapter (`cargo xtask bench` builds with the `wgpu` feature; without an adapter
//! it is skipped with the reason; its times include uploading the inputs and reading the result
//! back, as `run` does; on Mesa's lavapipe they are CPU figures); the reference interpreter only
//! in the `compile` workload (it evaluates element by element and is not meant to be fast: the
//! other workloads would take minutes on it). `--peers PYTHON` also times the workloads with
//! numpy and `jax.jit` (`peers.py`, run by that interpreter) and adds a `vs jax.jit` column;
//! `cargo xtask bench --peers` makes a virtual environment with both. The `-into` workloads
//! (`fused-elementwise-into`, `dg-apply-into`, `stencil-into`) write into an output allocated
//! once, through `run_into`, as a time loop would (and as jax's allocator reuses its buffers); their
//! baselines write into theirs too, and their `vs jax.jit` compares with jax's row of the same
//! computation.

// ndarray's and pytato's `s![]` take numpy's negative slice ends (`1..-1`), which clippy reads as
// empty Rust ranges; and ndarray's views add by reference.
#![allow(clippy::reversed_empty_ranges, clippy::op_ref)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use ndarray::{Array1, Array2, ArrayD, Axis, Zip, s};
use pytato as pt;
use pytato::backend::{Backend, NamedData, NamedViews, NamedViewsMut, Program};
use pytato::device::{DeviceArray, DeviceInput, NamedDeviceInputs};
use pytato::{Array, ArrayData, DType, Dim};

/// Problem sizes and repetitions.
struct Sizes {
    elementwise: usize,
    sum: usize,
    matmul: Vec<usize>,
    dg_elements: usize,
    dg_rhs_mesh: usize,
    stencil: usize,
    compile_nodes: Vec<usize>,
    reps: usize,
}

impl Sizes {
    fn full() -> Sizes {
        Sizes {
            elementwise: 10_000_000,
            sum: 4096,
            matmul: vec![512, 1024],
            dg_elements: 100_000,
            dg_rhs_mesh: 200,
            stencil: 4096,
            compile_nodes: vec![10, 1_000, 100_000],
            reps: 7,
        }
    }
    fn quick() -> Sizes {
        Sizes {
            elementwise: 1_000_000,
            sum: 1024,
            matmul: vec![256],
            dg_elements: 10_000,
            dg_rhs_mesh: 40,
            stencil: 1024,
            compile_nodes: vec![10, 1_000, 10_000],
            reps: 3,
        }
    }
}

struct Row {
    workload: String,
    backend: String,
    median_ms: f64,
    ndarray_ms: Option<f64>,
    hand_ms: Option<f64>,
}

/// A backend configuration under test.
struct Runner {
    name: String,
    backend: Box<dyn Backend>,
}

fn runners() -> Vec<Runner> {
    let mut out = Vec::new();
    for reg in pt::backends() {
        match reg.name {
            // The reference interpreter joins only the compile workload (see the module docs).
            "interp" => {}
            #[cfg(feature = "cranelift")]
            "cranelift" => {
                let all = pt::cranelift::Cranelift::new()
                    .with_threads(std::thread::available_parallelism().map_or(1, |n| n.get()));
                out.push(Runner { name: "cranelift".into(), backend: Box::new(all.clone().with_threads(1)) });
                out.push(Runner { name: format!("cranelift-threads({})", all.threads()), backend: Box::new(all) });
            }
            name => match (reg.constructor)() {
                Ok(backend) => out.push(Runner { name: name.into(), backend }),
                Err(e) => println!("skipping backend {name}: {e}"),
            },
        }
    }
    out
}

/// Timed calls of one row last at least this long in all (unless [`MAX_CALLS`] come first):
/// a median of 7 calls of a millisecond moved by up to 2x between runs on a shared 2-vCPU VM.
/// `benches/peers.py` times its rows the same way.
const MIN_TOTAL: std::time::Duration = std::time::Duration::from_millis(250);

/// The most timed calls of one row.
const MAX_CALLS: usize = 1000;

/// Median wall time of calls of `f`, in milliseconds, after one warm-up call: at least `reps`
/// calls, and more, up to [`MAX_CALLS`], until they have taken [`MIN_TOTAL`].
fn median_ms(reps: usize, f: impl FnMut()) -> f64 {
    timed_median_ms(reps, MAX_CALLS, f)
}

/// Median wall time of exactly `calls` calls of `f` after one warm-up call, in milliseconds:
/// for a workload that prepares one input per call.
fn median_of_calls_ms(calls: usize, f: impl FnMut()) -> f64 {
    timed_median_ms(calls, calls, f)
}

/// Median wall time of at least `least` and at most `most` calls of `f` after one warm-up call,
/// in milliseconds: more than `least` until they have taken [`MIN_TOTAL`].
fn timed_median_ms(least: usize, most: usize, mut f: impl FnMut()) -> f64 {
    f();
    let first = Instant::now();
    let mut times: Vec<f64> = Vec::new();
    while times.len() < least || (times.len() < most && first.elapsed() < MIN_TOTAL) {
        let start = Instant::now();
        f();
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Deterministic values in [0, 1) (a xorshift generator; no dependency needed).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

fn matrix(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    Array2::from_shape_vec((rows, cols), values(rows * cols, seed)).expect("rows * cols values")
}

/// Fails loudly when a backend disagrees with the hand loop: a fast wrong answer is no result.
fn check(workload: &str, backend: &str, got: &ArrayData, expected: &[f64]) {
    let got = got.as_array::<f64>().unwrap_or_else(|| panic!("{workload} on {backend}: not float64"));
    assert_eq!(got.len(), expected.len(), "{workload} on {backend}: length");
    let scale = expected.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (g, e) in got.iter().zip(expected) {
        assert!((g - e).abs() <= 1e-9 * scale, "{workload} on {backend}: {g} vs {e}");
    }
}

/// Compiles `output` on each runner, checks it, and adds one row per runner.
fn bench_backends(
    rows: &mut Vec<Row>,
    sizes: &Sizes,
    workload: &str,
    output: &Array,
    inputs: &NamedData,
    expected: &[f64],
    (ndarray_ms, hand_ms): (Option<f64>, Option<f64>),
) {
    for r in runners() {
        let program = match r.backend.compile(&output.into()) {
            Ok(p) => p,
            Err(e) => {
                println!("{workload:<26} {:<22} skipped: {e}", r.name);
                continue;
            }
        };
        let first = match program.run(inputs) {
            Ok(first) => first,
            Err(e @ pt::Error::Unsupported { .. }) => {
                println!("{workload:<26} {:<22} skipped: {e}", r.name);
                continue;
            }
            Err(e) => panic!("{workload} on {}: {e}", r.name),
        };
        check(workload, &r.name, &first["_pt_out"], expected);
        let median = median_ms(sizes.reps, || {
            black_box(program.run(inputs).expect("the workload runs"));
        });
        print_row(workload, &r.name, median, ndarray_ms, hand_ms);
        rows.push(Row { workload: workload.into(), backend: r.name.clone(), median_ms: median, ndarray_ms, hand_ms });
        bench_resident(rows, sizes, workload, &r, &*program, inputs, expected, (ndarray_ms, hand_ms));
    }
}

/// For a backend with a device of its own: a `-resident` row, the inputs uploaded once and the
/// output left on the device (`run_device`), as a time loop runs (checked once, read back;
/// each timed run synchronized).
#[allow(clippy::too_many_arguments)]
fn bench_resident(
    rows: &mut Vec<Row>,
    sizes: &Sizes,
    workload: &str,
    r: &Runner,
    program: &dyn Program,
    inputs: &NamedData,
    expected: &[f64],
    (ndarray_ms, hand_ms): (Option<f64>, Option<f64>),
) {
    let held: Vec<(&str, DeviceArray)> =
        inputs.iter().map(|(k, v)| (k.as_str(), r.backend.upload(&v.view()).expect("the upload fits"))).collect();
    if held.iter().any(|(_, d)| d.storage().as_host().is_some()) {
        return;
    }
    let device_inputs: NamedDeviceInputs<'_> = held.iter().map(|(k, d)| (*k, DeviceInput::Device(d))).collect();
    let run = || program.run_device(&device_inputs).expect("the workload runs");
    check(workload, &r.name, &run()["_pt_out"].to_host().expect("the download works"), expected);
    // Device runs only enqueue: each timed run waits for its completion, as `jax.jit` timings
    // wait with `block_until_ready`.
    gpu_profile(None);
    let median = median_ms(sizes.reps, || {
        black_box(run());
        r.backend.synchronize().expect("the workload runs");
    });
    let workload = format!("{workload}-resident");
    print_row(&workload, &r.name, median, ndarray_ms, hand_ms);
    gpu_profile(Some(&workload));
    rows.push(Row { workload, backend: r.name.clone(), median_ms: median, ndarray_ms, hand_ms });
}

/// With `PYTATO_PROFILE=gpu`, prints the GPU time per shader of the runs since the last call
/// (those of `workload`), or only empties the table (`None`).
fn gpu_profile(workload: Option<&str>) {
    #[cfg(feature = "wgpu")]
    if let (Some(report), Some(workload)) = (pt::wgpu::profile::take_report(), workload) {
        println!("GPU time per shader, {workload} (PYTATO_PROFILE=gpu):\n{report}");
    }
    #[cfg(not(feature = "wgpu"))]
    let _ = workload;
}

fn print_row(workload: &str, backend: &str, median: f64, ndarray_ms: Option<f64>, hand_ms: Option<f64>) {
    let ratio = |base: Option<f64>| base.map_or("-".to_string(), |b| format!("{:.2}x", b / median));
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    println!(
        "{workload:<26} {backend:<22} {median:>10.4} {:>10} {:>10} {:>10} {:>10}",
        ms(ndarray_ms),
        ms(hand_ms),
        ratio(ndarray_ms),
        ratio(hand_ms)
    );
}

fn data(array: ArrayD<f64>) -> ArrayData {
    ArrayData::from(array)
}

fn fused_elementwise(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.elementwise;
    let [a, b, c, d] = [1, 2, 3, 4].map(|seed| Array1::from(values(n, seed)));
    let nd = median_ms(sizes.reps, || {
        black_box(a.mapv(f64::sin) * &b + &c / &(&d + 1.5));
    });
    let mut out = Vec::new();
    let hand = median_ms(sizes.reps, || {
        out = vec![0.0; n];
        let (a, b, c, d) = (a.as_slice().unwrap(), b.as_slice().unwrap(), c.as_slice().unwrap(), d.as_slice().unwrap());
        for ((((o, a), b), c), d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
            *o = a.sin() * b + c / (d + 1.5);
        }
        black_box(&out);
    });
    let ph = |name: &str| pt::placeholder(name, [Dim::param("n")], DType::F64);
    let (pa, pb, pc, pd) = (ph("a")?, ph("b")?, ph("c")?, ph("d")?);
    let expr = pt::sin(&pa)? * &pb + &pc / &(&pd + 1.5);
    let inputs = NamedData::from([
        ("a".to_string(), data(a.into_dyn())),
        ("b".to_string(), data(b.into_dyn())),
        ("c".to_string(), data(c.into_dyn())),
        ("d".to_string(), data(d.into_dyn())),
    ]);
    bench_backends(rows, sizes, "fused-elementwise", &expr, &inputs, &out, (Some(nd), Some(hand)));
    Ok(())
}

/// `fused-elementwise` the way a time-stepping loop runs it: inputs borrowed, the output written
/// into an array allocated once (`Program::run_into`); the baselines write into theirs too.
fn fused_elementwise_into(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let workload = "fused-elementwise-into";
    let n = sizes.elementwise;
    let [a, b, c, d] = [1, 2, 3, 4].map(|seed| Array1::from(values(n, seed)));
    let mut out = Array1::<f64>::zeros(n);
    let nd = median_ms(sizes.reps, || {
        Zip::from(&mut out).and(&a).and(&b).and(&c).and(&d).for_each(|o, a, b, c, d| *o = a.sin() * b + c / (d + 1.5));
        black_box(&out);
    });
    let hand = median_ms(sizes.reps, || {
        let o = out.as_slice_mut().unwrap();
        let (a, b, c, d) = (a.as_slice().unwrap(), b.as_slice().unwrap(), c.as_slice().unwrap(), d.as_slice().unwrap());
        for ((((o, a), b), c), d) in o.iter_mut().zip(a).zip(b).zip(c).zip(d) {
            *o = a.sin() * b + c / (d + 1.5);
        }
        black_box(&o);
    });
    let expected = out.to_vec();
    let ph = |name: &str| pt::placeholder(name, [Dim::param("n")], DType::F64);
    let (pa, pb, pc, pd) = (ph("a")?, ph("b")?, ph("c")?, ph("d")?);
    let expr = pt::sin(&pa)? * &pb + &pc / &(&pd + 1.5);
    let inputs = NamedViews::from([
        ("a", a.view().into_dyn().into()),
        ("b", b.view().into_dyn().into()),
        ("c", c.view().into_dyn().into()),
        ("d", d.view().into_dyn().into()),
    ]);
    let mut out = out.into_dyn();
    bench_backends_into(rows, sizes, workload, &expr, &inputs, &mut out, &expected, (Some(nd), Some(hand)));
    Ok(())
}

/// [`bench_backends`] through `run_into`: each run writes its result into `out` (allocated once,
/// as a time loop would), so that no run pays for a fresh output.
#[allow(clippy::too_many_arguments)]
fn bench_backends_into(
    rows: &mut Vec<Row>,
    sizes: &Sizes,
    workload: &str,
    expr: &Array,
    inputs: &NamedViews<'_>,
    out: &mut ArrayD<f64>,
    expected: &[f64],
    (ndarray_ms, hand_ms): (Option<f64>, Option<f64>),
) {
    for r in runners() {
        let program = match r.backend.compile(&expr.into()) {
            Ok(p) => p,
            Err(e) => {
                println!("{workload:<26} {:<22} skipped: {e}", r.name);
                continue;
            }
        };
        out.fill(f64::NAN);
        let mut targets = NamedViewsMut::from([("_pt_out", out.view_mut().into())]);
        let first = program.run_into(inputs, &mut targets);
        drop(targets);
        match first {
            Ok(()) => {}
            Err(e @ pt::Error::Unsupported { .. }) => {
                println!("{workload:<26} {:<22} skipped: {e}", r.name);
                continue;
            }
            Err(e) => panic!("{workload} on {}: {e}", r.name),
        }
        check(workload, &r.name, &data(out.clone()), expected);
        let median = median_ms(sizes.reps, || {
            let mut targets = NamedViewsMut::from([("_pt_out", out.view_mut().into())]);
            program.run_into(inputs, &mut targets).expect("the workload runs");
        });
        print_row(workload, &r.name, median, ndarray_ms, hand_ms);
        rows.push(Row { workload: workload.into(), backend: r.name.clone(), median_ms: median, ndarray_ms, hand_ms });
    }
}

fn sum_axis(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.sum;
    let a = matrix(n, n, 5);
    let pa = pt::placeholder("a", [Dim::param("n"), Dim::param("m")], DType::F64)?;
    let inputs = NamedData::from([("a".to_string(), data(a.clone().into_dyn()))]);
    let flat = a.as_slice().expect("C order");

    // Axis 0: the hand loop adds rows into the result, walking memory in order.
    let mut col_sums = Vec::new();
    let hand0 = median_ms(sizes.reps, || {
        col_sums = vec![0.0; n];
        for row in flat.chunks_exact(n) {
            for (s, v) in col_sums.iter_mut().zip(row) {
                *s += v;
            }
        }
        black_box(&col_sums);
    });
    let nd0 = median_ms(sizes.reps, || {
        black_box(a.sum_axis(Axis(0)));
    });
    bench_backends(rows, sizes, "sum-axis0", &pt::sum(&pa, 0)?, &inputs, &col_sums, (Some(nd0), Some(hand0)));

    let mut row_sums = Vec::new();
    let hand1 = median_ms(sizes.reps, || {
        row_sums = vec![0.0; n];
        for (s, row) in row_sums.iter_mut().zip(flat.chunks_exact(n)) {
            *s = row.iter().sum();
        }
        black_box(&row_sums);
    });
    let nd1 = median_ms(sizes.reps, || {
        black_box(a.sum_axis(Axis(1)));
    });
    bench_backends(rows, sizes, "sum-axis1", &pt::sum(&pa, 1)?, &inputs, &row_sums, (Some(nd1), Some(hand1)));

    let mut total = 0.0;
    let hand_all = median_ms(sizes.reps, || {
        total = flat.iter().sum();
        black_box(total);
    });
    let nd_all = median_ms(sizes.reps, || {
        black_box(a.sum());
    });
    let all = pt::sum(&pa, pt::Axes::All)?;
    bench_backends(rows, sizes, "sum-all", &all, &inputs, &[total], (Some(nd_all), Some(hand_all)));
    Ok(())
}

/// Sorting a long vector (a host step, `rayon`'s parallel sort of numpy's order-preserving keys;
/// in the wgpu `-resident` row a radix sort on the GPU) against the sort a Rust user would call (`sort_unstable_by(f64::total_cmp)`, one thread; ndarray
/// has no sort).
fn sort(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.elementwise;
    let x = values(n, 17);
    let px = pt::placeholder("x", [n as i64], DType::F64)?;
    let inputs = NamedData::from([("x".to_string(), data(Array1::from(x.clone()).into_dyn()))]);
    let mut sorted = Vec::new();
    let hand = median_ms(sizes.reps, || {
        sorted = x.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        black_box(&sorted);
    });
    let program = pt::sort(&px, pt::SortOptions::default())?;
    bench_backends(rows, sizes, "sort", &program, &inputs, &sorted, (None, Some(hand)));
    Ok(())
}

/// Placing values in a sorted vector (`searchsorted`, a binary search per value: on the host's
/// threads, or a GPU kernel in the wgpu `-resident` row) against `partition_point` in a loop.
fn searchsorted(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.elementwise;
    let mut sorted = values(n, 19);
    sorted.sort_unstable_by(f64::total_cmp);
    let queries = values(n, 23);
    let ps = pt::placeholder("sorted", [n as i64], DType::F64)?;
    let pq = pt::placeholder("queries", [n as i64], DType::F64)?;
    let inputs = NamedData::from([
        ("sorted".to_string(), data(Array1::from(sorted.clone()).into_dyn())),
        ("queries".to_string(), data(Array1::from(queries.clone()).into_dyn())),
    ]);
    let mut positions = Vec::new();
    let hand = median_ms(sizes.reps, || {
        positions = queries.iter().map(|q| sorted.partition_point(|s| s < q) as f64).collect();
        black_box(&positions);
    });
    let program = pt::astype(&pt::searchsorted(&ps, &pq, pt::Side::Left, None)?, DType::F64)?;
    bench_backends(rows, sizes, "searchsorted", &program, &inputs, &positions, (None, Some(hand)));
    Ok(())
}

/// Running sums of a long vector (`cumulative_sum`: a host step adding in numpy's order, or in the
/// wgpu `-resident` row one GPU invocation doing the same) against the sequential loop.
fn cumulative_sum(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.elementwise;
    let x = values(n, 13);
    let px = pt::placeholder("x", [n as i64], DType::F64)?;
    let inputs = NamedData::from([("x".to_string(), data(Array1::from(x.clone()).into_dyn()))]);
    let mut running = Vec::new();
    let hand = median_ms(sizes.reps, || {
        let mut acc = 0.0;
        running = x
            .iter()
            .map(|v| {
                acc += v;
                acc
            })
            .collect();
        black_box(&running);
    });
    let arr = Array1::from(x.clone());
    let nd = median_ms(sizes.reps, || {
        let mut a = arr.clone();
        a.accumulate_axis_inplace(Axis(0), |&prev, cur| *cur += prev);
        black_box(a);
    });
    let scan = pt::cumulative_sum(&px, pt::ScanOptions::default())?;
    bench_backends(rows, sizes, "cumulative-sum", &scan, &inputs, &running, (Some(nd), Some(hand)));
    Ok(())
}

/// Data-dependent lengths: `sum(x[x > 0])` (a count, its positions, a gather, a sum) and a
/// weighted histogram through `add_at` (`np.add.at(h, bins, w)`: a scatter of repeated positions).
fn select(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.elementwise;
    let x = values(n, 11);
    let inputs = NamedData::from([("x".to_string(), data(Array1::from(x.clone()).into_dyn()))]);
    let mut total = 0.0;
    let hand = median_ms(sizes.reps, || {
        total = x.iter().filter(|v| **v > 0.0).sum();
        black_box(total);
    });
    // ndarray has no boolean masks: positions first, then `select` gathers them (numpy's way).
    let xa = Array1::from(x.clone());
    let nd = median_ms(sizes.reps, || {
        let positions: Vec<usize> = xa.iter().enumerate().filter(|(_, v)| **v > 0.0).map(|(i, _)| i).collect();
        black_box(xa.select(Axis(0), &positions).sum());
    });
    let px = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
    let selected = pt::sum(&px.index(pt::s![&pt::greater(&px, 0.0)?])?, None)?;
    bench_backends(rows, sizes, "select-sum", &selected, &inputs, &[total], (Some(nd), Some(hand)));

    let bins = 1000;
    let weights = values(n, 12);
    let which: Vec<i64> = (0..n).map(|i| ((i as u64).wrapping_mul(2_654_435_761) % bins as u64) as i64).collect();
    let inputs = NamedData::from([
        ("w".to_string(), data(Array1::from(weights.clone()).into_dyn())),
        ("bins".to_string(), ArrayData::from(Array1::from(which.clone()).into_dyn())),
    ]);
    let mut histogram = Vec::new();
    let hand = median_ms(sizes.reps, || {
        histogram = vec![0.0; bins];
        for (&b, &w) in which.iter().zip(&weights) {
            histogram[b as usize] += w;
        }
        black_box(&histogram);
    });
    let pw = pt::placeholder("w", [Dim::param("n")], DType::F64)?;
    let pb = pt::placeholder("bins", [Dim::param("n")], DType::I64)?;
    let added = pt::zeros([bins as i64], DType::F64)?.add_at(pt::s![&pb], &pw)?;
    bench_backends(rows, sizes, "add-at-histogram", &added, &inputs, &histogram, (None, Some(hand)));
    Ok(())
}

fn matmul(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    for &n in &sizes.matmul {
        let (a, b) = (matrix(n, n, 6), matrix(n, n, 7));
        let nd = median_ms(sizes.reps, || {
            black_box(a.dot(&b));
        });
        // The hand loop in i-k-j order: the innermost loop streams a row of b and of the result.
        let (fa, fb) = (a.as_slice().unwrap(), b.as_slice().unwrap());
        let mut c = Vec::new();
        let hand = median_ms(sizes.reps, || {
            c = vec![0.0; n * n];
            for (i, c_row) in c.chunks_exact_mut(n).enumerate() {
                for k in 0..n {
                    let aik = fa[i * n + k];
                    for (cv, bv) in c_row.iter_mut().zip(&fb[k * n..(k + 1) * n]) {
                        *cv += aik * bv;
                    }
                }
            }
            black_box(&c);
        });
        let pa = pt::placeholder("a", [Dim::param("n"), Dim::param("k")], DType::F64)?;
        let pb = pt::placeholder("b", [Dim::param("k"), Dim::param("m")], DType::F64)?;
        let product = pt::einsum("ij,jk->ik", &[&pa, &pb])?;
        let inputs = NamedData::from([("a".to_string(), data(a.into_dyn())), ("b".to_string(), data(b.into_dyn()))]);
        bench_backends(rows, sizes, &format!("matmul-{n}"), &product, &inputs, &c, (Some(nd), Some(hand)));
    }
    Ok(())
}

fn dg_apply(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    const NODES: usize = 20;
    let e = sizes.dg_elements;
    let (d, u) = (matrix(NODES, NODES, 8), matrix(e, NODES, 9));
    let nd = median_ms(sizes.reps, || {
        black_box(u.dot(&d.t()));
    });
    let (fd, fu) = (d.as_slice().unwrap(), u.as_slice().unwrap());
    // The hand loop: each row of the result is `d` applied to a row of `u`.
    let hand_apply = |out: &mut [f64]| {
        for (o_row, u_row) in out.chunks_exact_mut(NODES).zip(fu.chunks_exact(NODES)) {
            for (o, d_row) in o_row.iter_mut().zip(fd.chunks_exact(NODES)) {
                *o = d_row.iter().zip(u_row).map(|(a, b)| a * b).sum();
            }
        }
    };
    let mut out = Vec::new();
    let hand = median_ms(sizes.reps, || {
        out = vec![0.0; e * NODES];
        hand_apply(&mut out);
        black_box(&out);
    });
    let pd = pt::placeholder("d", [NODES as i64, NODES as i64], DType::F64)?;
    let pu = pt::placeholder("u", [Dim::param("e"), Dim::new(NODES as i64)], DType::F64)?;
    let applied = pt::einsum("ij,ej->ei", &[&pd, &pu])?;
    let inputs =
        NamedData::from([("d".to_string(), data(d.clone().into_dyn())), ("u".to_string(), data(u.clone().into_dyn()))]);
    bench_backends(rows, sizes, "dg-apply", &applied, &inputs, &out, (Some(nd), Some(hand)));

    // Into an output allocated once, as a time stepper would: the baselines write into theirs too.
    let mut into = Array2::<f64>::zeros((e, NODES));
    let nd_into = median_ms(sizes.reps, || {
        ndarray::linalg::general_mat_mul(1.0, &u, &d.t(), 0.0, &mut into);
        black_box(&into);
    });
    let hand_into = median_ms(sizes.reps, || {
        hand_apply(into.as_slice_mut().expect("C order"));
        black_box(&into);
    });
    let views = NamedViews::from([("d", d.view().into_dyn().into()), ("u", u.view().into_dyn().into())]);
    let mut into = into.into_dyn();
    let workload = "dg-apply-into";
    bench_backends_into(rows, sizes, workload, &applied, &views, &mut into, &out, (Some(nd_into), Some(hand_into)));
    Ok(())
}

#[path = "../examples/dg/solver.rs"]
mod dg;

/// The DG operator of order 4 written with `ndarray` as a Rust user would: per element, `D u` and
/// `u Dᵀ` as matrix products, then the upwind flux differences of the faces the flow enters
/// through, lifted (the same faces as the DAG).
fn dg_rhs_ndarray(r: &dg::Reference, u: &ndarray::Array3<f64>, nb: &[Array1<i64>; 4], h: f64) -> ndarray::Array3<f64> {
    let (elements, np, _) = u.dim();
    let n = np - 1;
    let (ax, ay) = dg::VELOCITY;
    let a_n = [-ax, ax, -ay, ay];
    let mut out = ndarray::Array3::zeros((elements, np, np));
    for (e, mut oe) in out.outer_iter_mut().enumerate() {
        let ue = u.index_axis(Axis(0), e);
        let mut total = -(ax * r.diff.dot(&ue) + ay * ue.dot(&r.diff.t()));
        for (side, _) in dg::inflow_neighbours() {
            let other = nb[side][e] as usize;
            let (minus, plus) = match side {
                0 => (ue.row(0), u.slice(s![other, n, ..])),
                1 => (ue.row(n), u.slice(s![other, 0, ..])),
                2 => (ue.column(0), u.slice(s![other, .., n])),
                _ => (ue.column(n), u.slice(s![other, .., 0])),
            };
            let jump = a_n[side] * (&minus - &plus);
            let lift = if side % 2 == 0 { &r.lift_left } else { &r.lift_right };
            let (a, b) = if side < 2 { (lift, &jump) } else { (&jump, lift) };
            total += &a.view().insert_axis(Axis(1)).dot(&b.view().insert_axis(Axis(0)));
        }
        oe.assign(&((2.0 / h) * total));
    }
    out
}

/// The same operator as plain loops over slices.
fn dg_rhs_hand(r: &dg::Reference, u: &[f64], np: usize, nb: &[Array1<i64>; 4], h: f64, out: &mut [f64]) {
    let n = np - 1;
    let (ax, ay) = dg::VELOCITY;
    let a_n = [-ax, ax, -ay, ay];
    let inflow: Vec<usize> = dg::inflow_neighbours().map(|(side, _)| side).collect();
    let (d, ll, lr) = (r.diff.as_slice().unwrap(), r.lift_left.as_slice().unwrap(), r.lift_right.as_slice().unwrap());
    let block = np * np;
    for (e, o) in out.chunks_exact_mut(block).enumerate() {
        let ue = &u[e * block..(e + 1) * block];
        let at = |side: usize, i: usize, j: usize| u[nb[side][e] as usize * block + i * np + j];
        for i in 0..np {
            for j in 0..np {
                let (mut dx, mut dy) = (0.0, 0.0);
                for k in 0..np {
                    dx += d[i * np + k] * ue[k * np + j];
                    dy += d[j * np + k] * ue[i * np + k];
                }
                let mut total = -(ax * dx + ay * dy);
                for &side in &inflow {
                    total += match side {
                        0 => ll[i] * a_n[0] * (ue[j] - at(0, n, j)),
                        1 => lr[i] * a_n[1] * (ue[n * np + j] - at(1, 0, j)),
                        2 => ll[j] * a_n[2] * (ue[i * np] - at(2, i, n)),
                        _ => lr[j] * a_n[3] * (ue[i * np + n] - at(3, i, 0)),
                    };
                }
                o[i * np + j] = (2.0 / h) * total;
            }
        }
    }
}

/// One right-hand-side evaluation of the DG flagship (`examples/dg`, order 4) on a mesh of
/// `dg_rhs_mesh²` squares (10⁶ DOFs at full size).
fn dg_rhs(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let reference = dg::Reference::new(4);
    let mesh = dg::Mesh { k: sizes.dg_rhs_mesh };
    let np = reference.np();
    let u = mesh.interpolate(&reference, |x, y| (6.0 * x).sin() * (1.0 + y * y));
    let nb = mesh.neighbours();
    let h = mesh.h();
    let nd = median_ms(sizes.reps, || {
        black_box(dg_rhs_ndarray(&reference, &u, &nb, h));
    });
    let fu = u.as_slice().unwrap();
    let mut out = Vec::new();
    let hand = median_ms(sizes.reps, || {
        out = vec![0.0; u.len()];
        dg_rhs_hand(&reference, fu, np, &nb, h, &mut out);
        black_box(&out);
    });
    let expected = dg_rhs_ndarray(&reference, &u, &nb, h);
    let pu = pt::placeholder("u", [Dim::param("e"), Dim::new(np as i64), Dim::new(np as i64)], DType::F64)?;
    let rhs = dg::rhs(&reference, &pu)?;
    let mut inputs = NamedData::from([
        ("u".to_string(), data(u.clone().into_dyn())),
        ("h".to_string(), data(ArrayD::from_elem(ndarray::IxDyn(&[]), h))),
    ]);
    for (side, name) in dg::inflow_neighbours() {
        inputs.insert(name.to_string(), ArrayData::from(nb[side].clone().into_dyn()));
    }
    let expected = expected.as_slice().unwrap();
    bench_backends(rows, sizes, "dg-rhs", &rhs, &inputs, expected, (Some(nd), Some(hand)));
    Ok(())
}

fn stencil(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let n = sizes.stencil;
    let u = matrix(n, n, 10);
    let nd = median_ms(sizes.reps, || {
        black_box(
            &u.slice(s![..-2, 1..-1]) + &u.slice(s![2.., 1..-1]) + &u.slice(s![1..-1, ..-2]) + &u.slice(s![1..-1, 2..])
                - 4.0 * &u.slice(s![1..-1, 1..-1]),
        );
    });
    let fu = u.as_slice().unwrap();
    let m = n - 2;
    // The hand loop over rows of the result, and ndarray's Zip (what a performance-minded ndarray
    // user would reach for), each writing into a given output.
    let hand_laplacian = |out: &mut [f64]| {
        for (i, o_row) in out.chunks_exact_mut(m).enumerate() {
            let (up, mid, down) =
                (&fu[i * n..(i + 1) * n], &fu[(i + 1) * n..(i + 2) * n], &fu[(i + 2) * n..(i + 3) * n]);
            for (j, o) in o_row.iter_mut().enumerate() {
                *o = up[j + 1] + down[j + 1] + mid[j] + mid[j + 2] - 4.0 * mid[j + 1];
            }
        }
    };
    let zip_laplacian = |out: &mut Array2<f64>| {
        Zip::from(out)
            .and(u.slice(s![..-2, 1..-1]))
            .and(u.slice(s![2.., 1..-1]))
            .and(u.slice(s![1..-1, ..-2]))
            .and(u.slice(s![1..-1, 2..]))
            .and(u.slice(s![1..-1, 1..-1]))
            .for_each(|o, a, b, c, d, e| *o = a + b + c + d - 4.0 * e);
    };
    let mut out = Vec::new();
    let hand = median_ms(sizes.reps, || {
        out = vec![0.0; m * m];
        hand_laplacian(&mut out);
        black_box(&out);
    });
    let pu = pt::placeholder("u", [Dim::param("n"), Dim::param("m")], DType::F64)?;
    let laplacian = pu.index(pt::s![..-2, 1..-1])?
        + pu.index(pt::s![2.., 1..-1])?
        + pu.index(pt::s![1..-1, ..-2])?
        + pu.index(pt::s![1..-1, 2..])?
        - 4.0 * &pu.index(pt::s![1..-1, 1..-1])?;
    let inputs = NamedData::from([("u".to_string(), data(u.clone().into_dyn()))]);
    bench_backends(rows, sizes, "stencil", &laplacian, &inputs, &out, (Some(nd), Some(hand)));
    let zip = median_ms(sizes.reps, || {
        let mut o = Array2::<f64>::zeros((m, m));
        zip_laplacian(&mut o);
        black_box(o);
    });
    println!("{:<26} {:<22} {zip:>10.3}   (ndarray Zip, for reference)", "stencil", "ndarray-zip");

    // Into an output allocated once, as a time loop would: the baselines write into theirs too.
    let mut into = Array2::<f64>::zeros((m, m));
    let nd_into = median_ms(sizes.reps, || {
        zip_laplacian(&mut into);
        black_box(&into);
    });
    let hand_into = median_ms(sizes.reps, || {
        hand_laplacian(into.as_slice_mut().expect("C order"));
        black_box(&into);
    });
    let views = NamedViews::from([("u", u.view().into_dyn().into())]);
    let mut into = into.into_dyn();
    let workload = "stencil-into";
    bench_backends_into(rows, sizes, workload, &laplacian, &views, &mut into, &out, (Some(nd_into), Some(hand_into)));
    Ok(())
}

/// A chain of about `nodes` nodes: `x ← x * c + 1` repeated; `salt` makes DAGs structurally
/// distinct, so that each compile is cold.
fn chain(nodes: usize, salt: usize) -> pt::Result<Array> {
    let mut x = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
    let steps = (nodes / 2).max(1);
    for k in 0..steps {
        let c = if k == 0 { 1.0 + salt as f64 * 1e-9 } else { 1.0 + 1e-6 };
        x = &x * c + 1.0;
    }
    Ok(x)
}

fn compile(rows: &mut Vec<Row>, sizes: &Sizes) -> pt::Result<()> {
    let mut backends: Vec<Runner> =
        runners().into_iter().filter(|r| !r.name.starts_with("cranelift-threads")).collect();
    if let Ok(interp) = pt::backend("interp") {
        backends.push(Runner { name: "interp".into(), backend: interp });
    }
    let mut salt = 0;
    for &nodes in &sizes.compile_nodes {
        let reps = if nodes >= 50_000 { 3 } else { sizes.reps };
        let actual = pytato::array::unique_nodes([&chain(nodes, 0)?]).len();
        for r in &backends {
            // Each of a long chain's ~1,600 kernels is a pipeline the driver compiles: minutes on
            // lavapipe, so wgpu joins the smaller chains only.
            if r.name == "wgpu" && nodes >= 50_000 {
                continue;
            }
            // Build the DAGs first: only compilation is timed.
            let dags: Vec<Array> = (0..=reps)
                .map(|_| {
                    salt += 1;
                    chain(nodes, salt)
                })
                .collect::<pt::Result<_>>()?;
            let mut next = dags.iter();
            let cold = median_of_calls_ms(reps, || {
                black_box(r.backend.compile(&next.next().expect("one DAG per call").into()).expect("compiles"));
            });
            // Cached: a DAG rebuilt equal to one compiled before (equal structure, new nodes).
            let first_salt = salt - reps;
            let rebuilt: Vec<Array> = (0..=reps).map(|_| chain(nodes, first_salt)).collect::<pt::Result<_>>()?;
            let mut next = rebuilt.iter();
            let cached = median_of_calls_ms(reps, || {
                black_box(r.backend.compile(&next.next().expect("one DAG per call").into()).expect("compiles"));
            });
            for (kind, ms) in [("cold", cold), ("cached", cached)] {
                let workload = format!("compile-{actual}-{kind}");
                print_row(&workload, &r.name, ms, None, None);
                rows.push(Row { workload, backend: r.name.clone(), median_ms: ms, ndarray_ms: None, hand_ms: None });
            }
        }
    }
    Ok(())
}

/// The same workloads timed with numpy and `jax.jit` by `peers.py` under `python`, added as rows
/// (with the Rust baselines of their workload, so every ratio column applies).
fn peers(rows: &mut Vec<Row>, sizes: &Sizes, python: &str, wanted: &dyn Fn(&str) -> bool) {
    let spec = serde_json::json!({
        "elementwise": sizes.elementwise, "sum": sizes.sum, "matmul": sizes.matmul,
        "dg_elements": sizes.dg_elements, "dg_rhs_mesh": sizes.dg_rhs_mesh, "stencil": sizes.stencil, "reps": sizes.reps,
    });
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/peers.py");
    let output = std::process::Command::new(python).arg(&script).arg(spec.to_string()).output();
    let parsed = output.map_err(|e| e.to_string()).and_then(|o| {
        eprint!("{}", String::from_utf8_lossy(&o.stderr));
        if !o.status.success() {
            return Err(format!("{} exited with {}", script.display(), o.status));
        }
        serde_json::from_slice::<Vec<serde_json::Value>>(&o.stdout).map_err(|e| e.to_string())
    });
    let peer_rows = match parsed {
        Ok(p) => p,
        Err(e) => {
            println!("peers skipped: {e}");
            return;
        }
    };
    for p in peer_rows {
        let (Some(workload), Some(backend), Some(median)) =
            (p["workload"].as_str(), p["backend"].as_str(), p["median_ms"].as_f64())
        else {
            continue;
        };
        if !wanted(workload) {
            continue;
        }
        let ours = rows.iter().find(|r| r.workload == workload);
        let (ndarray_ms, hand_ms) = ours.map_or((None, None), |r| (r.ndarray_ms, r.hand_ms));
        print_row(workload, backend, median, ndarray_ms, hand_ms);
        rows.push(Row { workload: workload.into(), backend: backend.into(), median_ms: median, ndarray_ms, hand_ms });
    }
}

fn target_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace").to_path_buf();
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from).join("bench")
}

/// Which adapter the wgpu rows ran on, and the memory throughput of `fused-elementwise` (four
/// float64 inputs read, one written) per backend.
fn adapter_note(rows: &[Row], elementwise: usize) -> String {
    let mut note = String::new();
    #[cfg(feature = "wgpu")]
    if let Ok(w) = pt::wgpu::Wgpu::new() {
        note.push_str(&format!("\nThe `wgpu` rows ran on {}", w.adapter()));
        if w.adapter().contains("Cpu") {
            note.push_str(": a CPU implementation of Vulkan, so they are CPU figures, not GPU ones");
        }
        note.push_str(". Their times include uploading the inputs and reading the result back.\n");
    }
    let bytes = 5 * elementwise * std::mem::size_of::<f64>();
    if rows.iter().any(|r| r.workload == "fused-elementwise") {
        note.push_str("\nfused-elementwise throughput (bytes of the 4 inputs and the output / median time):\n\n");
        for r in rows.iter().filter(|r| r.workload == "fused-elementwise") {
            note.push_str(&format!("- {}: {:.1} GB/s\n", r.backend, bytes as f64 / (r.median_ms * 1e-3) / 1e9));
        }
    }
    note
}

fn write_reports(rows: &[Row], sizes: &Sizes, quick: bool) -> std::io::Result<PathBuf> {
    let dir = target_dir();
    std::fs::create_dir_all(&dir)?;
    let json: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "workload": r.workload, "backend": r.backend, "median_ms": r.median_ms,
                "ndarray_ms": r.ndarray_ms, "hand_ms": r.hand_ms,
            })
        })
        .collect();
    std::fs::write(dir.join("report.json"), serde_json::to_string_pretty(&json).expect("plain values"))?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let peers = rows.iter().any(|r| r.backend == "numpy");
    let flags =
        [(quick, " --quick"), (peers, " --peers")].iter().filter(|(on, _)| *on).map(|(_, f)| *f).collect::<String>();
    let mut md = format!(
        "# Benchmarks{}\n\nMedian wall times on this machine ({cpus} hardware threads); ratios are baseline time \
         / backend time, so above 1 means the backend is faster. `cranelift` runs on one thread, \
         `cranelift-threads(N)` on N. Produced by `cargo xtask bench{}`.\n\n\
         | workload | backend | median ms | ndarray ms | hand ms | vs ndarray | vs hand | vs jax.jit |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
        if quick { " (quick sizes)" } else { "" },
        flags,
    );
    for r in rows {
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        let ratio = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.2}x", v / r.median_ms));
        // `-into` rows write into an output allocated once, as jax's allocator reuses its buffers:
        // they are compared with jax's row of the same computation.
        let computation = r.workload.trim_end_matches("-into");
        let jax = rows.iter().find(|p| p.workload == computation && p.backend == "jax.jit").map(|p| p.median_ms);
        md.push_str(&format!(
            "| {} | {} | {:.4} | {} | {} | {} | {} | {} |\n",
            r.workload,
            r.backend,
            r.median_ms,
            ms(r.ndarray_ms),
            ms(r.hand_ms),
            ratio(r.ndarray_ms),
            ratio(r.hand_ms),
            ratio(jax)
        ));
    }
    if rows.iter().any(|r| r.backend == "jax.jit") {
        md.push_str(
            "\n`numpy` and `jax.jit` rows come from `pytato/benches/peers.py` in the same run (float64; jax on \
             the CPU with its default threads; `dg-apply` as `u @ d.T`).\n",
        );
    }
    md.push_str(&adapter_note(rows, sizes.elementwise));
    std::fs::write(dir.join("report.md"), md)?;
    Ok(dir)
}

fn main() -> pt::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `cargo bench` passes `--bench`; a name filter picks workloads.
    let peers_python = args.iter().position(|a| a == "--peers").map(|i| i + 1);
    let filter: Vec<&String> = args
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(i, a)| !a.starts_with("--") && Some(*i) != peers_python)
        .map(|(_, a)| a)
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let sizes = if quick { Sizes::quick() } else { Sizes::full() };
    let start = Instant::now();
    println!(
        "{:<26} {:<22} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "workload", "backend", "median ms", "ndarray", "hand", "vs ndarray", "vs hand"
    );
    let mut rows = Vec::new();
    type Workload = fn(&mut Vec<Row>, &Sizes) -> pt::Result<()>;
    let workloads: [(&str, Workload); 12] = [
        ("fused-elementwise", fused_elementwise),
        ("fused-elementwise-into", fused_elementwise_into),
        ("sum-axis", sum_axis),
        ("cumulative-sum", cumulative_sum),
        ("sort", sort),
        ("searchsorted", searchsorted),
        ("select", select),
        ("matmul", matmul),
        ("dg-apply", dg_apply),
        ("dg-rhs", dg_rhs),
        ("stencil", stencil),
        ("compile", compile),
    ];
    for (name, run) in workloads {
        if wanted(name) {
            run(&mut rows, &sizes)?;
        }
    }
    if let Some(python) = args.iter().position(|a| a == "--peers").and_then(|i| args.get(i + 1)) {
        peers(&mut rows, &sizes, python, &wanted);
    }
    let dir = write_reports(&rows, &sizes, quick).expect("target/bench is writable");
    println!("reports: {}/report.json, report.md ({:.1}s)", dir.display(), start.elapsed().as_secs_f64());
    Ok(())
}
