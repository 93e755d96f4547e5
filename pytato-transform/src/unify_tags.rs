//! Tag unification: axis tags spread along the axes the computation identifies.
//!
//! Metadata is never propagated implicitly (seed: "Metadata Propagation"); this pass is the user's
//! explicit tool. It collects equations between `(array, axis)` pairs from every node kind (an
//! index lambda reading `a[_0, _1]` identifies its axis 0 with `a`'s axis 0; an einsum identifies
//! operand axes with the output axes and with each other per reduction index; a permutation, a
//! roll, a stack, a concatenation, `expand_dims` (a reshape tagged [`ExpandedDimsReshape`]; no other
//! reshape, whose shapes cannot say which axes it keeps), indexing and
//! named arrays likewise), joins the pairs into classes, and gives every axis of a class the tags
//! that any axis of it carries and that `filter` accepts. Reductions take part like axes: an
//! index lambda reading `a[_0, _r0]` identifies `a`'s axis 1 with its reduction `_r0`, an einsum
//! each operand axis with the reduction index it is summed over, so a reduction's descriptor gets
//! the tags of the axes it runs along and gives them its own. An axis tagged
//! [`IgnoredForPropagation`] takes no part. Calls are followed: a call's result axes are the
//! axes of the function's result, its arguments' axes those of the parameters, and the bodies
//! are retagged too (once per function: a function called at two sites joins the classes of both
//! sites' arguments, since its one body serves both).
//!
//! ```
//! use pytato_core::{DType, Tag};
//! use pytato_runtime::backend::Outputs;
//! use pytato_frontend as pt;
//! use pytato_transform::unify_tags::unify_axes_tags;
//!
//! #[derive(Debug, PartialEq, Eq, Hash)]
//! struct ElementAxis;
//! impl Tag for ElementAxis {}
//!
//! let u = pt::placeholder("u", [100, 3], DType::F64)?.with_tagged_axis(0, ElementAxis)?;
//! let v = pt::transpose(&(&u * &u), None)?;           // (3, 100)
//! let Outputs::Single(v) = unify_axes_tags(&(&v).into(), |t| t.downcast_ref::<ElementAxis>().is_some())? else { unreachable!() };
//! assert!(v.axes()[1].tags.contains(&ElementAxis));
//! assert!(v.axes()[0].tags.is_empty());
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::{HashMap, HashSet};

use pytato_core::array::{IndexItem, IndexLayout};
use pytato_core::expr::Expr;
use pytato_core::names::{Reserved, classify};
use pytato_core::tags::{ExpandedDimsReshape, TagRef, TagSet};
use pytato_core::{Array, Axis, Dim, EinsumAxis, NodeKind, Result, Tag};
use pytato_runtime::backend::Outputs;

use pytato_core::function::Function;

use crate::context::map_copy_through_calls;
use crate::mapper::{CopyMapper, topological_sort};

/// Marks an axis that tag unification leaves alone: it neither gives nor receives tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IgnoredForPropagation;
impl Tag for IgnoredForPropagation {}

/// Spreads the axis tags accepted by `filter` along the axes the computation identifies.
pub fn unify_axes_tags(outputs: &Outputs, filter: impl Fn(&TagRef) -> bool) -> Result<Outputs> {
    let roots: Vec<Array> = outputs.entries().into_iter().map(|(_, a)| a).collect();
    let mut nodes = topological_sort(&roots);
    // The bodies of the functions called, nested calls included, each once.
    let mut seen: HashSet<Function> = HashSet::new();
    let mut k = 0;
    while k < nodes.len() {
        if let NodeKind::CallResult { function, .. } = nodes[k].kind()
            && seen.insert(function.clone())
        {
            let body: Vec<Array> =
                function.parameters().map(|(_, p)| p.clone()).chain(function.returns().values().cloned()).collect();
            nodes.extend(topological_sort(&body));
        }
        k += 1;
    }
    let mut uf = UnionFind::default();
    for node in &nodes {
        for (a, b) in equations(node) {
            uf.union(a, b);
        }
    }
    // The tags of each class.
    let mut class_tags: HashMap<(usize, usize), Vec<TagRef>> = HashMap::new();
    for node in &nodes {
        for (axis, meta) in node.axes().iter().enumerate() {
            if meta.tags.contains(&IgnoredForPropagation) {
                continue;
            }
            let root = uf.find((node.id(), axis));
            let entry = class_tags.entry(root).or_default();
            for tag in meta.tags.iter().filter(|t| filter(t)) {
                if !entry.contains(tag) {
                    entry.push(tag.clone());
                }
            }
        }
    }
    for node in &nodes {
        for (r, tags) in reduction_tags(node) {
            let root = uf.find((node.id(), REDUCTION + r));
            let entry = class_tags.entry(root).or_default();
            for tag in tags.iter().filter(|t| filter(t)) {
                if !entry.contains(tag) {
                    entry.push(tag.clone());
                }
            }
        }
    }
    let mut new_axes: HashMap<usize, Vec<Axis>> = HashMap::new();
    let mut retag_reductions: HashMap<usize, HashMap<usize, Vec<TagRef>>> = HashMap::new();
    for node in &nodes {
        for (r, tags) in reduction_tags(node) {
            let class = class_tags.get(&uf.find((node.id(), REDUCTION + r))).cloned().unwrap_or_default();
            let missing: Vec<TagRef> = class.into_iter().filter(|t| !tags.iter().any(|m| m == t)).collect();
            if !missing.is_empty() {
                retag_reductions.entry(node.id()).or_default().insert(r, missing);
            }
        }
        let mut changed = false;
        let mut axes = node.axes().to_vec();
        for (axis, meta) in axes.iter_mut().enumerate() {
            if meta.tags.contains(&IgnoredForPropagation) {
                continue;
            }
            let tags = class_tags.get(&uf.find((node.id(), axis))).cloned().unwrap_or_default();
            let missing: Vec<TagRef> = tags.into_iter().filter(|t| !meta.tags.iter().any(|m| m == t)).collect();
            if !missing.is_empty() {
                meta.tags = meta.tags.union(missing)?;
                changed = true;
            }
        }
        if changed {
            new_axes.insert(node.id(), axes);
        }
    }
    map_copy_through_calls(&mut AxisRetagger { new_axes, retag_reductions }, outputs)
}

