//! float16 on every linked backend, bit for bit: every float16 widened to float32 and float64,
//! float32 and float64 values rounded to float16 (every midpoint between neighbours, and just off
//! it, both signs; float64 values that rounding through float32 would get wrong), and float16
//! arithmetic rounded after each operation, for the same program run twice with other lengths.
//! Expected values are built here: from the `half` crate (IEEE conversions) and from the
//! neighbours each input was made from.

use half::f16;
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::NamedData;

fn data<T: pytato_core::data::DataElement>(values: Vec<T>) -> ArrayData {
    T::wrap(ndarray::Array1::from(values).into_dyn())
}

/// Every positive finite float16 as (bits, value).
fn positive_finite() -> Vec<(u16, f64)> {
    (0u16..0x7c00).map(|b| (b, f64::from(f16::from_bits(b).to_f32()))).collect()
}

/// float64 inputs with the float16 bits they must round to: each float16, each midpoint of two
/// neighbours (to the even one) and values just below and above the midpoint, with both signs.
fn rounding_cases() -> Vec<(f64, u16)> {
    let values = positive_finite();
    let mut cases = Vec::new();
    for w in values.windows(2) {
        let ((lo_bits, lo), (hi_bits, hi)) = (w[0], w[1]);
        let mid = (lo + hi) / 2.0;
        let even = if lo_bits & 1 == 0 { lo_bits } else { hi_bits };
        for (x, bits) in [(lo, lo_bits), (mid, even), (mid - mid * 1e-9, lo_bits), (mid + mid * 1e-9, hi_bits)] {
            cases.push((x, bits));
            cases.push((-x, bits | 0x8000));
        }
    }
    // Beyond the largest float16: the midpoint to the next binade rounds to infinity.
    cases.extend([(65519.99, 0x7bff), (65520.0, 0x7c00), (-1e300, 0xfc00), (f64::INFINITY, 0x7c00)]);
    cases
}

fn instances() -> Vec<(String, Box<dyn pytato_runtime::backend::Backend>)> {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    instances
}

#[test]
fn conversions_are_numpys_bit_for_bit_on_every_backend() {
    let n = Dim::param("n");
    let m = Dim::param("m");
    let h = pt::placeholder("h", [n.clone()], DType::F16).unwrap();
    let d = pt::placeholder("d", [m.clone()], DType::F64).unwrap();
    let f = pt::placeholder("f", [m], DType::F32).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("h", pt::astype(&h, DType::F32).unwrap()),
        ("h64", pt::astype(&h, DType::F64).unwrap()),
        ("d", pt::astype(&d, DType::F16).unwrap()),
        ("f", pt::astype(&f, DType::F16).unwrap()),
    ])
    .unwrap();
    let cases = rounding_cases();
    let all_bits: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let doubles: Vec<f64> = cases.iter().map(|c| c.0).collect();
    // float32 inputs: those of the cases that float32 holds exactly (the midpoints do).
    let floats: Vec<f32> = doubles.iter().map(|&x| x as f32).collect();
    for (name, backend) in instances() {
        let program = backend.compile(&(&outputs).into()).unwrap();
        for len in [all_bits.len(), 3] {
            let inputs = NamedData::from([
                ("h".to_string(), data(all_bits[..len].to_vec())),
                ("d".to_string(), data(doubles[..len.min(doubles.len())].to_vec())),
                ("f".to_string(), data(floats[..len.min(doubles.len())].to_vec())),
            ]);
            let got = program.run(&inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
            let widened = got["h"].as_array::<f32>().unwrap();
            let widened64 = got["h64"].as_array::<f64>().unwrap();
            for (i, (&x, (&w, &w64))) in all_bits.iter().zip(widened.iter().zip(widened64)).enumerate() {
                let want = x.to_f32();
                if want.is_nan() {
                    assert!(w.is_nan() && w64.is_nan(), "{name}: float16 {i:#06x} widened to {w}, {w64}");
                    assert_eq!(w.is_sign_negative(), want.is_sign_negative(), "{name}: NaN sign of {i:#06x}");
                } else {
                    assert_eq!(w.to_bits(), want.to_bits(), "{name}: float16 {i:#06x} as float32");
                    assert_eq!(w64.to_bits(), f64::from(want).to_bits(), "{name}: float16 {i:#06x} as float64");
                }
            }
            let from64 = got["d"].as_array::<f16>().unwrap();
            for (&(x, bits), g) in cases.iter().zip(from64) {
                assert_eq!(g.to_bits(), bits, "{name}: float64 {x:e} to float16");
            }
            let from32 = got["f"].as_array::<f16>().unwrap();
            for (&x, g) in floats.iter().zip(from32) {
                // half's float32 conversion is IEEE's rounding, ties to even.
                assert_eq!(g.to_bits(), f16::from_f32(x).to_bits(), "{name}: float32 {x:e} to float16");
            }
        }
    }
}

#[test]
fn arithmetic_rounds_after_each_operation_and_sums_round_once() {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F16).unwrap();
    // (x * x) rounds to float16 before the sum reads it; the sum of float16 terms accumulates in
    // float32 (so 4096 ones are 4096, where float16 steps would stall at 2048); x + 1 rounds.
    let squares = pt::multiply(&x, &x).unwrap();
    let outputs = DictOfNamedArrays::new([
        ("x", pt::add(&x, 1).unwrap()),
        ("sum", pt::sum(&squares, None).unwrap()),
        ("ones", pt::sum(&pt::ones_like(&x, None).unwrap(), None).unwrap()),
    ])
    .unwrap();
    let round = |v: f32| f16::from_f32(v);
    for (name, backend) in instances() {
        let program = backend.compile(&(&outputs).into()).unwrap();
        for len in [4096usize, 0, 5] {
            let values: Vec<f16> = (0..len).map(|i| f16::from_f32(1.0 + (i % 7) as f32 / 1024.0)).collect();
            let got = program
                .run(&NamedData::from([("x".to_string(), data(values.clone()))]))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let plus_one: Vec<f16> = values.iter().map(|v| round(v.to_f32() + 1.0)).collect();
            assert_eq!(got["x"].as_array::<f16>().unwrap().iter().copied().collect::<Vec<_>>(), plus_one, "{name}");
            let exact: f64 = values.iter().map(|v| f64::from(round(v.to_f32() * v.to_f32()).to_f32())).sum();
            let sum = got["sum"].to_scalars()[0].to_f64();
            // One float16 rounding of the float32 sum of the rounded squares (exact in float64 here).
            assert_eq!(sum, f64::from(f16::from_f64(exact).to_f32()), "{name}: sum of squares, n = {len}");
            assert_eq!(got["ones"].to_scalars()[0].to_f64(), len as f64, "{name}: sum of ones, n = {len}");
        }
    }
}
