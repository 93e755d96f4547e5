//! Random cases: every dtype, ranks 0 to 3, symbolic lengths bound differently in two runs, every
//! frontend operation the numpy language reaches, special scalar literals, several outputs (often
//! named like the inputs). An operation is kept when the frontend accepts it; the frontend's own
//! checks decide what is valid, and numpy judges those decisions.

use std::collections::BTreeMap;

use pytato_core::{Array, DType};

use super::case::{FuzzCase, InputSpec, Len};
use super::rng::Rng;
use crate::numpy_expr;

const DTYPES: [DType; 14] = DType::ALL;

const UNARY: [&str; 41] = [
    "sin",
    "cos",
    "tan",
    "exp",
    "log",
    "log10",
    "sqrt",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "abs",
    "isnan",
    "real",
    "imag",
    "conj",
    "negative",
    "logical_not",
    "invert",
    "arcsinh",
    "arccosh",
    "arctanh",
    "expm1",
    "log1p",
    "log2",
    "exp2",
    "cbrt",
    "sign",
    "signbit",
    "spacing",
    "rint",
    "trunc",
    "square",
    "reciprocal",
    "isinf",
    "isfinite",
    "positive",
];
const OPERATORS: [&str; 16] = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", "<=", "==", "!=", ">", ">="];
const BINARY_FUNCS: [&str; 21] = [
    "maximum",
    "minimum",
    "arctan2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "copysign",
    "nextafter",
    "fmax",
    "fmin",
    "fmod",
    "gcd",
    "lcm",
    "ldexp",
    "left_shift",
    "right_shift",
    "floor_divide",
    "remainder",
];
const LITERALS: [&str; 18] = [
    "0", "1", "-1", "2", "3", "0.5", "-0.0", "1e300", "np.inf", "-np.inf", "np.nan", "255", "-129", "2j", "True",
    "1e-310", "65536", "0.1",
];
const REDUCTIONS: [&str; 7] = ["sum", "prod", "max", "min", "all", "any", "mean"];
const SHIFTS: [&str; 8] = ["1", "-1", "2", "-3", "7", "0", "9223372036854775807", "-9223372036854775807"];

/// The case of `seed`.
pub fn generate(seed: u64) -> FuzzCase {
    let mut rng = Rng::new(seed);
    let params: Vec<String> = match rng.below(4) {
        0 => vec![],
        1 => vec!["n".into()],
        _ => vec!["n".into(), "m".into()],
    };
    let runs: Vec<BTreeMap<String, i64>> =
        (0..2).map(|_| params.iter().map(|p| (p.clone(), *rng.pick(&[0, 1, 1, 2, 2, 3, 3, 4, 5]))).collect()).collect();
    let mut inputs = Vec::new();
    let names = ["x", "y", "z", "w"];
    for name in names.iter().take(1 + rng.below(3)) {
        let dtype = if rng.chance(0.3) {
            DType::F64
        } else if rng.chance(0.1) {
            DType::F32
        } else {
            *rng.pick(&DTYPES)
        };
        let rank = *rng.pick(&[0, 1, 1, 1, 2, 2, 2, 3, 3]);
        let data = rng.chance(0.12);
        let shape = (0..rank)
            .map(|_| {
                if !params.is_empty() && !data && rng.chance(0.4) {
                    Len::Param(rng.pick(&params).clone())
                } else {
                    Len::Fixed(*rng.pick(&[1, 2, 2, 3, 3, 4, 0]))
                }
            })
            .collect();
        inputs.push(InputSpec { name: name.to_string(), dtype, shape, data });
    }
    let mut case = FuzzCase { seed, inputs, stmts: Vec::new(), outputs: Vec::new(), runs };

    // Statements, each checked by the frontend as it is added.
    let Ok(mut scope) = case.names() else { return case };
    let wanted = 1 + rng.below(8);
    let mut attempts = 0;
    while case.stmts.len() < wanted && attempts < 60 {
        attempts += 1;
        let expr = propose(&mut rng, &scope, &params);
        if let Ok(array) = numpy_expr::evaluate(&expr, &scope) {
            let name = format!("t{}", case.stmts.len());
            scope.insert(name.clone(), array);
            case.stmts.push((name, expr));
        }
    }
    // Outputs: later statements more often, sometimes an input itself; names often an input's.
    let terms: Vec<String> = case
        .stmts
        .iter()
        .map(|(n, _)| n.clone())
        .chain(case.inputs.iter().filter(|i| !params.contains(&i.name)).map(|i| i.name.clone()))
        .collect();
    if terms.is_empty() {
        return case;
    }
    let count = 1 + rng.below(3);
    for k in 0..count {
        let term = if !case.stmts.is_empty() && rng.chance(0.8) {
            let last = case.stmts.len() - 1;
            case.stmts[last - rng.below(case.stmts.len().min(3))].0.clone()
        } else {
            rng.pick(&terms).clone()
        };
        let name = if rng.chance(0.35) {
            rng.pick(&case.inputs).name.clone()
        } else if count == 1 && rng.chance(0.3) {
            pytato_runtime::backend::SINGLE_OUTPUT_NAME.to_string()
        } else {
            format!("o{k}")
        };
        if !case.outputs.iter().any(|(n, _)| *n == name) {
            case.outputs.push((name, term));
        }
    }
    case
}

