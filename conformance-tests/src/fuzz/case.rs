//! A fuzz case: inputs, statements in the conformance suite's numpy language, outputs, and the
//! size bindings of each run. Its data is a function of the seed, so a case is reproduced from its
//! JSON alone (which numpy reads too).

use std::collections::BTreeMap;

use num_complex::{Complex32, Complex64};
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{NamedData, Outputs};
use serde_json::{Value, json};

use super::rng::Rng;
use crate::numpy_expr;

/// One axis of an input's declared shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Len {
    /// A fixed length.
    Fixed(usize),
    /// A size parameter.
    Param(String),
}

/// A case input: a placeholder, or wrapped data (fixed shape, the same data in every run).
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    /// Its name.
    pub name: String,
    /// Its dtype.
    pub dtype: DType,
    /// Its declared shape.
    pub shape: Vec<Len>,
    /// A `DataWrapper` instead of a placeholder.
    pub data: bool,
}

/// A generated case; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzCase {
    /// The seed the case and its data come from.
    pub seed: u64,
    /// The inputs.
    pub inputs: Vec<InputSpec>,
    /// `name = expression` in order; expressions read inputs, size parameters and earlier names.
    pub stmts: Vec<(String, String)>,
    /// Output name → the statement or input it returns.
    pub outputs: Vec<(String, String)>,
    /// The size-parameter values of each run of the one compiled program.
    pub runs: Vec<BTreeMap<String, i64>>,
}

impl FuzzCase {
    /// The size parameters the case declares (in any run).
    pub fn params(&self) -> Vec<String> {
        let mut params: Vec<String> = self.runs.iter().flat_map(|r| r.keys().cloned()).collect();
        params.sort();
        params.dedup();
        params
    }

    /// The DAG: placeholders, wrapped data (run 0's values), size parameters, the statements.
    pub fn build(&self) -> Result<Outputs, String> {
        let names = self.names()?;
        let outputs: Vec<(&str, Array)> = self
            .outputs
            .iter()
            .map(|(out, term)| names.get(term).map(|a| (out.as_str(), a.clone())).ok_or(format!("no term {term}")))
            .collect::<Result<_, _>>()?;
        if let [(name, array)] = &outputs[..]
            && *name == pytato_runtime::backend::SINGLE_OUTPUT_NAME
        {
            return Ok(Outputs::Single(array.clone()));
        }
        Ok(Outputs::Named(DictOfNamedArrays::new(outputs).map_err(|e| e.to_string())?))
    }

    /// Every name the statements may read, and the statements' own, as arrays.
    pub fn names(&self) -> Result<BTreeMap<String, Array>, String> {
        let mut names: BTreeMap<String, Array> = BTreeMap::new();
        for p in self.params() {
            names.insert(p.clone(), pt::size_param(&p).map_err(|e| e.to_string())?);
        }
        for input in &self.inputs {
            let array = if input.data {
                pt::data_wrapper(self.input_data(input, 0), Some(&input.name))
            } else {
                let shape: Vec<Dim> = input
                    .shape
                    .iter()
                    .map(|l| match l {
                        Len::Fixed(n) => Dim::new(*n as i64),
                        Len::Param(p) => Dim::param(p.as_str()),
                    })
                    .collect();
                pt::placeholder(&input.name, shape, input.dtype)
            };
            names.insert(input.name.clone(), array.map_err(|e| e.to_string())?);
        }
        for (name, expr) in &self.stmts {
            let array = numpy_expr::evaluate(expr, &names).map_err(|e| format!("{name} = {expr}: {e}"))?;
            names.insert(name.clone(), array);
        }
        Ok(names)
    }

    /// The concrete shape of `input` in run `run`.
    pub fn concrete_shape(&self, input: &InputSpec, run: usize) -> Vec<usize> {
        input
            .shape
            .iter()
            .map(|l| match l {
                Len::Fixed(n) => *n,
                Len::Param(p) => self.runs[run].get(p).copied().unwrap_or(0).max(0) as usize,
            })
            .collect()
    }

