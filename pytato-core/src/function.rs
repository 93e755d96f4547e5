//! Functions and calls (upstream pytato's `FunctionDefinition`, `Call`, `trace_call`).
//!
//! A [`Function`] is a DAG over placeholders of its own (its parameters) with named results; its
//! placeholders live in the function's namespace, apart from the caller's. A call applies it to
//! arrays: each result is a [`NodeKind::CallResult`] node whose children are the call's
//! arguments (the body is not a child: traversals of the caller do not enter it). Equal
//! definitions are one definition (structural hash and equality), so a function traced twice
//! from the same code is one function, and two calls with equal arguments are one call.
//!
//! Backends run calls in one of two ways, chosen per function by an [`InlineRule`] when the DAG
//! is compiled (`pytato_runtime::backend::compile_calls_and_phases`):
//!
//! - **inlined** ([`inline_calls_where`]): the body is copied into the caller at each call site,
//!   where it fuses with the code around it. Best for small functions and few calls.
//! - **outlined**: each distinct definition is compiled once, as a program of its own, and each
//!   call site runs that program on its arguments (a step of `pytato_runtime::phases`). Compile time
//!   grows with the number of *definitions*, not of calls, at the price of a stored result per
//!   call and no fusion across the call boundary.
//!
//! A function tagged [`InlineCall`] is always inlined (upstream's `InlineCallTag`).
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
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
use crate::error::{Error, Result};
use crate::names;
use crate::outputs::Outputs;
use crate::tags::{Tag, TagSet};

/// A tag on a [`Function`]: its calls are always inlined, whatever the [`InlineRule`] says
/// (upstream pytato's `InlineCallTag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineCall;
impl Tag for InlineCall {}

/// When the backends inline a function's calls rather than compile the function once and call it
/// (see the [module docs](self)). A function tagged [`InlineCall`] is inlined whatever the rule.
///
/// ```
/// use pytato_core::function::InlineRule;
/// // The default: inline small functions and functions called once.
/// assert_eq!(InlineRule::default(), InlineRule::Size { max_inlined_nodes: 10_000 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InlineRule {
    /// Every call is inlined.
    Always,
    /// Only calls of functions tagged [`InlineCall`] are inlined (the interpreter's rule: it runs
    /// calls as calls).
    Never,
    /// A function is inlined when it is called at one call site only, or when its body's nodes
    /// times its call sites is at most `max_inlined_nodes`. Call sites are counted in the DAG being
    /// compiled, not in the bodies of other functions.
    Size {
        /// The most nodes the copies of one function's body may add to the DAG.
        max_inlined_nodes: usize,
    },
}

impl Default for InlineRule {
    /// [`InlineRule::Size`] with 10,000 nodes: a 100-node function called 100 times is inlined,
    /// called 1,000 times is not (inlined, that DAG takes the Cranelift backend some 30 s to
    /// compile; see `pytato/examples/calls.rs`).
    fn default() -> InlineRule {
        InlineRule::Size { max_inlined_nodes: 10_000 }
    }
}

