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
//! use pytato_core::{frontend as pt, DType, DictOfNamedArrays};
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

use pytato_core::backend::Outputs;
use pytato_core::expr::Expr;
use pytato_core::tags::{ImplInlined, ImplStored};
use pytato_core::{Array, NodeKind, Result};

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
}

/// Decides which nodes are stored. Outputs, inputs and explicitly tagged nodes are decided before
/// the policy is asked.
pub trait MaterializationPolicy {
    /// Whether `cx.node` is stored.
    fn store(&mut self, cx: &NodeContext<'_>) -> bool;
}

/// pytato's MPMS rule: more than one user and more than one materialized predecessor.
pub struct Mpms;

impl MaterializationPolicy for Mpms {
    fn store(&mut self, cx: &NodeContext<'_>) -> bool {
        cx.num_users > 1 && cx.num_materialized_predecessors > 1
    }
}

/// Another policy, plus a node is stored whenever inlining it would make an expression deeper or
/// larger than the limits: code generators need bounded expressions (a chain of a million
/// elementwise operations must not become one million-deep expression).
pub struct InlineLimit<P> {
    /// The policy deciding within the limits.
    pub policy: P,
    /// Largest expression depth to inline.
    pub max_depth: usize,
    /// Largest expression size to inline.
    pub max_size: u64,
}

impl<P: MaterializationPolicy> MaterializationPolicy for InlineLimit<P> {
    fn store(&mut self, cx: &NodeContext<'_>) -> bool {
        cx.inlined_depth > self.max_depth || cx.inlined_size > self.max_size || self.policy.store(cx)
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
    for node in topological_sort(&roots) {
        let mut preds = BTreeSet::new();
        for child in node.children() {
            if child.is_input() || stored.contains(&child.id()) {
                preds.insert(child.id());
            } else {
                preds.extend(predecessors[&child.id()].iter().copied());
            }
        }
        let cost = |child: &Array| -> (usize, u64) {
            if child.is_input() || stored.contains(&child.id()) { (1, 1) } else { inlined[&child.id()] }
        };
        let (inlined_depth, inlined_size) = expression_cost(&node, cost);
        let decided = if node.is_input() || node.tags().contains(&ImplInlined) {
            false
        } else if output_ids.contains(&node.id()) || node.tags().contains(&ImplStored) {
            true
        } else {
            let num_users = users.get(&node.id()).map_or(0, Vec::len);
            policy.store(&NodeContext {
                node: &node,
                num_users,
                num_materialized_predecessors: preds.len(),
                inlined_depth,
                inlined_size,
            })
        };
        if decided {
            stored.insert(node.id());
        }
        predecessors.insert(node.id(), preds);
        inlined.insert(node.id(), (inlined_depth, inlined_size));
    }
    map_copy(&mut Tagger { stored }, outputs)
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
