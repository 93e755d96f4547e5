//! 32-bit indices. The kernel IR computes inames, sizes and index arithmetic in int64; a GPU
//! computes 32-bit integers natively (64-bit multiplies are emulated on most), and some adapters
//! lack `SHADER_INT64` altogether. A kernel runs with 32-bit indices (a *narrow* shader: int64
//! values computed as `i32`) when
//!
//! - it binds no int64 or uint64 buffer and computes no uint64 value ([`narrowable`], when
//!   compiling), and every int64 value it computes is index arithmetic: constants, inames, size
//!   parameters, casts from integers of at most 32 bits, `normalize_index`, and `-`, `+`, `-`,
//!   `*`, `//`, `%`, `maximum`, `minimum`, `if` of those;
//! - for the sizes of a run ([`IndexBounds::fits`]), a bound on the magnitude of each of those values, each
//!   size, each buffer's element count and each reduction's term count is below 2^31, so that no
//!   32-bit operation overflows and the results are the int64 ones.
//!
//! Where the device has `SHADER_INT64`, a run picks the narrow shader where its sizes fit and the
//! wide one otherwise, which the first run that needs it compiles (`run::KernelChoices`); without
//! it, there is only the narrow one, and a run whose sizes do not fit is `Unsupported`.

use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, Expr, Func, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{DType, Dim, Result, Scalar};
use pytato_transform::kernel::{BufferId, Kernel, KernelProgram};

/// The largest magnitude a narrow shader computes.
const LIMIT: u128 = i32::MAX as u128;

/// A bound on a magnitude, as a formula of lengths known when a kernel runs; the operands are
/// earlier terms of the same [`IndexBounds`].
enum Term {
    Const(u128),
    /// The magnitude of a length (a size parameter, an axis length, a reduction bound).
    Length(Dim),
    Add(usize, usize),
    Mul(usize, usize),
    Max(usize, usize),
    Min(usize, usize),
    PlusOne(usize),
}

/// What a run of a narrowable kernel checks (see the module docs): the kernel's buffers, and
/// bounds on its index values, sizes and reduction term counts, worked out once when compiling.
pub(crate) struct IndexBounds {
    buffers: Vec<BufferId>,
    terms: Vec<Term>,
    /// The terms that must stay within 32 bits.
    checked: Vec<usize>,
}

impl IndexBounds {
    fn push(&mut self, term: Term) -> usize {
        self.terms.push(term);
        self.terms.len() - 1
    }

    /// Whether the sizes of a run (`eval` gives lengths, `shapes` every buffer's shape) keep every
    /// index value within 32 bits.
    pub(crate) fn fits(&self, eval: &dyn Fn(&Dim) -> Result<i64>, shapes: &[Vec<usize>]) -> Result<bool> {
        for b in &self.buffers {
            let elements = shapes[b.0].iter().try_fold(1u128, |n, &d| n.checked_mul(d as u128));
            if elements.is_none_or(|n| n > LIMIT) {
                return Ok(false);
            }
        }
        let mut values: Vec<u128> = Vec::with_capacity(self.terms.len());
        for term in &self.terms {
            let v = match *term {
                Term::Const(c) => c,
                Term::Length(ref d) => eval(d)?.unsigned_abs() as u128,
                Term::Add(a, b) => values[a].saturating_add(values[b]),
                Term::Mul(a, b) => values[a].saturating_mul(values[b]),
                Term::Max(a, b) => values[a].max(values[b]),
                Term::Min(a, b) => values[a].min(values[b]),
                Term::PlusOne(a) => values[a].saturating_add(1),
            };
            values.push(v);
        }
        Ok(self.checked.iter().all(|&t| values[t] <= LIMIT))
    }
}

