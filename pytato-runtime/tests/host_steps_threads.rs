//! The host steps give the same bits on any number of threads: each runs here on rayon pools of
//! 1, 2 and 3 threads, on data large enough to be split (rows longer than a task, many short
//! rows), with the values that expose a change of order (NaN, -0.0, ties, sums that round).

use ndarray::{Array1, Array2, ArrayD};
use pytato_core::array::{ScanOp, ScatterMode, Side, SortResult};
use pytato_core::data::ArrayData;
use pytato_runtime::{phases, scan, sort};

/// `f` on pools of 1, 2 and 3 threads; the results' bits must agree.
fn same_bits_on_any_pool(what: &str, f: impl Fn() -> ArrayData + Sync) {
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
        pool.install(&f)
    };
    let one = bits(&on(1));
    for threads in [2, 3] {
        assert!(bits(&on(threads)) == one, "{what}: other bits on {threads} threads than on 1");
    }
}

fn bits(data: &ArrayData) -> (Vec<usize>, Vec<u64>) {
    let values = if let Some(a) = data.as_array::<f64>() {
        a.iter().map(|v| v.to_bits()).collect()
    } else if let Some(a) = data.as_array::<i64>() {
        a.iter().map(|&v| v as u64).collect()
    } else {
        panic!("the test compares float64 and int64 results, not {}", data.dtype())
    };
    (data.shape().to_vec(), values)
}

/// Values that round differently in another order, with NaN, ±0.0 and repeated values.
fn awkward(n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| match k % 97 {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => 1e16,
            4 => -1e16,
            5 => 3.0,
            _ => ((k as f64) * 0.618_033_988_749).sin() * 10f64.powi((k % 7) as i32 - 3),
        })
        .collect()
}

#[test]
fn scans_sorts_searches_masks_and_scatters_give_the_same_bits_on_1_2_and_3_threads() {
    let long = ArrayData::from(Array1::from(awkward(200_000)).into_dyn());
    let rows: ArrayD<f64> = Array2::from_shape_vec((3_000, 37), awkward(3_000 * 37)).expect("3000 × 37").into_dyn();
    let rows = ArrayData::from(rows);
    for (name, data, axis) in [("one long row", &long, 0), ("many short rows", &rows, 1), ("down columns", &rows, 0)] {
        same_bits_on_any_pool(&format!("cumsum, {name}"), || scan::scan(&data.view(), axis, ScanOp::Sum).unwrap());
        same_bits_on_any_pool(&format!("cumprod, {name}"), || scan::scan(&data.view(), axis, ScanOp::Product).unwrap());
        for result in [SortResult::Values, SortResult::Indices] {
            for descending in [false, true] {
                same_bits_on_any_pool(&format!("sort {result:?} descending={descending}, {name}"), || {
                    sort::sort(&data.view(), axis, descending, result).unwrap()
                });
            }
        }
    }
    let sorted = sort::sort(&long.view(), 0, false, SortResult::Values).unwrap();
    for side in [Side::Left, Side::Right] {
        same_bits_on_any_pool(&format!("searchsorted {side:?}"), || {
            sort::searchsorted(&sorted.view(), &long.view(), side).unwrap()
        });
    }
    // Mask compaction gives each thread of the pool a stretch of at least 2^20 elements: a
    // 3 x (2^20 + 2) mask is cut into 1, 2 and 3 stretches, each starting inside a row.
    let n = (1 << 20) + 2;
    let mask = ArrayData::from(Array2::from_shape_fn((3, n), |(i, j)| ((i * n + j) * 7919) % 13 < 5).into_dyn());
    same_bits_on_any_pool("nonzero", || phases::nonzero(&mask.view()).unwrap());
    // Scatters into 1,000 bins, each hit about 200 times.
    let positions: Vec<i64> = (0..200_000i64).map(|k| (k * 7919) % 1_000).collect();
    let positions = ArrayData::from(Array1::from(positions).into_dyn());
    let bins = ArrayData::from(Array1::from(awkward(1_000)).into_dyn());
    for mode in [ScatterMode::Add, ScatterMode::Set] {
        same_bits_on_any_pool(&format!("scatter {mode:?}"), || {
            phases::scatter(&bins.view(), &positions.view(), &long.view(), mode).unwrap()
        });
    }
}
