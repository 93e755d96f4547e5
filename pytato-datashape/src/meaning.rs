//! What a datashape means: definitions in scope, expansion, equations, and the arrays a
//! datashape describes.
//!
//! - **Expansion** ([`Scope::expand`]) replaces aliases and constructors by their bodies. The
//!   free type variables of a body are fresh at each use (seed 003: `Dim2 = N, M` twice is four
//!   lengths, not two), renamed `N_1`, `M_1`, ...; a parametric constructor's parameters take the
//!   arguments (`Point int32`). Nested sequences are flattened (`Dim2, int32` is `N_1, M_1, int32`).
//!   `rank x`, `outerdim x` and `innerdim x` are computed.
//! - **Equations** (`Dim2, Dim2, int32 = a, b, c, d, int32`) hold when both sides expand to the
//!   same type up to a one-to-one renaming of type variables ([`Scope::equivalent`]).
//! - **Arrays** ([`array_type`]): dimensions then a machine type are one array (fixed lengths, and
//!   type variables as size parameters); a record is a dictionary of arrays, dimensions in front of
//!   a record apply to every field. A ranged length `Var(lo, hi)` is a size variable of its own
//!   (`Var_1`, ...) whose value must lie in `lo..=hi` when inputs are bound (a
//!   [`LengthBounds`](pytato_core::tags::LengthBounds) tag on the placeholder); ragged rows are not
//!   arrays, so `Var(0, 5), Var(0, 5), int32` is a rectangle of lengths in range. Constructs without
//!   an array meaning in this library (enumerated lengths, streams, unions, nullable types, function
//!   types other than computed lengths, pointers, `char`, `string`) are
//!   [`Error::DatashapeUnsupported`], naming the construct and where it is.
//!
//! ```
//! use pytato_datashape::{parse_module, Scope};
//! let module = parse_module("Dim2 = N, M\nDim2, Dim2, int32 = a, b, c, d, int32").unwrap();
//! let scope = Scope::check(&module).unwrap(); // the equation holds
//! // Each use of `Dim2` has lengths of its own, numbered by use (the check used 1 and 2).
//! let t = scope.expand_text("Dim2, Dim2, float64").unwrap();
//! assert_eq!(t.to_string(), "N_3, M_3, N_4, M_4, float64");
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{Bound, MachineType, Module, Statement, Type};
use crate::parse::parse_type;
use pytato_core::dtype::DType;
use pytato_core::error::{Error, Result};
use pytato_core::shape::{Dim, Shape};

/// How deeply definitions may refer to definitions (a recursive alias stops here).
const MAX_EXPANSION_DEPTH: usize = 64;

/// Definitions in scope, and the counter that makes type variables fresh.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    definitions: BTreeMap<String, (Vec<String>, Type)>,
    fresh: std::cell::Cell<usize>,
}

impl Scope {
    /// An empty scope.
    pub fn new() -> Scope {
        Scope::default()
    }

    /// The definitions of `module`, after checking that every equation in it holds and every
    /// type in it expands. The error names the first statement that does not.
    pub fn check(module: &Module) -> Result<Scope> {
        let mut scope = Scope::new();
        for statement in &module.statements {
            match statement {
                Statement::Definition { name, params, body } => scope.define(name, params, body)?,
                Statement::Equation(lhs, rhs) => {
                    if !scope.equivalent(lhs, rhs)? {
                        return Err(Error::invalid(
                            "datashape",
                            format!(
                                "`{statement}` does not hold: the sides expand to `{}` and `{}`",
                                scope.expand(lhs)?,
                                scope.expand(rhs)?
                            ),
                        ));
                    }
                }
                Statement::Type(t) => {
                    scope.expand(t)?;
                }
            }
        }
        Ok(scope)
    }

    /// Defines `name` (with `params`) as `body`. Redefining a name is an error.
    pub fn define(&mut self, name: &str, params: &[String], body: &Type) -> Result<()> {
        if self.definitions.contains_key(name) {
            return Err(Error::invalid("datashape", format!("`{name}` is defined twice")));
        }
        self.definitions.insert(name.to_string(), (params.to_vec(), body.clone()));
        Ok(())
    }