/// The bounds a run of `kernel` with a narrow shader checks, or `None` where the kernel cannot
/// have one (see the module docs): it binds a 64-bit integer buffer or computes uint64 or an int64
/// value that is not index arithmetic. Float64 needs 64-bit integers for its opaque helpers, so
/// without `with_i64` a kernel with float64 values has no narrow shader either.
pub(crate) fn narrowable(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    with_i64: bool,
) -> Result<Option<IndexBounds>> {
    let wide = |d: DType| matches!(d, DType::I64 | DType::U64) || (!with_i64 && matches!(d, DType::F64 | DType::C128));
    let buffers = program.kernel_buffers(names, kernel)?;
    if buffers.iter().any(|b| wide(program.buffers[b.0].dtype)) {
        return Ok(None);
    }
    // A narrow shader writes lengths as 32-bit literals: one beyond them (`eye(2**32)`) has none.
    let literal_fits = |d: &Dim| {
        std::iter::once(d.constant()).chain(d.terms().map(|(_, c)| c)).all(|v| v.unsigned_abs() as u128 <= LIMIT)
    };
    let mut fits = buffers.iter().flat_map(|b| program.buffers[b.0].shape.dims()).all(literal_fits);
    kernel.expr.walk(&mut |e| {
        if let Expr::Reduce(r) = e {
            fits &= r.inames.iter().all(|b| literal_fits(&b.lower) && literal_fits(&b.upper));
        }
    });
    if !fits {
        return Ok(None);
    }
    let mut bounds = IndexBounds { buffers, terms: Vec::new(), checked: Vec::new() };
    // Parents before children.
    let mut nodes: Vec<&Expr> = Vec::new();
    let mut stack = vec![&kernel.expr];
    while let Some(e) = stack.pop() {
        nodes.push(e);
        stack.extend(e.children());
    }
    // Inames of reductions (a name used twice takes the larger bound) and term counts.
    let mut reduction_inames: HashMap<Arc<str>, usize> = HashMap::new();
    for e in &nodes {
        if let Expr::Reduce(r) = e {
            let mut count = bounds.push(Term::Const(1));
            for b in &r.inames {
                let (lo, hi) = (bounds.push(Term::Length(b.lower.clone())), bounds.push(Term::Length(b.upper.clone())));
                let widest = bounds.push(Term::Max(lo, hi));
                let m = match reduction_inames.get(&b.iname) {
                    Some(&earlier) => bounds.push(Term::Max(earlier, widest)),
                    None => widest,
                };
                reduction_inames.insert(b.iname.clone(), m);
                let extent = bounds.push(Term::Add(lo, hi));
                count = bounds.push(Term::Mul(count, extent));
            }
            bounds.checked.push(count);
        }
    }
    let mut sizes: HashMap<&str, usize> = HashMap::new();
    for p in &program.size_params {
        let t = bounds.push(Term::Length(Dim::param(p.as_str())));
        sizes.insert(p, t);
        bounds.checked.push(t);
    }
    let output = program.buffers[kernel.output.0].shape.dims();
    // Children before parents.
    let mut magnitude: HashMap<*const Expr, usize> = HashMap::new();
    for e in nodes.iter().rev() {
        let dtype = program.expr_dtype(names, e)?;
        if dtype == DType::U64 || (!with_i64 && matches!(dtype, DType::F64 | DType::C128)) {
            return Ok(None);
        }
        if dtype != DType::I64 {
            continue;
        }
        let of = |a: &Expr| magnitude.get(&(a as *const Expr)).copied();
        // Casts to int64 from integers that fit 32 bits: the source's largest magnitude.
        let cast_magnitude = |a: &Expr| match program.expr_dtype(names, a) {
            Ok(DType::Bool) => Some(1),
            Ok(DType::I8 | DType::U8) => Some(255),
            Ok(DType::I16 | DType::U16) => Some(65_535),
            Ok(DType::I32) => Some(1 << 31),
            _ => None,
        };
        let term = match e {
            Expr::Const(Scalar::I64(v)) if v.unsigned_abs() as u128 <= LIMIT => {
                Some(Term::Const(v.unsigned_abs() as u128))
            }
            Expr::Var(name) => match classify(name) {
                Some(Reserved::Iname(k)) => output.get(k).map(|d| Term::Length(d.clone())),
                Some(Reserved::ReductionIname(_)) => reduction_inames.get(name).map(|&t| Term::Max(t, t)),
                _ => sizes.get(&**name).map(|&t| Term::Max(t, t)),
            },
            Expr::Cast(_, a) => cast_magnitude(a).map(Term::Const),
            Expr::Unary(UnaryOp::Neg, a) => of(a).map(|x| Term::Max(x, x)),
            Expr::Binary(op, a, b) => match (op, of(a), of(b)) {
                (BinaryOp::Add | BinaryOp::Sub, Some(x), Some(y)) => Some(Term::Add(x, y)),
                (BinaryOp::Mul, Some(x), Some(y)) => Some(Term::Mul(x, y)),
                (BinaryOp::FloorDiv, Some(x), Some(_)) => Some(Term::PlusOne(x)),
                (BinaryOp::Rem, Some(x), Some(y)) => Some(Term::Min(x, y)),
                _ => None,
            },
            Expr::Call(Func::NormalizeIndex, args) => of(&args[0]).zip(of(&args[1])).map(|(i, n)| Term::Add(i, n)),
            Expr::Call(Func::Maximum | Func::Minimum, args) => {
                of(&args[0]).zip(of(&args[1])).map(|(x, y)| Term::Max(x, y))
            }
            Expr::If(_, a, b) => of(a).zip(of(b)).map(|(x, y)| Term::Max(x, y)),
            _ => None,
        };
        let Some(term) = term else { return Ok(None) };
        let t = bounds.push(term);
        bounds.checked.push(t);
        magnitude.insert(*e as *const Expr, t);
    }
    Ok(Some(bounds))
}
