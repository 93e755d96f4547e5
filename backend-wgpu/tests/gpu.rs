//! The wgpu backend on a real adapter (lavapipe in CI): semantics against the interpreter and
//! Rust's libm, index errors, grids beyond 65,535 workgroups, limits, caches and buffer reuse.
//!
//! Without an adapter every test says it was skipped and why, and passes; with
//! `PYTATO_REQUIRE_WGPU=1` (CI) a missing adapter fails them.

use ndarray::Array1;
use pytato_backend_interp::Interpreter;
use pytato_backend_wgpu::{REQUIRE_VAR, Wgpu};
use pytato_core::backend::{Backend, NamedData, Outputs};
use pytato_core::frontend as pt;
use pytato_core::{ArrayData, DType, Dim, Error, Scalar};

/// The backend, or `None` (with a message) where there is no adapter and none is required.
fn gpu() -> Option<Wgpu> {
    match Wgpu::new() {
        Ok(w) => Some(w),
        Err(e) if std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0") => {
            panic!("{REQUIRE_VAR} is set but the wgpu backend cannot start: {e}")
        }
        Err(e) => {
            eprintln!("wgpu test skipped: {e}");
            None
        }
    }
}

fn inputs<const N: usize>(items: [(&str, ArrayData); N]) -> NamedData {
    items.into_iter().map(|(n, d)| (n.to_string(), d)).collect()
}

/// Runs `outputs` on the inputs it takes (of `inputs`).
fn run(backend: &dyn Backend, outputs: impl Into<Outputs>, inputs: &NamedData) -> pytato_core::Result<ArrayData> {
    let program = backend.compile(&outputs.into())?;
    let mut taken = inputs.clone();
    taken.retain(|name, _| program.input_names().contains(name));
    let mut out = program.run(&taken)?;
    Ok(out.remove("_pt_out").expect("one output"))
}

fn f64s(d: &ArrayData) -> Vec<f64> {
    d.to_scalars().iter().map(|s| s.to_f64()).collect()
}

/// Within `ulps` units in the last place of `want`, NaN matching NaN and infinities exact.
fn close_ulps(got: f64, want: f64, ulps: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    let ulp = if want == 0.0 { f64::MIN_POSITIVE } else { f64::EPSILON * want.abs() };
    (got - want).abs() <= ulps * ulp
}