    /// [`Scope::expand`] of a type given as text.
    pub fn expand_text(&self, text: &str) -> Result<Type> {
        self.expand(&parse_type(text).map_err(Error::DatashapeSyntax)?)
    }

    /// `t` with every alias and constructor replaced by its body (see the [module docs](self)).
    pub fn expand(&self, t: &Type) -> Result<Type> {
        self.expand_at(t, 0)
    }

    fn expand_at(&self, t: &Type, depth: usize) -> Result<Type> {
        if depth > MAX_EXPANSION_DEPTH {
            return Err(Error::invalid(
                "datashape",
                format!("expanding `{t}` goes {MAX_EXPANSION_DEPTH} definitions deep: is a definition recursive?"),
            ));
        }
        let expand = |t: &Type| self.expand_at(t, depth);
        let expand_all = |ts: &[Type]| ts.iter().map(expand).collect::<Result<Vec<_>>>();
        Ok(match t {
            Type::Machine(_) | Type::Fixed(_) | Type::Enum(_) | Type::Var(..) | Type::Length(_) => t.clone(),
            Type::Name(name) => match self.definitions.get(name) {
                None => t.clone(),
                Some((params, _)) if !params.is_empty() => {
                    return Err(Error::invalid(
                        "datashape",
                        format!("`{name}` takes {} argument(s) ({}), given none", params.len(), params.join(" ")),
                    ));
                }
                Some((_, body)) => self.expand_at(&self.instantiate(body, &[], &[]), depth + 1)?,
            },
            Type::Apply(head, args) => {
                let args = expand_all(args)?;
                match head.as_str() {
                    "rank" | "outerdim" | "innerdim" => builtin(head, &args)?,
                    "Either" => Type::Apply(head.clone(), args),
                    _ => {
                        let Some((params, body)) = self.definitions.get(head) else {
                            return Err(Error::invalid(
                                "datashape",
                                format!("`{t}`: no constructor `{head}` is defined"),
                            ));
                        };
                        if params.len() != args.len() {
                            return Err(Error::invalid(
                                "datashape",
                                format!("`{t}`: `{head}` takes {} argument(s), given {}", params.len(), args.len()),
                            ));
                        }
                        self.expand_at(&self.instantiate(body, params, &args), depth + 1)?
                    }
                }
            }
            Type::Seq(items) => {
                let mut flat = Vec::with_capacity(items.len());
                for item in expand_all(items)? {
                    match item {
                        Type::Seq(inner) => flat.extend(inner),
                        other => flat.push(other),
                    }
                }
                Type::Seq(flat)
            }
            Type::Record(fields) => {
                Type::Record(fields.iter().map(|(l, t)| Ok((l.clone(), expand(t)?))).collect::<Result<_>>()?)
            }
            Type::Stream(t) => Type::Stream(Box::new(expand(t)?)),
            Type::Union(ts) => Type::Union(expand_all(ts)?),
            Type::Function(params, result) => Type::Function(expand_all(params)?, Box::new(expand(result)?)),
            Type::Pointer(target, space) => Type::Pointer(Box::new(expand(target)?), space.clone()),
        })
    }

    /// `body` with `params` replaced by `args` and its other free variables renamed fresh.
    fn instantiate(&self, body: &Type, params: &[String], args: &[Type]) -> Type {
        let mut free = BTreeSet::new();
        names(body, &mut free);
        let k = self.fresh.get() + 1;
        self.fresh.set(k);
        let mut substitution: BTreeMap<String, Type> = free
            .into_iter()
            .filter(|n| !self.definitions.contains_key(n) && !params.contains(n))
            .map(|n| {
                let fresh = format!("{n}_{k}");
                (n, Type::Name(fresh))
            })
            .collect();
        substitution.extend(params.iter().cloned().zip(args.iter().cloned()));
        substitute(body, &substitution)
    }

