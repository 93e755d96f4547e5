//! Transfers between host and GPU reuse their staging buffers (issue: uploads moved 400 MB at
//! about 2.6 GB/s, each through a staging buffer of its own), every element arrives exact, and
//! large readbacks are written into memory advised into transparent huge pages (a page fault per
//! 2 MiB, not per 4 KiB: `to_host` of 80 MB took 35 ms on lavapipe without, 22 to 25 with).
//!
//! One test function, run alone in this binary: the counts of buffers created are the process's.

mod support;
use support::gpu;

use pytato_backend_wgpu::Wgpu;
use pytato_core::{ArrayData, DType, Dim, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

/// `n` values of `dtype` spanning its range (negatives, extremes, NaN and -0.0 for floats).
fn values(dtype: DType, n: usize) -> ArrayData {
    let specials = [0.0, -0.0, 1.5, -2.0, f64::NAN, f64::INFINITY, f64::MIN_POSITIVE / 8.0, 1e300];
    let scalars: Vec<Scalar> = (0..n)
        .map(|i| match dtype {
            DType::F16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => {
                Scalar::F64(specials[i % specials.len()] + (i / specials.len()) as f64).cast(dtype)
            }
            _ => Scalar::I64((i as i64).wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)).cast(dtype),
        })
        .collect();
    ArrayData::from_scalars(dtype, &[n], scalars).expect("n values")
}

/// Bitwise equality, NaN included (`Scalar`'s equality compares bits).
fn same(a: &ArrayData, b: &ArrayData) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape() && a.to_scalars() == b.to_scalars()
}

#[test]
fn transfers_reuse_their_staging_buffers_and_arrive_exact() {
    let Some(w) = gpu() else { return };

    // Every dtype, sizes that grow, shrink and grow again: round trips through the GPU exact.
    for dtype in DType::ALL {
        for n in [1, 1000, 3, 70_001, 0, 5] {
            let data = values(dtype, n);
            let back = w.upload(&data.view()).unwrap().to_host().unwrap();
            assert!(same(&back, &data), "{dtype} of {n}: {back:?} against {data:?}");
        }
    }

    // A loop of uploads and downloads of one size creates no staging and no storage buffer
    // after its first round (the dropped array's buffer is the next one's). Each 8 MiB readback
    // is advised into huge pages.
    let data = values(DType::F64, 1 << 20);
    let round = || {
        let back = w.upload(&data.view()).unwrap().to_host().unwrap();
        assert!(same(&back, &data));
        assert_advised_into_huge_pages(&back, "to_host of 8 MiB");
    };
    creates_no_buffers_after_its_first_round(&w, "uploads and downloads", round);

    // So do a program's runs on host data.
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    let program = w.compile(&(&pt::multiply(&x, 3.0).unwrap()).into()).unwrap();
    let inputs = NamedData::from([("x".to_string(), data.clone())]);
    let want: Vec<f64> = data.to_scalars().iter().map(|s| s.to_f64() * 3.0).collect();
    let run = || {
        let got = program.run(&inputs).unwrap().remove("_pt_out").unwrap();
        assert_advised_into_huge_pages(&got, "an 8 MiB output of a run on host data");
        let got: Vec<f64> = got.to_scalars().iter().map(Scalar::to_f64).collect();
        assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()));
    };
    creates_no_buffers_after_its_first_round(&w, "runs on host data", run);
}

/// Runs `round` once, then 5 times more, and checks that those made no staging buffer and no
/// storage buffer.
fn creates_no_buffers_after_its_first_round(w: &Wgpu, what: &str, round: impl Fn()) {
    round();
    let (staging, storage) = (w.staging_buffers_created(), w.storage_buffers_created());
    for _ in 0..5 {
        round();
    }
    assert_eq!(w.staging_buffers_created(), staging, "{what} made new staging buffers");
    assert_eq!(w.storage_buffers_created(), storage, "{what} made new storage buffers");
}

/// Asserts that the float64 array `data` (at least 4 MiB) was advised into transparent huge pages,
/// where Linux has them.
fn assert_advised_into_huge_pages(data: &ArrayData, what: &str) {
    let ArrayData::F64(a) = data else { panic!("{what}: float64 expected") };
    match pytato_runtime::spare::advised_into_huge_pages(a.as_ptr().cast()) {
        Some(advised) => assert!(advised, "{what}: not advised into huge pages"),
        None => eprintln!("skipped the huge page check of {what}: no transparent huge pages here"),
    }
}
