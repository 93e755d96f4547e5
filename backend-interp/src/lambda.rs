//! Evaluating index lambdas: the scalar expression is first resolved once (variables to slots,
//! `zero(…)` to a constant), then evaluated at every output index.

use pytato_core::array::IndexLambdaTypes;
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, ReduceOp, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{ArrayData, DType, Error, Result, Scalar};
use pytato_runtime::binding::Bound;

use crate::nodes::Value;
use crate::scalar_ops::{self, Accumulator, TypeBug};

/// An expression with every name resolved.
enum Resolved {
    Const(Scalar),
    Iname(usize),
    /// Slot in the stack of reduction iname values.
    ReductionIname(usize),
    /// A 0-d binding.
    Scalar(usize),
    Subscript(usize, Vec<Resolved>),
    Unary(UnaryOp, Box<Resolved>),
    Binary(BinaryOp, Box<Resolved>, Box<Resolved>),
    Compare(CompareOp, Box<Resolved>, Box<Resolved>),
    If(Box<Resolved>, Box<Resolved>, Box<Resolved>),
    Cast(DType, Box<Resolved>),
    Call(Func, Vec<Resolved>),
    Reduce {
        op: ReduceOp,
        dtype: DType,
        start: Option<Scalar>,
        bounds: Vec<(i64, i64)>,
        first_slot: usize,
        body: Box<Resolved>,
    },
}

/// The arrays an index lambda reads, by binding name (in the lambda's binding order), with the
/// lambda's typing environment for `zero(…)`.
pub(crate) struct LambdaInputs<'a, 'v, 'i> {
    pub(crate) names: Vec<&'a str>,
    /// `None` for bindings read only inside `zero(…)`, which are never evaluated.
    pub(crate) values: Vec<Option<&'a Value<'v, 'i>>>,
    pub(crate) types: IndexLambdaTypes<'a>,
}

fn internal(message: impl Into<String>) -> Error {
    Error::Internal { backend: "interp".into(), message: message.into() }
}

impl From<TypeBug> for Error {
    fn from(b: TypeBug) -> Error {
        internal(b.0)
    }
}

struct Resolver<'a, 'b, 'v, 'i, 'c> {
    inputs: &'a LambdaInputs<'b, 'v, 'i>,
    bound: &'a Bound<'c>,
    /// Reduction inames in scope, innermost last.
    scope: Vec<String>,
}

impl Resolver<'_, '_, '_, '_, '_> {
    fn binding(&self, name: &str) -> Result<usize> {
        self.inputs.names.iter().position(|n| *n == name).ok_or_else(|| internal(format!("unknown binding {name}")))
    }

    fn resolve(&mut self, e: &Expr) -> Result<Resolved> {
        let boxed = |r: Result<Resolved>| r.map(Box::new);
        Ok(match e {
            Expr::Const(v) => Resolved::Const(*v),
            Expr::Var(name) => match classify(name) {
                Some(Reserved::Iname(i)) => Resolved::Iname(i),
                Some(Reserved::ReductionIname(_)) => Resolved::ReductionIname(
                    self.scope
                        .iter()
                        .rposition(|s| **s == **name)
                        .ok_or_else(|| internal(format!("unbound {name}")))?,
                ),
                _ => Resolved::Scalar(self.binding(name)?),
            },
            Expr::Subscript(name, idx) => {
                Resolved::Subscript(self.binding(name)?, idx.iter().map(|i| self.resolve(i)).collect::<Result<_>>()?)
            }
            Expr::Unary(op, a) => Resolved::Unary(*op, boxed(self.resolve(a))?),
            Expr::Binary(op, a, b) => Resolved::Binary(*op, boxed(self.resolve(a))?, boxed(self.resolve(b))?),
            Expr::Compare(op, a, b) => Resolved::Compare(*op, boxed(self.resolve(a))?, boxed(self.resolve(b))?),
            Expr::If(c, a, b) => {
                Resolved::If(boxed(self.resolve(c))?, boxed(self.resolve(a))?, boxed(self.resolve(b))?)
            }
            Expr::Cast(d, a) => Resolved::Cast(*d, boxed(self.resolve(a))?),
            // zero(x) never reads x: x may not even have been evaluated.
            Expr::Call(Func::Zero, args) => Resolved::Const(Scalar::zero(self.dtype_in_scope(&args[0])?)),
            Expr::Call(f, args) => Resolved::Call(*f, args.iter().map(|a| self.resolve(a)).collect::<Result<_>>()?),
            Expr::Reduce(r) => {
                let bounds = r
                    .inames
                    .iter()
                    .map(|b| Ok((self.bound.eval(&b.lower)?, self.bound.eval(&b.upper)?)))
                    .collect::<Result<Vec<_>>>()?;
                let first_slot = self.scope.len();
                self.scope.extend(r.inames.iter().map(|b| b.iname.to_string()));
                let dtype = self.dtype_in_scope(&r.body);
                let body = self.resolve(&r.body);
                self.scope.truncate(first_slot);
                Resolved::Reduce { op: r.op, dtype: dtype?, start: r.start, bounds, first_slot, body: Box::new(body?) }
            }
        })
    }

    /// The dtype of a sub-expression, with the reduction inames in scope bound.
    fn dtype_in_scope(&self, e: &Expr) -> Result<DType> {
        let scope: Vec<&str> = self.scope.iter().map(String::as_str).collect();
        e.dtype_with_reduction_inames(&self.inputs.types, &scope)
    }
}

