//! Checking a program's inputs, shared by every backend.
//!
//! [`Signature::new`] analyses the outputs once, at compile time: which nodes the outputs really
//! depend on (arguments of `zero(…)` are only a link, not a dependency: seed, "zeros_like"), which
//! placeholders and size parameters that makes required, and an order to evaluate nodes in.
//! [`Signature::bind`] then checks one set of inputs before anything runs: names, dtypes, shapes,
//! size parameters (inferred from input shapes, those of placeholders only `zero(…)` reads included
//! where they are given, and from the data of data wrappers declared with symbolic lengths, or
//! passed as 0-d integer arrays, and consistent), and that every shape and index of the DAG is
//! valid for those sizes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::backend::{NamedViews, NamedViewsMut, Outputs};
use pytato_core::array::{Array, NodeKind, collect_inputs};
use pytato_core::error::{Error, Result};
use pytato_core::expr::{Expr, Func};
use pytato_core::shape::{Dim, EvalDimError, Shape};
use pytato_core::size_check::SizeCheck;
use pytato_core::tags::StandsForData;
use pytato_core::view::ArrayDataView;

/// What a program needs, worked out once from its outputs.
pub struct Signature {
    outputs: Vec<(String, Array)>,
    /// Required placeholders with their input names (unnamed ones get `_pt_in<k>`), one per name.
    placeholders: Vec<(String, Array)>,
    /// Every required placeholder node (by id) with its input name.
    placeholder_nodes: Vec<(usize, String)>,
    /// Placeholders only `zero(…)` reads (`zeros_like(x)`), by input name: not required, but
    /// where given, checked and their shapes bind size parameters as a required input's do.
    optional_placeholders: Vec<(String, Array)>,
    /// Every input name in the DAG, required or not: supplying one that is not required is fine.
    known_inputs: BTreeSet<String>,
    /// Size parameters whose values the program needs.
    size_params: BTreeSet<String>,
    /// Data wrappers declared with symbolic lengths: their data binds those parameters.
    shaped_data: Vec<Array>,
    /// The nodes the outputs depend on, children before parents.
    nodes: Vec<Array>,
    /// The nodes whose shape and indices must be checked for each run's sizes, with their
    /// conditions on the sizes, children before parents: of every node (those of `nodes`, and
    /// those only `zero(…)` reads: `zeros_like(x[1:3])` has the shape of `x[1:3]`), all but those
    /// without conditions whose lengths are numbers that passed the check once, when the
    /// signature was made (whatever the sizes, they pass it again), or whose shape and item size
    /// an earlier node has (a DAG of many nodes has few shapes).
    checked: Vec<(Array, Vec<SizeCheck>)>,
}

/// Inputs checked against a [`Signature`].
pub struct Bound<'a> {
    /// The value of every size parameter the program needs.
    pub sizes: BTreeMap<String, i64>,
    /// The data of each required placeholder, by node [`id`](Array::id).
    pub placeholders: HashMap<usize, ArrayDataView<'a>>,
}

impl Bound<'_> {
    /// The concrete value of a length.
    pub fn eval(&self, dim: &Dim) -> Result<i64> {
        dim.eval(|p| self.sizes.get(p).copied()).map_err(|e| match e {
            EvalDimError::Unbound(p) => Error::SizeBinding { param: p, detail: "no value bound".into() },
            EvalDimError::Overflow(d) => {
                Error::InvalidForSizes { op: "shape".into(), detail: format!("{d} overflows") }
            }
        })
    }

    /// The concrete shape (every length is checked non-negative by [`Signature::bind`]).
    pub fn shape(&self, shape: &Shape) -> Result<Vec<usize>> {
        shape.dims().iter().map(|d| self.eval(d).map(|v| v as usize)).collect()
    }
}

/// The names of bindings an expression reads outside `zero(…)`.
pub fn data_bindings(expr: &Expr) -> HashSet<&str> {
    let mut used = HashSet::new();
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Call(Func::Zero, _) => continue,
            Expr::Var(n) | Expr::Subscript(n, _) => {
                used.insert(&**n);
            }
            _ => {}
        }
        stack.extend(e.children());
    }
    used
}

/// The children of `node` its value depends on: all of them, except bindings of an index lambda
/// that its expression reads only inside `zero(…)`.
pub fn data_children(node: &Array) -> Vec<&Array> {
    match node.kind() {
        NodeKind::IndexLambda(il) => {
            let used = data_bindings(&il.expr);
            il.bindings.iter().filter(|(n, _)| used.contains(&***n)).map(|(_, a)| a).collect()
        }
        _ => node.children(),
    }
}

