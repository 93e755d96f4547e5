//! The wgpu backend under hostile or careless use: ever new programs keep the pipeline cache
//! bounded, programs that differ only in constants share their shaders, kernels that would read
//! more buffers than an adapter binds are split, lengths beyond 32 bits are typed errors.
//!
//! Without an adapter every test says it was skipped and why, and passes; with
//! `PYTATO_REQUIRE_WGPU=1` (CI) a missing adapter fails them.

mod support;
use support::gpu;

use pytato_core::{ArrayData, DType, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

fn f32s(values: &[f32]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

/// A program per constant: one shader, one pipeline, for all of them (constants live in a table
/// the shader reads, not in its source).
#[test]
fn programs_that_differ_only_in_constants_share_one_pipeline() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [3], DType::F32).unwrap();
    let program_of = |c: f32| &(&x * c) + (c + 0.5);
    let first = w.wgsl(&(&program_of(0.25)).into()).unwrap();
    for k in 0..200 {
        let c = k as f32 * 0.125 - 3.0;
        let y = program_of(c);
        assert_eq!(w.wgsl(&(&y).into()).unwrap(), first, "c = {c} changed the shader");
        let program = w.compile(&(&y).into()).unwrap();
        let out = program.run(&NamedData::from([("x".to_string(), f32s(&[1.0, -2.0, 0.0]))])).unwrap();
        let got: Vec<f32> = out["_pt_out"].to_scalars().iter().map(|s| s.to_f64() as f32).collect();
        assert_eq!(got, [c + (c + 0.5), -2.0 * c + (c + 0.5), (c + 0.5)], "c = {c}");
    }
}

/// Structurally different programs: the cache keeps the most recent ones only.
#[test]
fn the_pipeline_cache_stays_bounded() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [4], DType::I32).unwrap();
    for k in 0..150i64 {
        // An integer shift by `k`: a different shader text each time.
        let y = pt::roll(&x, k, Some(0)).unwrap();
        let y = pt::bitwise_xor(&y, k).unwrap();
        let program = w.compile(&(&y).into()).unwrap();
        let data = ArrayData::from(ndarray::Array1::from(vec![1i32, 2, 3, 4]).into_dyn());
        let out = program.run(&NamedData::from([("x".to_string(), data)])).unwrap();
        let want: Vec<i64> = (0..4).map(|i| ([1, 2, 3, 4][((i - k).rem_euclid(4)) as usize]) ^ k).collect();
        let got: Vec<i64> = out["_pt_out"].to_scalars().iter().map(|s| s.to_i128().unwrap() as i64).collect();
        assert_eq!(got, want, "k = {k}");
        assert!(w.cached_pipelines() <= 64, "{} pipelines cached", w.cached_pipelines());
    }
}

/// A concatenation of more arrays than a shader can bind is split into several kernels.
#[test]
fn many_pieces_are_split_into_kernels_that_fit_the_bindings() {
    let Some(w) = gpu() else { return };
    for pieces in [31usize, 80, 200] {
        let xs: Vec<_> = (0..pieces).map(|i| pt::placeholder(&format!("x{i}"), [2], DType::F32).unwrap()).collect();
        let c = pt::concatenate(&xs, 0).unwrap();
        let program = w.compile(&(&c).into()).unwrap();
        let inputs: NamedData =
            (0..pieces).map(|i| (format!("x{i}"), f32s(&[2.0 * i as f32, 2.0 * i as f32 + 1.0]))).collect();
        let out = program.run(&inputs).unwrap();
        let got: Vec<f64> = out["_pt_out"].to_scalars().iter().map(|s| s.to_f64()).collect();
        let want: Vec<f64> = (0..2 * pieces).map(|i| i as f64).collect();
        assert_eq!(got, want, "{pieces} pieces");
    }
}