/// Evaluates an index lambda over its whole output.
pub(crate) fn evaluate(
    expr: &Expr,
    dtype: DType,
    shape: &[usize],
    inputs: &LambdaInputs<'_, '_, '_>,
    bound: &Bound<'_>,
) -> Result<ArrayData> {
    let resolved = Resolver { inputs, bound, scope: Vec::new() }.resolve(expr)?;
    let mut reductions = Vec::new();
    crate::index::build(dtype, shape, |idx| eval(&resolved, idx, &mut reductions, inputs))
}

fn eval(e: &Resolved, idx: &[usize], red: &mut Vec<i64>, inputs: &LambdaInputs<'_, '_, '_>) -> Result<Scalar> {
    Ok(match e {
        Resolved::Const(v) => *v,
        Resolved::Iname(i) => Scalar::I64(idx[*i] as i64),
        Resolved::ReductionIname(slot) => Scalar::I64(red[*slot]),
        Resolved::Scalar(b) => read(inputs, *b, &[])?,
        Resolved::Subscript(b, indices) => {
            let mut at = Vec::with_capacity(indices.len());
            for i in indices {
                let v = eval(i, idx, red, inputs)?;
                at.push(v.to_i128().and_then(|v| i64::try_from(v).ok()).ok_or_else(|| internal("non-integer index"))?);
            }
            read(inputs, *b, &at)?
        }
        Resolved::Unary(op, a) => scalar_ops::unary(*op, eval(a, idx, red, inputs)?)?,
        Resolved::Binary(op, a, b) => {
            let x = eval(a, idx, red, inputs)?;
            // Logical and/or short-circuit, like the `If` they often guard.
            match (op, x) {
                (BinaryOp::LogicalAnd, Scalar::Bool(false)) => Scalar::Bool(false),
                (BinaryOp::LogicalOr, Scalar::Bool(true)) => Scalar::Bool(true),
                _ => scalar_ops::binary(*op, x, eval(b, idx, red, inputs)?)?,
            }
        }
        Resolved::Compare(op, a, b) => {
            Scalar::Bool(scalar_ops::compare(*op, eval(a, idx, red, inputs)?, eval(b, idx, red, inputs)?)?)
        }
        Resolved::If(c, a, b) => match eval(c, idx, red, inputs)? {
            Scalar::Bool(true) => eval(a, idx, red, inputs)?,
            Scalar::Bool(false) => eval(b, idx, red, inputs)?,
            other => return Err(internal(format!("if on {}", other.dtype()))),
        },
        Resolved::Cast(d, a) => eval(a, idx, red, inputs)?.cast(*d),
        Resolved::Call(Func::NormalizeIndex, args) => {
            let value = |k: usize, red: &mut Vec<i64>| -> Result<i64> {
                match eval(&args[k], idx, red, inputs)? {
                    Scalar::I64(v) => Ok(v),
                    other => Err(internal(format!("normalize_index of {}", other.dtype()))),
                }
            };
            let (i, n, axis) = (value(0, red)?, value(1, red)?, value(2, red)?);
            if (0..n).contains(&i) {
                Scalar::I64(i)
            } else if (-n..0).contains(&i) {
                Scalar::I64(i + n)
            } else {
                return Err(Error::IndexOutOfBounds {
                    op: "an index array".into(),
                    index: i,
                    axis: axis.max(0) as usize,
                    length: n.max(0) as usize,
                });
            }
        }
        Resolved::Call(Func::RequireNonNegative, args) => {
            let v = eval(&args[0], idx, red, inputs)?;
            let check = match eval(&args[1], idx, red, inputs)? {
                Scalar::I64(code) => pytato_core::ValueCheck::from_code(code),
                _ => None,
            };
            let check =
                check.ok_or_else(|| internal("require_non_negative with a check of no known code".to_string()))?;
            match v.to_i128() {
                Some(k) if k < 0 => return Err(check.error()),
                Some(_) => v,
                None => return Err(internal(format!("require_non_negative of {}", v.dtype()))),
            }
        }
        Resolved::Call(Func::IntegerExponent, args) => {
            let y = eval(&args[0], idx, red, inputs)?;
            match y.to_i128() {
                Some(v) if v < 0 => return Err(Error::negative_exponent(v as i64)),
                Some(_) => y,
                None => return Err(internal(format!("integer_exponent of {}", y.dtype()))),
            }
        }
        Resolved::Call(f, args) => {
            let values = args.iter().map(|a| eval(a, idx, red, inputs)).collect::<Result<Vec<_>>>()?;
            scalar_ops::call(*f, &values)?
        }
        Resolved::Reduce { op, dtype, start, bounds, first_slot, body } => {
            let mut acc = Accumulator::starting_at(*op, *dtype, *start);
            red.truncate(*first_slot);
            red.extend(bounds.iter().map(|(lo, _)| *lo));
            if bounds.iter().all(|(lo, hi)| lo < hi) {
                let mut until_check = crate::index::INDICES_PER_CHECK;
                'outer: loop {
                    until_check -= 1;
                    if until_check == 0 {
                        pytato_runtime::interrupt::check("interp run")?;
                        until_check = crate::index::INDICES_PER_CHECK;
                    }
                    let x = eval(body, idx, red, inputs)?;
                    acc.add(x)?;
                    // Advance the innermost iname; carry outward.
                    for k in (0..bounds.len()).rev() {
                        let slot = first_slot + k;
                        red[slot] += 1;
                        if red[slot] < bounds[k].1 {
                            continue 'outer;
                        }
                        red[slot] = bounds[k].0;
                    }
                    break;
                }
            }
            red.truncate(*first_slot);
            acc.finish()?
        }
    })
}

fn read(inputs: &LambdaInputs<'_, '_, '_>, binding: usize, at: &[i64]) -> Result<Scalar> {
    let data =
        inputs.values[binding].ok_or_else(|| internal(format!("binding {} not evaluated", inputs.names[binding])))?;
    let shape = data.shape();
    let mut index = Vec::with_capacity(at.len());
    for (axis, (&i, &len)) in at.iter().zip(shape).enumerate() {
        if i < 0 || i as u64 >= len as u64 {
            return Err(Error::IndexOutOfBounds { op: "subscript".into(), index: i, axis, length: len });
        }
        index.push(i as usize);
    }
    data.get(&index).ok_or_else(|| internal("subscript arity"))
}