pub use pytato_core::size_check::node_size_params;

/// The nodes `roots` depend on through [`data_children`], children before parents, each once.
pub fn evaluation_order<'a>(roots: impl IntoIterator<Item = &'a Array>) -> Vec<Array> {
    pytato_core::array::post_order(roots, data_children)
}

impl Signature {
    /// Analyses `outputs`. Fails on two different inputs with one name.
    pub fn new(outputs: &Outputs) -> Result<Signature> {
        let outputs = outputs.entries();
        let roots: Vec<&Array> = outputs.iter().map(|(_, a)| a).collect();
        let inputs = collect_inputs(roots.iter().copied())?;
        let nodes = evaluation_order(roots.iter().copied());

        let unnamed: HashMap<usize, String> = inputs.unnamed_placeholder_names().collect();
        // Every input name of the DAG is accepted (a placeholder only `zero(…)` reads may be passed).
        let mut known_inputs: BTreeSet<String> = inputs
            .named
            .iter()
            .filter(|(_, a)| matches!(a.kind(), NodeKind::Placeholder { .. } | NodeKind::SizeParam { .. }))
            .map(|(n, _)| n.clone())
            .collect();
        known_inputs.extend(unnamed.values().cloned());
        // Required: the placeholders the outputs depend on. Equal declarations of one input are
        // several nodes with one name: each is bound to that input's data.
        let input_name = |node: &Array| {
            let name = node.name().map(str::to_string).or_else(|| unnamed.get(&node.id()).cloned());
            name.expect("placeholders are named or numbered")
        };
        let is_placeholder = |n: &&Array| matches!(n.kind(), NodeKind::Placeholder { .. });
        let mut placeholders = Vec::new();
        let mut placeholder_nodes = Vec::new();
        for node in nodes.iter().filter(is_placeholder) {
            let name = input_name(node);
            if !placeholders.iter().any(|(n, _): &(String, Array)| *n == name) {
                placeholders.push((name.clone(), node.clone()));
            }
            placeholder_nodes.push((node.id(), name));
        }
        // Every size parameter of the DAG is needed, those of nodes only `zero(…)` reads
        // included: their shapes are checked too (`zeros_like(x[1:3])` needs `x[1:3]` to exist).
        let checked = pytato_core::array::post_order(roots.iter().copied(), Array::children);
        let mut size_params = BTreeSet::new();
        for node in &checked {
            node_size_params(node, &mut size_params);
        }
        known_inputs.extend(size_params.iter().cloned());
        let mut optional_placeholders: Vec<(String, Array)> = Vec::new();
        for node in checked.iter().filter(is_placeholder) {
            let name = input_name(node);
            let taken = |list: &[(String, Array)]| list.iter().any(|(n, _)| *n == name);
            if !taken(&placeholders) && !taken(&optional_placeholders) {
                optional_placeholders.push((name, node.clone()));
            }
        }
        let shaped_data = checked
            .iter()
            .filter(|n| matches!(n.kind(), NodeKind::DataWrapper { .. }) && n.shape().params().next().is_some())
            .cloned()
            .collect();
        // A node's lengths pass or fail as those of an earlier node of the same shape and item
        // size do, which is checked (and reported) first.
        let no_sizes = Bound { sizes: BTreeMap::new(), placeholders: HashMap::new() };
        let mut shapes_seen: HashSet<(Shape, usize)> = HashSet::new();
        let checked = checked
            .into_iter()
            .map(|node| {
                let checks = node.size_checks();
                (node, checks)
            })
            .filter(|(node, checks)| {
                let fixed = node.shape().params().next().is_none() && checks.is_empty();
                let seen = !shapes_seen.insert((node.shape().clone(), node.dtype().itemsize()));
                let passes_always = fixed && check_lengths(node, &no_sizes).is_ok();
                !checks.is_empty() || !(seen || passes_always)
            })
            .collect();
        Ok(Signature {
            outputs,
            placeholders,
            placeholder_nodes,
            optional_placeholders,
            known_inputs,
            size_params,
            shaped_data,
            nodes,
            checked,
        })
    }

    /// The outputs, by name.
    pub fn outputs(&self) -> &[(String, Array)] {
        &self.outputs
    }

    /// The required placeholders, by input name.
    pub fn placeholders(&self) -> &[(String, Array)] {
        &self.placeholders
    }

