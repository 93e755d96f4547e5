//! Functions and calls (upstream pytato's `FunctionDefinition`, `Call`, `trace_call`).
//!
//! A [`Function`] is a DAG over placeholders of its own (its parameters) with named results; its
//! placeholders live in the function's namespace, apart from the caller's. A call applies it to
//! arrays: each result is a [`NodeKind::CallResult`] node whose children are the call's
//! arguments (the body is not a child: traversals of the caller do not enter it). Equal
//! definitions are one definition (structural hash and equality), so a function traced twice
//! from the same code is one function, and two calls with equal arguments are one call.
//!
//! Backends run calls by inlining them ([`inline_calls`], which every backend's `compile` applies
//! first); compiling each distinct definition once and calling it per call site is the next step.
//!
//! ```
//! use pytato_core::{frontend as pt, DType};
//! use pytato_core::function::trace_call;
//! let x = pt::placeholder("x", [5], DType::F64).unwrap();
//! let y = pt::placeholder("y", [5], DType::F64).unwrap();
//! // f(a, b) = (a * b, a + b), traced once over placeholders of the arguments' shapes.
//! let f = |args: &[pytato_core::Array]| Ok(vec![&args[0] * &args[1], &args[0] + &args[1]]);
//! let results = trace_call(f, &[&x, &y]).unwrap();
//! assert_eq!(results[0].kind_name(), "CallResult");
//! // Traced again: the same definition, the same call.
//! assert_eq!(trace_call(f, &[&x, &y]).unwrap()[1], results[1]);
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::array::{Array, IdMap, NodeKind, collect_inputs, post_order};
use crate::backend::Outputs;
use crate::error::{Error, Result};
use crate::names;
use crate::tags::TagSet;

/// A function definition: parameters (placeholders, by name) and named results. Shared
/// (cloning is cheap); `==` is structural.
#[derive(Clone)]
pub struct Function(Arc<Definition>);

struct Definition {
    /// Sorted by name.
    parameters: Vec<(Arc<str>, Array)>,
    returns: BTreeMap<Arc<str>, Array>,
    tags: TagSet,
    hash: u64,
}

impl Function {
    /// A function of `parameters` (named placeholders, distinct names) returning `returns` (at
    /// least one, identifier names). The results may read only the parameters among placeholders
    /// (data wrappers and size parameters are allowed); anything else is
    /// [`Error::InvalidArgument`].
    pub fn new(parameters: Vec<Array>, returns: Vec<(&str, Array)>, tags: TagSet) -> Result<Function> {
        let op = "Function";
        let mut params: Vec<(Arc<str>, Array)> = Vec::with_capacity(parameters.len());
        for p in parameters {
            let (NodeKind::Placeholder { .. }, Some(name)) = (p.kind(), p.name()) else {
                return Err(Error::invalid(
                    op,
                    format!("a parameter must be a named placeholder, got {}", p.summary()),
                ));
            };
            if params.iter().any(|(n, _)| &**n == name) {
                return Err(Error::invalid(op, format!("two parameters are named {name:?}")));
            }
            params.push((name.into(), p.clone()));
        }
        params.sort_by(|a, b| a.0.cmp(&b.0));
        if returns.is_empty() {
            return Err(Error::invalid(op, "a function returns at least one array"));
        }
        let mut results = BTreeMap::new();
        for (name, array) in returns {
            names::check_array_name("Function result", name)?;
            if results.insert(Arc::from(name), array).is_some() {
                return Err(Error::invalid(op, format!("two results are named {name:?}")));
            }
        }
        let inputs = collect_inputs(results.values())?;
        if let Some(unnamed) = inputs.unnamed.iter().find(|a| matches!(a.kind(), NodeKind::Placeholder { .. })) {
            return Err(Error::invalid(op, format!("the results read an unnamed placeholder {}", unnamed.summary())));
        }
        for (name, input) in &inputs.named {
            if matches!(input.kind(), NodeKind::Placeholder { .. })
                && !params.iter().any(|(n, p)| &**n == name.as_str() && p == input)
            {
                return Err(Error::invalid(
                    op,
                    format!(
                        "the results read the placeholder {name:?}, which is not a parameter (captured inputs are not supported: pass it as an argument)"
                    ),
                ));
            }
        }
        let mut h = DefaultHasher::new();
        for (name, p) in &params {
            name.hash(&mut h);
            p.hash(&mut h);
        }
        results.hash(&mut h);
        tags.hash(&mut h);
        Ok(Function(Arc::new(Definition { parameters: params, returns: results, tags, hash: h.finish() })))
    }

    /// The parameters, by name in name order.
    pub fn parameters(&self) -> impl Iterator<Item = (&str, &Array)> {
        self.0.parameters.iter().map(|(n, p)| (&**n, p))
    }

    /// The results, by name.
    pub fn returns(&self) -> &BTreeMap<Arc<str>, Array> {
        &self.0.returns
    }

    /// The definition's tags.
    pub fn tags(&self) -> &TagSet {
        &self.0.tags
    }

