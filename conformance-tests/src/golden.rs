//! Reading `data/cases.json`, written by `golden/gen_conformance.py`.

use std::collections::BTreeMap;

use num_complex::{Complex32, Complex64};
use pytato_core::{ArrayData, DType, Dim, Scalar, Shape};
use serde_json::Value;

/// The golden file, embedded so that the suite needs no files at run time.
const CASES_JSON: &str = include_str!("../data/cases.json");

/// One conformance case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Unique name.
    pub name: String,
    /// Output name → numpy expression.
    pub exprs: BTreeMap<String, String>,
    /// Values of the symbolic lengths (for reference; backends infer them from input shapes).
    pub sizes: BTreeMap<String, i64>,
    /// The inputs, by name.
    pub inputs: BTreeMap<String, Input>,
    /// Inputs not passed at run time.
    pub omit: Vec<String>,
    /// Inputs replaced (`Some`) or removed (`None`) at run time, for error cases.
    pub run: BTreeMap<String, Option<ArrayData>>,
    /// What numpy computed, by output name.
    pub expected: BTreeMap<String, ArrayData>,
    /// The error kind every backend must report instead.
    pub error: Option<String>,
    /// Functions the expressions may call, by name (each call is traced into a `Function`).
    pub functions: BTreeMap<String, UserFunction>,
}

/// A function of a case: `name(params…)` returns its body expressions (one result each), written
/// in the same numpy language over the parameters.
#[derive(Clone, Debug, Default)]
pub struct UserFunction {
    /// Parameter names.
    pub params: Vec<String>,
    /// One expression per result; for a kernel, the names of the targets it returns.
    pub body: Vec<String>,
    /// When not empty, the function is a user kernel (`pytato_core::user_kernel`): its
    /// statements, each a target, the target's shape and an index expression
    /// ([`crate::kernel_expr`]).
    pub kernel: Vec<(String, Vec<pytato_core::Dim>, String)>,
}

/// One kernel statement of a case: `[target, [lengths…], expression]`, lengths integers or
/// size names.
fn statement(v: &Value) -> (String, Vec<pytato_core::Dim>, String) {
    let text = |v: &Value| v.as_str().expect("a string").to_string();
    let dims = v[1]
        .as_array()
        .expect("a shape")
        .iter()
        .map(|d| match d.as_i64() {
            Some(n) => pytato_core::Dim::new(n),
            None => pytato_core::Dim::param(d.as_str().expect("a length or a size name")),
        })
        .collect();
    (text(&v[0]), dims, text(&v[2]))
}

/// A case input.
#[derive(Clone, Debug)]
pub struct Input {
    /// Wrapped into the DAG as a `DataWrapper` instead of a placeholder.
    pub is_data: bool,
    /// Declared dtype.
    pub dtype: DType,
    /// Declared shape, possibly symbolic.
    pub shape: Shape,
    /// The values numpy used.
    pub data: ArrayData,
}

/// Every case of the golden file.
pub fn load_cases() -> Vec<Case> {
    let root: Value = serde_json::from_str(CASES_JSON).expect("cases.json is valid JSON");
    root["cases"].as_array().expect("a case list").iter().map(parse_case).collect()
}

fn parse_case(v: &Value) -> Case {
    let name = v["name"].as_str().expect("name").to_string();
    let exprs =
        v["expr"].as_object().expect("expr map").iter().map(|(k, e)| (k.clone(), e.as_str().unwrap().into())).collect();
    let sizes = v["sizes"].as_object().expect("sizes").iter().map(|(k, n)| (k.clone(), n.as_i64().unwrap())).collect();
    let inputs = v["inputs"]
        .as_object()
        .expect("inputs")
        .iter()
        .map(|(k, i)| {
            let shape = i["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| match d {
                    Value::String(s) => Dim::param(s.as_str()),
                    n => Dim::new(n.as_i64().unwrap()),
                })
                .collect();
            let input = Input {
                is_data: i["kind"] == "data",
                dtype: DType::from_name(i["dtype"].as_str().unwrap()).expect("dtype"),
                shape,
                data: decode(&i["data"]),
            };
            (k.clone(), input)
        })
        .collect();
    let omit =
        v["omit"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect()).unwrap_or_default();
    let run = v
        .get("run")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, d)| (k.clone(), (!d.is_null()).then(|| decode(d)))).collect())
        .unwrap_or_default();
    let expected = v
        .get("expected")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, d)| (k.clone(), decode(d))).collect())
        .unwrap_or_default();
    let error = v.get("error").and_then(Value::as_str).map(str::to_string);
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().map(|a| a.iter().map(|s| s.as_str().expect("a string").to_string()).collect()).unwrap_or_default()
    };
    let functions = v
        .get("functions")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, f)| {
                    let kernel = f
                        .get("kernel")
                        .and_then(Value::as_array)
                        .map(|statements| statements.iter().map(statement).collect())
                        .unwrap_or_default();
                    (k.clone(), UserFunction { params: strings(&f["params"]), body: strings(&f["body"]), kernel })
                })
                .collect()
        })
        .unwrap_or_default();
    Case { name, exprs, sizes, inputs, omit, run, expected, error, functions }
}

fn float(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad float {other}"),
        },
        n => n.as_f64().expect("number"),
    }
}

/// An encoded array (`{"dtype", "shape", "values"}`) as [`ArrayData`].
pub fn decode(v: &Value) -> ArrayData {
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).expect("dtype");
    let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let values = v["values"].as_array().unwrap().iter().map(|x| match dtype {
        DType::Bool => Scalar::Bool(x.as_bool().unwrap()),
        DType::U64 => Scalar::U64(x.as_u64().unwrap()),
        d if d.is_integer() => Scalar::I64(x.as_i64().unwrap()).cast(d),
        DType::F16 => Scalar::F64(float(x)).cast(DType::F16),
        DType::F32 => Scalar::F32(float(x) as f32),
        DType::F64 => Scalar::F64(float(x)),
        DType::C64 => Scalar::C64(Complex32::new(float(&x[0]) as f32, float(&x[1]) as f32)),
        _ => Scalar::C128(Complex64::new(float(&x[0]), float(&x[1]))),
    });
    ArrayData::from_scalars(dtype, &shape, values).expect("values match the shape")
}

fn encode_float(x: f64) -> Value {
    if x.is_nan() {
        Value::from("nan")
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        Value::from(x)
    }
}

/// `data` as `{"dtype", "shape", "values"}`, what [`decode`] reads (and `golden/` writes).
pub fn encode(data: &ArrayData) -> Value {
    let values: Vec<Value> = data
        .to_scalars()
        .into_iter()
        .map(|s| match s {
            Scalar::Bool(b) => Value::from(b),
            Scalar::U64(v) => Value::from(v),
            Scalar::F16(_) | Scalar::F32(_) | Scalar::F64(_) => encode_float(s.to_f64()),
            Scalar::C64(_) | Scalar::C128(_) => {
                let c = s.to_complex64();
                Value::from(vec![encode_float(c.re), encode_float(c.im)])
            }
            other => Value::from(other.to_i128().expect("an integer") as i64),
        })
        .collect();
    serde_json::json!({"dtype": data.dtype().name(), "shape": data.shape(), "values": values})
}
