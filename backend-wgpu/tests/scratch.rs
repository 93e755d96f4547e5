//! Reductions whose block sums would take more memory than the adapter binds (or than
//! `Wgpu::with_scratch_limit` allows) run over their output elements in chunks whose block sums
//! fit: the same shaders, the same bits (a product of 1500×1500 matrices on lavapipe was
//! `Unsupported`: 216 MB of block sums, 128 MiB bound). Where one element's block sums do not
//! fit either, they are combined in runs of blocks (`partial_runs.rs`).
//!
//! One test function, run alone in this binary: it counts the process's pipelines.

mod support;
use support::gpu;

use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, Error, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};
use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};

fn f64s(values: Vec<f64>, shape: &[usize]) -> ArrayData {
    ArrayData::from(ndarray::Array::from_shape_vec(shape, values).unwrap().into_dyn())
}

fn bits(d: &ArrayData) -> Vec<u64> {
    d.to_scalars().iter().map(|s| s.to_f64().to_bits()).collect()
}

#[test]
fn reductions_past_the_scratch_limit_run_in_chunks_of_elements_with_the_same_bits() {
    // Products as reductions, not workgroup tiles (a GPU adapter's default), so that they split.
    let Some(w) = gpu().map(|w| w.with_tiled_products(false)) else { return };
    let n = 200;
    let mut draw = support::uniform(0x2545_f491_4f6c_dd1du64);
    let mut next = move || draw() - 0.5;
    let mut a: Vec<f64> = (0..n * n).map(|_| next()).collect();
    a[7] = -0.0;
    a[n + 3] = f64::INFINITY;
    let b: Vec<f64> = (0..n * n).map(|_| next()).collect();
    let pa = pt::placeholder("a", [n as i64, n as i64], DType::F64).unwrap();
    let pb = pt::placeholder("b", [n as i64, n as i64], DType::F64).unwrap();
    // `q`'s rows are longer than lavapipe's loop cap (65,535 iterations) in the first run: each
    // reduction of a row must run in stages, chunked or not.
    let pq = pt::placeholder("q", [Dim::from(3), Dim::param("m")], DType::F64).unwrap();
    let ints = pt::astype(&pt::multiply(&pa, 1e6).unwrap(), DType::I64).unwrap();
    let row_sums = pt::sum(&pq, 1).unwrap();
    let m = pt::size_param("m").unwrap();
    let row_maxima = pt::max(&pq, 1).unwrap();
    // Each case with the scratch limit that makes it run in several chunks: a slot of 8 bytes
    // per element and block of 128 terms (a carried product: two per element).
    let cases: [(&str, Array, u64); 6] = [
        // 40,000 elements of 2 blocks: 7 chunks, the last one short.
        ("product", pt::matmul(&pa, &pb).unwrap(), 100_000),
        ("maxima", pt::max(&pt::multiply(&pa, &pb).unwrap(), 1).unwrap(), 1_000),
        ("integers", pt::astype(&pt::sum(&ints, 0).unwrap(), DType::F64).unwrap(), 1_000),
        // One element per chunk.
        ("products", pt::prod(&pq, 1).unwrap(), 16),
        ("row_sums", row_sums.clone(), 8 * 547),
        // Two split reductions, the second under a condition on the first (a guarded stage
        // reads the first's total at its element's slot); a row's sum is `m` plus noise.
        (
            "guarded",
            pt::where_(pt::greater(&row_sums, &m).unwrap(), &row_maxima, pt::negative(&row_maxima).unwrap()).unwrap(),
            8 * 547,
        ),
    ];
    // The inputs of a case: `a` (and `b`), or `q` with rows of `m` terms.
    let inputs_of = |name: &str, m: usize| {
        if name == "integers" {
            return NamedData::from([("a".to_string(), f64s(a.clone(), &[n, n]))]);
        }
        if ["product", "maxima"].contains(&name) {
            return NamedData::from([
                ("a".to_string(), f64s(a.clone(), &[n, n])),
                ("b".to_string(), f64s(b.clone(), &[n, n])),
            ]);
        }
        let mut draw = support::uniform(m as u64);
        let q: Vec<f64> = (0..3 * m).map(|_| 1.0 + (draw() - 0.5) * 1e-4).collect();
        NamedData::from([("q".to_string(), f64s(q, &[3, m]))])
    };
    for (name, array, limit) in cases {
        let outputs = DictOfNamedArrays::new([(name, array)]).unwrap();
        let program = w.clone().with_scratch_limit(limit).compile(&outputs.clone().into()).unwrap();
        let reference = Interpreter.compile(&outputs.clone().into()).unwrap();
        let created = w.pipelines_created();
        // The same program with other sizes: 70,000 terms per row, then 500 (one chunk of all
        // three rows for the row sums and `guarded`), then 70,000 again.
        for m in [70_000, 500, 70_000] {
            let inputs = inputs_of(name, m);
            let want = reference.run(&inputs).unwrap();
            let got = program.run(&inputs).unwrap();
            assert_eq!(bits(&got[name]), bits(&want[name]), "{name}, m = {m}");
        }
        assert_eq!(w.pipelines_created(), created, "{name}: chunks run the shaders compiled with the program");
        let inputs = inputs_of(name, 500);
        let whole = w.compile(&outputs.clone().into()).unwrap().run(&inputs).unwrap();
        assert_eq!(bits(&whole[name]), bits(&reference.run(&inputs).unwrap()[name]), "{name}, unchunked");
    }
    // On device data (runs that only enqueue): a chunked product of a chunked product, the
    // second reading the first's output where it lies.
    let square = pt::matmul(&pa, &pa).unwrap();
    let program = w.clone().with_scratch_limit(100_000).compile(&(&square).into()).unwrap();
    let reference = Interpreter.compile(&(&square).into()).unwrap();
    let start = inputs_of("product", 1).remove("b").unwrap();
    let once = reference.run(&NamedData::from([("a".to_string(), start.clone())])).unwrap().remove("_pt_out").unwrap();
    let twice = reference.run(&NamedData::from([("a".to_string(), once)])).unwrap().remove("_pt_out").unwrap();
    let mut state = w.upload(&start.view()).unwrap();
    for _ in 0..2 {
        let inputs = NamedDeviceInputs::from([("a", DeviceInput::Device(&state))]);
        state = program.run_device(&inputs).unwrap().remove("_pt_out").unwrap();
    }
    assert_eq!(bits(&state.to_host().unwrap()), bits(&twice), "a chunked product of a chunked product on device data");
    assert!(twice.to_scalars().iter().all(|s| s.to_f64().is_finite()));

    let want =
        Interpreter.compile(&(&pt::matmul(&pa, &pb).unwrap()).into()).unwrap().run(&inputs_of("product", 1)).unwrap();
    assert!(want["_pt_out"].to_scalars().iter().any(|s| matches!(s, Scalar::F64(v) if v.is_infinite())));

    // One element's block sums (2 blocks of 8 bytes) beyond the limit: one partial result of a
    // run of both blocks each (`partial_runs.rs`), the same bits.
    let program = w.clone().with_scratch_limit(15).compile(&(&pt::matmul(&pa, &pb).unwrap()).into()).unwrap();
    assert_eq!(bits(&program.run(&inputs_of("product", 1)).unwrap()["_pt_out"]), bits(&want["_pt_out"]));
    // Not even one partial result (8 bytes) fits: refused, not wrong.
    let program = w.clone().with_scratch_limit(7).compile(&(&pt::matmul(&pa, &pb).unwrap()).into()).unwrap();
    match program.run(&inputs_of("product", 1)) {
        Err(Error::Unsupported { reason, .. }) => {
            assert!(reason.contains("more than 7 bytes of partial results for one output element"), "{reason}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