#[test]
fn float64_math_agrees_with_libm() {
    let Some(w) = gpu() else { return };
    assert!(w.has_f64(), "these tests need SHADER_F64 (lavapipe has it)");
    let mut args: Vec<f64> = vec![
        0.0,
        -0.0,
        1e-300,
        1e-20,
        1e-9,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::PI,
        1e5,
        1e6,
        700.0,
        -740.0,
        0.5,
        1.0,
        -1.0,
    ];
    args.extend((0..400).map(|k| (k as f64 - 200.0) * 0.1373));
    args.extend((0..100).map(|k| (k as f64 / 50.0 - 1.0) * 0.999));
    let n = args.len();
    let x = pt::placeholder("x", [n as i64], DType::F64).unwrap();
    let data = inputs([("x", ArrayData::from(Array1::from(args.clone()).into_dyn()))]);
    type F = fn(&pytato_core::Array) -> pytato_core::Result<pytato_core::Array>;
    /// Name, frontend function, libm reference, tolerance in ulps.
    type Case = (&'static str, F, fn(f64) -> f64, f64);
    let cases: [Case; 13] = [
        ("exp", pt::exp, f64::exp, 2.0),
        ("log", pt::log, f64::ln, 2.0),
        ("log10", pt::log10, f64::log10, 3.0),
        ("sin", pt::sin, f64::sin, 2.0),
        ("cos", pt::cos, f64::cos, 2.0),
        ("tan", pt::tan, f64::tan, 4.0),
        ("arcsin", pt::arcsin, f64::asin, 2.0),
        ("arccos", pt::arccos, f64::acos, 2.0),
        ("arctan", pt::arctan, f64::atan, 2.0),
        ("sinh", pt::sinh, f64::sinh, 4.0),
        ("cosh", pt::cosh, f64::cosh, 4.0),
        ("tanh", pt::tanh, f64::tanh, 4.0),
        ("sqrt", pt::sqrt, f64::sqrt, 0.0),
    ];
    for (name, f, reference, ulps) in cases {
        let got = f64s(&run(&w, f(&x).unwrap(), &data).unwrap());
        for (k, &a) in args.iter().enumerate() {
            let want = reference(a);
            // Results near zero (sin at multiples of pi) are compared absolutely.
            let ok = close_ulps(got[k], want, ulps) || (want.abs() < 1e-10 && (got[k] - want).abs() < 1e-15);
            assert!(ok, "{name}({a:e}) = {:e} on the GPU, {want:e} in libm", got[k]);
        }
    }
    // Two-argument functions.
    let y = pt::placeholder("y", [n as i64], DType::F64).unwrap();
    let ys: Vec<f64> = args.iter().rev().copied().collect();
    let data = inputs([
        ("x", ArrayData::from(Array1::from(args.clone()).into_dyn())),
        ("y", ArrayData::from(Array1::from(ys.clone()).into_dyn())),
    ]);
    let atan2 = f64s(&run(&w, pt::arctan2(&x, &y).unwrap(), &data).unwrap());
    let pow = f64s(&run(&w, pt::power(pt::abs(&x).unwrap(), pt::multiply(&y, 0.25).unwrap()).unwrap(), &data).unwrap());
    for k in 0..n {
        assert!(close_ulps(atan2[k], args[k].atan2(ys[k]), 4.0), "arctan2({}, {})", args[k], ys[k]);
        let want = args[k].abs().powf(ys[k] * 0.25);
        assert!(close_ulps(pow[k], want, 64.0), "{}**{}: {} vs {want}", args[k].abs(), ys[k] * 0.25, pow[k]);
    }
}

#[test]
fn integer_semantics_match_the_interpreter_for_every_integer_dtype() {
    let Some(w) = gpu() else { return };
    let edge: Vec<i64> =
        vec![i64::MIN, i64::MIN + 1, -129, -128, -127, -7, -2, -1, 0, 1, 2, 3, 7, 127, 128, 255, 256, i64::MAX];
    let n = edge.len();
    let xs: Vec<Scalar> = edge.iter().flat_map(|&a| edge.iter().map(move |_| Scalar::I64(a))).collect();
    let ys: Vec<Scalar> = edge.iter().flat_map(|_| edge.iter().map(|&b| Scalar::I64(b))).collect();
    for dtype in [DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64] {
        let x = pt::placeholder("x", [(n * n) as i64], dtype).unwrap();
        let y = pt::placeholder("y", [(n * n) as i64], dtype).unwrap();
        let xdata = ArrayData::from_scalars(dtype, &[n * n], xs.iter().map(|s| s.cast(dtype))).unwrap();
        let ydata = ArrayData::from_scalars(dtype, &[n * n], ys.iter().map(|s| s.cast(dtype))).unwrap();
        let data = inputs([("x", xdata), ("y", ydata)]);
        for (name, e) in [
            ("//", pt::floor_divide(&x, &y).unwrap()),
            ("%", pt::remainder(&x, &y).unwrap()),
            ("**", pt::power(&x, pt::remainder(&y, 5).unwrap()).unwrap()),
            ("*", pt::multiply(&x, &y).unwrap()),
            ("-", pt::negative(&x).unwrap()),
            ("astype(float64)", pt::astype(&x, DType::F64).unwrap()),
            ("astype(int8)", pt::astype(&x, DType::I8).unwrap()),
            ("astype(uint64)", pt::astype(&x, DType::U64).unwrap()),
        ] {
            let gpu = run(&w, &e, &data).unwrap();
            let reference = run(&Interpreter, &e, &data).unwrap();
            assert_eq!(gpu, reference, "{dtype} {name}");
        }
    }
}

#[test]
fn nan_compares_and_propagates_as_numpy_says() {
    let Some(w) = gpu() else { return };
    for dtype in [DType::F32, DType::F64] {
        let values = [f64::NAN, 1.0, -2.0, f64::INFINITY, f64::NAN, 0.0];
        let others = [1.0, f64::NAN, -2.0, 3.0, f64::NAN, -0.0];
        let cast = |v: &[f64]| ArrayData::from_scalars(dtype, &[6], v.iter().map(|&x| Scalar::F64(x).cast(dtype)));
        let data = inputs([("x", cast(&values).unwrap()), ("y", cast(&others).unwrap())]);
        let x = pt::placeholder("x", [6], dtype).unwrap();
        let y = pt::placeholder("y", [6], dtype).unwrap();
        for (name, e) in [
            ("!=", pt::not_equal(&x, &y).unwrap()),
            ("==", pt::equal(&x, &y).unwrap()),
            ("<", pt::less(&x, &y).unwrap()),
            ("maximum", pt::maximum(&x, &y).unwrap()),
            ("minimum", pt::minimum(&x, &y).unwrap()),
            ("isnan", pt::isnan(&x).unwrap()),
            ("astype(bool)", pt::astype(&x, DType::Bool).unwrap()),
            ("max", pt::max(&x, None).unwrap()),
            ("where", pt::where_(pt::isnan(&x).unwrap(), &y, &x).unwrap()),
        ] {
            let gpu = run(&w, &e, &data).unwrap();
            let reference = run(&Interpreter, &e, &data).unwrap();
            assert_eq!(format!("{:?}", gpu.to_scalars()), format!("{:?}", reference.to_scalars()), "{dtype} {name}");
        }
    }
}

#[test]
fn index_values_out_of_range_are_errors_and_never_read() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [5], DType::F64).unwrap();
    let idx = pt::placeholder("idx", [3], DType::I64).unwrap();
    let gathered = x.index(pytato_core::s![&idx]).unwrap();
    let xs = ArrayData::from(Array1::from(vec![10.0, 11.0, 12.0, 13.0, 14.0]).into_dyn());
    let ok = inputs([("x", xs.clone()), ("idx", ArrayData::from(Array1::from(vec![4i64, -5, 0]).into_dyn()))]);
    assert_eq!(f64s(&run(&w, &gathered, &ok).unwrap()), vec![14.0, 10.0, 10.0]);
    for bad in [5i64, -6, i64::MAX, i64::MIN, 1 << 32] {
        let data = inputs([("x", xs.clone()), ("idx", ArrayData::from(Array1::from(vec![0i64, bad, 1]).into_dyn()))]);
        match run(&w, &gathered, &data) {
            Err(Error::IndexOutOfBounds { axis, length, .. }) => assert_eq!((axis, length), (0, 5), "{bad}"),
            other => panic!("index {bad}: expected IndexOutOfBounds, got {other:?}"),
        }
    }
    // A good run after a failed one: the error record was reset.
    assert_eq!(f64s(&run(&w, &gathered, &ok).unwrap()), vec![14.0, 10.0, 10.0]);
}

