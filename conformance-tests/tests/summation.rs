//! Sums follow one summation scheme (`pytato_core::math`, "Summation": blocks of 128 terms in 8
//! lanes) on every backend: long float64 and complex128 sums, over one axis and several, with
//! lengths that leave every remainder of a lane group and of a block, must be the interpreter's
//! bits on every linked backend (except matrix products on backends with a GEMM, which are
//! not sums of this kind: see `backend-cranelift/tests/gemm.rs`).

use pytato_core::backend::NamedData;
use pytato_core::frontend as pt;
use pytato_core::{Array, ArrayData, DType, Dim, Scalar};

/// Values whose sums round at every step (no exact cancellation), of both signs.
fn values(shape: &[usize], dtype: DType) -> ArrayData {
    let n: usize = shape.iter().product();
    let f = |i: usize| ((i * 7919 % 1009) as f64 - 504.3) / 7.1 + 1e-3 * (i as f64).sqrt();
    let scalars = (0..n).map(|i| match dtype {
        DType::C128 => Scalar::C128(num_complex::Complex64::new(f(i), f(i + 17) * 1e3)),
        _ => Scalar::F64(f(i) * 1e5),
    });
    ArrayData::from_scalars(dtype, shape, scalars).expect("float data")
}

fn sums(dtype: DType) -> Vec<(&'static str, Array)> {
    let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], dtype).unwrap();
    vec![
        ("sum", pt::sum(&x, pt::Axes::All).unwrap()),
        ("sum axis 0", pt::sum(&x, 0).unwrap()),
        ("sum axis 1", pt::sum(&(&x * 1.5), 1).unwrap()),
        ("mean axis 0", pt::mean(&x, 0).unwrap()),
    ]
}

#[test]
fn long_sums_are_the_interpreters_bits_on_every_backend() {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    let interp = &instances.iter().find(|(n, _)| n == "interp").expect("the interpreter is linked").1;
    for dtype in [DType::F64, DType::C128] {
        for (what, e) in sums(dtype) {
            let reference_program = interp.compile(&(&e).into()).unwrap();
            for (name, backend) in instances.iter().filter(|(n, _)| n != "interp") {
                let program = backend.compile(&(&e).into()).unwrap();
                for (n, m) in [
                    (1, 7),
                    (1, 9),
                    (3, 43),
                    (2, 128),
                    (1, 129),
                    (5, 300),
                    (300, 5),
                    (257, 3),
                    (0, 4),
                    (3, 8),
                    (2, 16),
                    (5, 136),
                    (4, 256),
                    (300, 8),
                ] {
                    let inputs = NamedData::from([("x".to_string(), values(&[n, m], dtype))]);
                    let want = reference_program.run(&inputs).unwrap().remove("_pt_out").unwrap();
                    let got = program.run(&inputs).unwrap().remove("_pt_out").unwrap();
                    let bits = |a: &ArrayData| {
                        a.to_scalars()
                            .iter()
                            .map(|s| s.to_complex64())
                            .map(|z| (z.re.to_bits(), z.im.to_bits()))
                            .collect::<Vec<_>>()
                    };
                    let (g, w) = (bits(&got), bits(&want));
                    let first = g.iter().zip(&w).position(|(a, b)| a != b);
                    assert!(
                        g.len() == w.len() && first.is_none(),
                        "{what} ({dtype}) of {n}x{m} on {name}: first difference at {first:?}: {} vs {}",
                        got.to_scalars()[first.unwrap_or(0)],
                        want.to_scalars()[first.unwrap_or(0)]
                    );
                }
            }
        }
    }
}
