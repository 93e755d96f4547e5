//! Operands (arrays or Python-style scalars), dtype promotion, and the builder of elementwise
//! index lambdas that every elementwise frontend function shares.

use std::collections::BTreeMap;
use std::sync::Arc;

use num_complex::{Complex32, Complex64};

use crate::array::{Array, IdMap, NodeKind, ReductionDescriptor};
use crate::dtype::{DType, WeakScalar, result_type_many, result_type_weak};
use crate::error::{Error, Result};
use crate::expr::{BinaryOp, Expr};
use crate::names;
use crate::scalar::Scalar;
use crate::shape::{Dim, Shape, broadcast_shapes};

/// An argument of an elementwise function: an array, or a scalar that is *weak* in numpy 2's sense
/// (it takes the array's dtype where its kind allows, see [`result_type_weak`]).
///
/// Every Rust number converts: `add(&a, 2)`, `multiply(0.5, &a)`, `add(&a, Complex64::new(0.0, 1.0))`.
#[derive(Clone, Debug)]
pub enum Operand {
    /// An array expression.
    Array(Array),
    /// A scalar literal.
    Scalar(WeakScalar),
}

impl From<&Array> for Operand {
    fn from(a: &Array) -> Operand {
        Operand::Array(a.clone())
    }
}
impl From<Array> for Operand {
    fn from(a: Array) -> Operand {
        Operand::Array(a)
    }
}
impl From<WeakScalar> for Operand {
    fn from(s: WeakScalar) -> Operand {
        Operand::Scalar(s)
    }
}
macro_rules! operand_from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(v: $t) -> Operand {
                Operand::Scalar(WeakScalar::from(v))
            }
        }
    )*};
}
operand_from_scalar!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, Complex32, Complex64);

impl Operand {
    /// The dtype the operand has on its own (a scalar's default dtype).
    #[track_caller]
    pub fn dtype(&self) -> DType {
        let _site = crate::created_at::enter();
        match self {
            Operand::Array(a) => a.dtype(),
            Operand::Scalar(s) => s.default_dtype(),
        }
    }

    /// The shape (`()` for a scalar).
    #[track_caller]
    pub fn shape(&self) -> Shape {
        let _site = crate::created_at::enter();
        match self {
            Operand::Array(a) => a.shape().clone(),
            Operand::Scalar(_) => Shape::scalar(),
        }
    }

    /// A short description for error messages: the array summary, or the scalar.
    pub fn describe(&self) -> String {
        match self {
            Operand::Array(a) => format!("array of shape {} and dtype {}", a.shape(), a.dtype()),
            Operand::Scalar(s) => format!("scalar {s}"),
        }
    }
}

/// numpy 2's result dtype of several operands: the arrays' result type, then each weak scalar in
/// turn. With no array at all the scalars' default dtypes are promoted (like numpy's for Python
/// scalars alone).
#[track_caller]
pub fn promote(operands: &[&Operand]) -> Result<DType> {
    let _site = crate::created_at::enter();
    let arrays = result_type_many(operands.iter().filter_map(|o| match o {
        Operand::Array(a) => Some(a.dtype()),
        Operand::Scalar(_) => None,
    }));
    let scalars = operands.iter().filter_map(|o| match o {
        Operand::Scalar(s) => Some(s),
        Operand::Array(_) => None,
    });
    match arrays {
        Some(mut dtype) => {
            for s in scalars {
                dtype = result_type_weak(dtype, s)?;
            }
            Ok(dtype)
        }
        None => Ok(result_type_many(scalars.map(WeakScalar::default_dtype)).unwrap_or(DType::F64)),
    }
}

/// `expr` (of dtype `from`) as dtype `to`, without a cast when they agree; a constant is
/// converted now (numpy's `astype` for one value, as every backend casts), so a numpy scalar
/// operand reads as a constant of the operation's dtype, as in pytato.
pub fn cast_expr(expr: Expr, from: DType, to: DType) -> Expr {
    match expr {
        _ if from == to => expr,
        Expr::Const(value) => Expr::Const(value.cast(to)),
        _ => expr.cast(to),
    }
}

/// Builds one index lambda: binds arrays under generated names (`_in0`, `_in1`, ...; an
/// elementwise operation's operand `k` as `_in<k>`, as pytato names them), reads them
/// broadcast to the output shape or at explicit indices, turns lengths into expressions over size
/// parameters, and hands out reduction inames. The frontend and the lowering passes share it.
///
/// ```
/// use pytato_frontend::{self as pt, LambdaBuilder};
/// use pytato_core::{DType, Shape, expr::{Expr, BinaryOp}};
/// let x = pt::placeholder("x", [3], DType::F64).unwrap();
/// let mut b = LambdaBuilder::new(Shape::from([2, 3]));
/// let read = b.read_broadcast(&x);                  // x[_1]
/// let y = b.finish(read.binary(BinaryOp::Mul, Expr::f64(2.0))).unwrap();
/// assert_eq!(y.shape().to_string(), "(2, 3)");
/// ```
pub struct LambdaBuilder {
    shape: Shape,
    bindings: BTreeMap<Arc<str>, Array>,
    /// Binding name of each bound node, by id: one binding per node.
    bound: IdMap<Arc<str>>,
    size_params: BTreeMap<String, Arc<str>>,
    param_nodes: BTreeMap<String, Array>,
    reductions: BTreeMap<Arc<str>, ReductionDescriptor>,
}

