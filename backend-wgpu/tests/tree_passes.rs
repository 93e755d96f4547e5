//! The tree stage of long reductions in passes: past 4,096 block sums per output element (2^19
//! terms), workgroups combine groups of 4,096 in parallel and a last pass combines the groups'
//! totals, with the bits of one loop over the canonical tree. One pass of one workgroup per
//! element used to combine them all, and on llvmpipe (which stops an invocation's loops after
//! 65,535 iterations) a reduction of more than 2^29 terms per element was `Unsupported`.

mod support;
use support::gpu;

use pytato_backend_interp::Interpreter;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

fn bits(d: &ArrayData) -> Vec<u64> {
    d.to_scalars().iter().map(|s| s.to_complex64().re.to_bits()).collect()
}

/// Row lengths of one pass with one workgroup's runs full (4,096 blocks), then of two passes:
/// one block past that (a last group of one block sum), three groups with the last one short,
/// and 2^21 + 77 terms (more than four groups, a last block of 77 terms).
const ROWS: [usize; 4] = [4096 * 128, 4096 * 128 + 1, 3 * 4096 * 128 - 5, (1 << 21) + 77];

#[test]
fn long_reductions_combine_their_block_sums_in_passes_with_the_interpreters_bits() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [Dim::from(3), Dim::param("m")], DType::F64).unwrap();
    let ints = pt::astype(&pt::multiply(&x, 1e9).unwrap(), DType::I64).unwrap();
    let cases: [(&str, Array); 5] = [
        ("sum", pt::sum(&x, 1).unwrap()),
        ("max", pt::max(&pt::sin(&x).unwrap(), 1).unwrap()),
        ("argmin", pt::astype(&pt::argmin(&x, Some(1), false).unwrap(), DType::F64).unwrap()),
        ("integers", pt::astype(&pt::sum(&ints, 1).unwrap(), DType::F64).unwrap()),
        ("any", pt::astype(&pt::any(&pt::greater(&x, 0.9999995).unwrap(), 1).unwrap(), DType::F64).unwrap()),
    ];
    let outputs = DictOfNamedArrays::new(cases).unwrap();
    let reference = Interpreter.compile(&outputs.clone().into()).unwrap();
    let whole = w.compile(&outputs.clone().into()).unwrap();
    for m in ROWS {
        let mut draw = support::uniform(m as u64);
        let mut values: Vec<f64> = (0..3 * m).map(|_| draw()).collect();
        // The row's minimum and a NaN late in a row, where only the last groups see them.
        values[m + m - 3] = -1.0;
        values[2 * m + m - 2] = f64::NAN;
        let data = ArrayData::from(ndarray::Array::from_shape_vec([3, m], values).unwrap().into_dyn());
        let inputs = NamedData::from([("x".to_string(), data)]);
        let want = reference.run(&inputs).unwrap();
        // The same program in chunks of one or two elements (each chunk's passes over its own
        // elements' block sums): a scratch limit of 16 bytes per block fits one element's block
        // sums of every kind, and 8-byte sums of two.
        let chunked =
            w.clone().with_scratch_limit(16 * m.div_ceil(128) as u64).compile(&outputs.clone().into()).unwrap();
        for (what, program) in [("whole", &whole), ("chunked", &chunked)] {
            let got = program.run(&inputs).unwrap();
            for name in want.keys() {
                assert_eq!(bits(&got[name]), bits(&want[name]), "{name} of rows of {m} terms ({what})");
            }
        }
    }
}

/// `einsum("ij,kj->", y, y)` of `y` with 15,000 rows of 3 is one reduction of 675 million terms
/// (5.3 million block sums) in one output element: more than 2^29, which llvmpipe's loop cap
/// refused in one pass. Small integers make every partial sum exact, so the value is
/// `Σ_j (Σ_i y_ij)²` whatever the order.
#[test]
fn a_reduction_of_more_than_two_to_the_29_terms_runs_on_a_driver_with_a_loop_cap() {
    let Some(w) = gpu() else { return };
    support::assert_one_long_exact_sum(&w, 15_000);
}
