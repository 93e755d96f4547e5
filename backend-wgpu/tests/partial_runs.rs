//! Block sums in runs of blocks: where the block sums of one output element would not fit in one
//! buffer (past 2^31 float64 terms on lavapipe, which binds 128 MiB), each invocation of the
//! block-sums shader combines an aligned run of `2^coarse` blocks in the canonical tree, and the
//! tree stage combines the runs' totals: the same tree, so the interpreter's bits. Such a
//! reduction used to be `Unsupported`.

mod support;
use support::gpu;

use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, Error};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};
use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};

fn bits(d: &ArrayData) -> Vec<u64> {
    d.to_scalars().iter().map(|s| s.to_complex64().re.to_bits()).collect()
}

#[test]
fn runs_of_blocks_give_the_interpreters_bits_whatever_their_length() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [Dim::from(3), Dim::param("m")], DType::F64).unwrap();
    let x32 = pt::astype(&x, DType::F32).unwrap();
    let ints = pt::astype(&pt::multiply(&x, 1e9).unwrap(), DType::I64).unwrap();
    let positive = pt::greater(&x, 0.5).unwrap();
    let cases: [(&str, Array); 7] = [
        ("sum", pt::sum(&x, 1).unwrap()),
        ("sum32", pt::astype(&pt::sum(&x32, 1).unwrap(), DType::F64).unwrap()),
        // Arithmetic only: the interpreter's transcendental functions and the shaders' may differ
        // in the last place.
        ("max", pt::max(&pt::subtract(pt::multiply(&x, 3.0).unwrap(), 1.0).unwrap(), 1).unwrap()),
        ("argmin", pt::astype(&pt::argmin(&x, Some(1), false).unwrap(), DType::F64).unwrap()),
        ("integers", pt::astype(&pt::sum(&ints, 1).unwrap(), DType::F64).unwrap()),
        ("any", pt::astype(&pt::any(&pt::greater(&x, 0.9999995).unwrap(), 1).unwrap(), DType::F64).unwrap()),
        // A sum read in one branch only: its stages run where the branch is taken.
        (
            "guarded",
            pt::where_(pt::any(&positive, 1).unwrap(), pt::sum(&pt::multiply(&x, &x).unwrap(), 1).unwrap(), -1.0)
                .unwrap(),
        ),
    ];
    let outputs = DictOfNamedArrays::new(cases).unwrap();
    let reference = Interpreter.compile(&outputs.clone().into()).unwrap();
    // Rows of one block, of a few blocks (one short), and of more than one tree pass's group
    // (4,096 partial results) at one block each.
    for m in [100usize, 5 * 128 + 3, 4096 * 128 + 300] {
        let blocks = m.div_ceil(128) as u64;
        let mut draw = support::uniform(m as u64 + 7);
        let mut values: Vec<f64> = (0..3 * m).map(|_| draw()).collect();
        values[m + m - 3] = -1.0;
        values[2 * m + m - 2] = f64::NAN;
        values[5] = -2.0;
        let data = ArrayData::from(ndarray::Array::from_shape_vec([3, m], values).unwrap().into_dyn());
        let inputs = NamedData::from([("x".to_string(), data)]);
        let want = reference.run(&inputs).unwrap();
        // Room for 16 bytes times `blocks >> k` partial results: runs of 2^k blocks for the
        // 16-byte ones (int64 on lavapipe is 8, so theirs are shorter), one element a chunk.
        for k in [1u32, 2, 3, 5, 8] {
            let limit = 16 * (blocks >> k).max(1);
            let program = w.clone().with_scratch_limit(limit).compile(&outputs.clone().into()).unwrap();
            let got = program.run(&inputs).unwrap();
            for name in want.keys() {
                assert_eq!(bits(&got[name]), bits(&want[name]), "{name}, rows of {m} terms, {limit} bytes of scratch");
            }
        }
    }
}

#[test]
fn one_program_switches_between_runs_of_blocks_and_single_blocks_as_its_sizes_change() {
    let Some(w) = gpu() else { return };
    // 64 bytes hold the block sums of 8 blocks: rows of 300 and 700 terms (3 and 6 blocks) run
    // block by block, rows of 12,801 and 4,736 (101 and 37 blocks) in runs of 16 and 8 blocks.
    // The same compiled program, on host data and on device data, in an order that goes back
    // and forth, so that a run never reuses the previous run's form by mistake.
    let x = pt::placeholder("x", [Dim::from(2), Dim::param("m")], DType::F64).unwrap();
    let sums = pt::sum(&pt::multiply(&x, 0.1).unwrap(), 1).unwrap();
    let program = w.clone().with_scratch_limit(64).compile(&(&sums).into()).unwrap();
    let reference = Interpreter.compile(&(&sums).into()).unwrap();
    for m in [300usize, 12_801, 700, 4_736, 300, 12_801] {
        let mut draw = support::uniform(m as u64);
        let values: Vec<f64> = (0..2 * m).map(|_| draw() - 0.5).collect();
        let data = ArrayData::from(ndarray::Array::from_shape_vec([2, m], values).unwrap().into_dyn());
        let want = bits(&reference.run(&NamedData::from([("x".to_string(), data.clone())])).unwrap()["_pt_out"]);
        let on_host = program.run(&NamedData::from([("x".to_string(), data.clone())])).unwrap();
        assert_eq!(bits(&on_host["_pt_out"]), want, "host data, rows of {m}");
        let held = w.upload(&data.view()).unwrap();
        let on_device = program.run_device(&NamedDeviceInputs::from([("x", DeviceInput::Device(&held))])).unwrap();
        assert_eq!(bits(&on_device["_pt_out"].to_host().unwrap()), want, "device data, rows of {m}");
    }
}

#[test]
fn a_limit_below_one_partial_result_is_refused() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [4, 1000], DType::F64).unwrap();
    let program = w.with_scratch_limit(7).compile(&(&pt::sum(&x, 1).unwrap()).into()).unwrap();
    let data = ArrayData::from(ndarray::Array::<f64, _>::ones([4, 1000]).into_dyn());
    match program.run(&NamedData::from([("x".to_string(), data)])) {
        Err(Error::Unsupported { reason, .. }) => {
            assert!(reason.contains("more than 7 bytes of partial results for one output element"), "{reason}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// `einsum("ij,kj->", y, y)` of `y` with 27,000 rows of 3: 2.19·10^9 float64 terms in one
/// element, whose 17 million block sums (137 MB) exceed the 128 MiB lavapipe binds. Small
/// integers make every partial sum exact: the value is `Σ_j (Σ_i y_ij)²` whatever the order.
#[test]
fn a_float64_sum_of_more_than_two_to_the_31_terms_runs() {
    let Some(w) = gpu() else { return };
    support::assert_one_long_exact_sum(&w, 27_000);
}