    /// The nodes the outputs depend on, children before parents.
    pub fn nodes(&self) -> &[Array] {
        &self.nodes
    }

    /// The size parameters the program needs.
    pub fn size_params(&self) -> &BTreeSet<String> {
        &self.size_params
    }

    /// What `run` accepts: the required placeholders, and the size parameters that no placeholder
    /// shape determines.
    pub fn input_names(&self) -> Vec<String> {
        let determined = self.determined_params();
        let mut names: Vec<String> = self.placeholders.iter().map(|(n, _)| n.clone()).collect();
        names.extend(self.size_params.iter().filter(|p| !determined.contains(p.as_str())).cloned());
        names
    }

    /// The size parameters that inputs' shapes and shaped data wrappers' data determine, as
    /// [`Signature::bind`] solves for them: a length with one parameter not yet determined
    /// determines it (`(n + m,)` alone determines neither; beside `(n,)` it determines `m`).
    fn determined_params(&self) -> BTreeSet<&str> {
        let placeholders = self.placeholders.iter().map(|(_, a)| a);
        let dims: Vec<&Dim> = placeholders.chain(&self.shaped_data).flat_map(|a| a.shape().dims()).collect();
        let mut determined = BTreeSet::new();
        loop {
            let before = determined.len();
            for dim in &dims {
                let mut unknown = dim.params().filter(|p| !determined.contains(p));
                if let (Some(param), None) = (unknown.next(), unknown.next()) {
                    determined.insert(param);
                }
            }
            if determined.len() == before {
                return determined;
            }
        }
    }

    /// The program's type as a datashape (see [`pytato_datashape`]): a record of the inputs
    /// (placeholders, and size parameters no input shape determines, as `int64`) to a record of
    /// the outputs. Lengths are numbers, type variables (size parameters: a repeated one is a
    /// constraint) or computed lengths, `(n -> n - 2)`.
    ///
    /// ```
    /// use pytato_core::{s, DType, Dim};
    /// use pytato_frontend as pt;
    /// use pytato_runtime::binding::Signature;
    /// let u = pt::placeholder("u", [Dim::param("n")], DType::F64).unwrap();
    /// let du = u.index(s![1..]).unwrap();
    /// let signature = Signature::new(&(&du).into()).unwrap();
    /// assert_eq!(signature.datashape().to_string(), "{u: n, float64} -> {_pt_out: (n -> n - 1), float64}");
    /// ```
    pub fn datashape(&self) -> pytato_datashape::Type {
        self.datashape_with_inputs(&self.input_names())
    }

    /// [`Signature::datashape`] listing only the inputs named in `inputs` (a backend that turns
    /// data wrappers into inputs of its own leaves those out: the user does not pass them).
    pub fn datashape_with_inputs(&self, inputs: &[String]) -> pytato_datashape::Type {
        use pytato_datashape::meaning::array_datashape;
        use pytato_datashape::{MachineType, Type};
        let determined = self.determined_params();
        let wanted = inputs;
        let mut inputs: Vec<(String, Type)> =
            self.placeholders.iter().map(|(n, a)| (n.clone(), pytato_datashape::meaning::input_datashape(a))).collect();
        inputs.extend(
            self.size_params
                .iter()
                .filter(|p| !determined.contains(p.as_str()))
                .map(|p| (p.clone(), Type::Machine(MachineType::Int64))),
        );
        let mut wanted: Vec<(String, Type)> = inputs.into_iter().filter(|(n, _)| wanted.contains(n)).collect();
        wanted.sort_by(|a, b| a.0.cmp(&b.0));
        let outputs = self.outputs.iter().map(|(n, a)| (n.clone(), array_datashape(a.shape(), a.dtype()))).collect();
        Type::Function(vec![Type::Record(wanted)], Box::new(Type::Record(outputs)))
    }