    /// The values of `input` in run `run`: ordinary values mixed with the dtype's special values.
    pub fn input_data(&self, input: &InputSpec, run: usize) -> ArrayData {
        let shape = self.concrete_shape(input, run);
        let run = if input.data { 0 } else { run };
        let mut rng = Rng::new(self.seed ^ hash(&input.name) ^ (run as u64).wrapping_mul(0x51_7CC1_B727_220A));
        let special = rng.chance(0.5);
        // Huge values of one input share a sign: sums of +-1e19 cancel, and what is left depends
        // on the order of the terms (numpy's pairwise order is not the library's).
        let sign = if rng.chance(0.5) { 1.0 } else { -1.0 };
        let count: usize = shape.iter().product();
        let values = (0..count).map(|_| {
            let this_special = special && rng.chance(0.3);
            same_sign_if_huge(value(&mut rng, input.dtype, this_special), sign)
        });
        ArrayData::from_scalars(input.dtype, &shape, values).expect("values fill the shape")
    }

    /// The inputs of run `run`: every placeholder, and every size parameter as a 0-d `int64`.
    pub fn run_inputs(&self, run: usize) -> NamedData {
        let mut inputs: NamedData =
            self.inputs.iter().filter(|i| !i.data).map(|i| (i.name.clone(), self.input_data(i, run))).collect();
        for (p, v) in &self.runs[run] {
            inputs.entry(p.clone()).or_insert_with(|| ArrayData::from_scalar(Scalar::I64(*v)));
        }
        inputs
    }

    /// The case as JSON (what `from_json` reads and the numpy oracle evaluates).
    pub fn to_json(&self) -> Value {
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|i| {
                let shape: Vec<Value> = i
                    .shape
                    .iter()
                    .map(|l| match l {
                        Len::Fixed(n) => json!(n),
                        Len::Param(p) => json!(p),
                    })
                    .collect();
                json!({"name": i.name, "dtype": i.dtype.name(), "shape": shape, "data": i.data})
            })
            .collect();
        json!({
            "seed": self.seed,
            "inputs": inputs,
            "stmts": self.stmts.iter().map(|(n, e)| json!([n, e])).collect::<Vec<_>>(),
            "outputs": self.outputs.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>(),
            "runs": self.runs,
        })
    }

    /// A case from [`FuzzCase::to_json`]'s output.
    pub fn from_json(v: &Value) -> Result<FuzzCase, String> {
        let bad = |what: &str| format!("fuzz case JSON: bad {what}");
        let pairs = |key: &str| -> Result<Vec<(String, String)>, String> {
            v[key]
                .as_array()
                .ok_or_else(|| bad(key))?
                .iter()
                .map(|p| {
                    Ok((p[0].as_str().ok_or_else(|| bad(key))?.into(), p[1].as_str().ok_or_else(|| bad(key))?.into()))
                })
                .collect()
        };
        let inputs = v["inputs"]
            .as_array()
            .ok_or_else(|| bad("inputs"))?
            .iter()
            .map(|i| {
                let shape = i["shape"]
                    .as_array()
                    .ok_or_else(|| bad("shape"))?
                    .iter()
                    .map(|l| match l {
                        Value::String(p) => Ok(Len::Param(p.clone())),
                        n => n.as_u64().map(|n| Len::Fixed(n as usize)).ok_or_else(|| bad("length")),
                    })
                    .collect::<Result<_, String>>()?;
                Ok(InputSpec {
                    name: i["name"].as_str().ok_or_else(|| bad("input name"))?.into(),
                    dtype: i["dtype"].as_str().and_then(DType::from_name).ok_or_else(|| bad("dtype"))?,
                    shape,
                    data: i["data"].as_bool().unwrap_or(false),
                })
            })
            .collect::<Result<_, String>>()?;
        let runs = v["runs"]
            .as_array()
            .ok_or_else(|| bad("runs"))?
            .iter()
            .map(|r| {
                r.as_object()
                    .ok_or_else(|| bad("run"))?
                    .iter()
                    .map(|(k, n)| Ok((k.clone(), n.as_i64().ok_or_else(|| bad("size"))?)))
                    .collect::<Result<_, String>>()
            })
            .collect::<Result<_, String>>()?;
        Ok(FuzzCase {
            seed: v["seed"].as_u64().ok_or_else(|| bad("seed"))?,
            inputs,
            stmts: pairs("stmts")?,
            outputs: pairs("outputs")?,
            runs,
        })
    }

    /// The case without statements and inputs no output reads.
    pub fn without_dead_code(&self) -> FuzzCase {
        let mut live: Vec<String> = self.outputs.iter().map(|(_, t)| t.clone()).collect();
        let mut stmts = Vec::new();
        for (name, expr) in self.stmts.iter().rev() {
            if live.contains(name) {
                live.extend(names_in(expr).into_iter().map(str::to_string));
                stmts.push((name.clone(), expr.clone()));
            }
        }
        stmts.reverse();
        let inputs = self.inputs.iter().filter(|i| live.contains(&i.name)).cloned().collect();
        FuzzCase { stmts, inputs, ..self.clone() }
    }

    /// Statements as Python source, for reports.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for i in &self.inputs {
            let shape: Vec<String> = i
                .shape
                .iter()
                .map(|l| match l {
                    Len::Fixed(n) => n.to_string(),
                    Len::Param(p) => p.clone(),
                })
                .collect();
            let kind = if i.data { "data" } else { "placeholder" };
            out += &format!("# {kind} {}: {} ({})\n", i.name, i.dtype, shape.join(", "));
        }
        for (k, r) in self.runs.iter().enumerate() {
            out += &format!("# run {k}: sizes {r:?}\n");
        }
        for (n, e) in &self.stmts {
            out += &format!("{n} = {e}\n");
        }
        let outs: Vec<String> = self.outputs.iter().map(|(n, t)| format!("{n:?}: {t}")).collect();
        out += &format!("outputs = {{{}}}\n", outs.join(", "));
        out
    }
}