    /// Whether `a` and `b` expand to the same type up to a one-to-one renaming of type variables.
    pub fn equivalent(&self, a: &Type, b: &Type) -> Result<bool> {
        let (a, b) = (self.expand(a)?, self.expand(b)?);
        let mut renaming = Renaming::default();
        Ok(renaming.same(&a, &b))
    }
}

/// `rank`, `outerdim`, `innerdim` of an expanded type.
fn builtin(function: &str, args: &[Type]) -> Result<Type> {
    let [t] = args else {
        return Err(Error::invalid("datashape", format!("`{function}` takes one type, given {}", args.len())));
    };
    let dims = dimensions(t);
    Ok(match function {
        "rank" => Type::Fixed(dims.len() as u64),
        _ => {
            let dim = if function == "outerdim" { dims.first() } else { dims.last() };
            dim.cloned().cloned().ok_or_else(|| Error::invalid("datashape", format!("`{t}` has no dimensions")))?
        }
    })
}

/// The dimensions of an expanded type: the items of a sequence before its element type.
fn dimensions(t: &Type) -> Vec<&Type> {
    match t {
        Type::Seq(items) => match items.last() {
            Some(Type::Machine(_) | Type::Record(_)) => items[..items.len() - 1].iter().collect(),
            _ => items.iter().collect(),
        },
        Type::Machine(_) | Type::Record(_) => Vec::new(),
        other => vec![other],
    }
}

/// Every name `t` mentions (type variables and defined names alike).
fn names(t: &Type, out: &mut BTreeSet<String>) {
    match t {
        Type::Name(n) => {
            out.insert(n.clone());
        }
        Type::Var(lo, hi) => {
            for b in [lo, hi] {
                if let Bound::Name(n) = b {
                    out.insert(n.clone());
                }
            }
        }
        Type::Apply(_, ts) | Type::Seq(ts) | Type::Union(ts) => ts.iter().for_each(|t| names(t, out)),
        Type::Record(fields) => fields.iter().for_each(|(_, t)| names(t, out)),
        Type::Stream(t) | Type::Pointer(t, _) => names(t, out),
        Type::Function(params, result) => {
            params.iter().for_each(|t| names(t, out));
            names(result, out);
        }
        Type::Length(dim) => out.extend(dim.params().map(str::to_string)),
        Type::Machine(_) | Type::Fixed(_) | Type::Enum(_) => {}
    }
}

/// `t` with names replaced as `substitution` says (a `Var` bound takes a name or a length).
fn substitute(t: &Type, substitution: &BTreeMap<String, Type>) -> Type {
    let sub = |t: &Type| substitute(t, substitution);
    let bound = |b: &Bound| match b {
        Bound::Name(n) => match substitution.get(n) {
            Some(Type::Name(m)) => Bound::Name(m.clone()),
            Some(Type::Fixed(k)) => Bound::Int(*k),
            _ => b.clone(),
        },
        Bound::Int(_) => b.clone(),
    };
    match t {
        Type::Name(n) => substitution.get(n).cloned().unwrap_or_else(|| t.clone()),
        Type::Var(lo, hi) => Type::Var(bound(lo), bound(hi)),
        Type::Apply(head, ts) => Type::Apply(head.clone(), ts.iter().map(sub).collect()),
        Type::Seq(ts) => Type::Seq(ts.iter().map(sub).collect()),
        Type::Union(ts) => Type::Union(ts.iter().map(sub).collect()),
        Type::Record(fields) => Type::Record(fields.iter().map(|(l, t)| (l.clone(), sub(t))).collect()),
        Type::Stream(t) => Type::Stream(Box::new(sub(t))),
        Type::Pointer(t, space) => Type::Pointer(Box::new(sub(t)), space.clone()),
        Type::Function(params, result) => Type::Function(params.iter().map(sub).collect(), Box::new(sub(result))),
        Type::Length(dim) => {
            let mut renamed = Some(Dim::new(dim.constant()));
            for (name, coefficient) in dim.terms() {
                let term = match substitution.get(name) {
                    Some(Type::Name(m)) => Dim::param(m.as_str()).mul_int(coefficient).ok(),
                    Some(Type::Fixed(k)) => {
                        i64::try_from(*k).ok().and_then(|k| k.checked_mul(coefficient)).map(Dim::new)
                    }
                    _ => Dim::param(name).mul_int(coefficient).ok(),
                };
                renamed = renamed.zip(term).and_then(|(total, term)| total.add(&term).ok());
            }
            // A length that no longer fits stays as written; binding reports it.
            match renamed {
                Some(d) if d.as_int().is_some() => Type::Fixed(u64::try_from(d.as_int().unwrap_or(0)).unwrap_or(0)),
                Some(d) => Type::Length(d),
                None => t.clone(),
            }
        }
        Type::Machine(_) | Type::Fixed(_) | Type::Enum(_) => t.clone(),
    }
}

