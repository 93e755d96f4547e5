//! 32-bit indices. The kernel IR computes inames, sizes and index arithmetic in int64; a GPU
//! computes 32-bit integers natively (64-bit multiplies are emulated on most), and some adapters
//! lack `SHADER_INT64` altogether. A kernel runs with 32-bit indices (a *narrow* shader: int64
//! values computed as `i32`) when
//!
//! - it binds no int64 or uint64 buffer and computes no uint64 value ([`narrowable`], when
//!   compiling), and every int64 value it computes is index arithmetic: constants, inames, size
//!   parameters, casts from integers of at most 32 bits, `normalize_index`, and `-`, `+`, `-`,
//!   `*`, `//`, `%`, `maximum`, `minimum`, `if` of those;
//! - for the sizes of a run ([`fits`]), a bound on the magnitude of each of those values, each
//!   size, each buffer's element count and each reduction's term count is below 2^31, so that no
//!   32-bit operation overflows and the results are the int64 ones.
//!
//! Where the device has `SHADER_INT64`, the backend compiles both shaders and picks one per run;
//! without it, only the narrow one, and a run whose sizes do not fit is `Unsupported`.

use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, Expr, Func, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{DType, Dim, Result, Scalar};
use pytato_transform::kernel::{BufferId, Kernel, KernelProgram};

/// The largest magnitude a narrow shader computes.
const LIMIT: u128 = i32::MAX as u128;

/// Whether `kernel` can have a narrow shader (see the module docs): what does not depend on
/// sizes. Float64 needs 64-bit integers for its opaque helpers, so without `with_i64` a kernel
/// with float64 values is not narrowable either.
pub(crate) fn narrowable(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    with_i64: bool,
) -> Result<bool> {
    let wide = |d: DType| matches!(d, DType::I64 | DType::U64) || (!with_i64 && matches!(d, DType::F64 | DType::C128));
    if program.kernel_buffers(names, kernel)?.iter().any(|b| wide(program.buffers[b.0].dtype)) {
        return Ok(false);
    }
    Ok(magnitudes(program, names, kernel, &|_| Ok(0), &|_| Ok(0), with_i64)?.is_some())
}

/// Whether the sizes of a run (`eval` gives lengths, `shapes` every buffer's shape) keep every
/// index value of `kernel` within 32 bits (see the module docs). `kernel` is [`narrowable`].
pub(crate) fn fits(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    eval: &dyn Fn(&Dim) -> Result<i64>,
    shapes: &[Vec<usize>],
) -> Result<bool> {
    for b in program.kernel_buffers(names, kernel)? {
        let elements = shapes[b.0].iter().try_fold(1u128, |n, &d| n.checked_mul(d as u128));
        if elements.is_none_or(|n| n > LIMIT) {
            return Ok(false);
        }
    }
    let size = |name: &str| Ok(eval(&Dim::param(name))?.unsigned_abs() as u128);
    let bound = |d: &Dim| Ok(eval(d)?.unsigned_abs() as u128);
    Ok(magnitudes(program, names, kernel, &size, &bound, true)?.is_some_and(|most| most <= LIMIT))
}

/// The largest magnitude of the int64 values of `kernel` (and of its sizes and reduction term
/// counts), for sizes `size` and lengths `length` give; `None` where a value is not index
/// arithmetic (or, without `with_i64`, where float64 appears).
fn magnitudes(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    size: &dyn Fn(&str) -> Result<u128>,
    length: &dyn Fn(&Dim) -> Result<u128>,
    with_i64: bool,
) -> Result<Option<u128>> {
    let output = program.buffers[kernel.output.0].shape.dims();
    // Inames of reductions (a name used twice takes the larger bound) and term counts.
    let mut reduction_inames: HashMap<Arc<str>, u128> = HashMap::new();
    let mut most = 0u128;
    // Parents before children.
    let mut nodes: Vec<&Expr> = Vec::new();
    let mut stack = vec![&kernel.expr];
    while let Some(e) = stack.pop() {
        nodes.push(e);
        stack.extend(e.children());
    }
    for e in &nodes {
        if let Expr::Reduce(r) = e {
            let mut terms = 1u128;
            for b in &r.inames {
                let (lo, hi) = (length(&b.lower)?, length(&b.upper)?);
                let m = reduction_inames.entry(b.iname.clone()).or_default();
                *m = (*m).max(lo).max(hi);
                terms = terms.saturating_mul(lo.saturating_add(hi));
            }
            most = most.max(terms);
        }
    }
    for p in &program.size_params {
        most = most.max(size(p)?);
    }
    // Children before parents.
    let mut magnitude: HashMap<*const Expr, u128> = HashMap::new();
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
        let m = match e {
            Expr::Const(Scalar::I64(v)) => Some(v.unsigned_abs() as u128),
            Expr::Var(name) => match classify(name) {
                Some(Reserved::Iname(k)) => output.get(k).map(length).transpose()?,
                Some(Reserved::ReductionIname(_)) => reduction_inames.get(name).copied(),
                _ if program.size_params.iter().any(|p| p == &**name) => Some(size(name)?),
                _ => None,
            },
            Expr::Cast(_, a) => cast_magnitude(a),
            Expr::Unary(UnaryOp::Neg, a) => of(a),
            Expr::Binary(op, a, b) => match (op, of(a), of(b)) {
                (BinaryOp::Add | BinaryOp::Sub, Some(x), Some(y)) => Some(x.saturating_add(y)),
                (BinaryOp::Mul, Some(x), Some(y)) => Some(x.saturating_mul(y)),
                (BinaryOp::FloorDiv, Some(x), Some(_)) => Some(x.saturating_add(1)),
                (BinaryOp::Rem, Some(x), Some(y)) => Some(x.min(y)),
                _ => None,
            },
            Expr::Call(Func::NormalizeIndex, args) => match (of(&args[0]), of(&args[1])) {
                (Some(i), Some(n)) => Some(i.saturating_add(n)),
                _ => None,
            },
            Expr::Call(Func::Maximum | Func::Minimum, args) => match (of(&args[0]), of(&args[1])) {
                (Some(x), Some(y)) => Some(x.max(y)),
                _ => None,
            },
            Expr::If(_, a, b) => of(a).zip(of(b)).map(|(x, y)| x.max(y)),
            _ => None,
        };
        let Some(m) = m else { return Ok(None) };
        most = most.max(m);
        magnitude.insert(*e as *const Expr, m);
    }
    Ok(Some(most))
}