/// A random operation on what is in `scope`, as numpy source.
fn propose(rng: &mut Rng, scope: &BTreeMap<String, Array>, params: &[String]) -> String {
    // Size parameters are arrays here and Python ints in numpy (weak scalars): not operands.
    let names: Vec<&String> = scope.keys().filter(|n| !params.contains(n)).collect();
    let Some(&a) = names.get(rng.below(names.len().max(1))) else { return "np.zeros((1,))".into() };
    let b = names[rng.below(names.len())];
    let arr = &scope[a];
    let ndim = arr.ndim();
    let axis = |rng: &mut Rng| -> String {
        if ndim == 0 { "None".into() } else { (rng.range(-(ndim as i64), ndim as i64 - 1)).to_string() }
    };
    let dtype = |rng: &mut Rng| rng.pick(&DTYPES).name();
    let literal = |rng: &mut Rng| rng.pick(&LITERALS).to_string();
    match rng.below(100) {
        0..=24 => {
            let f = rng.pick(&UNARY);
            match rng.below(10) {
                0 => format!("-{a}"),
                1 => format!("~{a}"),
                // A NaN's sign is the hardware's (x86 gives invalid operations a negative NaN),
                // not a promise of numpy's or the library's: `signbit` would turn it into a value.
                _ if *f == "signbit" => format!("np.signbit(np.where(np.isnan({a}), 1, {a}))"),
                _ => format!("np.{f}({a})"),
            }
        }
        25..=44 => {
            let op = rng.pick(&OPERATORS);
            match rng.below(10) {
                // numpy's `x ** scalar` takes shortcuts (`** -1` is reciprocal, `** 2` square,
                // `** 0.5` sqrt) that differ from its own `power` at special values and in
                // dtype (`bool ** 2` is int8); the library's `**` is `power`.
                0..=1 if *op == "**" => format!("np.power({a}, {})", literal(rng)),
                0..=1 => format!("({a} {op} {})", literal(rng)),
                2 => format!("({} {op} {a})", literal(rng)),
                3 => match *rng.pick(&BINARY_FUNCS) {
                    // The sign of a NaN `b` is the hardware's (see `signbit` above).
                    "copysign" => format!("np.copysign({a}, np.where(np.isnan({b}), 1, {b}))"),
                    f => format!("np.{f}({a}, {b})"),
                },
                4 => format!("np.where({a}, {b}, {})", literal(rng)),
                5 => format!("np.where(({b} > 0), {a}, {b})"),
                _ => format!("({a} {op} {b})"),
            }
        }
        45..=52 => format!("{a}.astype(np.{})", dtype(rng)),
        53..=62 => {
            let r = rng.pick(&REDUCTIONS);
            let keep = if rng.chance(0.3) { ", keepdims=True" } else { "" };
            match rng.below(5) {
                0 => format!("np.{r}({a})"),
                1 if ndim >= 2 => format!("np.{r}({a}, axis=(0, {}){keep})", ndim - 1),
                2 => format!("np.{r}({a}, axis={}, initial={}{keep})", axis(rng), literal(rng)),
                _ => format!("np.{r}({a}, axis={}{keep})", axis(rng)),
            }
        }
        63..=80 => match rng.below(37) {
            29 => format!("np.flip({a}, axis={})", axis(rng)),
            30 => format!("np.diff({a}, axis={})", axis(rng)),
            31 => format!("np.repeat({a}, {}, axis={})", rng.below(4), axis(rng)),
            32 => format!("np.clip({a}, {}, {})", literal(rng), literal(rng)),
            33 if ndim >= 2 => format!("np.trace({a})"),
            33 => format!("np.tile({a}, {})", rng.below(3)),
            34 => format!("np.count_nonzero({a}, axis={})", axis(rng)),
            35 => {
                let f = rng.pick(&["var", "std"]);
                format!("np.{f}({a}, axis={}, ddof={})", axis(rng), rng.below(3))
            }
            36 if ndim >= 1 && scope[b].dtype().is_integer() => format!("np.take({a}, {b}, axis={})", axis(rng)),
            36 => format!("np.cumulative_sum({a}, axis={}, include_initial=True)", axis(rng)),
            27 => format!("np.searchsorted(np.sort({b}, axis=None), {a}, side='{}')", rng.pick(&["left", "right"])),
            28 => format!("np.round({a}, {})", rng.pick(&["1", "2", "-1", "-2", "12"])),
            // Sorts and scans (host steps); numpy's default sorts are not stable, its
            // unique_values not sorted: the stable and sorted spellings.
            22 => format!("np.sort({a}, axis={})", axis(rng)),
            23 => format!("np.argsort({a}, axis={}, stable=True)", axis(rng)),
            24 => format!("np.{}({a}, axis={})", rng.pick(&["cumsum", "cumprod"]), axis(rng)),
            25 => format!("np.unique({a}, equal_nan=False)"),
            26 => format!("np.{}({a}, axis={})", rng.pick(&["argmax", "argmin"]), axis(rng)),
            // Data-dependent lengths and scatters (host steps between phases).
            18 => format!("{a}[{a} != {}]", literal(rng)),
            19 => format!("np.flatnonzero({a})"),
            20 if ndim >= 1 && scope[b].dtype().is_integer() => {
                format!("at({a})[{b}].{}({})", rng.pick(&["set", "add"]), rng.pick(&["1", "-1", "2", "0.5", "True"]))
            }
            20 if ndim >= 1 => format!("at({a})[np.flatnonzero({b})[:1]].add(1)"),
            21 => {
                let mask = format!("{a} != {}", literal(rng));
                format!("at({a})[{mask}].{}({a}[{mask}] * 2)", rng.pick(&["set", "add"]))
            }
            0 => format!("np.transpose({a})"),
            14 if ndim == 3 => format!("np.transpose({a}, (1, 2, 0))"),
            15 if arr.shape().dims().iter().all(|d| d.as_int().is_some()) => {
                let dims: Vec<String> = arr.shape().dims().iter().map(|d| d.to_string()).collect();
                format!("np.broadcast_to({a}, (2, {}))", dims.join(", "))
            }
            16 if ndim >= 2 && scope[b].dtype().is_integer() => format!("{a}[{b}, {b}]"),
            17 => format!("np.pad({a}, (({}, {}),), constant_values={})", rng.below(3), rng.below(3), literal(rng)),
            1 if ndim >= 2 => format!("np.swapaxes({a}, 0, -1)"),
            2 if ndim >= 2 => format!("np.moveaxis({a}, 0, -1)"),
            3 => format!("np.roll({a}, {}, axis={})", rng.pick(&SHIFTS), axis(rng)),
            4 => format!("np.roll({a}, {})", rng.pick(&SHIFTS)),
            5 => format!("np.reshape({a}, (-1,))"),
            6 => format!("np.reshape({a}, (1, -1))"),
            7 => format!("np.expand_dims({a}, 0)"),
            // Without an axis, numpy squeezes the axes of length 1 in this run; the library only
            // those of length 1 in every run.
            8 if arr.shape().dims().iter().all(|d| d.as_int().is_some()) => format!("np.squeeze({a})"),
            8 => format!("np.squeeze({a}, axis={})", axis(rng)),
            9 => format!("np.stack([{a}, {b}], axis={})", rng.range(0, ndim as i64)),
            10 => format!("np.concatenate([{a}, {b}], axis={})", axis(rng)),
            11 => format!("np.pad({a}, (({}, {}),))", rng.below(3), rng.below(2)),
            _ => format!("{a}[{}]", index_items(rng, ndim, b, scope)),
        },
        81..=88 => match rng.below(6) {
            0 => format!("({a} @ {b})"),
            1 => format!("np.dot({a}, {b})"),
            2 => format!("np.vdot({a}, {b})"),
            3 => format!("np.tensordot({a}, {b}, axes=1)"),
            _ => {
                let spec = einsum_spec(rng, ndim, scope[b].ndim());
                let second = if spec.contains(',') { format!(", {b}") } else { String::new() };
                format!("np.einsum('{spec}', {a}{second})")
            }
        },
        89..=96 => match rng.below(8) {
            0 => format!("np.zeros_like({a})"),
            1 => format!("np.ones_like({a}, dtype=np.{})", dtype(rng)),
            2 => format!("np.full_like({a}, {})", literal(rng)),
            3 => format!("np.full(({},), {})", rng.pick(&["1", "3", "n", "m"]), literal(rng)),
            4 => format!("np.arange(0, {}, 1)", rng.range(0, 4)),
            5 => format!("np.linspace(-1.0, 1.0, {})", rng.range(1, 4)),
            6 => format!("np.eye({}, k={})", rng.range(1, 3), rng.range(-1, 1)),
            _ => format!("named({a})"),
        },
        _ => format!("({a} + {})", literal(rng)),
    }
}

