//! Materialization: which nodes are stored (tagged [`ImplStored`]) and which are recomputed where
//! they are used (fused into their users).
//!
//! A [`MaterializationPolicy`] decides per node, bottom-up, seeing how many nodes use it and how
//! many materialized predecessors it has (the nearest stored nodes or inputs it depends on). The
//! default, [`Mpms`], is pytato's rule: store a node with more than one user and more than one
//! materialized predecessor. Inputs count as materialized; outputs and nodes already tagged
//! [`ImplStored`] are stored; nodes tagged [`ImplInlined`] never are.
//!
//! ```
//! use pytato_core::{DType, DictOfNamedArrays};
//! use pytato_frontend as pt;
//! use pytato_transform::{materialize::{materialize, Mpms}, analysis::materialized};
//! let x = pt::placeholder("x", [3], DType::F64)?;
//! let y = pt::placeholder("y", [3], DType::F64)?;
//! let t = &x * &y;                      // two materialized predecessors, two users: stored
//! let outputs = DictOfNamedArrays::new([("a", pt::sin(&t)?), ("b", pt::cos(&t)?)])?;
//! let stored = materialized(&materialize(&outputs.into(), &mut Mpms)?);
//! assert_eq!(stored.len(), 3);          // t and the two outputs
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::{BTreeSet, HashMap, HashSet};

use pytato_core::expr::{Expr, Func};
use pytato_core::tags::{ImplInlined, ImplStored};
use pytato_core::{Array, NodeKind, Result};
use pytato_runtime::backend::Outputs;

use crate::mapper::{CopyMapper, map_copy, topological_sort, users};

/// What a policy sees of a node.
pub struct NodeContext<'a> {
    /// The node.
    pub node: &'a Array,
    /// How many distinct nodes use it.
    pub num_users: usize,
    /// How many distinct materialized nodes (stored nodes or inputs) it depends on without a
    /// stored node in between.
    pub num_materialized_predecessors: usize,
    /// The depth of the scalar expression a kernel would evaluate for this node if it were inlined
    /// (its own expression with every non-stored predecessor substituted in).
    pub inlined_depth: usize,
    /// The number of operations in that expression (saturating): inlining a node read twice
    /// duplicates its expression, so this can grow much faster than the DAG.
    pub inlined_size: u64,
    /// Whether that expression contains a reduction (its own, or one of an inlined predecessor).
    pub inlined_reduces: bool,
    /// Whether the node has one user, which reads it once, at its own index (`a[_0, _1]` in a
    /// lambda of `a`'s shape), outside any reduction: inlined there, each element of the node is
    /// computed once. Any other use computes an inlined element more than once.
    pub read_once_per_element: bool,
    /// Whether the node checks index values (`normalize_index`): such a node must be computed for
    /// every element, not only where a lazy `if` reads it.
    pub checks_indices: bool,
    /// How many reads of the node its users' expressions hold (a user that is no index lambda
    /// counts once): inlined, each element of the node is computed up to this many times (a
    /// stencil `u[i-1] - 2u[i] + u[i+1]` reads `u` three times).
    pub num_reads: usize,
}

/// Decides which nodes are stored. Outputs, inputs and explicitly tagged nodes are decided before
/// the policy is asked.
pub trait MaterializationPolicy {
    /// Whether `cx.node` is stored.
    fn store(&mut self, cx: &NodeContext<'_>) -> bool;

    /// The most materialized nodes (inputs and stored nodes: buffers) one kernel may read. Where a
    /// node would read more through inlined children, the children that read the most are
    /// stored instead, so that each kernel fits (a GPU binds a limited number of buffers per
    /// shader; a concatenation of 5,000 arrays is several kernels). Unlimited by default.
    fn max_buffers(&self) -> usize {
        usize::MAX
    }
}

/// pytato's MPMS rule: more than one user and more than one materialized predecessor.
pub struct Mpms;

impl MaterializationPolicy for Mpms {
    fn store(&mut self, cx: &NodeContext<'_>) -> bool {
        cx.num_users > 1 && cx.num_materialized_predecessors > 1
    }
}

/// What code generators need, on top of another policy. A node is stored whenever inlining it
/// would
///
/// - make an expression deeper or larger than the limits (a chain of a million elementwise
///   operations must not become one million-deep expression);
/// - repeat a reduction's work: a node whose inlined expression reduces is stored unless it is
///   [read once per element](NodeContext::read_once_per_element) (`x / x.sum()` inlined would be
///   quadratic, `m @ x.sum(1)` cubic);
/// - skip part of an index check: a node that [checks indices](NodeContext::checks_indices) is
///   computed in full, so every index value is checked as numpy checks it;
/// - repeat more than [`InlineLimit::MAX_REPEATED_SIZE`] operations per element: a node
///   [read](NodeContext::num_reads) more than once whose inlined expression is larger is stored
///   (ten steps of a stencil inlined into each other would compute the first step `3^9` times
///   per element).
pub struct InlineLimit<P> {
    /// The policy deciding within the limits.
    pub policy: P,
    /// Largest expression depth to inline.
    pub max_depth: usize,
    /// Largest expression size to inline.
    pub max_size: u64,
    /// Most buffers one kernel reads (see [`MaterializationPolicy::max_buffers`]).
    pub max_buffers: usize,
}

impl<P> InlineLimit<P> {
    /// The largest inlined expression (in operations) that may be computed more than once per
    /// element: reading a cheap node twice costs less than storing it and reading it back.
    pub const MAX_REPEATED_SIZE: u64 = 64;
}

impl<P: MaterializationPolicy> MaterializationPolicy for InlineLimit<P> {
    fn store(&mut self, cx: &NodeContext<'_>) -> bool {
        cx.inlined_depth > self.max_depth
            || cx.inlined_size > self.max_size
            || (cx.inlined_reduces && !cx.read_once_per_element)
            || (cx.num_reads > 1 && cx.inlined_size > Self::MAX_REPEATED_SIZE)
            || cx.checks_indices
            || self.policy.store(cx)
    }

