//! The frontend against numpy: every row of `data/frontend_shapes.jsonl` (written by
//! `golden/gen_frontend_shapes.py`) is replayed, and the result shape and dtype must be numpy's,
//! or the call must fail where numpy raised.
//!
//! Symbolic lengths `n` and `m` stay symbolic here; the resulting shape is evaluated with the
//! values numpy saw (n = 7, m = 11).

use num_complex::Complex64;
use pytato_core::dtype::WeakScalar;
use pytato_core::{Array, DType, Dim, Order, Result, Shape};
use pytato_frontend::{self as pt, Idx, Operand, ReduceOptions, TensordotAxes};
use serde_json::Value;

const TABLE: &str = include_str!("data/frontend_shapes.jsonl");

fn size(name: &str) -> Option<i64> {
    match name {
        "n" => Some(7),
        "m" => Some(11),
        _ => None,
    }
}

fn shape_of(v: &Value) -> Shape {
    v.as_array()
        .expect("shape list")
        .iter()
        .map(|d| match d {
            Value::String(s) => Dim::param(s.as_str()),
            other => Dim::new(other.as_i64().expect("integer length")),
        })
        .collect()
}

fn dtype_of(v: &Value) -> DType {
    DType::from_name(v.as_str().expect("dtype name")).expect("known dtype")
}

fn opt_dtype(v: &Value) -> Option<DType> {
    (!v.is_null()).then(|| dtype_of(v))
}

/// Distinct placeholder names per row: `a0`, `a1`, ...
struct Args<'a> {
    values: &'a [Value],
    arrays: usize,
}

impl Args<'_> {
    fn array_from(&mut self, v: &Value) -> Array {
        let name = format!("a{}", self.arrays);
        self.arrays += 1;
        pt::placeholder(&name, shape_of(&v["array"]), dtype_of(&v["dtype"])).expect("valid placeholder")
    }
    fn array(&mut self, i: usize) -> Array {
        let v = &self.values[i];
        self.array_from(v)
    }
    fn arrays(&mut self, i: usize) -> Vec<Array> {
        let list = self.values[i]["arrays"].as_array().expect("array list").clone();
        list.iter().map(|v| self.array_from(v)).collect()
    }
    fn scalar(&self, i: usize) -> WeakScalar {
        weak(&self.values[i]["scalar"])
    }
    fn operand(&mut self, i: usize) -> Operand {
        if self.values[i].get("scalar").is_some() {
            Operand::Scalar(self.scalar(i))
        } else {
            Operand::Array(self.array(i))
        }
    }
    fn int(&self, i: usize) -> i64 {
        self.values[i].as_i64().expect("integer argument")
    }
    fn ints(&self, i: usize) -> Vec<i64> {
        self.values[i].as_array().expect("list").iter().map(|v| v.as_i64().expect("integer")).collect()
    }
    fn opt_int(&self, i: usize) -> Option<i64> {
        self.values[i].as_i64()
    }
    fn axes(&self, i: usize) -> pt::Axes {
        match &self.values[i] {
            Value::Null => pt::Axes::All,
            Value::Array(_) => pt::Axes::List(self.ints(i)),
            v => pt::Axes::List(vec![v.as_i64().expect("axis")]),
        }
    }
}

fn weak(v: &Value) -> WeakScalar {
    let (kind, value) = v.as_object().expect("scalar").iter().next().expect("one entry");
    match kind.as_str() {
        "int" => WeakScalar::Int(value.as_i64().expect("int").into()),
        "float" => WeakScalar::Float(value.as_f64().expect("float")),
        "bool" => WeakScalar::Bool(value.as_bool().expect("bool")),
        "complex" => WeakScalar::Complex(Complex64::new(value[0].as_f64().unwrap(), value[1].as_f64().unwrap())),
        other => panic!("unknown scalar kind {other}"),
    }
}

fn index_items(args: &mut Args<'_>, v: &Value) -> Vec<Idx> {
    v.as_array()
        .expect("index list")
        .iter()
        .map(|it| match it {
            Value::String(s) if s == "newaxis" => Idx::NewAxis,
            Value::String(s) if s == "ellipsis" => Idx::Ellipsis,
            Value::Number(n) => Idx::Int(n.as_i64().expect("integer index")),
            Value::Object(o) if o.contains_key("slice") => {
                let s = &o["slice"];
                Idx::Slice { start: s[0].as_i64(), stop: s[1].as_i64(), step: s[2].as_i64().unwrap_or(1) }
            }
            other => Idx::Array(args.array_from(other)),
        })
        .collect()
}