/// The key of reduction `r` of a node: past any axis number.
const REDUCTION: usize = 1 << 40;

/// The reductions of an index lambda or einsum, by number, with their tags.
fn reduction_tags(node: &Array) -> Vec<(usize, TagSet)> {
    match node.kind() {
        NodeKind::IndexLambda(il) => il
            .reduction_descriptors
            .iter()
            .filter_map(|(iname, d)| match classify(iname) {
                Some(Reserved::ReductionIname(r)) => Some((r, d.tags.clone())),
                _ => None,
            })
            .collect(),
        NodeKind::Einsum(e) => {
            let mut reductions: Vec<usize> = e
                .access
                .iter()
                .flatten()
                .filter_map(|a| match a {
                    EinsumAxis::Reduction(r) => Some(*r),
                    EinsumAxis::Elementwise(_) => None,
                })
                .collect();
            reductions.sort_unstable();
            reductions.dedup();
            reductions
                .into_iter()
                .map(|r| (r, e.reduction_descriptors.get(&r).map(|d| d.tags.clone()).unwrap_or_default()))
                .collect()
        }
        _ => Vec::new(),
    }
}

struct AxisRetagger {
    new_axes: HashMap<usize, Vec<Axis>>,
    /// Tags to add to reductions: node id -> reduction number -> tags.
    retag_reductions: HashMap<usize, HashMap<usize, Vec<TagRef>>>,
}

impl CopyMapper for AxisRetagger {
    fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let mut rebuilt = node.with_children(children.to_vec())?;
        if let Some(axes) = self.new_axes.get(&node.id()) {
            rebuilt = rebuilt.with_axes(axes.clone())?;
        }
        if let Some(missing) = self.retag_reductions.get(&node.id()) {
            rebuilt = rebuilt.map_reduction_tags(|r, tags| match missing.get(&r) {
                Some(add) => tags.union(add.iter().cloned()),
                None => Ok(tags.clone()),
            })?;
        }
        Ok(rebuilt)
    }
}

type Key = (usize, usize);

#[derive(Default)]
struct UnionFind {
    parent: HashMap<Key, Key>,
}

impl UnionFind {
    fn find(&mut self, k: Key) -> Key {
        let mut root = k;
        while let Some(&p) = self.parent.get(&root) {
            if p == root {
                break;
            }
            root = p;
        }
        // Path compression, iteratively.
        let mut cur = k;
        while cur != root {
            let next = self.parent.get(&cur).copied().unwrap_or(root);
            self.parent.insert(cur, root);
            cur = next;
        }
        root
    }

    fn union(&mut self, a: Key, b: Key) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }
}

fn one(d: &Dim) -> bool {
    d.as_int() == Some(1)
}

