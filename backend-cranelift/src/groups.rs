//! Launch groups: consecutive kernels compiled into one function and run together, row by row
//! along their common first axis.
//!
//! A DG Runge–Kutta stage computes `k ← αk + Δt·rhs(u)` and then `u ← u + βk`: two kernels over
//! the same elements, the second reading what the first wrote at the same element. Run one after
//! the other, the second streams `u` and `k` through memory again; run as a group, it reads them
//! while they are still in the cache, and the group is one launch (one fork-join) instead of two.
//!
//! Consecutive kernels form a group when
//!
//! - each output has two axes or more and the same first axis (`Dim` equality: the same length
//!   for every binding of the size parameters), so that one loop over it serves all, and threads
//!   split it as they split one kernel's;
//! - a kernel reads what an earlier kernel of the group writes only at first index `_0` (any
//!   other indices): that row is complete before the later kernel computes its elements of the
//!   row, in the same iteration, on the same thread;
//! - none runs through the GEMM (`crate::contraction`), which takes whole arrays.
//!
//! Kernels are never reordered, and each still computes its elements as when alone, so results
//! are the same bits.

use pytato_core::expr::Expr;
use pytato_core::names::{Reserved, classify};
use pytato_transform::kernel::{BufferId, KernelProgram};

/// The most kernels in one group: a group is one Cranelift function, compiled on one thread.
const MAX_GROUP: usize = 8;

/// The program's kernels in launch groups, in order (every kernel in exactly one); `alone[k]`
/// keeps kernel `k` in a group of its own.
pub(crate) fn launch_groups(program: &KernelProgram, alone: &[bool]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (k, kernel) in program.kernels.iter().enumerate() {
        let joins = groups.last().is_some_and(|group| {
            group.len() < MAX_GROUP
                && !alone[k]
                && !alone[group[0]]
                && same_first_axis(program, group[0], k)
                && reads_rows_only(program, &kernel.expr, group)
        });
        match groups.last_mut() {
            Some(group) if joins => group.push(k),
            _ => groups.push(vec![k]),
        }
    }
    groups
}

/// Whether kernels `a` and `b` both write arrays of two axes or more with the same first axis.
fn same_first_axis(program: &KernelProgram, a: usize, b: usize) -> bool {
    let dims = |k: usize| program.buffers[program.kernels[k].output.0].shape.dims();
    let (a, b) = (dims(a), dims(b));
    a.len() >= 2 && b.len() >= 2 && a[0] == b[0]
}

/// Whether `expr` reads the outputs of the kernels of `group` only at first index `_0`.
fn reads_rows_only(program: &KernelProgram, expr: &Expr, group: &[usize]) -> bool {
    let written: Vec<BufferId> = group.iter().map(|&k| program.kernels[k].output).collect();
    let writes = |name: &str| written.iter().any(|id| &*program.buffers[id.0].name == name);
    let mut ok = true;
    expr.walk(&mut |e| match e {
        Expr::Subscript(name, idx) if writes(name) => {
            ok &= matches!(idx.first(), Some(Expr::Var(i)) if classify(i) == Some(Reserved::Iname(0)));
        }
        Expr::Var(name) if writes(name) => ok = false,
        _ => {}
    });
    ok
}