    /// Checks `inputs` and binds the size parameters; see the [module docs](self).
    pub fn bind<'a>(&self, inputs: &NamedViews<'a>) -> Result<Bound<'a>> {
        if let Some(unknown) = inputs.keys().find(|k| !self.known_inputs.contains(**k)) {
            return Err(Error::UnknownInput { name: unknown.to_string(), known: self.input_names() });
        }
        let mut sizes: BTreeMap<String, i64> = BTreeMap::new();
        for param in &self.size_params {
            if let Some(data) = inputs.get(param.as_str()) {
                let value = scalar_int(data).map_err(|detail| Error::SizeBinding { param: param.clone(), detail })?;
                if value < 0 {
                    return Err(Error::SizeBinding {
                        param: param.clone(),
                        detail: format!("value {value} is negative"),
                    });
                }
                sizes.insert(param.clone(), value);
            }
        }
        let mut placeholders = HashMap::new();
        let mut equations: Vec<Equation<'_>> = Vec::new();
        for (name, node) in &self.placeholders {
            let Some(data) = inputs.get(name.as_str()) else {
                return Err(Error::MissingInput {
                    name: name.clone(),
                    expected: format!("shape {}, dtype {}", node.shape(), node.dtype()),
                });
            };
            input_equations(name, node, data, &mut equations)?;
        }
        for (name, node) in &self.optional_placeholders {
            if let Some(data) = inputs.get(name.as_str()) {
                input_equations(name, node, data, &mut equations)?;
            }
        }
        for (id, name) in &self.placeholder_nodes {
            placeholders.insert(*id, inputs[name.as_str()].clone());
        }
        for node in &self.shaped_data {
            let NodeKind::DataWrapper { name, data } = node.kind() else { unreachable!("data wrappers only") };
            axis_equations(name.as_deref().unwrap_or("DataWrapper"), node, data.shape(), &mut equations)?;
        }
        solve_sizes(&mut sizes, &equations)?;
        if let Some(missing) = self.size_params.iter().find(|p| !sizes.contains_key(*p)) {
            let detail = if missing.starts_with(pytato_core::names::COUNT_PREFIX) {
                // A count whose mask this program does not compute (`ones(x[x > 0].shape)` alone).
                "it is the number of true elements of a mask that this program does not compute (output \
                 the selection or a value computed from it in the same program), and no input shape \
                 determines it"
            } else {
                "no input shape determines it; pass it as a 0-d integer input"
            };
            return Err(Error::SizeBinding { param: missing.clone(), detail: detail.into() });
        }
        check_length_bounds(&self.placeholders, inputs, &sizes)?;
        let bound = Bound { sizes, placeholders };
        for (node, checks) in &self.checked {
            check_lengths(node, &bound)?;
            for check in checks {
                check.verify(&bound.sizes)?;
            }
        }
        Ok(bound)
    }
}

impl Signature {
    /// Checks the arrays given to `Program::run_into` against the outputs, for the sizes
    /// `bound`: one array per output name, each of the output's dtype and shape.
    pub fn check_outputs(&self, bound: &Bound<'_>, outputs: &NamedViewsMut<'_>) -> Result<()> {
        let known: Vec<String> = self.outputs.iter().map(|(n, _)| n.clone()).collect();
        let missing: Vec<String> = known.iter().filter(|n| !outputs.contains_key(n.as_str())).cloned().collect();
        let unknown: Vec<String> =
            outputs.keys().filter(|n| !known.iter().any(|k| k == *n)).map(|n| n.to_string()).collect();
        if !missing.is_empty() || !unknown.is_empty() {
            return Err(Error::OutputNames { missing, unknown, known });
        }
        for (name, array) in &self.outputs {
            let given = &outputs[name.as_str()];
            let shape = bound.shape(array.shape())?;
            if given.dtype() != array.dtype() || given.shape() != shape.as_slice() {
                return Err(Error::OutputArray {
                    name: name.clone(),
                    expected_dtype: array.dtype(),
                    expected_shape: shape,
                    got_dtype: given.dtype(),
                    got_shape: given.shape().to_vec(),
                });
            }
        }
        Ok(())
    }
}

/// Checks the dtype and rank of `data`, given for the placeholder `node` named `name`, and adds
/// the equations of its lengths to `equations`.
fn input_equations<'a>(
    name: &'a str,
    node: &'a Array,
    data: &'a ArrayDataView<'_>,
    equations: &mut Vec<Equation<'a>>,
) -> Result<()> {
    if data.dtype() != node.dtype() {
        return Err(Error::InputDType { name: name.to_string(), expected: node.dtype(), got: data.dtype() });
    }
    if data.ndim() != node.ndim() {
        return Err(Error::InputShape {
            name: name.to_string(),
            expected: node.shape().clone(),
            got: data.shape().to_vec(),
            detail: format!("{} axes expected", node.ndim()),
        });
    }
    axis_equations(name, node, data.shape(), equations)
}