/// A one-to-one correspondence of type variables, built while comparing two types.
#[derive(Default)]
struct Renaming {
    left: BTreeMap<String, String>,
    right: BTreeMap<String, String>,
}

impl Renaming {
    fn names(&mut self, a: &str, b: &str) -> bool {
        match (self.left.get(a), self.right.get(b)) {
            (None, None) => {
                self.left.insert(a.to_string(), b.to_string());
                self.right.insert(b.to_string(), a.to_string());
                true
            }
            (Some(x), Some(y)) => x == b && y == a,
            _ => false,
        }
    }

    fn bounds(&mut self, a: &Bound, b: &Bound) -> bool {
        match (a, b) {
            (Bound::Int(x), Bound::Int(y)) => x == y,
            (Bound::Name(x), Bound::Name(y)) => self.names(x, y),
            _ => false,
        }
    }

    fn all(&mut self, a: &[Type], b: &[Type]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.same(x, y))
    }

    fn same(&mut self, a: &Type, b: &Type) -> bool {
        match (a, b) {
            (Type::Name(x), Type::Name(y)) => self.names(x, y),
            (Type::Var(l1, h1), Type::Var(l2, h2)) => self.bounds(l1, l2) && self.bounds(h1, h2),
            (Type::Apply(h1, a1), Type::Apply(h2, a2)) => h1 == h2 && self.all(a1, a2),
            (Type::Seq(a1), Type::Seq(a2)) | (Type::Union(a1), Type::Union(a2)) => self.all(a1, a2),
            (Type::Record(f1), Type::Record(f2)) => {
                f1.len() == f2.len() && f1.iter().zip(f2).all(|((l1, t1), (l2, t2))| l1 == l2 && self.same(t1, t2))
            }
            (Type::Stream(t1), Type::Stream(t2)) => self.same(t1, t2),
            (Type::Pointer(t1, s1), Type::Pointer(t2, s2)) => s1 == s2 && self.same(t1, t2),
            (Type::Function(p1, r1), Type::Function(p2, r2)) => self.all(p1, p2) && self.same(r1, r2),
            (Type::Length(d1), Type::Length(d2)) => {
                d1.constant() == d2.constant()
                    && d1.terms().count() == d2.terms().count()
                    && d1.terms().zip(d2.terms()).all(|((n1, c1), (n2, c2))| c1 == c2 && self.names(n1, n2))
            }
            _ => a == b,
        }
    }
}

/// The arrays a datashape describes: one array, or a record of them.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayType {
    /// One array.
    Array {
        /// Its shape: fixed lengths, and type variables as size parameters.
        shape: Shape,
        /// Its dtype.
        dtype: DType,
        /// Ranged lengths, `Var(lo, hi)`: the axis (a size variable of its own) and its bounds.
        bounds: Vec<(usize, Dim, Dim)>,
    },
    /// Labelled arrays (a [`DictOfNamedArrays`](pytato_core::DictOfNamedArrays)).
    Record(Vec<(String, ArrayType)>),
}