impl LambdaBuilder {
    /// A builder for a result of `shape`.
    #[track_caller]
    pub fn new(shape: Shape) -> LambdaBuilder {
        let _site = crate::created_at::enter();
        LambdaBuilder {
            shape,
            bindings: BTreeMap::new(),
            bound: IdMap::default(),
            size_params: BTreeMap::new(),
            param_nodes: BTreeMap::new(),
            reductions: BTreeMap::new(),
        }
    }

    /// The binding name of `array`, binding it if it is new (one binding per node).
    #[track_caller]
    pub fn bind(&mut self, array: &Array) -> Arc<str> {
        let _site = crate::created_at::enter();
        if let Some(name) = self.bound.get(&array.id()) {
            return name.clone();
        }
        // The first free name from the count up (positional names may have taken some).
        let name = (self.bindings.len()..)
            .map(names::binding_name)
            .find(|n| !self.bindings.contains_key(n.as_str()))
            .expect("a free binding name");
        self.insert_binding(&name, array)
    }

    /// Binds `array` as `name` unless it is bound already (its existing name) or `name` is taken
    /// (the next free name, as [`LambdaBuilder::bind`]).
    fn bind_as(&mut self, array: &Array, name: &str) -> Arc<str> {
        if self.bound.contains_key(&array.id()) || self.bindings.contains_key(name) {
            return self.bind(array);
        }
        self.insert_binding(name, array)
    }

    /// Binds `array`, not bound yet, as the free `name`.
    fn insert_binding(&mut self, name: &str, array: &Array) -> Arc<str> {
        let name: Arc<str> = name.into();
        self.bindings.insert(name.clone(), array.clone());
        self.bound.insert(array.id(), name.clone());
        name
    }

    /// `array` read at the output index, broadcasting (numpy rules, right-aligned): axes of length 1
    /// that the output stretches are read at 0.
    #[track_caller]
    pub fn read_broadcast(&mut self, array: &Array) -> Expr {
        let _site = crate::created_at::enter();
        let shape = self.shape.clone();
        let inames: Vec<Expr> = (0..shape.ndim()).map(Expr::iname).collect();
        self.read_broadcast_at(array, &shape, &inames)
    }

    /// `array` broadcast to `target` (numpy rules, right-aligned) and read at `positions`, one per
    /// axis of `target`: axes of length 1 that `target` stretches are read at 0.
    #[track_caller]
    pub fn read_broadcast_at(&mut self, array: &Array, target: &Shape, positions: &[Expr]) -> Expr {
        let _site = crate::created_at::enter();
        let name = self.bind(array);
        let offset = target.ndim() - array.ndim();
        let one = Dim::new(1);
        let indices = array
            .shape()
            .dims()
            .iter()
            .enumerate()
            .map(
                |(k, d)| {
                    if *d == one && target[k + offset] != one { Expr::i64(0) } else { positions[k + offset].clone() }
                },
            )
            .collect();
        subscript(&name, indices)
    }

    /// `array` read at explicit indices (one per axis).
    #[track_caller]
    pub fn read_at(&mut self, array: &Array, indices: Vec<Expr>) -> Expr {
        let _site = crate::created_at::enter();
        let name = self.bind(array);
        subscript(&name, indices)
    }

    /// An operand read at the output index as dtype `dtype`. A 0-d index lambda that reads
    /// nothing and carries no tags (a numpy scalar, `full((), v)`) is read in place, not bound,
    /// as pytato folds numpy scalars into the operations that use them.
    #[track_caller]
    pub fn operand(&mut self, operand: &Operand, dtype: DType) -> Result<Expr> {
        let _site = crate::created_at::enter();
        Ok(match operand {
            Operand::Array(a) => {
                let e = inline_constant(a).unwrap_or_else(|| self.read_broadcast(a));
                cast_expr(e, a.dtype(), dtype)
            }
            Operand::Scalar(s) => Expr::Const(Scalar::from_weak(s, dtype)?),
        })
    }

    /// [`LambdaBuilder::operand`] for the operand at `position` of an operation: an array operand
    /// is bound as `_in<position>` (pytato's names: in `3 * x`, `x` is `_in1`), unless it is bound
    /// already or read in place.
    #[track_caller]
    pub fn operand_at(&mut self, position: usize, operand: &Operand, dtype: DType) -> Result<Expr> {
        if let Operand::Array(a) = operand
            && inline_constant(a).is_none()
        {
            self.bind_as(a, &names::binding_name(position));
        }
        self.operand(operand, dtype)
    }

