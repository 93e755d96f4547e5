//! Evaluates the numpy expressions of the conformance cases with the pytato frontend.
//!
//! The language is the subset of Python the cases use: names, int/float/complex/bool literals,
//! strings, tuples and lists, `+ - * / // % ** @ & | ^ ~` and comparisons with Python's
//! precedence, calls of `np.*` functions with positional and keyword arguments, the methods
//! `astype` and `reshape`, the attribute `T`, and numpy indexing (`x[1:, None, ..., i]`).
//! Names are the case's inputs, and symbolic lengths (which become size parameters). One function
//! is not numpy's: `named(e)` reads `e` back through a `NamedArray` node (numpy sees the identity).

use std::collections::BTreeMap;

use num_complex::Complex64;
use pytato_core::dtype::WeakScalar;
use pytato_core::tags::CountNamed;
use pytato_frontend::{self as pt, Idx, Operand, PadWidth, ReduceOptions, TensordotAxes};

use crate::golden::UserFunction;
use pytato_core::{Array, DType, DictOfNamedArrays, Dim, NodeKind, Order, Shape};

/// A value while evaluating.
#[derive(Clone, Debug)]
enum V {
    Array(Array),
    Int(i64),
    Float(f64),
    Complex(Complex64),
    Bool(bool),
    Str(String),
    None,
    Tuple(Vec<V>),
    DType(DType),
    Module,
    Func(String),
    Method(Array, String),
    /// `at(x)`, `at(x)[items]` and `at(x)[items].set`: partial replacement, JAX's spelling of
    /// numpy's `x[items] = v` as a value (the generator gives numpy's `at` the same meaning).
    At(Array),
    AtIndex(Array, Vec<Idx>),
    AtSet(Array, Vec<Idx>),
    /// `at(x)[items].add`: numpy's `np.add.at(x, items, v)` as a value.
    AtAdd(Array, Vec<Idx>),
    /// `np.finfo(dtype)`, whose attributes are read.
    FInfo(pytato_core::dtype::FInfo),
    /// `np.iinfo(dtype)`.
    IInfo(pytato_core::dtype::IInfo),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    Ellipsis,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    Imag(f64),
    Str(String),
    Op(&'static str),
}

const OPS: [&str; 27] = [
    "...", "**", "//", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "(", ")",
    "[", "]", ",", ":", ".", "=",
];

pub(crate) fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || chars[i] == '.'
                    || chars[i] == 'e'
                    || ((chars[i] == '-' || chars[i] == '+') && chars[i - 1] == 'e'))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            if chars.get(i) == Some(&'j') {
                i += 1;
                toks.push(Tok::Imag(text.parse().map_err(|e| format!("{text}: {e}"))?));
            } else if text.contains(['.', 'e']) {
                toks.push(Tok::Float(text.parse().map_err(|e| format!("{text}: {e}"))?));
            } else {
                toks.push(Tok::Int(text.parse().map_err(|e| format!("{text}: {e}"))?));
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push(Tok::Name(chars[start..i].iter().collect()));
        } else if c == '\'' || c == '"' {
            let end = chars[i + 1..].iter().position(|&d| d == c).ok_or("unterminated string")? + i + 1;
            toks.push(Tok::Str(chars[i + 1..end].iter().collect()));
            i = end + 1;
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let op =
                OPS.iter().find(|op| rest.starts_with(**op)).ok_or_else(|| format!("unexpected character {c:?}"))?;
            toks.push(Tok::Op(op));
            i += op.len();
        }
    }
    Ok(toks)
}

/// Evaluates `src` with `names` bound (inputs and size parameters).
pub fn evaluate(src: &str, names: &BTreeMap<String, Array>) -> Result<Array, String> {
    evaluate_with(src, names, &BTreeMap::new())
}

/// [`evaluate`] where the expression may call `functions` by name: each call is traced
/// (`pytato_core::function::trace_call`) from the function's body expressions.
pub fn evaluate_with(
    src: &str,
    names: &BTreeMap<String, Array>,
    functions: &BTreeMap<String, UserFunction>,
) -> Result<Array, String> {
    let toks = tokenize(src)?;
    let mut p = Parser { toks, pos: 0, names, functions };
    let v = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(format!("unexpected {:?} at token {}", p.toks[p.pos], p.pos));
    }
    match v {
        V::Array(a) => Ok(a),
        other => Err(format!("the expression gives {other:?}, not an array")),
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    names: &'a BTreeMap<String, Array>,
    functions: &'a BTreeMap<String, UserFunction>,
}

/// The prefix of a user function's name as a value (`V::Func`), apart from numpy's functions.
const USER_FUNCTION: &str = "user:";

type R<T> = Result<T, String>;

