//! Questions about a DAG: how many nodes, of which kinds, how often each is repeated, who uses
//! what (directly and transitively), how deep, which tags it carries, what an einsum computes.

use std::collections::{BTreeMap, HashMap};

use pytato_core::array::{EinsumAxis, IdSet};
use pytato_core::tags::ImplStored;
use pytato_core::{Array, Error, NodeKind, Result, Tag};
use pytato_runtime::backend::Outputs;

use crate::mapper::{topological_sort, users};

fn roots(outputs: &Outputs) -> Vec<Array> {
    outputs.entries().into_iter().map(|(_, a)| a).collect()
}

/// Number of distinct nodes (by identity). Structurally equal copies count separately; run
/// [`deduplicate`](crate::cse::deduplicate) first to count them once.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
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
/// use pytato_core::DType;
/// use pytato_frontend as pt;
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
/// use pytato_core::DType;
/// use pytato_frontend as pt;
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

/// Whether every node is an input, an `IndexLambda`, a call result (inlined before code
/// generation) or a host step (`Nonzero`, `Scatter`, `Sort`, `Scan`, `SearchSorted`: no kernel computes those, see
/// `pytato_runtime::phases`): the form lowering produces.
pub fn is_lowered(outputs: &Outputs) -> bool {
    topological_sort(&roots(outputs)).iter().all(|n| {
        n.is_input()
            || matches!(n.kind(), NodeKind::IndexLambda(_) | NodeKind::CallResult { .. })
            || pytato_runtime::phases::is_host_step(n)
    })
}

/// For each node up to structural equality, how many distinct nodes (by identity) equal it: a
/// multiplicity above 1 is work CSE would save. Pairs are in topological order of the first copy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_transform::analysis::node_multiplicities;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// // sin(x) built twice: one class with two copies.
/// let y = &pt::sin(&x)? + &pt::sin(&x)?;
/// let sines: Vec<usize> =
///     node_multiplicities(&(&y).into()).into_iter().filter(|(n, _)| n.kind_name() == "IndexLambda").map(|(_, m)| m).collect();
/// assert_eq!(sines, [2, 1]); // the two sines, then the sum
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn node_multiplicities(outputs: &Outputs) -> Vec<(Array, usize)> {
    let mut class_of: HashMap<Array, usize> = HashMap::new();
    let mut classes: Vec<(Array, usize)> = Vec::new();
    for node in topological_sort(&roots(outputs)) {
        match class_of.get(&node) {
            Some(&k) => classes[k].1 += 1,
            None => {
                class_of.insert(node.clone(), classes.len());
                classes.push((node, 1));
            }
        }
    }
    classes
}

/// How many tags of type `T` the distinct nodes of the DAG carry: on the nodes themselves, on
/// their axes, and on their reductions (index-lambda and einsum reduction descriptors).
///
/// ```
/// use pytato_core::{DType, Tag};
/// use pytato_frontend as pt;
/// use pytato_transform::analysis::num_tags_of_type;
/// #[derive(Debug, PartialEq, Eq, Hash)]
/// struct Element;
/// impl Tag for Element {}
/// let u = pt::placeholder("u", [10, 4], DType::F64)?.with_tagged_axis(0, Element)?;
/// let v = (&u * 2.0).tagged(Element)?;
/// assert_eq!(num_tags_of_type::<Element>(&(&v).into()), 2);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn num_tags_of_type<T: Tag>(outputs: &Outputs) -> usize {
    let mut count = 0;
    for node in topological_sort(&roots(outputs)) {
        count += node.tags().of_type::<T>().count();
        count += node.axes().iter().map(|a| a.tags.of_type::<T>().count()).sum::<usize>();
        count += match node.kind() {
            NodeKind::IndexLambda(il) => il.reduction_descriptors.values().map(|d| d.tags.of_type::<T>().count()).sum(),
            NodeKind::Einsum(e) => e.reduction_descriptors.values().map(|d| d.tags.of_type::<T>().count()).sum(),
            _ => 0,
        };
    }
    count
}

/// Every node of the DAG that depends on `node`, directly or through others (not `node` itself),
/// in topological order. Linear in the DAG's size.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_transform::analysis::transitive_users;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let y = pt::placeholder("y", [3], DType::F64)?;
/// let s = pt::sin(&x)?;
/// let out = &(&s * 2.0) + &y;
/// let users = transitive_users(&(&out).into(), &s);
/// assert_eq!(users.len(), 2); // s * 2, and the sum
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn transitive_users(outputs: &Outputs, node: &Array) -> Vec<Array> {
    let mut reached = IdSet::default();
    reached.insert(node.id());
    let mut found = Vec::new();
    for n in topological_sort(&roots(outputs)) {
        if n.id() != node.id() && n.children().iter().any(|c| reached.contains(&c.id())) {
            reached.insert(n.id());
            found.push(n);
        }
    }
    found
}