/// The dtype of a machine type, where this library has it.
pub fn machine_dtype(m: MachineType) -> Option<DType> {
    use MachineType::*;
    Some(match m {
        Bool => DType::Bool,
        Int8 => DType::I8,
        Int16 => DType::I16,
        Int32 => DType::I32,
        Int64 => DType::I64,
        UInt8 => DType::U8,
        UInt16 => DType::U16,
        UInt32 => DType::U32,
        UInt64 => DType::U64,
        Float16 => DType::F16,
        Float32 => DType::F32,
        Float64 => DType::F64,
        Complex64 => DType::C64,
        Complex128 => DType::C128,
        Char | String => return None,
    })
}

/// What a construct is called in errors.
fn construct_name(t: &Type) -> &'static str {
    match t {
        Type::Var(..) => "a ranged length (Var) as an element",
        Type::Enum(_) => "an enumeration dimension",
        Type::Stream(_) => "a stream",
        Type::Union(_) => "a union",
        Type::Function(..) => "a function type",
        Type::Pointer(..) => "a pointer",
        Type::Apply(head, _) if head == "Either" => "a nullable type (Either)",
        Type::Apply(..) => "a constructor application",
        Type::Record(_) => "a record",
        Type::Seq(_) => "a sequence",
        Type::Machine(_) => "a machine type",
        Type::Fixed(_) => "a length",
        Type::Name(_) => "a type variable",
        Type::Length(_) => "a computed length",
    }
}

/// The arrays an expanded datashape describes (see the [module docs](self)); errors show `t`.
pub fn array_type(t: &Type) -> Result<ArrayType> {
    array_type_in(t, &[], t, "the whole type")
}

fn unsupported(construct: &Type, position: impl Into<String>, whole: &Type) -> Error {
    Error::DatashapeUnsupported {
        construct: format!("{} `{construct}`", construct_name(construct)),
        position: position.into(),
        datashape: whole.to_string(),
    }
}

/// Numbers the size variables of ranged lengths: each `Var(lo, hi)` is a length of its own.
static RANGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn array_type_in(t: &Type, outer: &[(Dim, Option<(Dim, Dim)>)], whole: &Type, position: &str) -> Result<ArrayType> {
    let (dims, element): (&[Type], &Type) = match t {
        Type::Seq(items) => (&items[..items.len() - 1], &items[items.len() - 1]),
        other => (&[], other),
    };
    let mut shape: Vec<(Dim, Option<(Dim, Dim)>)> = outer.to_vec();
    let bound = |b: &Bound| match b {
        Bound::Int(n) => Dim::new(i64::try_from(*n).unwrap_or(i64::MAX)),
        Bound::Name(n) => Dim::param(n.as_str()),
    };
    for (k, dim) in dims.iter().enumerate() {
        let at = || format!("dimension {} of {position}", outer.len() + k + 1);
        if let Type::Var(lo, hi) = dim {
            // A length of its own, checked against its bounds when inputs are bound.
            let k = RANGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            shape.push((Dim::param(format!("Var_{k}").as_str()), Some((bound(lo), bound(hi)))));
            continue;
        }
        shape.push((
            match dim {
                Type::Fixed(n) => Dim::new(i64::try_from(*n).map_err(|_| {
                    Error::invalid("datashape", format!("length {n} at {} of `{whole}` exceeds 2^63 - 1", at()))
                })?),
                Type::Name(n) if pytato_core::names::is_identifier(n) => Dim::param(n.as_str()),
                // `(n -> n - 2)`: a length computed from size variables.
                Type::Function(_, result) if matches!(**result, Type::Length(_) | Type::Name(_) | Type::Fixed(_)) => {
                    match &**result {
                        Type::Length(d) => d.clone(),
                        Type::Name(n) => Dim::param(n.as_str()),
                        Type::Fixed(n) => Dim::new(i64::try_from(*n).unwrap_or(i64::MAX)),
                        _ => unreachable!("matched above"),
                    }
                }
                other => return Err(unsupported(other, at(), whole)),
            },
            None,
        ));
    }
    match element {
        Type::Machine(m) => match machine_dtype(*m) {
            Some(dtype) => Ok(ArrayType::Array {
                bounds: shape
                    .iter()
                    .enumerate()
                    .filter_map(|(a, (_, b))| b.clone().map(|(lo, hi)| (a, lo, hi)))
                    .collect(),
                shape: Shape::from(shape.into_iter().map(|(d, _)| d).collect::<Vec<_>>()),
                dtype,
            }),
            None => Err(unsupported(element, format!("the element type of {position}"), whole)),
        },
        Type::Record(fields) => Ok(ArrayType::Record(
            fields
                .iter()
                .map(|(label, t)| Ok((label.clone(), array_type_in(t, &shape, whole, &format!("field `{label}`"))?)))
                .collect::<Result<_>>()?,
        )),
        Type::Name(n) => Err(Error::invalid(
            "datashape",
            format!(
                "`{whole}`: {position} ends in `{n}`, a length, where an element type (a machine type or a record) belongs"
            ),
        )),
        other => Err(unsupported(other, format!("the element type of {position}"), whole)),
    }
}

