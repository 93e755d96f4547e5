//! Traversals beyond the plain bottom-up [`Mapper`]: a mapper that passes a
//! context from each node down to its children ([`ContextMapper`]), a walk from the outputs down
//! that can skip a subgraph or stop ([`walk_top_down`]), a memo cache that one run of a mapper
//! hands to the next ([`MapCache`]), and copy mappers that also map the bodies of the functions
//! a DAG calls ([`map_copy_through_calls`]).
//!
//! All of them keep their own stack: a DAG of any depth is fine.

use std::collections::HashMap;
use std::hash::Hash;

use pytato_core::array::{IdMap, IdSet, post_order};
use pytato_core::function::Function;
use pytato_core::{Array, NodeKind, Result};
use pytato_runtime::backend::Outputs;

use crate::mapper::{CopyMapper, Mapper, dispatch, map_copy, map_dag};

/// A mapper whose result for a node depends on a context its users pass down (upstream pytato's
/// mappers with extra arguments): each node is mapped once per distinct context it is reached
/// with, after its children (each mapped in the context [`child_context`](Self::child_context)
/// gives it).
///
/// The work is the number of distinct (node, context) pairs: a context that takes few values
/// (a depth bound, a flag, a small enum) keeps it linear.
///
/// ```
/// use pytato_core::{Array, DType, NodeKind, Result};
/// use pytato_frontend as pt;
/// use pytato_transform::context::{ContextMapper, map_with_context};
///
/// /// For every placeholder: how many reductions enclose its use (0, 1, or more).
/// struct InsideReductions;
/// impl ContextMapper for InsideReductions {
///     type Context = usize;
///     type Output = Vec<(String, usize)>;
///     fn child_context(&mut self, node: &Array, context: &usize, _child: usize) -> usize {
///         let reduces = matches!(node.kind(), NodeKind::IndexLambda(il) if !il.reduction_descriptors.is_empty());
///         context + usize::from(reduces)
///     }
///     fn map(&mut self, node: &Array, context: &usize, children: &[Self::Output]) -> Result<Self::Output> {
///         let mut found: Vec<(String, usize)> = children.concat();
///         if let Some(name) = node.name() {
///             found.push((name.to_string(), *context));
///         }
///         Ok(found)
///     }
/// }
///
/// let x = pt::placeholder("x", [4, 3], DType::F64)?;
/// let y = pt::placeholder("y", pytato_core::Shape::scalar(), DType::F64)?;
/// let out = &pt::sum(&(&pt::sum(&x, 1)? * 2.0), None)? + &y;
/// let [found] = <[_; 1]>::try_from(map_with_context(&mut InsideReductions, &[(out, 0)])?).unwrap();
/// assert_eq!(found, [("x".to_string(), 2), ("y".to_string(), 0)]);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub trait ContextMapper {
    /// What a node passes to its children.
    type Context: Clone + Eq + Hash;
    /// What a node maps to.
    type Output: Clone;

    /// The context of `node`'s child number `index` (in [`NodeKind::children`] order), given
    /// `node`'s own. Defaults to `node`'s own context.
    ///
    /// [`NodeKind::children`]: pytato_core::NodeKind::children
    fn child_context(&mut self, node: &Array, context: &Self::Context, index: usize) -> Self::Context {
        let _ = (node, index);
        context.clone()
    }

    /// `node` in `context`, given the results of its children (each in its own context).
    fn map(&mut self, node: &Array, context: &Self::Context, children: &[Self::Output]) -> Result<Self::Output>;
}