/// Lengths of 2^31 and more are typed errors (a shader with 32-bit indices has no literal for
/// them; an adapter binds buffers only so large), never internal ones, or where the adapter can
/// run them (a sum of 2^31 terms, whose block sums fit in 128 MiB), the right value.
#[test]
fn lengths_beyond_32_bits_are_typed_errors_or_right() {
    let Some(w) = gpu() else { return };
    let ones = pt::ones([1i64 << 31], DType::F32).unwrap();
    for (y, sum) in [(ones.clone(), None), (pt::sum(&ones, None).unwrap(), Some(2f32.powi(31)))] {
        match w.compile(&(&y).into()).and_then(|p| p.run(&NamedData::new())) {
            Err(err) => assert!(matches!(err.kind(), "Unsupported" | "InvalidForSizes" | "OutOfMemory"), "{err}"),
            Ok(out) => {
                let want = sum.expect("an output of 2^31 elements is refused");
                assert_eq!(out["_pt_out"].to_scalars(), vec![Scalar::F32(want)]);
            }
        }
    }
}

/// A broadcast view (stride 0) of one element standing for 2^40 is refused before any copy, on
/// upload and as a run's input: a typed error, not an attempt at terabytes (which aborted the
/// process, or for `bool` started filling memory).
#[test]
fn broadcast_views_of_terabytes_are_refused_before_any_copy() {
    use ndarray::{ArrayViewD, IxDyn, ShapeBuilder};
    use pytato_runtime::ArrayDataView;
    let Some(w) = gpu() else { return };
    let shape = IxDyn(&[1 << 40]).strides(IxDyn(&[0]));
    let (f, i, b) = ([1.5f64], [7i8], [true]);
    let views = [
        ArrayDataView::from(ArrayViewD::from_shape(shape.clone(), &f).unwrap()),
        ArrayDataView::from(ArrayViewD::from_shape(shape.clone(), &i).unwrap()),
        ArrayDataView::from(ArrayViewD::from_shape(shape, &b).unwrap()),
    ];
    for view in &views {
        match w.upload(view) {
            Err(e) => assert!(matches!(e.kind(), "Unsupported" | "OutOfMemory"), "{}: {e}", view.dtype()),
            Ok(_) => panic!("an upload of 2^40 {} elements succeeded", view.dtype()),
        }
        let x = pt::placeholder("x", [pytato_core::Dim::param("n")], view.dtype()).unwrap();
        let program = w.compile(&(&x).into()).unwrap();
        let inputs = pytato_runtime::backend::NamedViews::from([("x", view.clone())]);
        match program.run_views(&inputs) {
            Err(e) => assert!(matches!(e.kind(), "Unsupported" | "OutOfMemory"), "{}: {e}", view.dtype()),
            Ok(_) => panic!("a run on 2^40 {} elements succeeded", view.dtype()),
        }
    }
}

/// The probe of a driver's float32 subnormals: lavapipe keeps them; with float64, programs never
/// meet the driver's float32 (held in float64), and subnormal results are numpy's either way.
#[test]
fn float32_subnormals_survive_and_the_probe_says_whether_a_driver_flushes() {
    let Some(w) = gpu() else { return };
    let flushes = w.flushes_float32_subnormals().unwrap();
    if w.adapter().to_lowercase().contains("llvmpipe") {
        assert!(!flushes, "lavapipe keeps float32 subnormals");
    }
    if !w.has_f64() {
        return;
    }
    let x = pt::placeholder("x", [4], DType::F32).unwrap();
    let y = &(&x * 0.5) + 0.0;
    let program = w.compile(&(&y).into()).unwrap();
    let data = [f32::from_bits(1), f32::from_bits(3), -f32::from_bits(0x007f_ffff), 1e-38];
    let out = program.run(&NamedData::from([("x".to_string(), f32s(&data))])).unwrap();
    let got: Vec<u32> = out["_pt_out"].to_scalars().iter().map(|s| (s.to_f64() as f32).to_bits()).collect();
    let want: Vec<u32> = data.iter().map(|v| (v * 0.5 + 0.0).to_bits()).collect();
    assert_eq!(got, want, "float32 subnormals halved, ties to even");
}
