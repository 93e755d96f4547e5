//! Reductions whose block sums would take more memory than the adapter binds (or than
//! `Wgpu::with_scratch_limit` allows) run each element's reduction in one loop instead: with
//! the same bits, never `Unsupported` (a product of 1500×1500 matrices on lavapipe was: 216 MB
//! of block sums, 128 MiB bound).
//!
//! One test function, run alone in this binary: it counts the process's pipelines.

mod support;
use support::gpu;

use pytato_backend_interp::Interpreter;
use pytato_core::{ArrayData, DType, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

fn f64s(values: Vec<f64>, shape: &[usize]) -> ArrayData {
    ArrayData::from(ndarray::Array::from_shape_vec(shape, values).unwrap().into_dyn())
}

fn bits(d: &ArrayData) -> Vec<u64> {
    d.to_scalars().iter().map(|s| s.to_f64().to_bits()).collect()
}

#[test]
fn reductions_past_the_scratch_limit_run_in_one_loop_with_the_same_bits() {
    let Some(w) = gpu() else { return };
    // A 200×200 product (40,000 sums of 200 terms: 640 KB of block sums), long maxima and
    // integer sums, and a float product of 40,000 terms (carried from dispatch to dispatch).
    let n = 200;
    let mut draw = support::uniform(0x2545_f491_4f6c_dd1du64);
    let mut next = move || draw() - 0.5;
    let mut a: Vec<f64> = (0..n * n).map(|_| next()).collect();
    a[7] = -0.0;
    a[n + 3] = f64::INFINITY;
    let b: Vec<f64> = (0..n * n).map(|_| next()).collect();
    let q: Vec<f64> = (0..3 * 40_000).map(|_| 1.0 + next() * 1e-4).collect();
    let inputs = NamedData::from([
        ("a".to_string(), f64s(a, &[n, n])),
        ("b".to_string(), f64s(b, &[n, n])),
        ("q".to_string(), f64s(q, &[3, 40_000])),
    ]);
    let pa = pt::placeholder("a", [n as i64, n as i64], DType::F64).unwrap();
    let pb = pt::placeholder("b", [n as i64, n as i64], DType::F64).unwrap();
    let pq = pt::placeholder("q", [3, 40_000], DType::F64).unwrap();
    let ints = pt::astype(&pt::multiply(&pa, 1e6).unwrap(), DType::I64).unwrap();
    let outputs = pytato_core::DictOfNamedArrays::new([
        ("product", pt::matmul(&pa, &pb).unwrap()),
        ("maxima", pt::max(&pt::multiply(&pa, &pb).unwrap(), 1).unwrap()),
        ("integers", pt::astype(&pt::sum(&ints, 0).unwrap(), DType::F64).unwrap()),
        ("products", pt::prod(&pq, 1).unwrap()),
    ])
    .unwrap();
    let want = Interpreter.compile(&outputs.clone().into()).unwrap().run(&inputs).unwrap();

    let split = w.compile(&outputs.clone().into()).unwrap().run(&inputs).unwrap();
    let limited = w.clone().with_scratch_limit(16);
    let program = limited.compile(&outputs.clone().into()).unwrap();
    let before = w.pipelines_created();
    let unsplit = program.run(&inputs).unwrap();
    assert!(w.pipelines_created() > before, "the run compiled the kernels' unsplit forms");
    let created = w.pipelines_created();
    let again = program.run(&inputs).unwrap();
    assert_eq!(w.pipelines_created(), created, "once");
    for name in ["product", "maxima", "integers", "products"] {
        assert_eq!(bits(&split[name]), bits(&want[name]), "{name}, in stages");
        assert_eq!(bits(&unsplit[name]), bits(&want[name]), "{name}, in one loop");
        assert_eq!(bits(&again[name]), bits(&want[name]), "{name}, again");
    }
    assert_eq!(want["products"].to_scalars().len(), 3);
    assert!(want["product"].to_scalars().iter().any(|s| matches!(s, Scalar::F64(v) if v.is_infinite())));
}
