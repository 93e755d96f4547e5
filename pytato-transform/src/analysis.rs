//! Questions about a DAG: how many nodes, of which kinds, who uses what, how deep.

use std::collections::{BTreeMap, HashMap};

use pytato_core::backend::Outputs;
use pytato_core::tags::ImplStored;
use pytato_core::{Array, NodeKind};

use crate::mapper::{topological_sort, users};

fn roots(outputs: &Outputs) -> Vec<Array> {
    outputs.entries().into_iter().map(|(_, a)| a).collect()
}

/// Number of distinct nodes (by identity). Structurally equal copies count separately; run
/// [`deduplicate`](crate::cse::deduplicate) first to count them once.
///
/// ```
/// use pytato_core::{frontend as pt, DType};
/// use pytato_transform::analysis::num_nodes;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// assert_eq!(num_nodes(&(&(&x + &x)).into()), 2);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn num_nodes(outputs: &Outputs) -> usize {
    topological_sort(&roots(outputs)).len()
}

/// Number of distinct nodes up to structural equality (what [`deduplicate`](crate::cse::deduplicate)
/// would leave).
pub fn num_nodes_deduplicated(outputs: &Outputs) -> usize {
    let mut classes: HashMap<u64, Vec<Array>> = HashMap::new();
    let mut count = 0;
    for node in topological_sort(&roots(outputs)) {
        let bucket = classes.entry(node.structural_hash()).or_default();
        if !bucket.contains(&node) {
            bucket.push(node);
            count += 1;
        }
    }
    count
}

/// How many distinct nodes of each kind.
///
/// ```
/// use pytato_core::{frontend as pt, DType};
/// use pytato_transform::analysis::node_type_counts;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let counts = node_type_counts(&(&pt::roll(&(&x + 1.0), 1, Some(0))?).into());
/// assert_eq!((counts["Placeholder"], counts["IndexLambda"], counts["Roll"]), (1, 1, 1));
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn node_type_counts(outputs: &Outputs) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for node in topological_sort(&roots(outputs)) {
        *counts.entry(node.kind_name()).or_default() += 1;
    }
    counts
}

/// For each node (by [`Array::id`]), how many distinct nodes use it; outputs count one extra use.
pub fn num_users(outputs: &Outputs) -> HashMap<usize, usize> {
    let roots = roots(outputs);
    let mut counts: HashMap<usize, usize> = users(&roots).into_iter().map(|(id, u)| (id, u.len())).collect();
    for r in &roots {
        *counts.entry(r.id()).or_default() += 1;
    }
    counts
}

/// The nodes tagged [`ImplStored`].
pub fn materialized(outputs: &Outputs) -> Vec<Array> {
    topological_sort(&roots(outputs)).into_iter().filter(|n| n.tags().contains(&ImplStored)).collect()
}

/// The number of nodes on the longest path from an input to an output (1 for a lone input).
///
/// ```
/// use pytato_core::{frontend as pt, DType};
/// use pytato_transform::analysis::depth;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let y = pt::sin(&pt::sin(&x)?)?;
/// assert_eq!(depth(&(&y).into()), 3);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn depth(outputs: &Outputs) -> usize {
    let mut depth: HashMap<usize, usize> = HashMap::new();
    let mut deepest = 0;
    for node in topological_sort(&roots(outputs)) {
        let d = 1 + node.children().iter().map(|c| depth[&c.id()]).max().unwrap_or(0);
        deepest = deepest.max(d);
        depth.insert(node.id(), d);
    }
    deepest
}

/// Whether every node is an input, an `IndexLambda` or a host step (`Nonzero`, `Scatter`: no
/// kernel computes those, see `pytato_core::phases`): the form lowering produces.
pub fn is_lowered(outputs: &Outputs) -> bool {
    topological_sort(&roots(outputs))
        .iter()
        .all(|n| n.is_input() || matches!(n.kind(), NodeKind::IndexLambda(_)) || pytato_core::phases::is_host_step(n))
}