/// The value of a size parameter passed as `data`, or why it is none.
fn scalar_int(data: &ArrayDataView<'_>) -> std::result::Result<i64, String> {
    let not_an_int =
        || format!("must be passed as a 0-d integer array, got {} of shape {:?}", data.dtype(), data.shape());
    if data.ndim() != 0 || !data.dtype().is_integer() {
        return Err(not_an_int());
    }
    let value = data.get_flat(0).and_then(|v| v.to_i128()).ok_or_else(not_an_int)?;
    i64::try_from(value).map_err(|_| format!("value {value} is out of the range of a length (int64)"))
}

/// Solves `dim = len` equations for the unbound size parameters: repeatedly takes an equation with
/// one unknown, solves it, and finally checks every equation.
/// The ranged lengths of inputs declared by datashape (`Var(lo, hi)`, a
/// [`LengthBounds`](pytato_core::tags::LengthBounds) tag) lie in their bounds.
fn check_length_bounds(
    placeholders: &[(String, Array)],
    inputs: &NamedViews<'_>,
    sizes: &BTreeMap<String, i64>,
) -> Result<()> {
    for (name, node) in placeholders {
        for pytato_core::tags::LengthBounds(bounds) in node.tags_of_type::<pytato_core::tags::LengthBounds>() {
            for (axis, lo, hi) in bounds {
                let (Ok(low), Ok(high)) = (lo.eval(|p| sizes.get(p).copied()), hi.eval(|p| sizes.get(p).copied()))
                else {
                    continue; // a bound no input determines: the unbound-parameter check reports it
                };
                let got = inputs[name.as_str()].shape();
                let len = got[*axis] as i64;
                if len < low || len > high {
                    let datashape = pytato_datashape::meaning::input_datashape(node);
                    return Err(Error::InputShape {
                        name: name.clone(),
                        expected: node.shape().clone(),
                        got: got.to_vec(),
                        detail: format!(
                            "dimension {} is {len}, outside `Var({lo}, {hi})` = {low}..={high}; the input's datashape is `{datashape}`",
                            axis + 1
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// One length of an input: `dim` (of the placeholder `node`, axis `axis`) must be `len`.
struct Equation<'a> {
    name: &'a str,
    axis: usize,
    dim: &'a Dim,
    len: i64,
    node: &'a Array,
    got: &'a [usize],
}

impl Equation<'_> {
    /// A mismatch of this input's shape, said in datashape terms: which dimension, which type
    /// variable, where that variable got its value, and the input's datashape.
    fn mismatch(&self, detail: String) -> Error {
        let datashape = pytato_datashape::meaning::array_datashape(self.node.shape(), self.node.dtype());
        // A data wrapper's data, as a wrapper or as the placeholder a backend made of it.
        let wrapper = match self.node.kind() {
            NodeKind::DataWrapper { name, .. } => Some(StandsForData::of_wrapper(name.as_deref()).0),
            _ => self.node.tags_of_type::<StandsForData>().next().map(|t| t.0.clone()),
        };
        let whose = match wrapper {
            Some(wrapper) => format!("it is the data of data wrapper {wrapper}, of datashape `{datashape}`"),
            None => format!("the input's datashape is `{datashape}`"),
        };
        Error::InputShape {
            name: self.name.to_string(),
            expected: self.node.shape().clone(),
            got: self.got.to_vec(),
            detail: format!("dimension {} {detail}; {whose}", self.axis + 1),
        }
    }
}

/// The equations `length = got[axis]` of every axis of `node` (an input's placeholder, or a data
/// wrapper declared with symbolic lengths) whose data, named `name`, has the lengths `got`.
fn axis_equations<'a>(
    name: &'a str,
    node: &'a Array,
    got: &'a [usize],
    equations: &mut Vec<Equation<'a>>,
) -> Result<()> {
    for (axis, (dim, &len)) in node.shape().dims().iter().zip(got).enumerate() {
        let len = i64::try_from(len).map_err(|_| Error::InvalidForSizes {
            op: "bind".into(),
            detail: format!("{name:?} has a length beyond i64"),
        })?;
        equations.push(Equation { name, axis, dim, len, node, got });
    }
    Ok(())
}

fn solve_sizes(sizes: &mut BTreeMap<String, i64>, equations: &[Equation<'_>]) -> Result<()> {
    // Where each size variable got its value (input, dimension), for errors.
    let mut bound_by: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let mut progress = false;
        for e in equations {
            let unknown: Vec<(&str, i64)> = e.dim.terms().filter(|(p, _)| !sizes.contains_key(*p)).collect();
            let [(param, coeff)] = unknown[..] else { continue };
            let known: i128 = e.dim.constant() as i128
                + e.dim.terms().filter(|(p, _)| *p != param).map(|(p, c)| c as i128 * sizes[p] as i128).sum::<i128>();
            let rest = e.len as i128 - known;
            if rest % coeff as i128 != 0 || rest / (coeff as i128) < 0 {
                return Err(
                    e.mismatch(format!("is {}: no non-negative {param} gives that length for {}", e.len, e.dim))
                );
            }
            let value = i64::try_from(rest / coeff as i128)
                .map_err(|_| e.mismatch(format!("is {}: {param} would overflow", e.len)))?;
            sizes.insert(param.to_string(), value);
            bound_by.insert(param.to_string(), format!("dimension {} of {:?}", e.axis + 1, e.name));
            progress = true;
        }
        if !progress {
            break;
        }
    }
    for e in equations {
        match e.dim.eval(|p| sizes.get(p).copied()) {
            Ok(v) if v == e.len => {}
            Ok(v) if e.dim.params().next().is_none() => {
                return Err(e.mismatch(format!("is {}, expected {v}", e.len)));
            }
            Ok(v) => {
                let bound: Vec<String> = e
                    .dim
                    .params()
                    .filter_map(|p| {
                        let by = bound_by.get(p).map_or(String::from("given as an input"), |b| format!("from {b}"));
                        sizes.get(p).map(|v| format!("{p} = {v} ({by})"))
                    })
                    .collect();
                let what = if e.dim.terms().count() == 1 && e.dim.constant() == 0 && e.dim.terms().all(|(_, c)| c == 1)
                {
                    format!("(type variable {})", e.dim)
                } else {
                    format!("({} = {v})", e.dim)
                };
                return Err(e.mismatch(format!("{what} is {}, but {}", e.len, bound.join(", "))));
            }
            Err(_) => continue, // left for the unbound-parameter check
        }
    }
    Ok(())
}

/// Lengths must be non-negative and the array addressable once the sizes are known (symbolic
/// ones could not be checked when the node was built); [`Signature::bind`] checks the node's
/// [size checks](pytato_core::size_check) too (integer indices and slices inside their axes,
/// reductions without identity over non-empty axes).
fn check_lengths(node: &Array, bound: &Bound<'_>) -> Result<()> {
    // Every array must be addressable: its size in bytes fits `isize` (what Rust allocations
    // allow), counting only the non-zero lengths, as ndarray and numpy do: an empty array of shape
    // (0, 2**62, 2**62) has no elements, but its strides do not fit (numpy: "array is too big").
    let mut bytes: Option<u64> = Some(node.dtype().itemsize() as u64);
    for d in node.shape().dims() {
        let v = bound.eval(d)?;
        if v < 0 {
            return Err(Error::InvalidForSizes {
                op: node.kind_name().into(),
                detail: format!("axis length {d} is {v} with sizes {:?}", bound.sizes),
            });
        }
        bytes = bytes.and_then(|b| b.checked_mul((v as u64).max(1)));
    }
    if bytes.is_none_or(|b| b > isize::MAX as u64) {
        return Err(Error::InvalidForSizes {
            op: node.kind_name().into(),
            detail: format!(
                "an array of shape {} and dtype {} is too large to address with sizes {:?}",
                node.shape(),
                node.dtype(),
                bound.sizes
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytato_core::DType;
    use pytato_frontend as pt;

    #[test]
    fn a_run_checks_each_shape_once_however_many_nodes_have_it() {
        // 200 steps of a heat-like update, every node of shape (n,) float64: one to check.
        let u0 = pt::placeholder("u", [Dim::param("n")], DType::F64).unwrap();
        let mut u = u0.clone();
        for _ in 0..200 {
            u = pt::add(&u, pt::multiply(0.25, pt::subtract(pt::roll(&u, 1, Some(0)).unwrap(), &u).unwrap()).unwrap())
                .unwrap();
        }
        let signature = Signature::new(&(&u).into()).unwrap();
        let unconditional = signature.checked.iter().filter(|(_, checks)| checks.is_empty()).count();
        assert_eq!(unconditional, 1, "{} nodes checked", signature.checked.len());
        // And a bind still refuses sizes that are wrong (here n = -1 against data of length 3).
        let data = ndarray::Array1::<f64>::zeros(3).into_dyn();
        let n = ndarray::arr0(-1i64).into_dyn();
        let inputs = NamedViews::from([("u", data.view().into()), ("n", n.view().into())]);
        assert!(signature.bind(&inputs).is_err());
    }
}
