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
use pytato_core::tags::{ImplInlined, ImplStored};
use pytato_core::{Array, Result};

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
    for node in topological_sort(&roots) {
        let mut preds = BTreeSet::new();
        for child in node.children() {
            if child.is_input() || stored.contains(&child.id()) {
                preds.insert(child.id());
            } else {
                preds.extend(predecessors[&child.id()].iter().copied());
            }
        }
        let decided = if node.is_input() || node.tags().contains(&ImplInlined) {
            false
        } else if output_ids.contains(&node.id()) || node.tags().contains(&ImplStored) {
            true
        } else {
            let num_users = users.get(&node.id()).map_or(0, Vec::len);
            policy.store(&NodeContext { node: &node, num_users, num_materialized_predecessors: preds.len() })
        };
        if decided {
            stored.insert(node.id());
        }
        predecessors.insert(node.id(), preds);
    }
    map_copy(&mut Tagger { stored }, outputs)
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