fn binary(op: &str) -> Option<fn(Operand, Operand) -> Result<Array>> {
    Some(match op {
        "add" => |a, b| pt::add(a, b),
        "subtract" => |a, b| pt::subtract(a, b),
        "multiply" => |a, b| pt::multiply(a, b),
        "divide" => |a, b| pt::divide(a, b),
        "floor_divide" => |a, b| pt::floor_divide(a, b),
        "remainder" => |a, b| pt::remainder(a, b),
        "power" => |a, b| pt::power(a, b),
        "bitwise_and" => |a, b| pt::bitwise_and(a, b),
        "bitwise_or" => |a, b| pt::bitwise_or(a, b),
        "bitwise_xor" => |a, b| pt::bitwise_xor(a, b),
        "equal" => |a, b| pt::equal(a, b),
        "not_equal" => |a, b| pt::not_equal(a, b),
        "less" => |a, b| pt::less(a, b),
        "less_equal" => |a, b| pt::less_equal(a, b),
        "greater" => |a, b| pt::greater(a, b),
        "greater_equal" => |a, b| pt::greater_equal(a, b),
        "logical_and" => |a, b| pt::logical_and(a, b),
        "logical_or" => |a, b| pt::logical_or(a, b),
        "maximum" => |a, b| pt::maximum(a, b),
        "minimum" => |a, b| pt::minimum(a, b),
        "arctan2" => |a, b| pt::arctan2(a, b),
        _ => return None,
    })
}

fn unary(op: &str) -> Option<fn(&Array) -> Result<Array>> {
    Some(match op {
        "negative" => pt::negative,
        "invert" => pt::invert,
        "logical_not" => pt::logical_not,
        "abs" => pt::abs,
        "real" => pt::real,
        "imag" => pt::imag,
        "conj" => pt::conj,
        "sqrt" => pt::sqrt,
        "exp" => pt::exp,
        "log" => pt::log,
        "log10" => pt::log10,
        "sin" => pt::sin,
        "cos" => pt::cos,
        "tan" => pt::tan,
        "arcsin" => pt::arcsin,
        "arccos" => pt::arccos,
        "arctan" => pt::arctan,
        "sinh" => pt::sinh,
        "cosh" => pt::cosh,
        "tanh" => pt::tanh,
        "floor" => pt::floor,
        "ceil" => pt::ceil,
        "isnan" => pt::isnan,
        "ravel" => pt::ravel,
        _ => return None,
    })
}

fn reduction(op: &str) -> Option<fn(&Array, ReduceOptions) -> Result<Array>> {
    Some(match op {
        "sum" => |a, o| pt::sum(a, o),
        "prod" => |a, o| pt::prod(a, o),
        "max" => |a, o| pt::max(a, o),
        "min" => |a, o| pt::min(a, o),
        "all" => |a, o| pt::all(a, o),
        "any" => |a, o| pt::any(a, o),
        "mean" => |a, o| pt::mean(a, o),
        _ => return None,
    })
}