#[test]
fn more_than_65535_workgroups_use_a_second_grid_dimension() {
    let Some(w) = gpu() else { return };
    // 256 * 65,535 invocations fill one grid row; this needs two.
    let n = 256 * 65_535 + 1_000;
    let x = pt::placeholder("x", [Dim::param("n")], DType::F32).unwrap();
    let y = &x * 2.0 + 1.0;
    let values: Vec<f32> = (0..n).map(|i| (i % 1_000) as f32).collect();
    let out = run(&w, &y, &inputs([("x", ArrayData::from(Array1::from(values.clone()).into_dyn()))])).unwrap();
    let got = out.as_array::<f32>().unwrap();
    let wrong = values.iter().zip(got.iter()).filter(|(v, g)| **v * 2.0 + 1.0 != **g).count();
    assert_eq!(wrong, 0, "of {n} elements");
}

#[test]
fn buffers_beyond_the_binding_limit_are_unsupported_with_their_size() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    // 2^16 x n float64 from an n-element input: 2^16 * 2^12 * 8 bytes = 2 GiB.
    let big = pt::broadcast_to(&x, [Dim::new(1 << 16), Dim::param("n")]).unwrap() * 2.0;
    let data = inputs([("x", ArrayData::from(Array1::from(vec![1.0; 1 << 12]).into_dyn()))]);
    match run(&w, &big, &data) {
        Err(Error::Unsupported { reason, .. }) => {
            assert!(reason.contains("2147483648 bytes") && reason.contains("[65536, 4096]"), "{reason}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn pipelines_are_cached_and_buffers_reused_across_runs_and_sizes() {
    let Some(w) = gpu() else { return };
    let build = || {
        let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
        pt::sum(&(pt::sin(&x).unwrap() * &x), None).unwrap()
    };
    let program = w.compile(&(&build()).into()).unwrap();
    let cached = w.cached_pipelines();
    // A structurally equal DAG generates the same WGSL: no new pipeline.
    let again = w.compile(&(&build()).into()).unwrap();
    assert_eq!(w.cached_pipelines(), cached);
    // Runs of growing and shrinking sizes on both handles, against the interpreter.
    let reference = Interpreter.compile(&(&build()).into()).unwrap();
    for (k, n) in [10usize, 1000, 3, 5000, 0].into_iter().enumerate() {
        let values: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37 + k as f64).cos()).collect();
        let data = inputs([("x", ArrayData::from(Array1::from(values).into_dyn()))]);
        let want = f64s(&reference.run(&data).unwrap()["_pt_out"]);
        for p in [&program, &again] {
            let got = f64s(&p.run(&data).unwrap()["_pt_out"]);
            assert!(close_ulps(got[0], want[0], 1e3), "n = {n}: {} vs {}", got[0], want[0]);
        }
    }
}