    /// An axis length as an `int64` expression; size parameters become 0-d bindings.
    #[track_caller]
    pub fn dim(&mut self, dim: &Dim) -> Result<Expr> {
        let _site = crate::created_at::enter();
        let mut expr = Expr::i64(dim.constant());
        for (param, coeff) in dim.terms() {
            let name = match self.size_params.get(param) {
                Some(n) => n.clone(),
                None => {
                    let node = match self.param_nodes.get(param) {
                        Some(node) => node.clone(),
                        None => Array::new_size_param(param)?,
                    };
                    let n = self.bind(&node);
                    self.size_params.insert(param.to_string(), n.clone());
                    n
                }
            };
            let term =
                if coeff == 1 { Expr::Var(name) } else { Expr::i64(coeff).binary(BinaryOp::Mul, Expr::Var(name)) };
            expr = if dim.constant() == 0 && matches!(expr, Expr::Const(Scalar::I64(0))) {
                term
            } else {
                expr.binary(BinaryOp::Add, term)
            };
        }
        Ok(expr)
    }

    /// Registers a fresh reduction iname with an empty descriptor and returns it.
    #[track_caller]
    pub fn reduction_iname(&mut self) -> Arc<str> {
        let _site = crate::created_at::enter();
        let name: Arc<str> = names::reduction_iname(self.reductions.len()).into();
        self.reductions.insert(name.clone(), ReductionDescriptor::default());
        name
    }

    /// Reads size parameters through these nodes instead of making new ones, so that passes that
    /// build many lambdas share one node per parameter.
    #[track_caller]
    pub fn with_size_params<'a>(mut self, nodes: impl IntoIterator<Item = &'a Array>) -> LambdaBuilder {
        let _site = crate::created_at::enter();
        self.param_nodes.extend(nodes.into_iter().filter_map(|n| n.name().map(|name| (name.to_string(), n.clone()))));
        self
    }

    /// The index lambda computing `expr`.
    #[track_caller]
    pub fn finish(self, expr: Expr) -> Result<Array> {
        let _site = crate::created_at::enter();
        Array::new_index_lambda(expr, self.shape, self.bindings, self.reductions)
    }
}

/// The expression of `a` where it is a 0-d index lambda that reads nothing and carries no tags
/// (a numpy scalar operand, `full((), v)`): an operation takes it into its own expression, as
/// pytato folds numpy scalars, instead of binding a node of its own.
fn inline_constant(a: &Array) -> Option<Expr> {
    let NodeKind::IndexLambda(lambda) = a.kind() else { return None };
    let plain = a.ndim() == 0
        && lambda.bindings.is_empty()
        && lambda.reduction_descriptors.is_empty()
        && lambda.checks.is_empty()
        && a.tags().iter().all(|t| t.get().ignored_for_equality());
    plain.then(|| lambda.expr.clone())
}

/// The value of `a` where it is a constant an operation reads in place (see [`inline_constant`]).
pub(crate) fn constant_value(a: &Array) -> Option<Scalar> {
    match inline_constant(a)? {
        Expr::Const(value) => Some(value),
        _ => None,
    }
}

fn subscript(name: &Arc<str>, indices: Vec<Expr>) -> Expr {
    if indices.is_empty() { Expr::Var(name.clone()) } else { Expr::Subscript(name.clone(), indices.into()) }
}

/// The broadcast shape of the operands, with `op` and the operands' shapes in the error.
pub fn broadcast_operands(op: &str, operands: &[&Operand]) -> Result<Shape> {
    let shapes: Vec<Shape> = operands.iter().map(|o| o.shape()).collect();
    broadcast_shapes(op, &shapes.iter().collect::<Vec<_>>())
}

/// Elementwise combination of `operands`, computed in `dtype`: `build` gets each operand read at
/// the output index and cast to `dtype`.
pub fn elementwise(
    op: &str,
    operands: &[&Operand],
    dtype: DType,
    build: impl FnOnce(Vec<Expr>) -> Result<Expr>,
) -> Result<Array> {
    let shape = broadcast_operands(op, operands)?;
    let mut builder = LambdaBuilder::new(shape);
    let exprs =
        operands.iter().enumerate().map(|(k, o)| builder.operand_at(k, o, dtype)).collect::<Result<Vec<_>>>()?;
    let expr = build(exprs)?;
    builder.finish(expr)
}

/// An error for a dtype an operation does not take, naming the operands.
pub fn dtype_error(op: &str, dtype: DType, operands: &[&Operand], why: &str) -> Error {
    let described: Vec<String> = operands.iter().map(|o| o.describe()).collect();
    Error::unsupported_dtype(op, dtype, format!("{why}; operands: {}", described.join(", ")))
}