/// Whether `einsum` (an `Einsum` node) computes what `numpy.einsum(spec, *args)` would on its
/// operands: the same output axes and the same summed indices, up to the names of the letters
/// (upstream pytato's `is_einsum_similar_to_subscript`). `spec` is explicit (`"ij,j->i"`); an
/// ellipsis, a malformed spec or a node that is no einsum is [`Error::InvalidArgument`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_transform::analysis::is_einsum_similar_to_subscript;
/// let a = pt::placeholder("a", [3, 4], DType::F64)?;
/// let x = pt::placeholder("x", [4], DType::F64)?;
/// let y = pt::einsum("ij,j->i", &[&a, &x])?;
/// assert!(is_einsum_similar_to_subscript(&y, "pq,q->p")?);
/// assert!(!is_einsum_similar_to_subscript(&y, "ij,i->j")?);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn is_einsum_similar_to_subscript(einsum: &Array, spec: &str) -> Result<bool> {
    let op = "is_einsum_similar_to_subscript";
    let NodeKind::Einsum(e) = einsum.kind() else {
        return Err(Error::invalid(op, format!("{} is not an einsum", einsum.summary())));
    };
    let Some((inputs, output)) = spec.split_once("->") else {
        return Err(Error::invalid(op, format!("{spec:?}: only explicit specs (with '->') are compared")));
    };
    let letters = |part: &str| -> Result<Vec<char>> {
        let part = part.trim();
        if let Some(bad) = part.chars().find(|c| !c.is_ascii_alphabetic()) {
            return Err(Error::invalid(
                op,
                format!("{spec:?}: {bad:?} is not an index letter (ellipses are not compared)"),
            ));
        }
        Ok(part.chars().collect())
    };
    let output = letters(output)?;
    let operands: Vec<Vec<char>> = inputs.split(',').map(letters).collect::<Result<_>>()?;
    if output.len() != einsum.ndim() || operands.len() != e.args.len() {
        return Ok(false);
    }
    let mut meaning: HashMap<char, EinsumAxis> = HashMap::new();
    for (position, letter) in output.into_iter().enumerate() {
        if meaning.insert(letter, EinsumAxis::Elementwise(position)).is_some() {
            return Err(Error::invalid(op, format!("{spec:?}: output index {letter:?} appears twice")));
        }
    }
    // Each summed letter must stand for one reduction of the einsum, and each reduction for one letter.
    let mut letter_of_reduction: HashMap<usize, char> = HashMap::new();
    for (operand, access) in operands.into_iter().zip(&e.access) {
        if operand.len() != access.len() {
            return Ok(false);
        }
        for (letter, axis) in operand.into_iter().zip(access) {
            match (meaning.get(&letter), axis) {
                (Some(known), _) if known != axis => return Ok(false),
                (Some(_), _) => {}
                (None, EinsumAxis::Elementwise(_)) => return Ok(false),
                (None, EinsumAxis::Reduction(r)) => {
                    if letter_of_reduction.insert(*r, letter).is_some_and(|other| other != letter) {
                        return Ok(false);
                    }
                    meaning.insert(letter, *axis);
                }
            }
        }
    }
    Ok(true)
}

/// The number of call sites: distinct calls (one function with one list of arguments, however
/// many of its results are used) in the DAG and, once per distinct function, in function bodies.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_core::function::trace_call;
/// use pytato_transform::analysis::num_call_sites;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let double = |a: &[pytato_core::Array]| Ok(vec![&a[0] * 2.0, &a[0] + 1.0]);
/// let once = trace_call(double, &[&x])?;
/// let twice = trace_call(double, &[&once[0]])?;
/// let out = &(&once[1] + &twice[0]) + &twice[1];
/// assert_eq!(num_call_sites(&(&out).into()), 2);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn num_call_sites(outputs: &Outputs) -> usize {
    let mut seen: std::collections::HashSet<pytato_core::function::Function> = std::collections::HashSet::new();
    let mut pending: Vec<Outputs> = vec![outputs.clone()];
    let mut count = 0;
    while let Some(dag) = pending.pop() {
        for (function, sites) in pytato_core::function::call_sites(&dag) {
            count += sites;
            if seen.insert(function.clone()) {
                pending.push(function.body().expect("a function's results have valid names"));
            }
        }
    }
    count
}