#[test]
fn generated_wgsl_is_readable_and_names_its_buffers() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("temperature", [Dim::param("n")], DType::F32).unwrap();
    let shaders = w.wgsl(&(&(pt::exp(&x).unwrap() + 1.0)).into()).unwrap();
    assert_eq!(shaders.len(), 1, "one fused kernel");
    assert!(shaders[0].contains("// temperature"), "{}", shaders[0]);
    assert!(shaders[0].contains("@compute @workgroup_size(256)"), "{}", shaders[0]);
}

#[test]
fn long_reductions_are_exact_or_unsupported_never_wrong() {
    let Some(w) = gpu() else { return };
    for n in [64usize, 255, 1024] {
        let a = pt::placeholder("a", [Dim::param("n"), Dim::param("n")], DType::F64).unwrap();
        let values: Vec<f64> = (0..n * n).map(|i| (i % 7) as f64).collect();
        let want: f64 = values.iter().sum();
        let data =
            inputs([("a", ArrayData::from(ndarray::Array2::from_shape_vec((n, n), values).unwrap().into_dyn()))]);
        match (run(&w, pt::sum(&a, pt::Axes::All).unwrap(), &data), w.loop_limit()) {
            // A driver that stops long loops: a typed error, never a wrong sum.
            (Err(Error::Unsupported { reason, .. }), Some(limit)) if (n * n) as u64 > limit => {
                assert!(reason.contains(&format!("{}", n * n)), "{reason}")
            }
            (got, _) => assert_eq!(f64s(&got.unwrap()), vec![want], "n = {n}"),
        }
    }
}

#[test]
fn kernels_reading_more_buffers_than_the_adapter_binds_are_unsupported_or_exact() {
    let Some(w) = gpu() else { return };
    // One fused kernel reads all 40 inputs (a stack is a chain of lazy branches).
    let parts: Vec<pytato_core::Array> =
        (0..40).map(|k| pt::placeholder(&format!("x{k}"), [3], DType::F32).unwrap()).collect();
    let stacked = pt::stack(&parts, 0).unwrap();
    let data: NamedData = (0..40)
        .map(|k| (format!("x{k}"), ArrayData::from(Array1::from(vec![k as f32, 0.5, -1.0]).into_dyn())))
        .collect();
    match run(&w, &stacked, &data) {
        Err(Error::Unsupported { reason, .. }) => assert!(reason.contains("storage bindings"), "{reason}"),
        Ok(got) => assert_eq!(got, run(&Interpreter, &stacked, &data).unwrap()),
        Err(e) => panic!("{e}"),
    }
}
