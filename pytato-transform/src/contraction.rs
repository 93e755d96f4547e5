//! Kernels that are (batched) matrix products, recognized in the kernel IR so that a backend can
//! run them through a tuned GEMM instead of its generic loop nest.
//!
//! A kernel is a [`Contraction`] when its whole expression is
//!
//! ```text
//! out[_0, …, _{d-1}] = sum(_r:0..K, lhs[…] * rhs[…])
//! ```
//!
//! where `lhs` and `rhs` are buffers whose every subscript is a bare iname, each iname used at
//! most once per operand, `_r` indexes both operands, and every output iname indexes at least one
//! of them. Output axes that index `lhs` alone are *rows* of the product, those that index `rhs`
//! alone *columns*, those that index both *batch* axes; a backend picks one row and one column
//! axis for its GEMM and loops over the others. `ij,jk->ik`, `bij,bjk->bik`, `ij,ej->ei` (DG's
//! operator application), `ij,j->i` and `ibj,jk->bki` are contractions; a trace, a sum over two
//! indices or a product of three operands are not.
//!
//! What a contraction promises a backend: for every output element, the result is the sum over
//! `_r` of `lhs * rhs` at the subscripts above, so any order of summation computes it (up to
//! rounding). The backend still has to check at run time that each iname's range fits the
//! operand axis it indexes (the recognizer only looks at the expression's form) and fall back to
//! its checked loop nest where it does not.

use std::collections::HashMap;

use pytato_core::expr::{BinaryOp, Expr, Func, ReduceOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{DType, Dim};

use crate::kernel::{BufferId, Kernel, KernelProgram};

/// A recognized matrix product; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contraction {
    /// The left operand (the buffer of the first factor of the product).
    pub lhs: BufferId,
    /// The right operand.
    pub rhs: BufferId,
    /// The axes of `lhs` and `rhs` that the summation index reads.
    pub sum_axes: (usize, usize),
    /// The number of terms: the summation runs over `0..terms`.
    pub terms: Dim,
    /// For each output axis, which axis of `lhs` and of `rhs` its iname indexes (`None`: it does
    /// not index that operand).
    pub out_axes: Vec<(Option<usize>, Option<usize>)>,
    /// The element type of operands and output.
    pub dtype: DType,
}

impl Contraction {
    /// The output axes that index `lhs` only (rows of the product), in order.
    pub fn row_axes(&self) -> Vec<usize> {
        (0..self.out_axes.len()).filter(|&k| matches!(self.out_axes[k], (Some(_), None))).collect()
    }

    /// The output axes that index `rhs` only (columns of the product), in order.
    pub fn column_axes(&self) -> Vec<usize> {
        (0..self.out_axes.len()).filter(|&k| matches!(self.out_axes[k], (None, Some(_)))).collect()
    }

    /// The output axes that index both operands (batch axes), in order.
    pub fn batch_axes(&self) -> Vec<usize> {
        (0..self.out_axes.len()).filter(|&k| matches!(self.out_axes[k], (Some(_), Some(_)))).collect()
    }
}

/// `kernel` as a [`Contraction`] of two buffers of `program`, if it is one (see the module docs).
///
/// ```
/// use pytato_core::{DType, Dim};
/// use pytato_frontend as pt;
/// use pytato_transform::contraction::recognize;
/// use pytato_transform::kernel::{build_kernel_program, KernelOptions};
/// let a = pt::placeholder("a", [Dim::param("n"), Dim::param("k")], DType::F64)?;
/// let b = pt::placeholder("b", [Dim::param("k"), Dim::param("m")], DType::F64)?;
/// let program = build_kernel_program(&(&pt::matmul(&a, &b)?).into(), KernelOptions::default())?;
/// let product = recognize(&program, &program.kernels[0]).expect("a matrix product");
/// assert_eq!((product.row_axes(), product.column_axes()), (vec![0], vec![1]));
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn recognize(program: &KernelProgram, kernel: &Kernel) -> Option<Contraction> {
    let Expr::Reduce(reduce) = &kernel.expr else { return None };
    let [bounds] = reduce.inames.as_slice() else { return None };
    if reduce.op != ReduceOp::Sum || bounds.lower != Dim::new(0) {
        return None;
    }
    let (left, right) = match &reduce.body {
        Expr::Binary(BinaryOp::Mul, left, right) => (&**left, &**right),
        // A complex einsum's product (`crate::lower`).
        Expr::Call(Func::TextbookProduct, args) if args.len() == 2 => (&args[0], &args[1]),
        _ => return None,
    };
    let names = program.buffer_ids();
    let names = &names;
    let operand = |e| operand(names, e);
    let (lhs, lhs_inames) = operand(left)?;
    let (rhs, rhs_inames) = operand(right)?;
    let axis_of = |inames: &[&str], v: &str| inames.iter().position(|&w| w == v);

    let output = &program.buffers[kernel.output.0];
    let dtype = output.dtype;
    if program.buffers[lhs.0].dtype != dtype || program.buffers[rhs.0].dtype != dtype {
        return None;
    }
    let out_inames: Vec<String> = (0..output.shape.ndim()).map(|k| format!("_{k}")).collect();
    let sum = &*bounds.iname;
    let known = |v: &&str| *v == sum || out_inames.iter().any(|o| o == v);
    if !lhs_inames.iter().all(known) || !rhs_inames.iter().all(known) {
        return None;
    }
    debug_assert!(matches!(classify(sum), Some(Reserved::ReductionIname(_))));
    let sum_axes = (axis_of(&lhs_inames, sum)?, axis_of(&rhs_inames, sum)?);
    let out_axes: Vec<(Option<usize>, Option<usize>)> =
        out_inames.iter().map(|o| (axis_of(&lhs_inames, o), axis_of(&rhs_inames, o))).collect();
    if out_axes.contains(&(None, None)) {
        return None;
    }
    Some(Contraction { lhs, rhs, sum_axes, terms: bounds.upper.clone(), out_axes, dtype })
}

