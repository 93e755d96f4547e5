//! The Mapper family: traversals of array DAGs that users write themselves.
//!
//! A [`Mapper`] has one method per node kind. [`map_dag`] applies it **bottom-up**: each node is
//! visited once (memoized by identity, so shared subgraphs are not revisited), after all of its
//! children, and receives their results in [`NodeKind::children`] order. The traversal keeps its
//! own stack, so a DAG of any depth is fine.
//!
//! - A **combine mapper** (a fold) is a [`Mapper`] whose `Output` summarises a subgraph.
//! - A **copy mapper** ([`CopyMapper`]) rebuilds the DAG; each method gets the already-mapped
//!   children and by default rebuilds the node over them ([`Array::with_children`]), which returns
//!   the very same node when nothing below changed. [`map_copy`] runs one over [`Outputs`].
//! - A **walk mapper** is [`walk`]: a callback per node, children first.
//!
//! Gatherers built on these: [`dependencies`], [`inputs`], [`size_params`], [`users`],
//! [`topological_sort`].
//!
//! A user mapper that turns every `sin` into `cos`:
//!
//! ```
//! use pytato_core::{Array, DType, NodeKind, Result, expr::{Expr, Func}};
//! use pytato_frontend as pt;
//! use pytato_transform::mapper::{CopyMapper, map_copy};
//!
//! struct SinToCos;
//! impl CopyMapper for SinToCos {
//!     fn map_index_lambda(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
//!         let NodeKind::IndexLambda(il) = node.kind() else { unreachable!() };
//!         let expr = il.expr.rewrite(&mut |e| match e {
//!             Expr::Call(Func::Sin, args) => Some(Expr::Call(Func::Cos, args.clone())),
//!             _ => None,
//!         });
//!         let bindings = il.bindings.keys().cloned().zip(children.iter().cloned()).collect();
//!         Array::new_index_lambda(expr, node.shape().clone(), bindings, il.reduction_descriptors.clone())?
//!             .with_size_checks(il.checks.clone()) // keep what the sizes must satisfy
//!     }
//! }
//!
//! let x = pt::placeholder("x", [3], DType::F64)?;
//! let y = pt::sin(&pt::sin(&x)?)?;
//! let z = map_copy(&mut SinToCos, &(&y).into())?;
//! let expected = pt::cos(&pt::cos(&x)?)?;
//! assert!(matches!(z, pytato_runtime::backend::Outputs::Single(a) if a == expected));
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::{BTreeSet, HashMap};

use pytato_core::array::{IdMap, post_order};
use pytato_core::{Array, NodeKind, Result};
use pytato_runtime::backend::Outputs;