/// Applies `mapper` to every (node, context) pair reachable from `roots` (each given with the
/// context it starts in), children first, each pair once; returns the results for `roots`.
pub fn map_with_context<M: ContextMapper>(mapper: &mut M, roots: &[(Array, M::Context)]) -> Result<Vec<M::Output>> {
    type Key<C> = (usize, C);
    /// A node, its context, and its children's contexts once they have been pushed.
    type Frame<C> = (Array, C, Option<Vec<C>>);
    let mut memo: HashMap<Key<M::Context>, M::Output> = HashMap::new();
    let mut stack: Vec<Frame<M::Context>> = roots.iter().rev().map(|(a, c)| (a.clone(), c.clone(), None)).collect();
    while let Some((node, context, child_contexts)) = stack.pop() {
        let key = (node.id(), context.clone());
        if memo.contains_key(&key) {
            continue;
        }
        let children = node.children();
        match child_contexts {
            None => {
                let contexts: Vec<M::Context> =
                    (0..children.len()).map(|i| mapper.child_context(&node, &context, i)).collect();
                let pending: Vec<(Array, M::Context)> = children
                    .iter()
                    .zip(&contexts)
                    .filter(|(c, cc)| !memo.contains_key(&(c.id(), (*cc).clone())))
                    .map(|(c, cc)| ((*c).clone(), cc.clone()))
                    .collect();
                stack.push((node.clone(), context, Some(contexts)));
                stack.extend(pending.into_iter().rev().map(|(c, cc)| (c, cc, None)));
            }
            Some(contexts) => {
                let results: Vec<M::Output> =
                    children.iter().zip(contexts).map(|(c, cc)| memo[&(c.id(), cc)].clone()).collect();
                let out = mapper.map(&node, &context, &results)?;
                memo.insert(key, out);
            }
        }
    }
    Ok(roots.iter().map(|(a, c)| memo[&(a.id(), c.clone())].clone()).collect())
}

/// What [`walk_top_down`] does after visiting a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Go on to the node's children.
    Continue,
    /// Do not visit the node's children from here (they may still be reached through another
    /// user).
    SkipChildren,
    /// End the walk.
    Stop,
}

/// Visits the nodes reachable from `roots`, outputs first, each node once (on the first path that
/// reaches it, depth first, children in [`NodeKind::children`] order); `visit` may skip a node's
/// children or stop the walk. Returns `true` when `visit` stopped it.
///
/// [`NodeKind::children`]: pytato_core::NodeKind::children
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_transform::context::{Visit, walk_top_down};
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let y = pt::sin(&pt::cos(&x)?)?;
/// // Is there a placeholder below y? Stop at the first one.
/// let mut kinds = Vec::new();
/// let found = walk_top_down([&y], |n| {
///     kinds.push(n.kind_name());
///     if n.is_input() { Visit::Stop } else { Visit::Continue }
/// });
/// assert!(found);
/// assert_eq!(kinds, ["IndexLambda", "IndexLambda", "Placeholder"]);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn walk_top_down<'a>(roots: impl IntoIterator<Item = &'a Array>, mut visit: impl FnMut(&Array) -> Visit) -> bool {
    let mut seen = IdSet::default();
    let mut stack: Vec<Array> = roots.into_iter().cloned().collect();
    stack.reverse();
    while let Some(node) = stack.pop() {
        if !seen.insert(node.id()) {
            continue;
        }
        match visit(&node) {
            Visit::Stop => return true,
            Visit::SkipChildren => {}
            Visit::Continue => stack.extend(node.children().into_iter().rev().cloned()),
        }
    }
    false
}

/// The results of a mapper for the nodes it has mapped, kept between runs: a second run of the
/// same mapper over a DAG that shares nodes with the first maps only the new ones (a time loop
/// that maps each step's DAG, a pass applied to several outputs one at a time). The cache holds
/// the nodes it has results for, so their identities stay valid. Use one cache per mapper: the
/// results are that mapper's.
pub struct MapCache<O> {
    results: IdMap<(Array, O)>,
}

impl<O> Default for MapCache<O> {
    fn default() -> Self {
        MapCache { results: IdMap::default() }
    }
}

impl<O> MapCache<O> {
    /// An empty cache.
    pub fn new() -> MapCache<O> {
        MapCache::default()
    }

    /// How many nodes have results.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// `true` when nothing has been mapped yet.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }
}

/// [`map_dag`] with the results of earlier runs in `cache`: nodes already
/// there are not mapped again, new results are added.
///
/// ```
/// use pytato_core::{Array, DType, Result};
/// use pytato_frontend as pt;
/// use pytato_transform::context::{MapCache, map_dag_cached};
/// use pytato_transform::mapper::Mapper;
/// struct Count(usize);
/// impl Mapper for Count {
///     type Output = ();
///     fn map_node(&mut self, _: &Array, _: &[()]) -> Result<()> {
///         self.0 += 1;
///         Ok(())
///     }
/// }
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let shared = pt::exp(&x)?;
/// let (a, b) = (&shared + 1.0, &shared * 2.0);
/// let (mut count, mut cache) = (Count(0), MapCache::new());
/// map_dag_cached(&mut count, &[a], &mut cache)?;
/// map_dag_cached(&mut count, &[b], &mut cache)?;
/// assert_eq!(count.0, 4); // x, exp(x), a, then only b
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn map_dag_cached<M: Mapper + ?Sized>(
    mapper: &mut M,
    roots: &[Array],
    cache: &mut MapCache<M::Output>,
) -> Result<Vec<M::Output>> {
    let results = &mut cache.results;
    let order = post_order(roots, |n| if results.contains_key(&n.id()) { Vec::new() } else { n.children() });
    let mut children = Vec::new();
    for node in &order {
        if results.contains_key(&node.id()) {
            continue;
        }
        children.clear();
        children.extend(node.children().iter().map(|c| results[&c.id()].1.clone()));
        let out = dispatch(mapper, node, &children)?;
        results.insert(node.id(), (node.clone(), out));
    }
    Ok(roots.iter().map(|r| results[&r.id()].1.clone()).collect())
}