/// The identifiers `expr` mentions.
pub(crate) fn names_in(expr: &str) -> Vec<&str> {
    expr.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        .collect()
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3))
}

/// Special values of floating-point dtypes: NaN, infinities, signed zeros, extremes, subnormals,
/// values at the edges of integer ranges (for casts).
const SPECIAL_FLOATS: [f64; 20] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    1e300,
    -1e-310,
    3e38,
    1e-40,
    2147483648.0,
    -2147483649.0,
    4294967296.5,
    9.3e18,
    -9.3e18,
    1e22,
    255.5,
];

fn float(rng: &mut Rng, special: bool) -> f64 {
    if special {
        *rng.pick(&SPECIAL_FLOATS)
    } else {
        // Two decimals in [-4, 4]: exact sums stay readable in reports.
        (rng.range(-400, 400) as f64) / 100.0
    }
}

/// `v` with the sign `sign` where its magnitude is at least 2^20 (signed integers, real and
/// imaginary parts).
fn same_sign_if_huge(v: Scalar, sign: f64) -> Scalar {
    let huge = |x: f64| x.is_finite() && x.abs() >= 1048576.0;
    match v {
        Scalar::F32(x) if huge(x.into()) => Scalar::F32(x.abs() * sign as f32),
        Scalar::F64(x) if huge(x) => Scalar::F64(x.abs() * sign),
        Scalar::C64(z) => Scalar::C64(Complex32::new(
            if huge(z.re.into()) { z.re.abs() * sign as f32 } else { z.re },
            if huge(z.im.into()) { z.im.abs() * sign as f32 } else { z.im },
        )),
        Scalar::C128(z) => Scalar::C128(Complex64::new(
            if huge(z.re) { z.re.abs() * sign } else { z.re },
            if huge(z.im) { z.im.abs() * sign } else { z.im },
        )),
        Scalar::I64(x) if huge(x as f64) => {
            Scalar::I64(if (sign > 0.0) == (x > 0) { x } else { x.checked_neg().unwrap_or(i64::MAX) })
        }
        Scalar::I32(x) if huge(x.into()) => {
            Scalar::I32(if (sign > 0.0) == (x > 0) { x } else { x.checked_neg().unwrap_or(i32::MAX) })
        }
        other => other,
    }
}

/// One value of `dtype`.
fn value(rng: &mut Rng, dtype: DType, special: bool) -> Scalar {
    match dtype {
        DType::Bool => Scalar::Bool(rng.chance(0.5)),
        DType::F16 => Scalar::F64(float(rng, special)).cast(DType::F16),
        DType::F32 => Scalar::F32(float(rng, special) as f32),
        DType::F64 => Scalar::F64(float(rng, special)),
        DType::C64 => Scalar::C64(Complex32::new(float(rng, special) as f32, float(rng, special) as f32)),
        DType::C128 => Scalar::C128(Complex64::new(float(rng, special), float(rng, special))),
        d => {
            let (lo, hi) = d.int_range().expect("an integer dtype");
            let v = if special {
                *rng.pick(&[lo, hi, lo + 1, hi - 1, 0, 1, -1])
            } else if lo < 0 {
                i128::from(rng.range(-6, 6))
            } else {
                i128::from(rng.range(0, 9))
            };
            let v = v.clamp(lo, hi);
            if d == DType::U64 { Scalar::U64(v as u64) } else { Scalar::I64(v as i64).cast(d) }
        }
    }
}