/// The machine type of a dtype.
pub fn dtype_machine(dtype: DType) -> MachineType {
    use MachineType::*;
    match dtype {
        DType::Bool => Bool,
        DType::I8 => Int8,
        DType::I16 => Int16,
        DType::I32 => Int32,
        DType::I64 => Int64,
        DType::U8 => UInt8,
        DType::U16 => UInt16,
        DType::U32 => UInt32,
        DType::U64 => UInt64,
        DType::F16 => Float16,
        DType::F32 => Float32,
        DType::F64 => Float64,
        DType::C64 => Complex64,
        DType::C128 => Complex128,
    }
}

/// A length as a dimension: a number, a type variable, or a length computed from type variables
/// (`n - 2` is `(n -> n - 2)`).
pub fn dim_type(dim: &Dim) -> Type {
    if let Some(n) = dim.as_int() {
        return Type::Fixed(u64::try_from(n).unwrap_or(0));
    }
    let mut terms = dim.terms();
    if let (Some((name, 1)), None, 0) = (terms.next(), terms.next(), dim.constant()) {
        return Type::Name(name.to_string());
    }
    Type::Function(dim.params().map(|p| Type::Name(p.to_string())).collect(), Box::new(Type::Length(dim.clone())))
}

/// The datashape of an array of `shape` and `dtype`: `n, 3, float64`.
///
/// ```
/// use pytato_core::{DType, Dim, Shape};
/// use pytato_datashape as datashape;
/// let shape = Shape::from(vec![Dim::param("n"), Dim::param("n").sub(&Dim::new(2)).unwrap(), Dim::new(3)]);
/// let t = datashape::meaning::array_datashape(&shape, DType::F32);
/// assert_eq!(t.to_string(), "n, (n -> n - 2), 3, float32");
/// assert_eq!(datashape::parse_type(&t.to_string()).unwrap(), t);
/// ```
pub fn array_datashape(shape: &Shape, dtype: DType) -> Type {
    let element = Type::Machine(dtype_machine(dtype));
    if shape.ndim() == 0 {
        return element;
    }
    Type::Seq(shape.dims().iter().map(dim_type).chain([element]).collect())
}

/// The datashape of a placeholder: [`array_datashape`], with the ranged lengths its
/// [`LengthBounds`](pytato_core::tags::LengthBounds) tag states written `Var(lo, hi)` again.
pub fn input_datashape(placeholder: &pytato_core::Array) -> Type {
    let t = array_datashape(placeholder.shape(), placeholder.dtype());
    let Type::Seq(mut items) = t else { return t };
    let as_bound = |d: &Dim| match dim_type(d) {
        Type::Fixed(n) => Some(Bound::Int(n)),
        Type::Name(n) => Some(Bound::Name(n)),
        _ => None,
    };
    for pytato_core::tags::LengthBounds(bounds) in placeholder.tags_of_type::<pytato_core::tags::LengthBounds>() {
        for (axis, lo, hi) in bounds {
            if let (Some(lo), Some(hi), Some(item)) = (as_bound(lo), as_bound(hi), items.get_mut(*axis)) {
                *item = Type::Var(lo, hi);
            }
        }
    }
    Type::Seq(items)
}