/// The message of a frontend error, led by its kind in brackets (`[ShapeMismatch] ...`) so that a
/// case may expect an error numpy raises while indexing (see `run_case`).
fn err(e: pytato_core::Error) -> String {
    format!("[{}] {e}", e.kind())
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> R<V> {
        let lhs = self.bitor()?;
        let op = match self.peek_op() {
            Some(op @ ("<" | "<=" | ">" | ">=" | "==" | "!=")) => op,
            _ => return Ok(lhs),
        };
        self.pos += 1;
        let rhs = self.bitor()?;
        let (a, b) = (operand(lhs)?, operand(rhs)?);
        array(match op {
            "<" => pt::less(a, b),
            "<=" => pt::less_equal(a, b),
            ">" => pt::greater(a, b),
            ">=" => pt::greater_equal(a, b),
            "==" => pt::equal(a, b),
            _ => pt::not_equal(a, b),
        })
    }

    fn left_assoc(&mut self, ops: &[&str], next: fn(&mut Self) -> R<V>) -> R<V> {
        let mut lhs = next(self)?;
        while let Some(op) = self.peek_op().filter(|o| ops.contains(o)) {
            self.pos += 1;
            let rhs = next(self)?;
            lhs = binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn bitor(&mut self) -> R<V> {
        self.left_assoc(&["|"], Self::bitxor)
    }
    fn bitxor(&mut self) -> R<V> {
        self.left_assoc(&["^"], Self::bitand)
    }
    fn bitand(&mut self) -> R<V> {
        self.left_assoc(&["&"], Self::arith)
    }
    fn arith(&mut self) -> R<V> {
        self.left_assoc(&["+", "-"], Self::term)
    }
    fn term(&mut self) -> R<V> {
        self.left_assoc(&["*", "/", "//", "%", "@"], Self::factor)
    }

    fn factor(&mut self) -> R<V> {
        if self.eat("-") {
            return match self.factor()? {
                V::Int(i) => Ok(V::Int(-i)),
                V::Float(x) => Ok(V::Float(-x)),
                V::Complex(c) => Ok(V::Complex(-c)),
                v => array(pt::negative(&to_array(v)?)),
            };
        }
        if self.eat("+") {
            return self.factor();
        }
        if self.eat("~") {
            return array(pt::invert(&to_array(self.factor()?)?));
        }
        let base = self.primary()?;
        if self.eat("**") {
            let exp = self.factor()?;
            return binary("**", base, exp);
        }
        Ok(base)
    }

    fn primary(&mut self) -> R<V> {
        let mut v = self.atom()?;
        loop {
            if self.eat("(") {
                let (args, kwargs) = self.call_args()?;
                v = match v {
                    V::Func(name) if name.starts_with(USER_FUNCTION) => {
                        self.call_user(&name[USER_FUNCTION.len()..], args)?
                    }
                    other => call(other, args, kwargs)?,
                };
            } else if self.eat("[") {
                let items = self.subscripts()?;
                v = match v {
                    V::At(a) => V::AtIndex(a, items),
                    // A tuple (what np.nonzero returns) indexed by an integer.
                    V::Tuple(entries) => match items.as_slice() {
                        [Idx::Int(k)] => usize::try_from(*k)
                            .ok()
                            .and_then(|k| entries.get(k).cloned())
                            .ok_or_else(|| format!("tuple index {k} out of range"))?,
                        _ => return Err("a tuple is indexed by one integer".into()),
                    },
                    other => V::Array(to_array(other)?.index(items).map_err(err)?),
                };
            } else if self.eat(".") {
                let Some(Tok::Name(attr)) = self.toks.get(self.pos).cloned() else {
                    return Err("expected an attribute".into());
                };
                self.pos += 1;
                v = attribute(v, &attr)?;
            } else {
                return Ok(v);
            }
        }
    }

    fn atom(&mut self) -> R<V> {
        let tok = self.toks.get(self.pos).cloned().ok_or("unexpected end of expression")?;
        self.pos += 1;
        Ok(match tok {
            Tok::Int(i) => V::Int(i),
            Tok::Float(x) => V::Float(x),
            Tok::Imag(x) => V::Complex(Complex64::new(0.0, x)),
            Tok::Str(s) => V::Str(s),
            Tok::Name(n) => match n.as_str() {
                "np" => V::Module,
                "True" => V::Bool(true),
                "False" => V::Bool(false),
                "None" => V::None,
                "named" => V::Func("named".into()),
                "at" => V::Func("at".into()),
                "count_named" => V::Func("count_named".into()),
                _ if self.functions.contains_key(&n) => V::Func(format!("{USER_FUNCTION}{n}")),
                _ => V::Array(self.names.get(&n).cloned().ok_or_else(|| format!("unknown name {n}"))?),
            },
            Tok::Op("(") => {
                let mut items = Vec::new();
                let mut tuple = false;
                while !self.eat(")") {
                    items.push(self.expr()?);
                    if self.eat(",") {
                        tuple = true;
                    }
                }
                if tuple || items.is_empty() { V::Tuple(items) } else { items.pop().expect("one item") }
            }
            Tok::Op("[") => {
                let mut items = Vec::new();
                while !self.eat("]") {
                    items.push(self.expr()?);
                    self.eat(",");
                }
                V::Tuple(items)
            }
            Tok::Op("...") => V::Ellipsis,
            other => return Err(format!("unexpected {other:?}")),
        })
    }

    fn call_args(&mut self) -> R<(Vec<V>, BTreeMap<String, V>)> {
        let (mut args, mut kwargs) = (Vec::new(), BTreeMap::new());
        while !self.eat(")") {
            if let (Some(Tok::Name(n)), Some(Tok::Op("="))) =
                (self.toks.get(self.pos).cloned(), self.toks.get(self.pos + 1))
            {
                self.pos += 2;
                kwargs.insert(n, self.expr()?);
            } else {
                args.push(self.expr()?);
            }
            self.eat(",");
        }
        Ok((args, kwargs))
    }

    /// `name(args…)` for a user function: traced over its body expressions; one result is an
    /// array, several a tuple.
    fn call_user(&self, name: &str, args: Vec<V>) -> R<V> {
        let def = &self.functions[name];
        let args: Vec<Array> = args.into_iter().map(to_array).collect::<R<_>>()?;
        if args.len() != def.params.len() {
            return Err(format!("{name} takes {} arguments, got {}", def.params.len(), args.len()));
        }
        if !def.kernel.is_empty() {
            return call_kernel(name, def, &args);
        }
        let functions = self.functions;
        let mut failure = None;
        let traced = pytato_core::function::trace_call(
            |params| {
                let inner: BTreeMap<String, Array> = def.params.iter().cloned().zip(params.iter().cloned()).collect();
                def.body
                    .iter()
                    .map(|e| {
                        evaluate_with(e, &inner, functions).map_err(|why| {
                            failure = Some(why.clone());
                            pytato_core::Error::invalid(name, why)
                        })
                    })
                    .collect()
            },
            &args.iter().collect::<Vec<_>>(),
        );
        let mut results = match (traced, failure) {
            (Ok(r), _) => r,
            (Err(_), Some(why)) => return Err(format!("in {name}: {why}")),
            (Err(e), None) => return Err(err(e)),
        };
        Ok(if results.len() == 1 {
            V::Array(results.remove(0))
        } else {
            V::Tuple(results.into_iter().map(V::Array).collect())
        })
    }

    fn subscripts(&mut self) -> R<Vec<Idx>> {
        let mut items = Vec::new();
        while !self.eat("]") {
            let start = if matches!(self.peek_op(), Some(":")) { V::None } else { self.expr()? };
            let item = if self.eat(":") {
                let stop = if matches!(self.peek_op(), Some(":" | "," | "]")) { V::None } else { self.expr()? };
                let step =
                    if self.eat(":") && !matches!(self.peek_op(), Some("," | "]")) { self.expr()? } else { V::None };
                V::Slice(opt_int(start)?, opt_int(stop)?, opt_int(step)?)
            } else {
                start
            };
            if let V::Tuple(arrays) = item {
                // x[np.nonzero(m)]: a tuple of index arrays is one item per array.
                items.extend(arrays.into_iter().map(|a| to_array(a).map(Idx::Array)).collect::<R<Vec<_>>>()?);
                self.eat(",");
                continue;
            }
            items.push(match item {
                V::Slice(a, b, c) => Idx::Slice { start: a, stop: b, step: c.unwrap_or(1) },
                V::Int(i) => Idx::Int(i),
                V::Bool(b) => Idx::Bool(b),
                V::None => Idx::NewAxis,
                V::Ellipsis => Idx::Ellipsis,
                V::Array(a) => Idx::Array(a),
                other => return Err(format!("bad index {other:?}")),
            });
            self.eat(",");
        }
        Ok(items)
    }
}

/// `a op b` of two Python number literals, as Python computes it (`1+2j` is a complex scalar,
/// not an array): `+ - *` and `/`; `None` for anything else.
fn fold_literals(op: &str, a: &V, b: &V) -> Option<V> {
    let complex = |v: &V| match *v {
        V::Int(i) => Some(Complex64::new(i as f64, 0.0)),
        V::Float(x) => Some(Complex64::new(x, 0.0)),
        V::Complex(c) => Some(c),
        _ => None,
    };
    let (x, y) = (complex(a)?, complex(b)?);
    let value = match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        "/" => x / y,
        _ => return None,
    };
    Some(match (a, b) {
        (V::Int(i), V::Int(j)) if op != "/" => V::Int(match op {
            "+" => i.checked_add(*j)?,
            "-" => i.checked_sub(*j)?,
            _ => i.checked_mul(*j)?,
        }),
        (V::Complex(_), _) | (_, V::Complex(_)) => V::Complex(value),
        _ => V::Float(value.re),
    })
}

/// `name(args…)` for a user kernel: built over the arguments' shapes and dtypes from the
/// statements, and called; one output is an array, several a tuple.
fn call_kernel(name: &str, def: &UserFunction, args: &[Array]) -> R<V> {
    use crate::kernel_expr::{Buffers, parse_statement, statement_dtype};
    use pytato_core::user_kernel::{Statement, UserKernel};
    let mut buffers: Buffers = def.params.iter().zip(args).map(|(p, a)| (p.clone(), (a.dtype(), a.ndim()))).collect();
    let mut statements = Vec::with_capacity(def.kernel.len());
    for (target, dims, src) in &def.kernel {
        let expr = parse_statement(src, dims.len(), &buffers).map_err(|e| format!("kernel {name}, {target}: {e}"))?;
        let dtype =
            statement_dtype(&expr, dims.len(), &buffers).map_err(|e| format!("kernel {name}, {target}: {e}"))?;
        buffers.insert(target.clone(), (dtype, dims.len()));
        statements.push(Statement::new(target, dims.clone(), expr));
    }
    let inputs = def.params.iter().zip(args).map(|(p, a)| (p.as_str(), a.shape().clone(), a.dtype())).collect();
    let outputs: Vec<&str> = def.body.iter().map(String::as_str).collect();
    let kernel = UserKernel::new(name, inputs, statements, &outputs).map_err(err)?;
    let bound: Vec<(&str, &Array)> = def.params.iter().map(String::as_str).zip(args).collect();
    let mut results = kernel.call(&bound).map_err(err)?;
    let mut arrays: Vec<Array> = def.body.iter().map(|o| results.remove(o).expect("every output")).collect();
    Ok(if arrays.len() == 1 {
        V::Array(arrays.remove(0))
    } else {
        V::Tuple(arrays.into_iter().map(V::Array).collect())
    })
}

fn opt_int(v: V) -> R<Option<i64>> {
    match v {
        V::None => Ok(None),
        V::Int(i) => Ok(Some(i)),
        other => Err(format!("slice bound {other:?} is not an integer")),
    }
}

fn array(r: pytato_core::Result<Array>) -> R<V> {
    r.map(V::Array).map_err(err)
}

fn operand(v: V) -> R<Operand> {
    Ok(match v {
        V::Array(a) => Operand::Array(a),
        V::Int(i) => Operand::Scalar(WeakScalar::Int(i.into())),
        V::Float(x) => Operand::Scalar(WeakScalar::Float(x)),
        V::Complex(c) => Operand::Scalar(WeakScalar::Complex(c)),
        V::Bool(b) => Operand::Scalar(WeakScalar::Bool(b)),
        other => return Err(format!("{other:?} is not an operand")),
    })
}

fn weak(v: V) -> R<WeakScalar> {
    match operand(v)? {
        Operand::Scalar(s) => Ok(s),
        Operand::Array(_) => Err("expected a scalar".into()),
    }
}

fn to_array(v: V) -> R<Array> {
    match v {
        V::Array(a) => Ok(a),
        other => Err(format!("{other:?} is not an array")),
    }
}

fn int(v: &V) -> R<i64> {
    match v {
        V::Int(i) => Ok(*i),
        other => Err(format!("{other:?} is not an integer")),
    }
}

fn ints(v: &V) -> R<Vec<i64>> {
    match v {
        V::Tuple(items) => items.iter().map(int).collect(),
        other => Ok(vec![int(other)?]),
    }
}

/// A shape: integers or size parameters (symbolic lengths), one or a tuple.
fn shape(v: &V) -> R<Shape> {
    let dim = |v: &V| -> R<Dim> {
        match v {
            V::Int(i) => Ok(Dim::new(*i)),
            V::Array(a) if matches!(a.kind(), NodeKind::SizeParam { .. }) => {
                Ok(Dim::param(a.name().expect("size parameters are named")))
            }
            other => Err(format!("{other:?} is not a length")),
        }
    };
    match v {
        V::Tuple(items) => items.iter().map(dim).collect::<R<Vec<_>>>().map(Shape::from),
        other => Ok(Shape::from(vec![dim(other)?])),
    }
}

fn arrays(v: V) -> R<Vec<Array>> {
    match v {
        V::Tuple(items) => items.into_iter().map(to_array).collect(),
        other => Err(format!("{other:?} is not a list of arrays")),
    }
}

fn dtype(v: &V) -> R<DType> {
    match v {
        V::DType(d) => Ok(*d),
        other => Err(format!("{other:?} is not a dtype")),
    }
}

fn binary(op: &str, a: V, b: V) -> R<V> {
    if op == "@" {
        return array(pt::matmul(&to_array(a)?, &to_array(b)?));
    }
    if let Some(folded) = fold_literals(op, &a, &b) {
        return Ok(folded);
    }
    let (a, b) = (operand(a)?, operand(b)?);
    array(match op {
        "+" => pt::add(a, b),
        "-" => pt::subtract(a, b),
        "*" => pt::multiply(a, b),
        "/" => pt::divide(a, b),
        "//" => pt::floor_divide(a, b),
        "%" => pt::remainder(a, b),
        "**" => pt::power(a, b),
        "&" => pt::bitwise_and(a, b),
        "|" => pt::bitwise_or(a, b),
        "^" => pt::bitwise_xor(a, b),
        other => return Err(format!("unknown operator {other}")),
    })
}

fn attribute(v: V, attr: &str) -> R<V> {
    match v {
        V::Module => Ok(match (attr, DType::from_name(attr)) {
            ("inf", _) => V::Float(f64::INFINITY),
            ("nan", _) => V::Float(f64::NAN),
            ("pi", _) => V::Float(std::f64::consts::PI),
            ("e", _) => V::Float(std::f64::consts::E),
            (_, Some(d)) => V::DType(d),
            (_, None) => V::Func(attr.to_string()),
        }),
        V::Array(a) if attr == "T" => array(pt::transpose(&a, None)),
        V::Array(a) if attr == "dtype" => Ok(V::DType(a.dtype())),
        V::FInfo(f) => Ok(match attr {
            "bits" => V::Int(f.bits.into()),
            "eps" => V::Float(f.eps),
            "max" => V::Float(f.max),
            "min" => V::Float(f.min),
            "smallest_normal" => V::Float(f.smallest_normal),
            "dtype" => V::DType(f.dtype),
            other => return Err(format!("finfo has no attribute {other}")),
        }),
        V::IInfo(i) => Ok(match attr {
            "bits" => V::Int(i.bits.into()),
            "max" | "min" => {
                let v = if attr == "max" { i.max } else { i.min };
                V::Int(i64::try_from(v).map_err(|_| format!("iinfo({}).{attr} = {v} is beyond int64", i.dtype))?)
            }
            "dtype" => V::DType(i.dtype),
            other => return Err(format!("iinfo has no attribute {other}")),
        }),
        V::Array(a) => Ok(V::Method(a, attr.to_string())),
        V::AtIndex(a, items) if attr == "set" => Ok(V::AtSet(a, items)),
        V::AtIndex(a, items) if attr == "add" => Ok(V::AtAdd(a, items)),
        other => Err(format!("{other:?} has no attribute {attr}")),
    }
}

fn reduce_options(args: &[V], kwargs: &BTreeMap<String, V>) -> R<ReduceOptions> {
    let axis = kwargs.get("axis").or(args.get(1));
    let mut opts = match axis {
        None | Some(V::None) => ReduceOptions::axes(None),
        Some(v) => ReduceOptions::axes(ints(v)?),
    };
    if let Some(V::Bool(k)) = kwargs.get("keepdims") {
        opts = opts.keepdims(*k);
    }
    if let Some(init) = kwargs.get("initial") {
        opts = opts.initial(weak(init.clone())?);
    }
    if let Some(d) = opt_dtype(kwargs)? {
        opts = opts.dtype(d);
    }
    Ok(opts)
}

fn opt_dtype(kwargs: &BTreeMap<String, V>) -> R<Option<DType>> {
    kwargs.get("dtype").map(dtype).transpose()
}

fn call(f: V, args: Vec<V>, kwargs: BTreeMap<String, V>) -> R<V> {
    let name = match f {
        V::Func(name) => name,
        V::Method(a, m) => {
            return match m.as_str() {
                "astype" => array(pt::astype(&a, dtype(&args[0])?)),
                "reshape" => array(pt::reshape(&a, ints(&args[0])?, Order::C)),
                other => Err(format!("unknown method {other}")),
            };
        }
        V::AtSet(a, items) => {
            let value = args.into_iter().next().ok_or("at(...)[...].set needs a value")?;
            return array(pt::set_index(&a, &items, operand(value)?));
        }
        V::AtAdd(a, items) => {
            let value = args.into_iter().next().ok_or("at(...)[...].add needs a value")?;
            return array(pt::add_at(&a, &items, operand(value)?));
        }
        other => return Err(format!("{other:?} is not callable")),
    };
    // numpy 2 also has the Array API's spellings (`np.acos`, `np.concat`, ...).
    let name = crate::coverage::numpy_name(&name).map_or(name, str::to_string);
    let arg = |i: usize| args.get(i).cloned().ok_or_else(|| format!("np.{name}: argument {i} missing"));
    let a0 = || to_array(arg(0)?);
    if name == "at" {
        return Ok(V::At(a0()?));
    }
    let tuple_of = |arrays: pytato_core::Result<Vec<Array>>| -> R<V> {
        Ok(V::Tuple(arrays.map_err(err)?.into_iter().map(V::Array).collect()))
    };
    // The data type functions take dtypes (or arrays, for their dtypes).
    let dtype_of = |v: &V| match v {
        V::Array(a) => Ok(a.dtype()),
        other => dtype(other),
    };
    match name.as_str() {
        "result_type" => {
            let dtypes = args.iter().map(dtype_of).collect::<R<Vec<_>>>()?;
            return pytato_core::dtype::result_type_many(dtypes)
                .map(V::DType)
                .ok_or("result_type needs a dtype".into());
        }
        "can_cast" => return Ok(V::Bool(pytato_core::dtype::can_cast(dtype_of(&arg(0)?)?, dtype_of(&arg(1)?)?))),
        "finfo" => return pytato_core::dtype::finfo(dtype_of(&arg(0)?)?).map(V::FInfo).map_err(err),
        "iinfo" => return pytato_core::dtype::iinfo(dtype_of(&arg(0)?)?).map(V::IInfo).map_err(err),
        "isdtype" => {
            let V::Str(kind) = arg(1)? else { return Err("isdtype needs a kind name".into()) };
            let category = pytato_core::dtype::DTypeCategory::from_name(&kind)
                .ok_or_else(|| format!("isdtype: unknown kind {kind:?}"))?;
            return Ok(V::Bool(pytato_core::dtype::isdtype(dtype_of(&arg(0)?)?, category)));
        }
        "broadcast_arrays" => {
            return tuple_of(pt::broadcast_arrays(&args.iter().cloned().map(to_array).collect::<R<Vec<_>>>()?));
        }
        "meshgrid" => {
            let indexing = match kwargs.get("indexing") {
                Some(V::Str(i)) if i == "ij" => pt::Indexing::Ij,
                _ => pt::Indexing::Xy,
            };
            return tuple_of(pt::meshgrid(&args.iter().cloned().map(to_array).collect::<R<Vec<_>>>()?, indexing));
        }
        "split" => {
            let axis = kwargs.get("axis").or(args.get(2)).map(int).transpose()?.unwrap_or(0);
            let parts = match arg(1)? {
                V::Int(n) => pt::Split::Sections(usize::try_from(n).map_err(|_| format!("split into {n}"))?),
                other => pt::Split::Indices(ints(&other)?),
            };
            return tuple_of(pt::split(&a0()?, parts, axis));
        }
        "unique_counts" => {
            let u = pt::unique_counts(&a0()?).map_err(err)?;
            return Ok(V::Tuple(vec![V::Array(u.values), V::Array(u.counts)]));
        }
        "unique_inverse" => {
            let u = pt::unique_inverse(&a0()?).map_err(err)?;
            return Ok(V::Tuple(vec![V::Array(u.values), V::Array(u.inverse_indices)]));
        }
        // numpy's `unique(x, return_index=, return_inverse=, return_counts=, equal_nan=)`.
        "unique" if kwargs.is_empty() => return Ok(V::Array(pt::unique_values_equal_nan(&a0()?).map_err(err)?)),
        "unique" if !matches!(kwargs.get("equal_nan"), Some(V::Bool(false))) || kwargs.len() > 1 => {
            let asked = |k: &str| matches!(kwargs.get(k), Some(V::Bool(true)));
            let equal_nan = !matches!(kwargs.get("equal_nan"), Some(V::Bool(false)));
            let u = pt::unique(&a0()?, equal_nan).map_err(err)?;
            let mut parts = vec![V::Array(u.values)];
            for (part, key) in
                [(u.indices, "return_index"), (u.inverse_indices, "return_inverse"), (u.counts, "return_counts")]
            {
                if asked(key) {
                    parts.push(V::Array(part));
                }
            }
            return Ok(if parts.len() == 1 { parts.pop().expect("one part") } else { V::Tuple(parts) });
        }
        "unique_all" => {
            let u = pt::unique_all(&a0()?).map_err(err)?;
            return Ok(V::Tuple(
                [u.values, u.indices, u.inverse_indices, u.counts].into_iter().map(V::Array).collect(),
            ));
        }
        "unstack" => {
            let axis = kwargs.get("axis").or(args.get(1)).map(int).transpose()?.unwrap_or(0);
            return tuple_of(pt::unstack(&a0()?, axis));
        }
        _ => {}
    }
    if name == "nonzero" {
        return Ok(V::Tuple(pt::nonzero(&a0()?).map_err(err)?.into_iter().map(V::Array).collect()));
    }
    if name == "modf" {
        let (fraction, integral) = pt::modf(&a0()?).map_err(err)?;
        return Ok(V::Tuple(vec![V::Array(fraction), V::Array(integral)]));
    }
    if name == "frexp" {
        let (mantissa, exponent) = pt::frexp(&a0()?).map_err(err)?;
        return Ok(V::Tuple(vec![V::Array(mantissa), V::Array(exponent)]));
    }
    if name == "round" || name == "around" {
        let decimals = kwargs.get("decimals").or(args.get(1)).map(int).transpose()?.unwrap_or(0);
        return array(pt::round_decimals(&a0()?, decimals));
    }
    let unary: Option<fn(&Array) -> pytato_core::Result<Array>> = match name.as_str() {
        "sqrt" => Some(pt::sqrt),
        "exp" => Some(pt::exp),
        "log" => Some(pt::log),
        "log10" => Some(pt::log10),
        "sin" => Some(pt::sin),
        "cos" => Some(pt::cos),
        "tan" => Some(pt::tan),
        "arcsin" => Some(pt::arcsin),
        "arccos" => Some(pt::arccos),
        "arctan" => Some(pt::arctan),
        "sinh" => Some(pt::sinh),
        "cosh" => Some(pt::cosh),
        "tanh" => Some(pt::tanh),
        "floor" => Some(pt::floor),
        "ceil" => Some(pt::ceil),
        "isnan" => Some(pt::isnan),
        "isfinite" => Some(pt::isfinite),
        "isinf" => Some(pt::isinf),
        "square" => Some(pt::square),
        "positive" => Some(pt::positive),
        "trunc" => Some(pt::trunc),
        "sign" => Some(pt::sign),
        "arcsinh" => Some(pt::arcsinh),
        "arccosh" => Some(pt::arccosh),
        "arctanh" => Some(pt::arctanh),
        "expm1" => Some(pt::expm1),
        "log1p" => Some(pt::log1p),
        "log2" => Some(pt::log2),
        "signbit" => Some(pt::signbit),
        "spacing" => Some(pt::spacing),
        "cbrt" => Some(pt::cbrt),
        "exp2" => Some(pt::exp2),
        "rint" => Some(pt::rint),
        "round" => Some(pt::round),
        "reciprocal" => Some(pt::reciprocal),
        "abs" => Some(pt::abs),
        "real" => Some(pt::real),
        "imag" => Some(pt::imag),
        "conj" => Some(pt::conj),
        "logical_not" => Some(pt::logical_not),
        "invert" => Some(pt::invert),
        "negative" => Some(pt::negative),
        "ravel" => Some(pt::ravel),
        "flatnonzero" => Some(pt::flatnonzero),
        "argwhere" => Some(pt::argwhere),
        _ => None,
    };
    if let Some(f) = unary {
        return array(f(&a0()?));
    }
    let bin: Option<fn(Operand, Operand) -> pytato_core::Result<Array>> = match name.as_str() {
        "maximum" => Some(pt::maximum),
        "minimum" => Some(pt::minimum),
        "arctan2" => Some(pt::arctan2),
        "hypot" => Some(pt::hypot),
        "logaddexp" => Some(pt::logaddexp),
        "copysign" => Some(pt::copysign),
        "nextafter" => Some(pt::nextafter),
        "fmax" => Some(pt::fmax),
        "fmin" => Some(pt::fmin),
        "fmod" => Some(pt::fmod),
        "gcd" => Some(pt::gcd),
        "lcm" => Some(pt::lcm),
        "ldexp" => Some(pt::ldexp),
        "logaddexp2" => Some(pt::logaddexp2),
        "left_shift" => Some(pt::left_shift),
        "right_shift" => Some(pt::right_shift),
        "logical_and" => Some(pt::logical_and),
        "logical_or" => Some(pt::logical_or),
        "logical_xor" => Some(pt::logical_xor),
        "add" => Some(pt::add),
        "subtract" => Some(pt::subtract),
        "multiply" => Some(pt::multiply),
        "divide" => Some(pt::divide),
        "floor_divide" => Some(pt::floor_divide),
        "remainder" => Some(pt::remainder),
        "power" => Some(pt::power),
        _ => None,
    };
    if let Some(f) = bin {
        return array(f(operand(arg(0)?)?, operand(arg(1)?)?));
    }
    let reduction: Option<fn(&Array, ReduceOptions) -> pytato_core::Result<Array>> = match name.as_str() {
        "sum" => Some(pt::sum),
        "prod" => Some(pt::prod),
        "max" => Some(pt::max),
        "min" => Some(pt::min),
        "all" => Some(pt::all),
        "any" => Some(pt::any),
        "mean" => Some(pt::mean),
        _ => None,
    };
    if let Some(f) = reduction {
        return array(f(&a0()?, reduce_options(&args, &kwargs)?));
    }
    if name == "cumulative_sum" || name == "cumulative_prod" {
        let f = if name == "cumulative_sum" { pt::cumulative_sum } else { pt::cumulative_prod };
        let mut options = pt::ScanOptions {
            axis: match kwargs.get("axis").or(args.get(1)) {
                None | Some(V::None) => None,
                Some(v) => Some(int(v)?),
            },
            ..pt::ScanOptions::default()
        };
        options.dtype = opt_dtype(&kwargs)?;
        options.include_initial = matches!(kwargs.get("include_initial"), Some(V::Bool(true)));
        return array(f(&a0()?, options));
    }
    if name == "cumsum" || name == "cumprod" {
        let f = if name == "cumsum" { pt::cumsum } else { pt::cumprod };
        let axis = match kwargs.get("axis").or(args.get(1)) {
            None | Some(V::None) => None,
            Some(v) => Some(int(v)?),
        };
        return array(f(&a0()?, axis));
    }
    if name == "var" || name == "std" {
        let f = if name == "var" { pt::var } else { pt::std };
        let correction = match kwargs.get("ddof").or(kwargs.get("correction")) {
            Some(V::Int(n)) => *n as f64,
            Some(V::Float(c)) => *c,
            None => 0.0,
            Some(other) => return Err(format!("np.{name}: bad ddof {other:?}")),
        };
        return array(f(&a0()?, reduce_options(&args, &kwargs)?, correction));
    }
    if name == "argmax" || name == "argmin" {
        let f = if name == "argmax" { pt::argmax } else { pt::argmin };
        let axis = match kwargs.get("axis").or(args.get(1)) {
            None | Some(V::None) => None,
            Some(v) => Some(int(v)?),
        };
        let keepdims = matches!(kwargs.get("keepdims"), Some(V::Bool(true)));
        return array(f(&a0()?, axis, keepdims));
    }
    let kw_or = |k: &str, i: usize| kwargs.get(k).cloned().or_else(|| args.get(i).cloned());
    array(match name.as_str() {
        "where" => pt::where_(operand(arg(0)?)?, operand(arg(1)?)?, operand(arg(2)?)?),
        "named" => DictOfNamedArrays::new([("value", a0()?)]).and_then(|d| Array::new_named_array(&d, "value")),
        // count_named(mask, "n"): the mask tagged CountNamed("n") (numpy: the mask itself).
        "count_named" => {
            let V::Str(count) = arg(1)? else { return Err("count_named needs a name".into()) };
            a0()?.tagged(CountNamed(count))
        }
        "count_nonzero" => {
            let keepdims = matches!(kwargs.get("keepdims"), Some(V::Bool(true)));
            let axes = match kw_or("axis", 1) {
                None | Some(V::None) => pt::Axes::All,
                Some(v) => ints(&v)?.into(),
            };
            pt::count_nonzero(&a0()?, pt::ReduceOptions::axes(axes).keepdims(keepdims))
        }
        "diagonal" | "trace" => {
            let int_or = |k: &str, i: usize, default: i64| {
                kw_or(k, i).map(|v| int(&v)).transpose().map(|v| v.unwrap_or(default))
            };
            let (offset, axis1, axis2) = (int_or("offset", 1, 0)?, int_or("axis1", 2, 0)?, int_or("axis2", 3, 1)?);
            if name == "diagonal" {
                pt::diagonal(&a0()?, offset, axis1, axis2)
            } else {
                pt::trace(&a0()?, offset, axis1, axis2, opt_dtype(&kwargs)?)
            }
        }
        "extract" => pt::extract(&a0()?, &to_array(arg(1)?)?),
        "compress" => {
            let axis = match kw_or("axis", 2) {
                None | Some(V::None) => None,
                Some(v) => Some(int(&v)?),
            };
            pt::compress(&a0()?, &to_array(arg(1)?)?, axis)
        }
        "einsum" => {
            let V::Str(spec) = arg(0)? else { return Err("einsum needs a spec string".into()) };
            let ops = args[1..].iter().cloned().map(to_array).collect::<R<Vec<_>>>()?;
            pt::einsum(&spec, &ops.iter().collect::<Vec<_>>())
        }
        "matmul" => pt::matmul(&a0()?, &to_array(arg(1)?)?),
        "dot" => pt::dot(&a0()?, &to_array(arg(1)?)?),
        "vdot" => pt::vdot(&a0()?, &to_array(arg(1)?)?),
        "tensordot" => {
            let axes = match kw_or("axes", 2) {
                Some(V::Tuple(pair)) => TensordotAxes::Pairs(ints(&pair[0])?, ints(&pair[1])?),
                Some(V::Int(n)) => TensordotAxes::Count(n as usize),
                None => TensordotAxes::Count(2),
                Some(other) => return Err(format!("bad tensordot axes {other:?}")),
            };
            pt::tensordot(&a0()?, &to_array(arg(1)?)?, axes)
        }
        "reshape" => {
            let order = match kwargs.get("order") {
                Some(V::Str(o)) if o == "F" => Order::F,
                _ => Order::C,
            };
            pt::reshape(&a0()?, ints(&arg(1)?)?, order)
        }
        "transpose" => match args.get(1) {
            Some(axes) => pt::transpose(&a0()?, Some(&ints(axes)?)),
            None => pt::transpose(&a0()?, None),
        },
        "swapaxes" => pt::swapaxes(&a0()?, int(&arg(1)?)?, int(&arg(2)?)?),
        "moveaxis" => pt::moveaxis(&a0()?, &ints(&arg(1)?)?, &ints(&arg(2)?)?),
        "flip" => match kw_or("axis", 1) {
            None | Some(V::None) => pt::flip(&a0()?, None),
            Some(v) => pt::flip(&a0()?, Some(&ints(&v)?)),
        },
        "matrix_transpose" => pt::matrix_transpose(&a0()?),
        "vecdot" => {
            let axis = kw_or("axis", 2).map(|v| int(&v)).transpose()?.unwrap_or(-1);
            pt::vecdot(&a0()?, &to_array(arg(1)?)?, axis)
        }
        "diff" => {
            let n = kw_or("n", 1).map(|v| int(&v)).transpose()?.unwrap_or(1);
            let axis = kw_or("axis", 2).map(|v| int(&v)).transpose()?.unwrap_or(-1);
            let (prepend, append) = (
                kwargs.get("prepend").cloned().map(operand).transpose()?,
                kwargs.get("append").cloned().map(operand).transpose()?,
            );
            pt::diff_with(&a0()?, usize::try_from(n).map_err(|_| format!("diff: n = {n}"))?, axis, prepend, append)
        }
        "sort" | "argsort" => {
            let f = if name == "sort" { pt::sort } else { pt::argsort };
            let axis = match kw_or("axis", 1) {
                None => Some(-1),
                Some(V::None) => None,
                Some(v) => Some(int(&v)?),
            };
            // numpy's `stable=` and `kind=` change nothing: every sort here is stable.
            let descending = matches!(kwargs.get("descending"), Some(V::Bool(true)));
            f(&a0()?, pt::SortOptions { axis, descending })
        }
        "unique_values" => pt::unique_values(&a0()?),
        // numpy's `unique` merges NaNs unless told not to; the Array API's functions never do.
        "unique" if matches!(kwargs.get("equal_nan"), Some(V::Bool(false))) && kwargs.len() == 1 => {
            pt::unique_values(&a0()?)
        }
        "searchsorted" => {
            let side = match kw_or("side", 2) {
                Some(V::Str(s)) if s == "right" => pt::Side::Right,
                _ => pt::Side::Left,
            };
            let sorter = kwargs.get("sorter").cloned().map(to_array).transpose()?;
            pt::searchsorted(&a0()?, &to_array(arg(1)?)?, side, sorter.as_ref())
        }
        "repeat" => {
            let axis = match kw_or("axis", 2) {
                None | Some(V::None) => None,
                Some(v) => Some(int(&v)?),
            };
            pt::repeat(&a0()?, int(&arg(1)?)?, axis)
        }
        "clip" => {
            let bound = |name: &str, position: usize| -> R<Option<Operand>> {
                match kw_or(name, position) {
                    None | Some(V::None) => Ok(None),
                    Some(v) => Ok(Some(operand(v)?)),
                }
            };
            let (low, high) = (bound("min", 1)?, bound("max", 2)?);
            pt::clip(&a0()?, low, high)
        }
        "roll" => match (arg(1)?, kw_or("axis", 2)) {
            (shift @ V::Tuple(_), Some(axes)) | (shift, Some(axes @ V::Tuple(_))) => {
                pt::roll_axes(&a0()?, &ints(&shift)?, &ints(&axes)?)
            }
            (shift, None | Some(V::None)) => pt::roll(&a0()?, int(&shift)?, None),
            (shift, Some(axis)) => pt::roll(&a0()?, int(&shift)?, Some(int(&axis)?)),
        },
        "tile" => pt::tile(&a0()?, &ints(&arg(1)?)?),
        "take" => {
            let axis = match kw_or("axis", 2) {
                None | Some(V::None) => None,
                Some(v) => Some(int(&v)?),
            };
            pt::take(&a0()?, &to_array(arg(1)?)?, axis)
        }
        "take_along_axis" => {
            let axis = kw_or("axis", 2).map(|v| int(&v)).transpose()?.ok_or("take_along_axis needs an axis")?;
            pt::take_along_axis(&a0()?, &to_array(arg(1)?)?, axis)
        }
        "tril" | "triu" => {
            let k = kw_or("k", 1).map(|v| int(&v)).transpose()?.unwrap_or(0);
            if name == "tril" { pt::tril(&a0()?, k) } else { pt::triu(&a0()?, k) }
        }
        "asarray" => pt::asarray(&a0()?, opt_dtype(&kwargs)?),
        "empty_like" => pt::empty_like(&a0()?, opt_dtype(&kwargs)?),
        "stack" => pt::stack(&arrays(arg(0)?)?, kw_or("axis", 1).map(|v| int(&v)).transpose()?.unwrap_or(0)),
        "concatenate" => match kw_or("axis", 1) {
            // numpy: the arrays flattened, then joined.
            Some(V::None) => {
                pt::concatenate(&arrays(arg(0)?)?.iter().map(pt::ravel).collect::<Result<Vec<_>, _>>().map_err(err)?, 0)
            }
            axis => pt::concatenate(&arrays(arg(0)?)?, axis.map(|v| int(&v)).transpose()?.unwrap_or(0)),
        },
        "broadcast_to" => pt::broadcast_to(&a0()?, ints(&arg(1)?)?),
        "squeeze" => match kw_or("axis", 1) {
            None | Some(V::None) => pt::squeeze(&a0()?, None),
            Some(v) => pt::squeeze(&a0()?, ints(&v)?),
        },
        "expand_dims" => pt::expand_dims(&a0()?, ints(&arg(1)?)?),
        "zeros" | "ones" | "empty" => {
            let d = opt_dtype(&kwargs)?.unwrap_or(DType::F64);
            let shape = shape(&arg(0)?)?;
            match name.as_str() {
                "zeros" => pt::zeros(shape, d),
                "ones" => pt::ones(shape, d),
                _ => pt::empty(shape, d),
            }
        }
        "full" => pt::full(shape(&arg(0)?)?, weak(arg(1)?)?, opt_dtype(&kwargs)?),
        "eye" => {
            let m = match kw_or("M", 1) {
                None | Some(V::None) => None,
                Some(v) => Some(int(&v)?.into()),
            };
            let k = kw_or("k", 2).map(|v| int(&v)).transpose()?.unwrap_or(0);
            pt::eye(int(&arg(0)?)?, m, k, opt_dtype(&kwargs)?.unwrap_or(DType::F64))
        }
        "arange" => pt::arange(weak(arg(0)?)?, weak(arg(1)?)?, weak(arg(2)?)?, opt_dtype(&kwargs)?),
        "linspace" => {
            let num = int(&arg(2)?)? as usize;
            let endpoint = !matches!(kwargs.get("endpoint"), Some(V::Bool(false)));
            pt::linspace(weak(arg(0)?)?, weak(arg(1)?)?, num, endpoint, opt_dtype(&kwargs)?)
        }
        "zeros_like" => pt::zeros_like(&a0()?, opt_dtype(&kwargs)?),
        "ones_like" => pt::ones_like(&a0()?, opt_dtype(&kwargs)?),
        "full_like" => pt::full_like(&a0()?, weak(arg(1)?)?, opt_dtype(&kwargs)?),
        "pad" => {
            let V::Tuple(pairs) = arg(1)? else { return Err("pad widths must be a tuple".into()) };
            let widths: Vec<(usize, usize)> = pairs
                .iter()
                .map(|p| match ints(p)?.as_slice() {
                    &[before, after] => Ok((before as usize, after as usize)),
                    _ => Err("pad widths must be (before, after) pairs".to_string()),
                })
                .collect::<R<_>>()?;
            let width = if widths.len() == 1 {
                PadWidth::BeforeAfter(widths[0].0, widths[0].1)
            } else {
                PadWidth::PerAxis(widths)
            };
            let mode = match kw_or("mode", 2) {
                None => pt::PadMode::Constant(weak(kwargs.get("constant_values").cloned().unwrap_or(V::Int(0)))?),
                Some(V::Str(m)) => match m.as_str() {
                    "constant" => {
                        pt::PadMode::Constant(weak(kwargs.get("constant_values").cloned().unwrap_or(V::Int(0)))?)
                    }
                    "edge" => pt::PadMode::Edge,
                    "reflect" => pt::PadMode::Reflect,
                    "symmetric" => pt::PadMode::Symmetric,
                    "wrap" => pt::PadMode::Wrap,
                    other => return Err(format!("pad mode {other:?}")),
                },
                Some(other) => return Err(format!("pad mode {other:?}")),
            };
            pt::pad_with(&a0()?, width, mode)
        }
        other => return Err(format!("np.{other} is not supported by the conformance evaluator")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_python_precedence() {
        let x = pt::placeholder("x", [3], DType::F64).unwrap();
        let names = BTreeMap::from([("x".to_string(), x.clone())]);
        // -x ** 2 is -(x ** 2); 2 * x + 1 groups the product.
        let got = evaluate("-x ** 2", &names).unwrap();
        assert_eq!(got, pt::negative(&pt::power(&x, 2).unwrap()).unwrap());
        let got = evaluate("2 * x + 1", &names).unwrap();
        assert_eq!(got, pt::add(pt::multiply(2, &x).unwrap(), 1).unwrap());
        let got = evaluate("x[::-1, None]", &names).unwrap();
        assert_eq!(got.shape().to_string(), "(3, 1)");
        assert!(evaluate("np.nosuch(x)", &names).is_err());
        assert!(evaluate("x +", &names).is_err());
    }
}