fn run(op: &str, values: &[Value]) -> Result<Array> {
    let mut a = Args { values, arrays: 0 };
    if let Some(f) = binary(op) {
        let (x, y) = (a.operand(0), a.operand(1));
        return f(x, y);
    }
    if let Some(f) = unary(op) {
        return f(&a.array(0));
    }
    if let Some(f) = reduction(op) {
        let mut opts = ReduceOptions::axes(a.axes(1)).keepdims(values[2].as_bool().expect("keepdims"));
        if !values[3].is_null() {
            opts = opts.initial(a.scalar(3));
        }
        return f(&a.array(0), opts);
    }
    match op {
        "astype" => pt::astype(&a.array(0), dtype_of(&values[1])),
        "where" => {
            let (c, x, y) = (a.operand(0), a.operand(1), a.operand(2));
            pt::where_(c, x, y)
        }
        "einsum" => {
            let arrays = a.arrays(1);
            pt::einsum(values[0].as_str().expect("spec"), &arrays.iter().collect::<Vec<_>>())
        }
        "matmul" => pt::matmul(&a.array(0), &a.array(1)),
        "dot" => pt::dot(&a.array(0), &a.array(1)),
        "vdot" => pt::vdot(&a.array(0), &a.array(1)),
        "tensordot" => {
            let axes = match &values[2] {
                Value::Array(pair) => {
                    let list = |v: &Value| v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
                    TensordotAxes::Pairs(list(&pair[0]), list(&pair[1]))
                }
                n => TensordotAxes::Count(n.as_u64().expect("count") as usize),
            };
            pt::tensordot(&a.array(0), &a.array(1), axes)
        }
        "reshape" => {
            let order = if values[2] == "F" { Order::F } else { Order::C };
            pt::reshape(&a.array(0), Shape::from(a.ints(1)), order)
        }
        "transpose" => {
            let axes = (!values[1].is_null()).then(|| a.ints(1));
            pt::transpose(&a.array(0), axes.as_deref())
        }
        "swapaxes" => pt::swapaxes(&a.array(0), a.int(1), a.int(2)),
        "moveaxis" => pt::moveaxis(&a.array(0), &a.ints(1), &a.ints(2)),
        "roll" => pt::roll(&a.array(0), a.int(1), a.opt_int(2)),
        "stack" => pt::stack(&a.arrays(0), a.int(1)),
        "concatenate" => pt::concatenate(&a.arrays(0), a.int(1)),
        "broadcast_to" => pt::broadcast_to(&a.array(0), shape_of(&values[1])),
        "squeeze" => pt::squeeze(&a.array(0), a.axes(1)),
        "repeat" => pt::repeat(&a.array(0), a.int(1), a.opt_int(2)),
        "diff" => pt::diff(&a.array(0), usize::try_from(a.int(1)).expect("a non-negative order"), a.int(2)),
        "expand_dims" => pt::expand_dims(&a.array(0), a.ints(1)),
        "zeros" => pt::zeros(shape_of(&values[0]), dtype_of(&values[1])),
        "ones" => pt::ones(shape_of(&values[0]), dtype_of(&values[1])),
        "full" => pt::full(shape_of(&values[0]), a.scalar(1), opt_dtype(&values[2])),
        "eye" => {
            let m = values[1].as_i64().map(Dim::new);
            pt::eye(a.int(0), m, a.int(2), dtype_of(&values[3]))
        }
        "arange" => pt::arange(a.scalar(0), a.scalar(1), a.scalar(2), opt_dtype(&values[3])),
        "linspace" => pt::linspace(0.0, 1.0, a.int(0) as usize, values[1].as_bool().unwrap(), None),
        "zeros_like" => pt::zeros_like(&a.array(0), opt_dtype(&values[1])),
        "ones_like" => pt::ones_like(&a.array(0), opt_dtype(&values[1])),
        "full_like" => pt::full_like(&a.array(0), a.scalar(1), opt_dtype(&values[2])),
        "pad" => {
            let x = a.array(0);
            let widths: Vec<(usize, usize)> = values[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
                .collect();
            let widths = match widths[..] {
                [] => pt::PadWidth::Same(0),
                [w] => pt::PadWidth::BeforeAfter(w.0, w.1),
                _ => pt::PadWidth::PerAxis(widths),
            };
            pt::pad(&x, widths, 0.0)
        }
        "index" => {
            let x = a.array(0);
            let items = index_items(&mut a, &values[1]);
            pt::index(&x, &items)
        }
        other => panic!("the table names an unknown function {other:?}"),
    }
}

#[test]
fn frontend_matches_numpy_shapes_and_dtypes() {
    let mut failures = Vec::new();
    let mut rows = 0;
    let mut functions = std::collections::BTreeSet::new();
    for line in TABLE.lines() {
        let row: Value = serde_json::from_str(line).expect("valid JSON row");
        let op = row["op"].as_str().expect("op");
        functions.insert(op.to_string());
        rows += 1;
        let got = run(op, row["args"].as_array().expect("args"));
        let args = serde_json::to_string(&row["args"]).unwrap();
        match (row.get("error"), got) {
            (Some(err), Ok(a)) => {
                failures.push(format!("{op} {args}: numpy raised {err}, ours gave {} {}", a.shape(), a.dtype()))
            }
            (Some(_), Err(_)) => {}
            (None, Err(e)) => failures.push(format!("{op} {args}: numpy gave a result, ours failed: {e}")),
            (None, Ok(a)) => {
                let expected_shape: Vec<i64> =
                    row["shape"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
                let got_shape: Vec<i64> =
                    a.shape().dims().iter().map(|d| d.eval(size).expect("n and m are bound")).collect();
                let expected_dtype = DType::from_name(row["dtype"].as_str().unwrap()).expect("known dtype");
                if got_shape != expected_shape || a.dtype() != expected_dtype {
                    failures.push(format!(
                        "{op} {args}: numpy {expected_shape:?} {expected_dtype}, ours {got_shape:?} {} (symbolic {})",
                        a.dtype(),
                        a.shape()
                    ));
                }
            }
        }
    }
    assert!(rows >= 300, "the table has {rows} rows");
    assert!(failures.is_empty(), "{} of {rows} rows disagree with numpy:\n{}", failures.len(), failures.join("\n"));
    // Every frontend function that has a numpy counterpart appears in the table.
    for f in ["add", "einsum", "matmul", "tensordot", "index", "pad", "mean", "moveaxis", "linspace", "where"] {
        assert!(functions.contains(f), "{f} missing from the table");
    }
}