/// The `(array, axis)` pairs `node` identifies with its own axes or with each other.
fn equations(node: &Array) -> Vec<(Key, Key)> {
    let mut eqs = Vec::new();
    // Operand axis `ax` of `a` runs along reduction `r` of `node` (unless broadcast or ignored).
    let mut along = Vec::new();
    let mut link_reduction = |a: &Array, ax: usize, r: usize| {
        if !one(&a.shape()[ax]) && !a.axes()[ax].tags.contains(&IgnoredForPropagation) {
            along.push(((a.id(), ax), (node.id(), REDUCTION + r)));
        }
    };
    let mut link = |a: &Array, ax: usize, b: &Array, bx: usize| {
        // Broadcast (length-1 against longer) axes are not the same axis, and ignored axes take
        // no part at all.
        let ignored = |x: &Array, i: usize| x.axes()[i].tags.contains(&IgnoredForPropagation);
        if one(&a.shape()[ax]) == one(&b.shape()[bx]) && !ignored(a, ax) && !ignored(b, bx) {
            eqs.push(((a.id(), ax), (b.id(), bx)));
        }
    };
    match node.kind() {
        NodeKind::Placeholder { .. }
        | NodeKind::SizeParam { .. }
        | NodeKind::DataWrapper { .. }
        | NodeKind::DistributedRecv { .. } => {}
        // The holder is the array the send is stapled to.
        NodeKind::DistributedSendRefHolder { passthrough, .. } => {
            (0..node.ndim()).for_each(|i| link(passthrough, i, node, i))
        }
        // A position list has no axis of the mask; counts are new axes.
        NodeKind::Nonzero { .. } => {}
        // A result is the function's result; each argument is its parameter.
        NodeKind::CallResult { function, bindings, name } => {
            let result = &function.returns()[name];
            (0..node.ndim()).for_each(|i| link(result, i, node, i));
            for ((_, parameter), argument) in function.parameters().zip(bindings) {
                (0..argument.ndim()).for_each(|j| link(parameter, j, argument, j));
            }
        }
        // A position per value: the values' axes are the result's.
        NodeKind::SearchSorted { values, .. } => (0..node.ndim()).for_each(|i| link(values, i, node, i)),
        NodeKind::Scatter { array, .. } | NodeKind::Sort { array, .. } | NodeKind::Scan { array, .. } => {
            (0..node.ndim()).for_each(|i| link(array, i, node, i))
        }
        NodeKind::IndexLambda(il) => il.expr.walk(&mut |e| {
            if let Expr::Subscript(name, idx) = e
                && let Some(arg) = il.bindings.get(name)
            {
                for (j, i) in idx.iter().enumerate() {
                    if let Expr::Var(v) = i {
                        match classify(v) {
                            Some(Reserved::Iname(k)) => link(arg, j, node, k),
                            Some(Reserved::ReductionIname(r)) => link_reduction(arg, j, r),
                            _ => {}
                        }
                    }
                }
            }
        }),
        NodeKind::Einsum(e) => {
            // Operand axes summed over one reduction index are one class with the reduction.
            for (acc, arg) in e.access.iter().zip(&e.args) {
                for (j, ax) in acc.iter().enumerate() {
                    match ax {
                        EinsumAxis::Elementwise(o) => link(arg, j, node, *o),
                        EinsumAxis::Reduction(r) => link_reduction(arg, j, *r),
                    }
                }
            }
        }
        NodeKind::Reshape { array, .. } => {
            // A reshape keeps the meaning of its axes only where it says so: one that inserts
            // length-1 axes (`expand_dims`) is tagged with their positions. The shapes alone do
            // not tell: (e*n,) reshaped to (e, n) with n = 1 looks like an inserted axis, yet its
            // axis 0 counts elements where the input's counted nodes (pytato's rule too).
            if let Some(ExpandedDimsReshape(inserted)) = node.tags_of_type::<ExpandedDimsReshape>().next() {
                let kept = (0..node.ndim()).filter(|i| !inserted.contains(i));
                kept.enumerate().for_each(|(i, o)| link(array, i, node, o));
            }
        }
        NodeKind::Roll { array, .. } => (0..node.ndim()).for_each(|i| link(array, i, node, i)),
        NodeKind::AxisPermutation { array, axes } => {
            axes.iter().enumerate().for_each(|(i, &a)| link(array, a, node, i))
        }
        NodeKind::Stack { arrays, axis } => {
            for a in arrays {
                (0..a.ndim()).for_each(|j| link(a, j, node, if j < *axis { j } else { j + 1 }));
            }
        }
        NodeKind::Concatenate { arrays, axis } => {
            for a in arrays {
                (0..a.ndim()).filter(|j| j != axis).for_each(|j| link(a, j, node, j));
            }
        }
        NodeKind::BasicIndex { array, indices }
        | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
        | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => {
            let layout = IndexLayout::of(node).expect("an indexing node");
            let block_end = layout.block_start + layout.block_len;
            for (axis, item) in indices.iter().enumerate() {
                match item {
                    IndexItem::Slice(s) => {
                        // Only a full, forward slice keeps the axis as it is.
                        if s.step == 1 && s.start == Dim::new(0) && s.stop == array.shape()[axis] {
                            link(array, axis, node, layout.slice_axes[axis].expect("a slice has a result axis"));
                        }
                    }
                    IndexItem::Array(ix) => {
                        let k = ix.ndim();
                        (0..k).for_each(|j| link(ix, j, node, block_end - k + j));
                    }
                    IndexItem::Int(_) => {}
                }
            }
        }
        NodeKind::NamedArray { container, name } => {
            if let Some(entry) = container.get(name) {
                (0..node.ndim()).for_each(|i| link(entry, i, node, i));
            }
        }
    }
    eqs.extend(along);
    eqs
}