/// Runs a copy mapper over `outputs` and into the bodies of the functions they call (upstream's
/// mapping of function definitions): each distinct function's parameters and results are mapped
/// once, with a memo of their own (a body is its own namespace), into a new function, and every
/// call is rebuilt over it before the mapper sees it (`map_call_result`). The mapped parameters
/// must stay named placeholders.
///
/// ```
/// use pytato_core::{Array, DType, NodeKind, Result, expr::{Expr, Func}};
/// use pytato_frontend as pt;
/// use pytato_core::function::trace_call;
/// use pytato_transform::context::map_copy_through_calls;
/// use pytato_transform::mapper::CopyMapper;
///
/// struct SinToCos;
/// impl CopyMapper for SinToCos {
///     fn map_index_lambda(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
///         let NodeKind::IndexLambda(il) = node.kind() else { unreachable!() };
///         let expr = il.expr.rewrite(&mut |e| match e {
///             Expr::Call(Func::Sin, args) => Some(Expr::Call(Func::Cos, args.clone())),
///             _ => None,
///         });
///         let bindings = il.bindings.keys().cloned().zip(children.iter().cloned()).collect();
///         Array::new_index_lambda(expr, node.shape().clone(), bindings, il.reduction_descriptors.clone())?
///             .with_size_checks(il.checks.clone()) // keep what the sizes must satisfy
///     }
/// }
///
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let called = trace_call(|a| Ok(vec![pt::sin(&a[0])?]), &[&x])?.remove(0);
/// let mapped = map_copy_through_calls(&mut SinToCos, &(&called).into())?;
/// let expected = trace_call(|a| Ok(vec![pt::cos(&a[0])?]), &[&x])?.remove(0);
/// assert!(matches!(mapped, pytato_runtime::backend::Outputs::Single(a) if a == expected));
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn map_copy_through_calls<M: CopyMapper>(mapper: &mut M, outputs: &Outputs) -> Result<Outputs> {
    map_copy(&mut ThroughCalls { inner: mapper, functions: HashMap::new() }, outputs)
}

struct ThroughCalls<'m, M> {
    inner: &'m mut M,
    /// Each function mapped so far, and what it became.
    functions: HashMap<Function, Function>,
}

impl<M: CopyMapper> ThroughCalls<'_, M> {
    fn function(&mut self, f: &Function) -> Result<Function> {
        if let Some(g) = self.functions.get(f) {
            return Ok(g.clone());
        }
        let params: Vec<Array> = f.parameters().map(|(_, p)| p.clone()).collect();
        let names: Vec<&str> = f.returns().keys().map(|n| &**n).collect();
        let roots: Vec<Array> = params.iter().cloned().chain(f.returns().values().cloned()).collect();
        let mut mapped = map_dag(self, &roots)?;
        let returns = mapped.split_off(params.len());
        let g = Function::new(mapped, names.into_iter().zip(returns).collect(), f.tags().clone())?;
        self.functions.insert(f.clone(), g.clone());
        Ok(g)
    }
}

impl<M: CopyMapper> CopyMapper for ThroughCalls<'_, M> {
    fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let NodeKind::CallResult { function, .. } = node.kind() else {
            return dispatch(&mut *self.inner, node, children);
        };
        let mapped = self.function(function)?;
        // The mapper sees the original node (mappers keyed by node identity find it), and a call
        // of the original function it returns is made a call of the mapped one.
        let result = dispatch(&mut *self.inner, node, children)?;
        match result.kind() {
            NodeKind::CallResult { function: f, bindings, name } if f == function => {
                Array::new_call_result(&mapped, bindings.clone(), name)?.with_metadata_of(&result)
            }
            _ => Ok(result),
        }
    }
}
