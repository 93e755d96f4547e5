//! What the wgpu test binaries share.

use pytato_backend_wgpu::{REQUIRE_VAR, Wgpu};
use pytato_core::{ArrayData, DType, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

/// The backend, or `None` (with a message) where there is no adapter and none is required;
/// with `PYTATO_REQUIRE_WGPU=1` (CI) a missing adapter fails the test.
pub(crate) fn gpu() -> Option<Wgpu> {
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

/// Deterministic values in [0, 1) from `seed` (an LCG's top 53 bits).
#[allow(dead_code)] // (not every test binary draws values)
pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / 2f64.powi(53)
    }
}

/// Runs `einsum("ij,kj->", y, y)` of a `y` with `rows` rows of 3 on `w`, `9 · rows²` float64
/// terms in one element, and checks its value. Small integers make every partial sum exact, so
/// the value is `Σ_j (Σ_i y_ij)²` whatever the order the backend adds in.
#[allow(dead_code)] // (not every test binary sums this way)
pub(crate) fn assert_one_long_exact_sum(w: &Wgpu, rows: usize) {
    let y: Vec<f64> = (0..rows * 3).map(|k| ((k * 7 + k / 5) % 5) as f64 - 2.0).collect();
    let column_sums: Vec<i64> = (0..3).map(|j| (0..rows).map(|i| y[3 * i + j] as i64).sum()).collect();
    let want: i64 = column_sums.iter().map(|s| s * s).sum();
    let py = pt::placeholder("y", [rows as i64, 3], DType::F64).unwrap();
    let e = pt::einsum("ij,kj->", &[&py, &py]).unwrap();
    let data = ArrayData::from(ndarray::Array::from_shape_vec([rows, 3], y).unwrap().into_dyn());
    let got = w.compile(&(&e).into()).unwrap().run(&NamedData::from([("y".to_string(), data)])).unwrap();
    assert_eq!(got["_pt_out"].to_scalars(), vec![Scalar::F64(want as f64)], "a sum over {rows} rows");
}

/// Runs the test `test` of this test binary again in a child process with the environment
/// variable `var` set to `value`, and returns whether it passed and its output (stdout, then
/// stderr): for what a test must do in a process of its own (an environment read once, a
/// limit set on the process).
#[allow(dead_code)] // (not every test binary runs itself again)
pub(crate) fn run_test_in_child(test: &str, var: &str, value: &str) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let child = std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(var, value)
        .output()
        .expect("the test binary runs again");
    let text = String::from_utf8_lossy(&child.stdout).into_owned() + &String::from_utf8_lossy(&child.stderr);
    (child.status.success(), text)
}