/// Index items for an array of `ndim` axes: integers, slices, new axes, an ellipsis, and `b` as
/// an index array where it is an integer array.
fn index_items(rng: &mut Rng, ndim: usize, b: &str, scope: &BTreeMap<String, Array>) -> String {
    let b_is_index = scope[b].dtype().is_integer();
    let mut items = Vec::new();
    for _ in 0..ndim.max(1) {
        items.push(match rng.below(12) {
            0 => "0".to_string(),
            1 => "-1".to_string(),
            2 => "1:".to_string(),
            3 => ":-1".to_string(),
            4 => "::-1".to_string(),
            5 => "::2".to_string(),
            6 => "1:3".to_string(),
            7 => "None, :".to_string(),
            8 if b_is_index => b.to_string(),
            9 => "...".to_string(),
            _ => ":".to_string(),
        });
        if rng.chance(0.3) {
            break;
        }
    }
    items.join(", ")
}

fn einsum_spec(rng: &mut Rng, a: usize, b: usize) -> String {
    let letters = ["i", "j", "k"];
    let first: String = letters[..a.min(3)].concat();
    if rng.chance(0.5) {
        // One operand: permute or reduce some axes.
        let mut out: Vec<&str> = letters[..a.min(3)].iter().copied().filter(|_| rng.chance(0.6)).collect();
        if rng.chance(0.5) {
            out.reverse();
        }
        return format!("{first}->{}", out.concat());
    }
    // Two operands sharing the first letters of the second.
    let second: String = letters[..b.min(3)].iter().rev().copied().collect();
    let mut all: Vec<&str> = letters[..a.max(b).min(3)].to_vec();
    all.retain(|_| rng.chance(0.6));
    format!("{first},{second}->{}", all.concat())
}

#[cfg(test)]
mod tests {
    use super::generate;

    #[test]
    fn programs_include_selections_and_scatters() {
        // What the generator proposes is kept only where the frontend accepts it: masks and
        // scatters must survive that often enough to be fuzzed.
        let stmts: Vec<String> = (0..400).flat_map(|seed| generate(seed).stmts).map(|(_, e)| e).collect();
        let masked = |e: &&String| e.split_once('[').is_some_and(|(a, rest)| rest.starts_with(&format!("{a} != ")));
        assert!(stmts.iter().filter(masked).count() >= 5, "too few masks in 400 programs");
        for form in ["np.flatnonzero(", "].add(", "].set(", "np.sort(", "np.argsort(", "np.unique(", "np.cum"] {
            let n = stmts.iter().filter(|e| e.contains(form)).count();
            assert!(n >= 5, "{form}: {n} statements in 400 programs");
        }
    }
}