impl InlineRule {
    /// Whether calls of `function`, which the DAG calls at `call_sites` sites, are inlined.
    pub fn inlines(&self, function: &Function, call_sites: usize) -> bool {
        function.tags().contains(&InlineCall)
            || match *self {
                InlineRule::Always => true,
                InlineRule::Never => false,
                InlineRule::Size { max_inlined_nodes } => {
                    call_sites <= 1 || function.body_size().saturating_mul(call_sites) <= max_inlined_nodes
                }
            }
    }
}

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

    /// The number of nodes of the body (the parameters included, the bodies of functions it
    /// calls not).
    pub fn body_size(&self) -> usize {
        post_order(self.0.returns.values(), Array::children).len()
    }

    /// The body as outputs: the results by name, over the parameters as placeholders. What a
    /// backend compiles to run the function outlined.
    pub fn body(&self) -> Result<Outputs> {
        let dict = crate::array::DictOfNamedArrays::new(self.0.returns.iter().map(|(n, r)| (&**n, r.clone())))?;
        Ok(Outputs::Named(dict))
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
/// calls included. The results of one call (equal function and arguments) share one copy of the
/// body.
pub fn inline_calls(outputs: &Outputs) -> Result<Outputs> {
    inline_calls_where(outputs, |_| true)
}

/// `outputs` with the calls of the functions `inline` accepts replaced by the function's body
/// over the call's arguments (in the bodies inlined too); other calls stay, over the rewritten
/// arguments. The results of one call share one copy of the body.
pub fn inline_calls_where(outputs: &Outputs, inline: impl Fn(&Function) -> bool) -> Result<Outputs> {
    let entries = outputs.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    let mut bodies = Bodies::default();
    let mapped = expand(&roots, &HashMap::new(), &mut bodies, &inline)?;
    outputs.map_arrays(|a| mapped[&a.id()].clone())
}

/// `outputs` with every function it calls, in function bodies too, tagged [`InlineCall`], so that
/// every backend inlines every call (upstream's `tag_all_calls_to_be_inlined`). The calls stay
/// calls in the DAG (analyses still see them); the results are those of the same DAG inlined.
pub fn tag_all_calls_to_be_inlined(outputs: &Outputs) -> Result<Outputs> {
    let entries = outputs.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    let mapped = tag_calls_inlined(&roots, &mut HashMap::new())?;
    outputs.map_arrays(|a| mapped[&a.id()].clone())
}

/// Every node reachable from `roots`, rebuilt with each called function replaced by the same
/// function tagged [`InlineCall`] (its body rebuilt so too); `tagged` holds those made so far,
/// by the original's [`Function::id`]. Recursion is by the nesting of function definitions only.
fn tag_calls_inlined(roots: &[Array], tagged: &mut HashMap<usize, Function>) -> Result<IdMap<Array>> {
    let mut mapped: IdMap<Array> = IdMap::default();
    for node in post_order(roots, Array::children) {
        let children: Vec<Array> = node.children().iter().map(|c| mapped[&c.id()].clone()).collect();
        let new = match node.kind() {
            NodeKind::CallResult { function, name, .. } => {
                if !tagged.contains_key(&function.id()) {
                    let returns: Vec<Array> = function.returns().values().cloned().collect();
                    let body = tag_calls_inlined(&returns, tagged)?;
                    let parameters = function.parameters().map(|(_, p)| p.clone()).collect();
                    let results = function.returns().iter().map(|(n, r)| (&**n, body[&r.id()].clone())).collect();
                    let inlined = Function::new(parameters, results, function.tags().with(InlineCall)?)?;
                    tagged.insert(function.id(), inlined);
                }
                Array::new_call_result(&tagged[&function.id()], children, name)?
            }
            _ => node.with_children(children)?,
        };
        mapped.insert(node.id(), new);
    }
    Ok(mapped)
}

/// The call sites of each function the DAG of `outputs` calls (not counting calls inside
/// function bodies): the number of distinct (function, arguments) pairs.
pub fn call_sites(outputs: &Outputs) -> HashMap<Function, usize> {
    let entries = outputs.entries();
    let mut sites: HashMap<Function, std::collections::HashSet<Vec<usize>>> = HashMap::new();
    for node in post_order(entries.iter().map(|(_, a)| a), Array::children) {
        if let NodeKind::CallResult { function, bindings, .. } = node.kind() {
            sites.entry(function.clone()).or_default().insert(bindings.iter().map(Array::id).collect());
        }
    }
    sites.into_iter().map(|(f, s)| (f, s.len())).collect()
}

/// `outputs` with the calls that `rule` inlines inlined (see [`InlineRule`]); the others stay.
pub fn apply_inline_rule(outputs: &Outputs, rule: InlineRule) -> Result<Outputs> {
    let decided: HashMap<Function, bool> =
        call_sites(outputs).into_iter().map(|(f, sites)| (f.clone(), rule.inlines(&f, sites))).collect();
    // Functions called only from bodies being inlined count one call site each.
    inline_calls_where(outputs, |f| decided.get(f).copied().unwrap_or_else(|| rule.inlines(f, 1)))
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
fn expand(
    roots: &[Array],
    params: &HashMap<&str, Array>,
    bodies: &mut Bodies,
    inline: &dyn Fn(&Function) -> bool,
) -> Result<IdMap<Array>> {
    let mut mapped: IdMap<Array> = IdMap::default();
    for node in post_order(roots, Array::children) {
        let children: Vec<Array> = node.children().iter().map(|c| mapped[&c.id()].clone()).collect();
        let new = match node.kind() {
            NodeKind::Placeholder { name: Some(name) } if params.contains_key(&**name) => params[&**name].clone(),
            NodeKind::CallResult { function, name, .. } if inline(function) => {
                let key = (function.id(), children.iter().map(Array::id).collect());
                if !bodies.0.contains_key(&key) {
                    let inner: HashMap<&str, Array> =
                        function.parameters().map(|(n, _)| n).zip(children.iter().cloned()).collect();
                    let returns: Vec<Array> = function.returns().values().cloned().collect();
                    let body = expand(&returns, &inner, bodies, inline)?;
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
