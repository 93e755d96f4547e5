//! The float64 transcendental functions of every backend against correctly rounded values
//! (`golden/gen_math_accuracy.py`: mpmath at 160 bits), in units in the last place: at most one
//! unit from the correctly rounded result (an error below one ulp, as fdlibm's and glibc's
//! functions have) for the functions computed in one piece, at most two for those composed of
//! others (the hyperbolic functions through `exp`/`expm1`, their inverses through `log1p`, `log10`
//! through `log`).
//!
//! The wgpu backend computes float64 functions with its own WGSL library (Vulkan has none). A
//! driver that reassociates (Mesa's NIR does, and NVIDIA's) turned fdlibm's carefully ordered
//! error terms into plain sums: `exp` was two units off and `expm1` three.

use pytato_core::{Array, ArrayData, DType};
use pytato_frontend as pt;
use pytato_runtime::backend::NamedViews;

/// The frontend function that builds one of them.
type Build = fn(&Array) -> pytato_core::Result<Array>;

/// Each function, the one that builds it, and the most units it may be from the correctly
/// rounded result.
fn functions() -> Vec<(&'static str, Build, u64)> {
    vec![
        ("exp", pt::exp, 1),
        ("expm1", pt::expm1, 1),
        ("exp2", pt::exp2, 1),
        ("log", pt::log, 1),
        ("log1p", pt::log1p, 1),
        ("log2", pt::log2, 1),
        ("log10", pt::log10, 2),
        ("sin", pt::sin, 1),
        ("cos", pt::cos, 1),
        ("tan", pt::tan, 1),
        ("arcsin", pt::arcsin, 1),
        ("arccos", pt::arccos, 1),
        ("arctan", pt::arctan, 1),
        ("sinh", pt::sinh, 2),
        ("cosh", pt::cosh, 2),
        ("tanh", pt::tanh, 2),
        ("arcsinh", pt::arcsinh, 2),
        ("arccosh", pt::arccosh, 2),
        ("arctanh", pt::arctanh, 2),
        ("cbrt", pt::cbrt, 1),
    ]
}

fn from_hex(text: &str) -> f64 {
    // float.hex(): [-]0x1.<hex digits>p<exponent>, or 0x0.0p+0
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let rest = rest.strip_prefix("0x").expect("a hex float");
    let (mantissa, exponent) = rest.split_once('p').expect("an exponent");
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = u64::from_str_radix(whole, 16).expect("hex digits") as f64;
    let mut scale = 1.0 / 16.0;
    for digit in fraction.chars() {
        value += digit.to_digit(16).expect("a hex digit") as f64 * scale;
        scale /= 16.0;
    }
    let value = value * 2f64.powi(exponent.parse::<i32>().expect("an exponent"));
    if negative { -value } else { value }
}

/// The distance of `got` from `want` in float64 steps (`u64::MAX` for a NaN or another sign).
fn ulps(got: f64, want: f64) -> u64 {
    if got.is_nan() || got.is_sign_negative() != want.is_sign_negative() {
        return if got == want { 0 } else { u64::MAX };
    }
    got.to_bits().abs_diff(want.to_bits())
}

#[test]
fn float64_functions_are_within_their_ulps_of_the_correctly_rounded_values() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/math_accuracy.json"))
        .expect("golden/gen_math_accuracy.py writes the data");
    let data: serde_json::Value = serde_json::from_str(&text).unwrap();
    let table = data["functions"].as_object().unwrap();
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    let mut failures = Vec::new();
    for (name, build, bound) in functions() {
        let pairs = table[name].as_array().unwrap_or_else(|| panic!("no values for {name}"));
        let args: Vec<f64> = pairs.iter().map(|p| from_hex(p[0].as_str().unwrap())).collect();
        let want: Vec<f64> = pairs.iter().map(|p| from_hex(p[1].as_str().unwrap())).collect();
        let x = pt::placeholder("x", [args.len() as i64], DType::F64).unwrap();
        let outputs = build(&x).unwrap().into();
        let input = ArrayData::from(ndarray::Array1::from(args.clone()).into_dyn());
        for (backend_name, backend) in &instances {
            let program = backend.compile(&outputs).unwrap_or_else(|e| panic!("{backend_name} {name}: {e}"));
            let got = program.run_views(&NamedViews::from([("x", input.view())])).unwrap_or_else(|e| panic!("{e}"));
            let got: Vec<f64> = got["_pt_out"].to_scalars().iter().map(|s| s.to_f64()).collect();
            let (worst, at) = got.iter().zip(&want).map(|(&g, &w)| ulps(g, w)).zip(0..).max().unwrap();
            eprintln!("{backend_name} {name}: at most {worst} ulp from the correctly rounded value");
            if worst > bound {
                failures.push(format!(
                    "{backend_name} {name}({:e}) = {:e}, {worst} ulp from {:e} (at most {bound})",
                    args[at], got[at], want[at]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hex_floats_read_exactly() {
    for x in [0.1, -2.5e-310, 1.7976931348623157e308, 5e-324, 1.0, -0.0] {
        let text = python_hex(x);
        assert_eq!(from_hex(&text).to_bits(), x.to_bits(), "{text}");
    }
}

/// float.hex() of `x`, as Python writes it (for the round trip above).
fn python_hex(x: f64) -> String {
    let bits = x.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = bits & ((1 << 52) - 1);
    if exponent == 0 && mantissa == 0 {
        return format!("{sign}0x0.0p+0");
    }
    let (lead, exponent) = if exponent == 0 { (0, -1022) } else { (1, exponent - 1023) };
    format!("{sign}0x{lead}.{mantissa:013x}p{exponent:+}")
}
