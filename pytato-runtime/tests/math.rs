//! `pytato_runtime::math` against numpy's own results (`golden/gen_math.py` writes the data): casts
//! of special values, float `//` and `%`, and complex arithmetic and functions at the edges.

use num_complex::Complex64;
use pytato_core::{DType, Scalar};
use pytato_runtime::math::{self, complex};
use serde_json::Value;

fn data() -> Value {
    serde_json::from_str(include_str!("data/math.json")).expect("math.json parses")
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "nan" => f64::NAN,
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        other => other.as_f64().expect("a number"),
    }
}

fn cnum(v: &Value) -> Complex64 {
    Complex64::new(num(&v[0]), num(&v[1]))
}

/// Same NaN-ness, same infinities, finite values within `rtol` (zeros of either sign are equal).
fn close(got: f64, expected: f64, rtol: f64) -> bool {
    if got.is_nan() || expected.is_nan() {
        return got.is_nan() && expected.is_nan();
    }
    if got.is_infinite() || expected.is_infinite() {
        return got == expected;
    }
    (got - expected).abs() <= rtol * expected.abs() + 1e-300
}

#[test]
fn float_to_int_casts_follow_numpy_on_x86_64() {
    let mut failures = Vec::new();
    for case in data()["casts"].as_array().unwrap() {
        let dst = DType::from_name(case["dst"].as_str().unwrap()).unwrap();
        let f32_source = case["src"] == "float32";
        for (x, y) in case["x"].as_array().unwrap().iter().zip(case["y"].as_array().unwrap()) {
            let x = num(x);
            let source = if f32_source { Scalar::F32(x as f32) } else { Scalar::F64(x) };
            let got = source.cast(dst).to_i128().unwrap();
            let expected = y.as_i64().map(i128::from).or_else(|| y.as_u64().map(i128::from)).unwrap();
            // numpy's uint64 results are u64 bit patterns; compare as wrapped values.
            if got != expected {
                failures.push(format!("{} {x:e} -> {dst}: got {got}, numpy {expected}", case["src"]));
            }
        }
    }
    assert!(failures.is_empty(), "{} casts differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn float_floor_divide_and_remainder_follow_numpy_exactly() {
    let mut failures = Vec::new();
    for case in data()["divmod"].as_array().unwrap() {
        let (a, b) = (num(&case["a"]), num(&case["b"]));
        for (name, got, expected) in [
            ("floor_divide", math::floor_divide(a, b), num(&case["floor_divide"])),
            ("remainder", math::remainder(a, b), num(&case["remainder"])),
        ] {
            let same = (got.is_nan() && expected.is_nan()) || got.to_bits() == expected.to_bits();
            if !same {
                failures.push(format!("{name}({a:e}, {b:e}): got {got:e}, numpy {expected:e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} results differ:\n{}", failures.len(), failures.join("\n"));
}

fn check_complex(label: &str, got: Complex64, expected: Complex64, rtol: f64, failures: &mut Vec<String>) {
    if !(close(got.re, expected.re, rtol) && close(got.im, expected.im, rtol)) {
        failures.push(format!("{label}: got {got:e}, numpy {expected:e}"));
    }
}

#[test]
fn complex_functions_follow_numpy_at_the_edges() {
    let d = data();
    let mut failures = Vec::new();
    for (name, cases) in d["complex_unary"].as_object().unwrap() {
        let f: fn(Complex64) -> Complex64 = match name.as_str() {
            "exp" => complex::exp,
            "log" => complex::log,
            "log10" => complex::log10,
            "sqrt" => complex::sqrt,
            "sin" => complex::sin,
            "cos" => complex::cos,
            "tan" => complex::tan,
            "sinh" => complex::sinh,
            "cosh" => complex::cosh,
            "tanh" => complex::tanh,
            "arcsin" => complex::asin,
            "arccos" => complex::acos,
            "arctan" => complex::atan,
            other => panic!("no function {other}"),
        };
        for case in cases.as_array().unwrap() {
            let z = cnum(&case[0]);
            check_complex(&format!("{name}({z:e})"), f(z), cnum(&case[1]), 1e-13, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{} results differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn complex_division_and_power_follow_numpy() {
    let d = data();
    let mut failures = Vec::new();
    for case in d["complex_div"].as_array().unwrap() {
        let (a, b) = (cnum(&case[0]), cnum(&case[1]));
        check_complex(&format!("({a:e}) / ({b:e})"), complex::div(a, b), cnum(&case[2]), 0.0, &mut failures);
    }
    for case in d["complex_pow"].as_array().unwrap() {
        let (a, b) = (cnum(&case[0]), cnum(&case[1]));
        check_complex(&format!("({a:e}) ** ({b:e})"), complex::pow(a, b), cnum(&case[2]), 1e-13, &mut failures);
    }
    assert!(failures.is_empty(), "{} results differ:\n{}", failures.len(), failures.join("\n"));
}