macro_rules! mapper_methods {
    ($($(#[$doc:meta])* $method:ident;)*) => {
        /// One method per node kind, applied bottom-up by [`map_dag`]. Every method defaults to
        /// [`Mapper::map_node`], so a mapper overrides only the kinds it cares about.
        pub trait Mapper {
            /// What a node maps to.
            type Output: Clone;

            /// The fallback for every kind not overridden.
            fn map_node(&mut self, node: &Array, children: &[Self::Output]) -> Result<Self::Output>;

            $(
                $(#[$doc])*
                fn $method(&mut self, node: &Array, children: &[Self::Output]) -> Result<Self::Output> {
                    self.map_node(node, children)
                }
            )*
        }

        /// A mapper that rebuilds the DAG. Every method defaults to [`CopyMapper::map_node`],
        /// which rebuilds the node over its mapped children.
        pub trait CopyMapper {
            /// The fallback for every kind not overridden: the node over its mapped children (the
            /// very same node if none changed).
            fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
                node.with_children(children.to_vec())
            }

            $(
                $(#[$doc])*
                fn $method(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
                    self.map_node(node, children)
                }
            )*
        }

        impl<T: CopyMapper> Mapper for T {
            type Output = Array;
            fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
                CopyMapper::map_node(self, node, children)
            }
            $(
                fn $method(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
                    CopyMapper::$method(self, node, children)
                }
            )*
        }
    };
}

mapper_methods! {
    /// A `Placeholder`.
    map_placeholder;
    /// A `SizeParam`.
    map_size_param;
    /// A `DataWrapper`.
    map_data_wrapper;
    /// An `IndexLambda`; children are its bindings in name order.
    map_index_lambda;
    /// An `Einsum`; children are its operands.
    map_einsum;
    /// A `Reshape`.
    map_reshape;
    /// A `Roll`.
    map_roll;
    /// An `AxisPermutation`.
    map_axis_permutation;
    /// A `Stack`.
    map_stack;
    /// A `Concatenate`.
    map_concatenate;
    /// A `BasicIndex`.
    map_basic_index;
    /// An `AdvancedIndexInContiguousAxes`; children are the array, then the index arrays.
    map_advanced_index_contiguous;
    /// An `AdvancedIndexInNoncontiguousAxes`; children are the array, then the index arrays.
    map_advanced_index_noncontiguous;
    /// A `Nonzero` (a host step, see `pytato_runtime::phases`); the child is the mask.
    map_nonzero;
    /// A `Scatter` (a host step); children are the array, the positions and the values.
    map_scatter;
    /// A `Sort` (a host step); the child is the sorted array.
    map_sort;
    /// A `Scan` (a host step); the child is the scanned array.
    map_scan;
    /// A `SearchSorted` (a host step); children are the sorted array and the values.
    map_search_sorted;
    /// A `CallResult`; children are the call's arguments (the function's body is not visited:
    /// map it with the function, see `pytato_core::function`).
    map_call_result;
    /// A `NamedArray`; children are the container's entries in name order.
    map_named_array;
    /// A `DistributedRecv` (no children).
    map_distributed_recv;
    /// A `DistributedSendRefHolder`; children are the array the send is stapled to, then the sent
    /// data.
    map_distributed_send_ref_holder;
}

/// Calls the method of `mapper` for `node`'s kind.
pub fn dispatch<M: Mapper + ?Sized>(mapper: &mut M, node: &Array, children: &[M::Output]) -> Result<M::Output> {
    match node.kind() {
        NodeKind::Placeholder { .. } => mapper.map_placeholder(node, children),
        NodeKind::SizeParam { .. } => mapper.map_size_param(node, children),
        NodeKind::DataWrapper { .. } => mapper.map_data_wrapper(node, children),
        NodeKind::IndexLambda(_) => mapper.map_index_lambda(node, children),
        NodeKind::Einsum(_) => mapper.map_einsum(node, children),
        NodeKind::Reshape { .. } => mapper.map_reshape(node, children),
        NodeKind::Roll { .. } => mapper.map_roll(node, children),
        NodeKind::AxisPermutation { .. } => mapper.map_axis_permutation(node, children),
        NodeKind::Stack { .. } => mapper.map_stack(node, children),
        NodeKind::Concatenate { .. } => mapper.map_concatenate(node, children),
        NodeKind::BasicIndex { .. } => mapper.map_basic_index(node, children),
        NodeKind::AdvancedIndexInContiguousAxes { .. } => mapper.map_advanced_index_contiguous(node, children),
        NodeKind::AdvancedIndexInNoncontiguousAxes { .. } => mapper.map_advanced_index_noncontiguous(node, children),
        NodeKind::Nonzero { .. } => mapper.map_nonzero(node, children),
        NodeKind::Scatter { .. } => mapper.map_scatter(node, children),
        NodeKind::Sort { .. } => mapper.map_sort(node, children),
        NodeKind::Scan { .. } => mapper.map_scan(node, children),
        NodeKind::SearchSorted { .. } => mapper.map_search_sorted(node, children),
        NodeKind::CallResult { .. } => mapper.map_call_result(node, children),
        NodeKind::NamedArray { .. } => mapper.map_named_array(node, children),
        NodeKind::DistributedRecv { .. } => mapper.map_distributed_recv(node, children),
        NodeKind::DistributedSendRefHolder { .. } => mapper.map_distributed_send_ref_holder(node, children),
    }
}

/// Applies `mapper` to every node reachable from `roots`, children first, each node once; returns
/// the results for `roots`.
pub fn map_dag<M: Mapper + ?Sized>(mapper: &mut M, roots: &[Array]) -> Result<Vec<M::Output>> {
    let order = post_order(roots, Array::children);
    let mut memo: IdMap<M::Output> = IdMap::with_capacity_and_hasher(order.len(), Default::default());
    let mut children = Vec::new();
    for node in &order {
        children.clear();
        children.extend(node.children().iter().map(|c| memo[&c.id()].clone()));
        let out = dispatch(mapper, node, &children)?;
        memo.insert(node.id(), out);
    }
    Ok(roots.iter().map(|r| memo[&r.id()].clone()).collect())
}

/// Runs a copy mapper over `outputs`; a dictionary keeps its names and tags.
pub fn map_copy<M: CopyMapper>(mapper: &mut M, outputs: &Outputs) -> Result<Outputs> {
    let entries = outputs.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    let mut mapped = map_dag(mapper, &roots)?.into_iter();
    outputs.map_arrays(|_| mapped.next().expect("one result per output"))
}

/// Calls `visit` on every node reachable from `roots`, children first, each node once.
pub fn walk<'a>(roots: impl IntoIterator<Item = &'a Array>, mut visit: impl FnMut(&Array)) {
    for node in post_order(roots, Array::children) {
        visit(&node);
    }
}

/// Every node reachable from `roots` (the roots included), each once, children first.
pub fn topological_sort<'a>(roots: impl IntoIterator<Item = &'a Array>) -> Vec<Array> {
    post_order(roots, Array::children)
}

/// Every node the roots depend on, the roots included.
pub fn dependencies<'a>(roots: impl IntoIterator<Item = &'a Array>) -> Vec<Array> {
    topological_sort(roots)
}

/// The placeholders, size parameters and data wrappers the roots depend on.
pub fn inputs<'a>(roots: impl IntoIterator<Item = &'a Array>) -> Vec<Array> {
    topological_sort(roots).into_iter().filter(Array::is_input).collect()
}

/// The names of the size parameters the DAG mentions (shapes, index items, reduction bounds and
/// `SizeParam` nodes).
pub fn size_params<'a>(roots: impl IntoIterator<Item = &'a Array>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(roots, |node| pytato_runtime::binding::node_size_params(node, &mut out));
    out
}

/// For each node (by [`Array::id`]), the nodes that use it, each once.
pub fn users<'a>(roots: impl IntoIterator<Item = &'a Array>) -> HashMap<usize, Vec<Array>> {
    let mut users: HashMap<usize, Vec<Array>> = HashMap::new();
    walk(roots, |node| {
        users.entry(node.id()).or_default();
        let mut seen = Vec::new();
        for child in node.children() {
            if !seen.contains(&child.id()) {
                seen.push(child.id());
                users.entry(child.id()).or_default().push(node.clone());
            }
        }
    });
    users
}