    fn max_buffers(&self) -> usize {
        self.max_buffers
    }
}

/// Stores every node that has more than one user (no recomputation at all).
pub struct StoreShared;

impl MaterializationPolicy for StoreShared {
    fn store(&mut self, cx: &NodeContext<'_>) -> bool {
        cx.num_users > 1
    }
}

/// Tags the nodes `policy` chooses (and the outputs) [`ImplStored`].
pub fn materialize(outputs: &Outputs, policy: &mut dyn MaterializationPolicy) -> Result<Outputs> {
    let roots: Vec<Array> = outputs.entries().into_iter().map(|(_, a)| a).collect();
    let output_ids: HashSet<usize> = roots.iter().map(Array::id).collect();
    let users = users(&roots);
    let mut stored: HashSet<usize> = HashSet::new();
    // For each node, the materialized nodes it reads through inlined ones.
    let mut predecessors: HashMap<usize, BTreeSet<usize>> = HashMap::new();
    // For each node, (depth, size) of its expression with inlined predecessors substituted.
    let mut inlined: HashMap<usize, (usize, u64)> = HashMap::new();
    // For each node, whether that expression reduces.
    let mut reduces: HashMap<usize, bool> = HashMap::new();
    let max_buffers = policy.max_buffers().max(1);
    for node in topological_sort(&roots) {
        let children = node.children();
        let reads = |stored: &HashSet<usize>| {
            let mut preds = BTreeSet::new();
            for child in &children {
                if child.is_input() || stored.contains(&child.id()) {
                    preds.insert(child.id());
                } else {
                    preds.extend(predecessors[&child.id()].iter().copied());
                }
            }
            preds
        };
        let mut preds = reads(&stored);
        // Too many buffers for one kernel: store the inlined children that read the most (storing
        // a child only lowers what the nodes already decided read).
        while preds.len() > max_buffers {
            let widest = children
                .iter()
                .filter(|c| !c.is_input() && !stored.contains(&c.id()) && !c.tags().contains(&ImplInlined))
                .max_by_key(|c| predecessors[&c.id()].len());
            let Some(widest) = widest else { break };
            stored.insert(widest.id());
            preds = reads(&stored);
        }
        let cost = |child: &Array| -> (usize, u64) {
            if child.is_input() || stored.contains(&child.id()) { (1, 1) } else { inlined[&child.id()] }
        };
        let (inlined_depth, inlined_size) = expression_cost(&node, cost);
        let inlined_reduces = own_reduction(&node)
            || node.children().iter().any(|c| !c.is_input() && !stored.contains(&c.id()) && reduces[&c.id()]);
        let node_users = users.get(&node.id()).map_or(&[][..], Vec::as_slice);
        let decided = if node.is_input() || node.tags().contains(&ImplInlined) {
            false
        } else if output_ids.contains(&node.id()) || node.tags().contains(&ImplStored) {
            true
        } else {
            policy.store(&NodeContext {
                node: &node,
                num_users: node_users.len(),
                num_materialized_predecessors: preds.len(),
                inlined_depth,
                inlined_size,
                inlined_reduces,
                read_once_per_element: matches!(node_users, [user] if reads_once_per_element(user, &node)),
                checks_indices: checks_indices(&node),
                num_reads: node_users.iter().map(|user| reads_of(user, &node)).sum(),
            })
        };
        if decided {
            stored.insert(node.id());
        }
        predecessors.insert(node.id(), preds);
        inlined.insert(node.id(), (inlined_depth, inlined_size));
        reduces.insert(node.id(), inlined_reduces);
    }
    map_copy(&mut Tagger { stored }, outputs)
}

/// Whether `node` itself reduces: a lambda with a reduction, or an einsum that sums.
fn own_reduction(node: &Array) -> bool {
    match node.kind() {
        NodeKind::IndexLambda(il) => {
            let mut found = false;
            il.expr.walk(&mut |e| found |= matches!(e, Expr::Reduce(_)));
            found
        }
        NodeKind::Einsum(e) => !e.reduction_descriptors.is_empty(),
        _ => false,
    }
}

/// Whether `node` is an index lambda that checks values when the program runs: it calls
/// `normalize_index` (index arrays), `integer_exponent` (integer powers) or
/// `require_non_negative` (numpy's other refusals of values).
fn checks_indices(node: &Array) -> bool {
    let NodeKind::IndexLambda(il) = node.kind() else { return false };
    let mut found = false;
    il.expr.walk(&mut |e| {
        found |= matches!(e, Expr::Call(Func::NormalizeIndex | Func::IntegerExponent | Func::RequireNonNegative, _))
    });
    found
}

/// How many reads of `node` the expression of `user` holds (1 for a user that is no index lambda).
fn reads_of(user: &Array, node: &Array) -> usize {
    let NodeKind::IndexLambda(il) = user.kind() else { return 1 };
    let names: Vec<&str> = il.bindings.iter().filter(|(_, a)| a.ptr_eq(node)).map(|(n, _)| &**n).collect();
    let mut reads = 0;
    il.expr.walk(&mut |e| {
        if let Expr::Subscript(n, _) | Expr::Var(n) = e
            && names.contains(&&**n)
        {
            reads += 1;
        }
    });
    reads.max(1)
}

/// Whether `user` (an index lambda of `node`'s shape) reads `node` exactly once, at the identity
/// index, outside every reduction.
fn reads_once_per_element(user: &Array, node: &Array) -> bool {
    let NodeKind::IndexLambda(il) = user.kind() else { return false };
    if user.shape() != node.shape() {
        return false;
    }
    let names: Vec<&str> = il.bindings.iter().filter(|(_, a)| a.ptr_eq(node)).map(|(n, _)| &**n).collect();
    let identity = |idx: &[Expr]| idx.iter().enumerate().all(|(k, e)| *e == Expr::iname(k));
    // (reads at the identity outside reductions, any other reads)
    let mut counts = (0usize, 0usize);
    let mut stack = vec![(&il.expr, false)];
    while let Some((e, in_reduction)) = stack.pop() {
        let once = match e {
            Expr::Subscript(n, idx) if names.contains(&&**n) => Some(!in_reduction && identity(idx)),
            Expr::Var(n) if names.contains(&&**n) => Some(!in_reduction),
            _ => None,
        };
        match once {
            Some(true) => counts.0 += 1,
            Some(false) => counts.1 += 1,
            None => {}
        }
        let inside = in_reduction || matches!(e, Expr::Reduce(_));
        stack.extend(e.children().into_iter().map(|c| (c, inside)));
    }
    counts == (1, 0)
}

/// (depth, size) of `node`'s scalar expression with each child read replaced by `cost(child)`.
/// Nodes that are not index lambdas count as one operation over their children.
fn expression_cost(node: &Array, cost: impl Fn(&Array) -> (usize, u64)) -> (usize, u64) {
    match node.kind() {
        NodeKind::IndexLambda(il) => {
            // Size: every expression node, with reads of a binding counting the binding's size.
            // Depth: expression depth plus the deepest binding read (an upper bound).
            let mut size: u64 = 0;
            let mut deepest_read = 0;
            il.expr.walk(&mut |e| {
                size = size.saturating_add(1);
                if let Expr::Subscript(name, _) | Expr::Var(name) = e
                    && let Some(child) = il.bindings.get(name)
                {
                    let (d, s) = cost(child);
                    size = size.saturating_add(s);
                    deepest_read = deepest_read.max(d);
                }
            });
            (expr_depth(&il.expr) + deepest_read, size)
        }
        _ => {
            let children = node.children();
            let depth = 1 + children.iter().map(|c| cost(c).0).max().unwrap_or(0);
            let size = children.iter().fold(1u64, |acc, c| acc.saturating_add(cost(c).1));
            (depth, size)
        }
    }
}

fn expr_depth(e: &Expr) -> usize {
    1 + e.children().into_iter().map(expr_depth).max().unwrap_or(0)
}

struct Tagger {
    stored: HashSet<usize>,
}

impl CopyMapper for Tagger {
    fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let rebuilt = node.with_children(children.to_vec())?;
        if self.stored.contains(&node.id()) && !rebuilt.tags().contains(&ImplStored) {
            rebuilt.tagged(ImplStored)
        } else {
            Ok(rebuilt)
        }
    }
}