    /// An address that identifies this definition's allocation (equal definitions built apart
    /// have different ones), for caches keyed by identity.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Calls the function with `arguments`, one per parameter by name, each of the parameter's
    /// dtype and shape; returns every result, by name.
    pub fn call(&self, arguments: &[(&str, &Array)]) -> Result<BTreeMap<String, Array>> {
        let op = "call";
        let mut bindings = Vec::with_capacity(self.0.parameters.len());
        for (name, _) in &self.0.parameters {
            let Some((_, a)) = arguments.iter().find(|(n, _)| *n == &**name) else {
                return Err(Error::invalid(op, format!("no argument for the parameter {name:?}")));
            };
            bindings.push((*a).clone());
        }
        if let Some((extra, _)) = arguments.iter().find(|(n, _)| !self.0.parameters.iter().any(|(p, _)| &**p == *n)) {
            return Err(Error::invalid(op, format!("the function has no parameter {extra:?}")));
        }
        self.0
            .returns
            .keys()
            .map(|name| Ok((name.to_string(), Array::new_call_result(self, bindings.clone(), name)?)))
            .collect()
    }
}

impl Hash for Function {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl PartialEq for Function {
    fn eq(&self, other: &Function) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        let (a, b) = (&*self.0, &*other.0);
        a.hash == b.hash
            && a.tags == b.tags
            && a.parameters.len() == b.parameters.len()
            && a.parameters.iter().zip(&b.parameters).all(|((n, p), (m, q))| n == m && p == q)
            && a.returns.len() == b.returns.len()
            && a.returns.iter().zip(&b.returns).all(|((n, r), (m, s))| n == m && r == s)
    }
}
impl Eq for Function {}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<&str> = self.0.parameters.iter().map(|(n, _)| &**n).collect();
        let returns: Vec<&str> = self.0.returns.keys().map(|n| &**n).collect();
        write!(f, "Function({params:?} -> {returns:?})")
    }
}

/// Traces `f` over placeholders `arg0`, `arg1`, … with the shapes and dtypes of `args`, and calls
/// the function so defined with `args` (upstream's `trace_call`): the results, in `f`'s order,
/// are [`NodeKind::CallResult`] nodes of results `r0`, `r1`, ….
pub fn trace_call(f: impl FnOnce(&[Array]) -> Result<Vec<Array>>, args: &[&Array]) -> Result<Vec<Array>> {
    let params: Vec<Array> = args
        .iter()
        .enumerate()
        .map(|(k, a)| Array::new_placeholder(Some(&format!("arg{k}")), a.shape().clone(), a.dtype()))
        .collect::<Result<_>>()?;
    let results = f(&params)?;
    let names: Vec<String> = (0..results.len()).map(|k| format!("r{k}")).collect();
    let function = Function::new(params, names.iter().map(String::as_str).zip(results).collect(), TagSet::new())?;
    let arguments: Vec<(String, &Array)> = args.iter().enumerate().map(|(k, a)| (format!("arg{k}"), *a)).collect();
    let arguments: Vec<(&str, &Array)> = arguments.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let mut called = function.call(&arguments)?;
    Ok(names.iter().map(|n| called.remove(n).expect("every result")).collect())
}

/// Whether the DAG of `outputs` has calls.
pub fn has_calls(outputs: &Outputs) -> bool {
    let entries = outputs.entries();
    post_order(entries.iter().map(|(_, a)| a), Array::children)
        .iter()
        .any(|n| matches!(n.kind(), NodeKind::CallResult { .. }))
}

/// `outputs` with every call replaced by the function's body over the call's arguments, nested
/// calls included: what backends compile. The results of one call (equal function and
/// arguments) share one copy of the body.
pub fn inline_calls(outputs: &Outputs) -> Result<Outputs> {
    let entries = outputs.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    let mut bodies = Bodies::default();
    let mapped = expand(&roots, &HashMap::new(), &mut bodies)?;
    outputs.map_arrays(|a| mapped[&a.id()].clone())
}

/// A call site: the function's [`Function::id`] and the ids of its (inlined) arguments.
type Site = (usize, Vec<usize>);

/// An inlined call: its arguments (kept alive, their ids are in the key) and its results by name.
type Inlined = (Vec<Array>, BTreeMap<Arc<str>, Array>);

/// Inlined results of the call sites seen so far.
#[derive(Default)]
struct Bodies(HashMap<Site, Inlined>);

/// Every node reachable from `roots`, rebuilt with placeholders named in `params` replaced by
/// their arrays and calls inlined; by the original node's id.
fn expand(roots: &[Array], params: &HashMap<&str, Array>, bodies: &mut Bodies) -> Result<IdMap<Array>> {
    let mut mapped: IdMap<Array> = IdMap::default();
    for node in post_order(roots, Array::children) {
        let children: Vec<Array> = node.children().iter().map(|c| mapped[&c.id()].clone()).collect();
        let new = match node.kind() {
            NodeKind::Placeholder { name: Some(name) } if params.contains_key(&**name) => params[&**name].clone(),
            NodeKind::CallResult { function, name, .. } => {
                let key = (function.id(), children.iter().map(Array::id).collect());
                if !bodies.0.contains_key(&key) {
                    let inner: HashMap<&str, Array> =
                        function.parameters().map(|(n, _)| n).zip(children.iter().cloned()).collect();
                    let returns: Vec<Array> = function.returns().values().cloned().collect();
                    let body = expand(&returns, &inner, bodies)?;
                    let results = function.returns().iter().map(|(n, r)| (n.clone(), body[&r.id()].clone())).collect();
                    // The arguments are kept with the results: their ids are the key.
                    bodies.0.insert(key.clone(), (children.clone(), results));
                }
                bodies.0[&key].1[name].clone()
            }
            _ => node.with_children(children)?,
        };
        mapped.insert(node.id(), new);
    }
    Ok(mapped)
}