/// A subscript of a buffer by distinct bare inames: the buffer and the inames, axis by axis.
fn operand<'e>(names: &HashMap<&str, BufferId>, e: &'e Expr) -> Option<(BufferId, Vec<&'e str>)> {
    let Expr::Subscript(name, index) = e else { return None };
    let buffer = *names.get(&**name)?;
    let inames: Vec<&str> =
        index.iter().map(|i| if let Expr::Var(v) = i { Some(&**v) } else { None }).collect::<Option<_>>()?;
    let distinct = inames.iter().enumerate().all(|(k, v)| !inames[..k].contains(v));
    distinct.then_some((buffer, inames))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{KernelOptions, build_kernel_program};
    use pytato_core::{Array, Result};
    use pytato_frontend as pt;

    fn recognized(out: &Array) -> Result<Option<Contraction>> {
        let program = build_kernel_program(&out.into(), KernelOptions::default())?;
        Ok(match program.kernels.as_slice() {
            [kernel] => recognize(&program, kernel),
            _ => None,
        })
    }

    fn matrix(name: &str, rows: &str, cols: &str) -> Result<Array> {
        pt::placeholder(name, [Dim::param(rows), Dim::param(cols)], DType::F64)
    }

    #[test]
    fn matrix_products_of_every_layout_are_recognized() -> Result<()> {
        let (a, b) = (matrix("a", "n", "k")?, matrix("b", "k", "m")?);
        let product = recognized(&pt::matmul(&a, &b)?)?.expect("a @ b");
        assert_eq!(product.out_axes, vec![(Some(0), None), (None, Some(1))]);
        assert_eq!(product.sum_axes, (1, 0));
        assert_eq!(product.terms, Dim::param("k"));

        // DG's operator application: rows of the output index the right operand.
        let d = pt::placeholder("d", [4, 4], DType::F64)?;
        let u = pt::placeholder("u", [Dim::param("e"), Dim::new(4)], DType::F64)?;
        let applied = recognized(&pt::einsum("ij,ej->ei", &[&d, &u])?)?.expect("ij,ej->ei");
        assert_eq!(applied.out_axes.len(), 2);
        assert_eq!((applied.row_axes(), applied.column_axes()), (vec![1], vec![0]));

        let x = pt::placeholder("x", [Dim::param("k")], DType::F64)?;
        let mv = recognized(&pt::matmul(&a, &x)?)?.expect("matrix times vector");
        assert_eq!((mv.row_axes(), mv.column_axes()), (vec![0], vec![]));

        let s = pt::placeholder("s", [Dim::param("b"), Dim::param("n"), Dim::param("k")], DType::F64)?;
        let t = pt::placeholder("t", [Dim::param("b"), Dim::param("k"), Dim::param("m")], DType::F64)?;
        let batched = recognized(&pt::einsum("bij,bjk->bik", &[&s, &t])?)?.expect("batched");
        assert_eq!(batched.batch_axes(), vec![0]);
        let rows = recognized(&pt::einsum("ibj,jk->bki", &[&s, &matrix("c", "k", "m")?])?)?.expect("two row axes");
        assert_eq!((rows.row_axes(), rows.column_axes()), (vec![0, 2], vec![1]));
        Ok(())
    }

    #[test]
    fn other_reductions_are_not_contractions() -> Result<()> {
        let (a, b) = (matrix("a", "n", "n")?, matrix("b", "n", "n")?);
        // A trace reads one iname twice; a sum of a sum is not a product of two buffers.
        assert_eq!(recognized(&pt::einsum("ii->", &[&a])?)?, None);
        assert_eq!(recognized(&pt::sum(&a, 1)?)?, None);
        // Two summation indices, and a product whose factor is computed inline.
        assert_eq!(recognized(&pt::einsum("ij,ij->", &[&a, &b])?)?, None);
        let scaled = pt::multiply(&a, 2.0)?;
        assert_eq!(recognized(&pt::matmul(&scaled, &b)?)?, None);
        // An outer product sums nothing.
        let x = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
        assert_eq!(recognized(&pt::einsum("i,j->ij", &[&x, &x])?)?, None);
        Ok(())
    }
}
