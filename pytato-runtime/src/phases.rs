//! Programs that run in phases: data-dependent lengths (counts) and scatters.
//!
//! Five node kinds are *host steps*: [`NodeKind::Nonzero`] (the positions of a mask's `true`
//! elements, whose number is a count, a length the data decides), [`NodeKind::Scatter`] (writes
//! at positions the data decides), [`NodeKind::Sort`] and [`NodeKind::SearchSorted`] (see
//! [`crate::sort`]) and [`NodeKind::Scan`] (see [`crate::scan`]). No kernel of a compiled program
//! computes them. A DAG with host steps runs in phases on any backend:
//!
//! 1. the operands of the host steps that depend on no other host step are computed by a program
//!    the backend compiled from that part of the DAG (phase 0);
//! 2. the host steps run on those values (a row-major scan for the positions, numpy's order for
//!    the writes), and each result becomes an input of the later phases, under a generated
//!    placeholder name (`_pt_in_step<k>`) whose shape carries the count: binding that input binds
//!    the count like any size parameter;
//! 3. phases repeat while host steps depend on earlier ones (`B = A[A > 0]; B[B < 1]`), and the last
//!    program computes the outputs.
//!
//! Calls of functions compiled apart (outlined, see [`pytato_core::function`]) are steps too: the
//! function's body is compiled once, as a program of its own, and each call site runs it on the
//! call's arguments between phases.
//!
//! Run on device data ([`Program::run_device`]), the phases' programs run there too, and each step
//! goes to the backend's [`DeviceSteps`] ([`Backend::device_steps`]): a step it runs as kernels on
//! its device never leaves it; the others (and counts, which are lengths the host needs) are
//! computed on the host from copies, and their results are uploaded.
//!
//! Every program involved is compiled once, when the DAG is: counts are size variables, so new
//! data with other counts needs no new code. Backends call [`compile`] from their
//! `Backend::compile` (through [`compile_calls_and_phases`](crate::backend::compile_calls_and_phases))
//! when the DAG has host steps; nothing else in a backend knows about counts.
//!
//! ```
//! use pytato_core::{s, DType};
//! use pytato_frontend as pt;
//! use pytato_core::tags::CountNamed;
//! let a = pt::placeholder("A", [5], DType::F64).unwrap();
//! // The seed's example: A[(A > 0).tagged(CountNamed("mycount"))]
//! let mask = pt::greater(&a, 0.0).unwrap().tagged(CountNamed("mycount".into())).unwrap();
//! let positive = a.index(s![&mask]).unwrap();
//! assert_eq!(positive.shape().to_string(), "(mycount,)");
//! assert!(pytato_runtime::phases::has_host_steps(&positive.into()));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use ndarray::ArrayViewD;

use crate::backend::{Backend, NamedData, NamedViews, NamedViewsMut, Outputs, Program};
use crate::binding::Signature;
use crate::device::{DeviceArray, DeviceInput, DeviceStep, DeviceSteps, NamedDeviceArrays, NamedDeviceInputs};
use crate::host_threads::HostThreads;
use crate::scan::NumpyArith;
use crate::spare::{FreshMemoryAdvice, ResultMemory};
use pytato_core::array::{
    Array, DictOfNamedArrays, IdMap, NodeKind, ScanOp, ScatterMode, Side, SortResult, post_order,
};
use pytato_core::data::ArrayData;
use pytato_core::dtype::result_type;
use pytato_core::error::{Error, Result};
use pytato_core::for_each_array_view;
use pytato_core::function::Function;
use pytato_core::scalar::Scalar;
use pytato_core::shape::Shape;
use pytato_core::tags::MaskPositions;
use pytato_core::view::{ArrayDataView, ViewElement};

/// The prefix of the placeholders that carry host-step results into later phases (in the `_pt_in`
/// namespace; unnamed placeholders are `_pt_in<k>`, so the two never meet, and every generated
/// name goes around the user's, see [`pytato_core::names::fresh_name`]).
pub const STEP_INPUT_PREFIX: &str = "_pt_in_step";

/// Whether `node` is a host step (see the [module docs](self)).
pub fn is_host_step(node: &Array) -> bool {
    matches!(
        node.kind(),
        NodeKind::Nonzero { .. }
            | NodeKind::Scatter { .. }
            | NodeKind::Sort { .. }
            | NodeKind::Scan { .. }
            | NodeKind::SearchSorted { .. }
    )
}

/// Whether the DAG of `outputs` has host steps, so that a backend must [`compile`] it in phases.
pub fn has_host_steps(outputs: &Outputs) -> bool {
    let entries = outputs.entries();
    post_order(entries.iter().map(|(_, a)| a), Array::children).iter().any(is_host_step)
}

/// Whether `node`'s value comes from a step between phases: a host step or a call's result.
fn produces_in_a_step(node: &Array) -> bool {
    is_host_step(node) || matches!(node.kind(), NodeKind::CallResult { .. })
}

/// The counts `node` decides: a nonzero step's count; the lengths of a call result that its
/// arguments' shapes do not give (counts inside the function).
fn counts_decided(node: &Array) -> Vec<&str> {
    match node.kind() {
        NodeKind::Nonzero { count, .. } => vec![&**count],
        NodeKind::CallResult { bindings, .. } => {
            let given: BTreeSet<&str> = bindings.iter().flat_map(|a| a.shape().params()).collect();
            node.shape().params().filter(|v| !given.contains(v)).collect()
        }
        _ => Vec::new(),
    }
}

/// The phase from which each of `nodes` (children first) is known: a step's result one phase
/// after its operands, any other node in the phase of its latest child, and no earlier than the
/// counts it reads, as a size parameter's value (`x - x.shape[0]` of a selection) or in its own
/// shape (`zeros(selection.shape)`), none of which is a child of the node. Those reads are why
/// this iterates: a count's step may come after its reader in `nodes`. Each pass settles at least
/// one more step, so more passes than steps mean a count its own step depends on (a mask tagged
/// `CountNamed("c")` that reads the size parameter `c`), which is an error.
fn phase_levels(nodes: &[Array]) -> Result<IdMap<usize>> {
    let mut level: IdMap<usize> = IdMap::default();
    let mut count_level: HashMap<&str, usize> = HashMap::new();
    let steps = nodes.iter().filter(|n| produces_in_a_step(n)).count();
    for _pass in 0..=steps + 1 {
        let mut changed = false;
        for node in nodes {
            let decided = counts_decided(node);
            let read = node.shape().params().chain(match node.kind() {
                NodeKind::SizeParam { name } => Some(&**name),
                _ => None,
            });
            let after_counts =
                read.filter(|c| !decided.contains(c)).filter_map(|c| count_level.get(c).copied()).max().unwrap_or(0);
            let after_children = node.children().iter().map(|c| level[&c.id()]).max().unwrap_or(0);
            let known = after_children.max(after_counts) + usize::from(produces_in_a_step(node));
            for count in decided {
                let entry = count_level.entry(count).or_insert(0);
                changed |= *entry < known;
                *entry = (*entry).max(known);
            }
            changed |= level.insert(node.id(), known).is_some_and(|old| old != known);
        }
        if !changed {
            return Ok(level);
        }
    }
    let cyclic: Vec<&str> = count_level.keys().copied().collect();
    Err(Error::invalid(
        "compile",
        format!("a count is read by the data that decides it (counts {cyclic:?}): no phase can compute it"),
    ))
}

/// One step of a phase: what it computes, from where.
struct Step {
    kind: StepKind,
    operands: Vec<Source>,
    /// The names its results take in later phases, with their shapes (which may hold counts).
    results: Vec<(String, Shape)>,
}

#[derive(Clone)]
enum StepKind {
    /// With the count's name.
    Nonzero(String),
    Scatter(ScatterMode),
    Sort {
        axis: usize,
        descending: bool,
        result: SortResult,
    },
    Scan {
        axis: usize,
        op: ScanOp,
    },
    SearchSorted(Side),
    /// An outlined call: the function's program, its parameters (the operands' names, in order)
    /// and the function's result behind each of the step's results.
    Call {
        body: Arc<dyn Program>,
        parameters: Vec<String>,
        returns: Vec<Arc<str>>,
    },
}

impl StepKind {
    /// The operation, for messages.
    fn name(&self) -> &'static str {
        match self {
            StepKind::Nonzero(_) => "nonzero",
            StepKind::Scatter(_) => "scatter",
            StepKind::Sort { .. } => "sort",
            StepKind::Scan { .. } => "scan",
            StepKind::SearchSorted(_) => "searchsorted",
            StepKind::Call { .. } => "call",
        }
    }
}

/// Where a step's operand comes from.
enum Source {
    /// An output of the phase's program.
    Computed(String),
    /// An input (of the user, or a step result) used as it is: no program copies it.
    Given(String),
}

struct Phase {
    /// Computes the operands that are not given; `None` when every operand is.
    program: Option<Box<dyn Program>>,
    steps: Vec<Step>,
}

/// A step found in the DAG, before phases are cut.
struct Planned {
    /// The phase it runs after.
    level: usize,
    kind: StepKind,
    operands: Vec<Array>,
    /// The placeholders that stand for its results in later phases.
    results: Vec<Array>,
}

/// A program compiled in phases; see the [module docs](self).
struct PhasedProgram {
    /// Checks every user input before anything runs (names, dtypes, shapes, consistent sizes
    /// across phases) and binds the sizes, which later programs may need as values.
    inputs: Signature,
    phases: Vec<Phase>,
    /// Computes the outputs that are not a step's result as it is; `None` when every one is.
    last: Option<Box<dyn Program>>,
    /// Outputs that are a step's result as it is, by output name: handed over, never copied by a
    /// program.
    direct: Vec<(String, String)>,
    /// Every output name, in output order.
    output_names: Vec<String>,
    /// `(name, datashape)` of every output, for [`Program::datashape`].
    output_types: Vec<(String, pytato_datashape::Type)>,
    /// The backend's kernels for steps on device data ([`Backend::device_steps`]); `None`: runs
    /// on device data compute in host memory.
    device: Option<Arc<dyn DeviceSteps>>,
    /// The threads host steps run on ([`Backend::host_threads`]).
    host_threads: HostThreads,
    /// How the fresh memory of host steps' results is advised ([`Backend::fresh_memory_advice`]).
    fresh_memory_advice: Option<FreshMemoryAdvice>,
    /// The names of step results whose memory a later run's step reuses ([`crate::spare`]):
    /// those of nonzero, scan, sort and searchsorted steps that are not outputs as they are.
    reusable: BTreeSet<String>,
    /// The latest runs' results of those steps, by name, taken by the next run's steps.
    spares: Mutex<NamedData>,
}

/// Compiles `outputs`, whose DAG has host steps, into a program that runs in phases on `backend`
/// (see the [module docs](self)). A DAG without host steps compiles to one phase: the same
/// program `backend` makes, wrapped.
pub fn compile(backend: &dyn Backend, outputs: &Outputs) -> Result<Box<dyn Program>> {
    // Checks names (two masks whose counts share one name, an input named like a count) first.
    let entries = outputs.entries();
    let inputs = pytato_core::array::collect_inputs(entries.iter().map(|(_, a)| a))?;
    // Unnamed placeholders get the names a program of the whole DAG would give them, so that
    // every phase agrees on them.
    let unnamed: IdMap<String> = inputs.unnamed_placeholder_names().collect();
    // The placeholders that carry steps' results take names no input of the user's has.
    let mut taken = inputs.taken_names();
    taken.extend(unnamed.values().cloned());

    // One pass, children first: the rewritten node (steps replaced by placeholders), each step
    // planned after the phase in which its operands and the counts it reads are known.
    let nodes = post_order(entries.iter().map(|(_, a)| a), Array::children);
    let level = phase_levels(&nodes)?;
    let mut rewritten: IdMap<Array> = IdMap::default();
    // Equal host steps (`x[x > 0]` written twice) are one step; so are the results of one call
    // (keyed by the function and the rewritten arguments' ids).
    let mut steps: HashMap<Array, usize> = HashMap::new();
    let mut calls: HashMap<(Function, Vec<usize>), usize> = HashMap::new();
    // Each distinct function is compiled once, however many sites call it.
    let mut bodies: HashMap<Function, Arc<dyn Program>> = HashMap::new();
    let mut planned: Vec<Planned> = Vec::new();
    // What the user passes: the placeholders, and every size parameter that is not a count.
    let mut user_inputs: Vec<Array> = Vec::new();
    let mut size_names: BTreeSet<String> = BTreeSet::new();
    for node in &nodes {
        crate::binding::node_size_params(node, &mut size_names);
        let children = node.children();
        // The phase after which a step runs (its operands and the counts it reads are known).
        let below = level[&node.id()] - usize::from(produces_in_a_step(node));
        let new_children: Vec<Array> = children.iter().map(|c| rewritten[&c.id()].clone()).collect();
        let (new, lvl) = if let NodeKind::CallResult { function, name, .. } = node.kind() {
            let key = (function.clone(), new_children.iter().map(Array::id).collect());
            let k = match calls.get(&key) {
                Some(&k) => k,
                None => {
                    let body = match bodies.get(function) {
                        Some(body) => body.clone(),
                        None => {
                            let body: Arc<dyn Program> = backend.compile(&function.body()?)?.into();
                            bodies.insert(function.clone(), body.clone());
                            body
                        }
                    };
                    let parameters = function.parameters().map(|(n, _)| n.to_string()).collect();
                    let kind = StepKind::Call { body, parameters, returns: Vec::new() };
                    planned.push(Planned { level: below, kind, operands: new_children, results: Vec::new() });
                    calls.insert(key, planned.len() - 1);
                    planned.len() - 1
                }
            };
            let step = &mut planned[k];
            let StepKind::Call { returns, .. } = &mut step.kind else { unreachable!("a call step") };
            let placeholder = match returns.iter().position(|r| r == name) {
                Some(j) => step.results[j].clone(),
                None => {
                    let input =
                        pytato_core::names::fresh_name(&format!("{STEP_INPUT_PREFIX}{k}_{name}_"), 0, &mut taken);
                    let placeholder = Array::new_generated_placeholder(&input, node.shape().clone(), node.dtype())?;
                    returns.push(name.clone());
                    step.results.push(placeholder.clone());
                    placeholder
                }
            };
            (placeholder, below + 1)
        } else if is_host_step(node) {
            let k = match steps.get(node) {
                Some(&k) => k,
                None => {
                    let k = planned.len();
                    let name = pytato_core::names::fresh_name(STEP_INPUT_PREFIX, k, &mut taken);
                    let mut placeholder = Array::new_generated_placeholder(&name, node.shape().clone(), node.dtype())?;
                    if let NodeKind::Nonzero { mask, .. } = node.kind() {
                        placeholder = placeholder.tagged(MaskPositions(mask.shape().clone()))?;
                    }
                    let kind = match node.kind() {
                        NodeKind::Scatter { mode, .. } => StepKind::Scatter(*mode),
                        NodeKind::Nonzero { count, .. } => StepKind::Nonzero(count.to_string()),
                        &NodeKind::Sort { axis, descending, result, .. } => StepKind::Sort { axis, descending, result },
                        &NodeKind::Scan { axis, op, .. } => StepKind::Scan { axis, op },
                        &NodeKind::SearchSorted { side, .. } => StepKind::SearchSorted(side),
                        other => unreachable!("{} is not a host step", other.name()),
                    };
                    planned.push(Planned { level: below, kind, operands: new_children, results: vec![placeholder] });
                    steps.insert(node.clone(), k);
                    k
                }
            };
            (planned[k].results[0].clone(), below + 1)
        } else if let Some(name) = unnamed.get(&node.id()) {
            let named = Array::new_generated_placeholder(name, node.shape().clone(), node.dtype())?;
            user_inputs.push(named.clone());
            (named, below)
        } else {
            if matches!(node.kind(), NodeKind::Placeholder { .. }) {
                user_inputs.push(node.clone());
            }
            (node.with_children(new_children)?, below)
        };
        debug_assert_eq!(lvl, level[&node.id()], "phase_levels agrees with the steps planned");
        rewritten.insert(node.id(), new);
    }
    // Lengths the steps decide: counts, and the lengths of call results that the call's arguments
    // do not determine (counts inside the function).
    let mut counts: BTreeSet<String> = BTreeSet::new();
    for step in &planned {
        match &step.kind {
            StepKind::Nonzero(count) => {
                counts.insert(count.clone());
            }
            StepKind::Call { .. } => {
                let given: BTreeSet<&str> = step.operands.iter().flat_map(|a| a.shape().params()).collect();
                for result in &step.results {
                    counts.extend(result.shape().params().filter(|v| !given.contains(v)).map(str::to_string));
                }
            }
            StepKind::Scatter(_) | StepKind::Sort { .. } | StepKind::Scan { .. } | StepKind::SearchSorted(_) => {}
        }
    }
    for name in size_names.difference(&counts) {
        user_inputs.push(Array::new_size_param(name)?);
    }
    let entries: Vec<(String, Array)> =
        user_inputs.into_iter().enumerate().map(|(k, a)| (format!("input{k}"), a)).collect();
    let inputs =
        Signature::new(&Outputs::Named(DictOfNamedArrays::new(entries.iter().map(|(n, a)| (n.as_str(), a.clone())))?))?;

    let phase_count = planned.iter().map(|p| p.level + 1).max().unwrap_or(0);
    let mut phases = Vec::with_capacity(phase_count);
    for phase in 0..phase_count {
        let mut computed: BTreeMap<String, Array> = BTreeMap::new();
        let mut phase_steps = Vec::new();
        for (k, step) in planned.iter().enumerate() {
            if step.level != phase {
                continue;
            }
            let mut sources = Vec::with_capacity(step.operands.len());
            for (j, operand) in step.operands.iter().enumerate() {
                sources.push(match (operand.kind(), operand.name()) {
                    (NodeKind::Placeholder { .. }, Some(name)) => Source::Given(name.to_string()),
                    _ => {
                        let name = format!("step{k}_{j}");
                        computed.insert(name.clone(), operand.clone());
                        Source::Computed(name)
                    }
                });
            }
            let results =
                step.results.iter().map(|p| (p.name().expect("named").to_string(), p.shape().clone())).collect();
            phase_steps.push(Step { kind: step.kind.clone(), operands: sources, results });
        }
        let program = if computed.is_empty() {
            None
        } else {
            let dict = DictOfNamedArrays::new(computed.iter().map(|(n, a)| (n.as_str(), a.clone())))?;
            Some(backend.compile(&Outputs::Named(dict))?)
        };
        phases.push(Phase { program, steps: phase_steps });
    }
    let final_outputs = outputs.map_arrays(|a| rewritten[&a.id()].clone())?;
    let step_results: BTreeSet<&str> = planned.iter().flat_map(|p| p.results.iter()).filter_map(Array::name).collect();
    let (mut direct, mut computed) = (Vec::new(), Vec::new());
    for (name, array) in final_outputs.entries() {
        match array.name() {
            Some(step) if matches!(array.kind(), NodeKind::Placeholder { .. }) && step_results.contains(step) => {
                direct.push((name.to_string(), step.to_string()))
            }
            _ => computed.push((name.to_string(), array.clone())),
        }
    }
    let output_names = final_outputs.entries().iter().map(|(n, _)| n.to_string()).collect();
    let output_types = final_outputs
        .entries()
        .iter()
        .map(|(n, a)| (n.to_string(), pytato_datashape::meaning::array_datashape(a.shape(), a.dtype())))
        .collect();
    let last = match (direct.is_empty(), computed.is_empty()) {
        (true, _) => Some(backend.compile(&final_outputs)?),
        (false, true) => None,
        (false, false) => {
            let dict = DictOfNamedArrays::new(computed.iter().map(|(n, a)| (n.as_str(), a.clone())))?;
            Some(backend.compile(&Outputs::Named(dict))?)
        }
    };
    let device = backend.device_steps();
    let host_threads = HostThreads::new(backend.host_threads());
    let reusable = phases
        .iter()
        .flat_map(|phase| &phase.steps)
        .filter(|step| !matches!(step.kind, StepKind::Call { .. }))
        .map(|step| step.results[0].0.clone())
        .filter(|name| !direct.iter().any(|(_, step)| step == name))
        .collect();
    Ok(Box::new(PhasedProgram {
        inputs,
        phases,
        last,
        direct,
        output_names,
        output_types,
        device,
        host_threads,
        fresh_memory_advice: backend.fresh_memory_advice(),
        reusable,
        spares: Mutex::new(NamedData::new()),
    }))
}

impl PhasedProgram {
    /// Checks the inputs, runs every phase and its host steps; returns what later programs may
    /// take besides the user's inputs: step results, counts and the sizes bound.
    fn run_phases(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        let bound = self.inputs.bind(inputs)?;
        let mut results: NamedData =
            bound.sizes.iter().map(|(name, &v)| (name.clone(), ArrayData::from_scalar(Scalar::I64(v)))).collect();
        for phase in &self.phases {
            let values = match &phase.program {
                Some(program) => program.run_views(&wanted_by(&**program, inputs, &results))?,
                None => NamedData::new(),
            };
            let mut new = Vec::with_capacity(phase.steps.len());
            for step in &phase.steps {
                crate::interrupt::check("a host step")?;
                let operands: Vec<ArrayDataView<'_>> = step
                    .operands
                    .iter()
                    .map(|source| match source {
                        Source::Computed(name) => values[name].view(),
                        Source::Given(name) => match inputs.get(name.as_str()) {
                            Some(view) => view.reborrow(),
                            None => results[name].view(),
                        },
                    })
                    .collect();
                match &step.kind {
                    StepKind::Call { body, parameters, returns } => {
                        let mut arguments: NamedViews<'_> =
                            parameters.iter().map(String::as_str).zip(operands.iter().map(|v| v.reborrow())).collect();
                        // Sizes the body reads as values and no argument's shape carries.
                        for name in body.input_names() {
                            if !arguments.contains_key(name.as_str())
                                && let Some((name, value)) = results.get_key_value(&name)
                            {
                                arguments.insert(name.as_str(), value.view());
                            }
                        }
                        let mut values = body.run_views(&arguments)?;
                        for ((input, shape), name) in step.results.iter().zip(returns) {
                            let value = values.remove(&**name).expect("the body computes every result");
                            for (variable, length) in lengths_decided(shape, value.shape(), |v| results.contains_key(v))
                            {
                                new.push((variable, ArrayData::from_scalar(Scalar::I64(length))));
                            }
                            new.push((input.clone(), value));
                        }
                    }
                    kind => {
                        let memory = ResultMemory {
                            spare: self.take_spare(&step.results[0].0),
                            advice: self.fresh_memory_advice,
                        };
                        new.extend(self.host_threads.run(|| host_step(kind, &step.results, &operands, memory))?)
                    }
                }
            }
            results.extend(new);
        }
        Ok(results)
    }
}

/// The user inputs and phase results that `program` takes.
fn wanted_by<'a>(program: &dyn Program, inputs: &'a NamedViews<'_>, results: &'a NamedData) -> NamedViews<'a> {
    let wanted: BTreeSet<String> = program.input_names().into_iter().collect();
    let mut views: NamedViews<'a> = inputs
        .iter()
        .filter(|(name, _)| wanted.contains(**name))
        .map(|(&name, view)| (name, view.reborrow()))
        .collect();
    views.extend(
        results.iter().filter(|(name, _)| wanted.contains(*name)).map(|(name, data)| (name.as_str(), data.view())),
    );
    views
}

impl PhasedProgram {
    /// The spare kept for the step result `name`, if any: the caller's to write into.
    fn take_spare(&self, name: &str) -> Option<ArrayData> {
        if !self.reusable.contains(name) {
            return None;
        }
        // A panic while the lock was held left the map as it was: keep using it.
        self.spares.lock().unwrap_or_else(PoisonError::into_inner).remove(name)
    }

    /// Keeps the results of a finished run that later runs' steps reuse; drops the rest.
    fn keep_spares(&self, results: NamedData) {
        let mut spares = self.spares.lock().unwrap_or_else(PoisonError::into_inner);
        spares.extend(results.into_iter().filter(|(name, _)| self.reusable.contains(name)));
    }

    /// Takes the step results that are outputs as they are out of `results` (a copy only where
    /// one result is two outputs).
    fn direct_outputs<T: Clone>(&self, results: &mut BTreeMap<String, T>) -> Vec<(String, T)> {
        let mut out = Vec::with_capacity(self.direct.len());
        for (k, (name, step)) in self.direct.iter().enumerate() {
            let again = self.direct[k + 1..].iter().any(|(_, s)| s == step);
            let value = if again { results[step].clone() } else { results.remove(step).expect("every step ran") };
            out.push((name.clone(), value));
        }
        out
    }

    /// [`PhasedProgram::run_phases`] on device data, with the backend's step kernels: programs
    /// run with `run_device`, steps with a kernel run on the device, and only the others (and
    /// counts, which are lengths) go through the host.
    fn run_phases_on_device(
        &self,
        device: &dyn DeviceSteps,
        inputs: &NamedDeviceInputs<'_>,
    ) -> Result<NamedDeviceArrays> {
        // Checked by dtype and shape; index values are checked by the kernels that use them.
        let stand_ins: NamedViews<'_> = inputs
            .iter()
            .map(|(name, input)| match input {
                DeviceInput::Host(view) => (*name, view.reborrow()),
                DeviceInput::Device(array) => (*name, array.stand_in()),
            })
            .collect();
        let bound = self.inputs.bind(&stand_ins)?;
        let mut results: NamedDeviceArrays = bound
            .sizes
            .iter()
            .map(|(name, &v)| (name.clone(), DeviceArray::host(ArrayData::from_scalar(Scalar::I64(v)))))
            .collect();
        for phase in &self.phases {
            let values = match &phase.program {
                Some(program) => program.run_device(&wanted_on_device(&**program, inputs, &results))?,
                None => NamedDeviceArrays::new(),
            };
            let mut new: Vec<(String, DeviceArray)> = Vec::with_capacity(phase.steps.len());
            for step in &phase.steps {
                let operands: Vec<DeviceInput<'_>> = step
                    .operands
                    .iter()
                    .map(|source| match source {
                        Source::Computed(name) => DeviceInput::Device(&values[name]),
                        Source::Given(name) => match inputs.get(name.as_str()) {
                            Some(input) => reborrow(input),
                            None => DeviceInput::Device(&results[name]),
                        },
                    })
                    .collect();
                match &step.kind {
                    StepKind::Call { body, parameters, returns } => {
                        let mut arguments: NamedDeviceInputs<'_> =
                            parameters.iter().map(String::as_str).zip(operands.iter().map(reborrow)).collect();
                        for name in body.input_names() {
                            if !arguments.contains_key(name.as_str())
                                && let Some((name, value)) = results.get_key_value(&name)
                            {
                                arguments.insert(name.as_str(), DeviceInput::Device(value));
                            }
                        }
                        let mut values = body.run_device(&arguments)?;
                        for ((input, shape), name) in step.results.iter().zip(returns) {
                            let value = values.remove(&**name).expect("the body computes every result");
                            for (variable, length) in lengths_decided(shape, value.shape(), |v| results.contains_key(v))
                            {
                                new.push((variable, DeviceArray::host(ArrayData::from_scalar(Scalar::I64(length)))));
                            }
                            new.push((input.clone(), value));
                        }
                    }
                    kind => new.extend(device_step(device, &self.host_threads, kind, &step.results, &operands)?),
                }
            }
            results.extend(new);
        }
        Ok(results)
    }
}

/// Runs one step (not a call) on device data: as the backend's kernel where it has one, else on
/// the host, its results uploaded (counts stay on the host: they are lengths).
fn device_step(
    device: &dyn DeviceSteps,
    host_threads: &HostThreads,
    kind: &StepKind,
    results: &[(String, Shape)],
    operands: &[DeviceInput<'_>],
) -> Result<Vec<(String, DeviceArray)>> {
    let step = match *kind {
        StepKind::Scan { axis, op } => Some(DeviceStep::Scan { axis, op }),
        StepKind::SearchSorted(side) => Some(DeviceStep::SearchSorted(side)),
        StepKind::Nonzero(_) => Some(DeviceStep::Nonzero),
        StepKind::Sort { axis, descending, result } => Some(DeviceStep::Sort { axis, descending, result }),
        StepKind::Scatter(mode) => Some(DeviceStep::Scatter(mode)),
        StepKind::Call { .. } => unreachable!("calls run their body's program"),
    };
    if let Some(step) = step {
        let uploaded: Vec<DeviceArray> = operands
            .iter()
            .map(|input| match input {
                DeviceInput::Device(array) => Ok((*array).clone()),
                DeviceInput::Host(view) => device.upload(view),
            })
            .collect::<Result<_>>()?;
        if let Some(result) = device.run(step, &uploaded.iter().collect::<Vec<_>>()) {
            let result = result?;
            let mut named = Vec::with_capacity(2);
            if let StepKind::Nonzero(count) = kind {
                // The count, for programs that read it without the positions' shape.
                let value = i64::try_from(result.shape()[1]).expect("a count fits in i64");
                named.push((count.clone(), DeviceArray::host(ArrayData::from_scalar(Scalar::I64(value)))));
            }
            named.push((results[0].0.clone(), result));
            return Ok(named);
        }
    }
    let copied: Vec<Option<ArrayData>> = operands
        .iter()
        .map(|input| match input {
            DeviceInput::Device(array) if array.storage().as_host().is_none() => array.to_host().map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let views: Vec<ArrayDataView<'_>> = operands
        .iter()
        .zip(&copied)
        .map(|(input, copy)| match (input, copy) {
            (_, Some(copy)) => copy.view(),
            (DeviceInput::Host(view), None) => view.reborrow(),
            (DeviceInput::Device(array), None) => array.storage().as_host().expect("held on the host").view(),
        })
        .collect();
    host_threads
        .run(|| host_step(kind, results, &views, ResultMemory::default()))?
        .into_iter()
        .map(|(name, value)| {
            if results.iter().any(|(r, _)| *r == name) {
                Ok((name, device.upload(&value.view())?))
            } else {
                Ok((name, DeviceArray::host(value)))
            }
        })
        .collect()
}

/// Runs one step (not a call) on the host: its results by name (a nonzero step's count first),
/// the step's result in `memory` ([`crate::spare`]).
fn host_step(
    kind: &StepKind,
    results: &[(String, Shape)],
    operands: &[ArrayDataView<'_>],
    memory: ResultMemory,
) -> Result<Vec<(String, ArrayData)>> {
    // The steps read row-major operands and allocate results of their sizes: an operand that is
    // not row-major (a broadcast view of one element may stand for terabytes) is copied first,
    // or refused as out of memory, so that what a step allocates is in proportion to arrays
    // that exist.
    let copies: Vec<Option<ArrayData>> = operands
        .iter()
        .map(|view| match view.is_standard_layout() {
            true => Ok(None),
            false => view.try_to_owned(kind.name()).map(Some),
        })
        .collect::<Result<_>>()?;
    let owned: Vec<ArrayDataView<'_>> = operands
        .iter()
        .zip(&copies)
        .map(|(view, copy)| copy.as_ref().map_or_else(|| view.reborrow(), ArrayData::view))
        .collect();
    let operands = &owned[..];
    let result = results[0].0.clone();
    Ok(match kind {
        StepKind::Nonzero(count) => {
            let positions = nonzero_into(&operands[0], memory)?;
            // The count, for programs that read it without the positions' shape.
            let value = i64::try_from(positions.shape()[1]).expect("a count fits in i64");
            vec![(count.clone(), ArrayData::from_scalar(Scalar::I64(value))), (result, positions)]
        }
        StepKind::Scatter(mode) => {
            vec![(result, scatter_into(&operands[0], &operands[1], &operands[2], *mode, memory)?)]
        }
        &StepKind::Sort { axis, descending, result: what } => {
            vec![(result, crate::sort::sort_into(&operands[0], axis, descending, what, memory)?)]
        }
        &StepKind::SearchSorted(side) => {
            vec![(result, crate::sort::searchsorted_into(&operands[0], &operands[1], side, memory)?)]
        }
        &StepKind::Scan { axis, op } => vec![(result, crate::scan::scan_into(&operands[0], axis, op, memory)?)],
        StepKind::Call { .. } => unreachable!("calls run their body's program"),
    })
}

/// The lengths a call's body decided (counts inside it) that later programs need: each axis of
/// `shape` that is one size variable not yet `known`, with the `length` the result has there.
fn lengths_decided(shape: &Shape, lengths: &[usize], known: impl Fn(&str) -> bool) -> Vec<(String, i64)> {
    let mut decided = Vec::new();
    for (dim, &length) in shape.dims().iter().zip(lengths) {
        if let (0, [(variable, 1)]) = (dim.constant(), &dim.terms().collect::<Vec<_>>()[..])
            && !known(variable)
        {
            decided.push((variable.to_string(), i64::try_from(length).expect("a length fits in i64")));
        }
    }
    decided
}

/// `input` for a shorter borrow.
fn reborrow<'a>(input: &'a DeviceInput<'_>) -> DeviceInput<'a> {
    match input {
        DeviceInput::Host(view) => DeviceInput::Host(view.reborrow()),
        DeviceInput::Device(array) => DeviceInput::Device(array),
    }
}

/// [`wanted_by`] on device data.
fn wanted_on_device<'a>(
    program: &dyn Program,
    inputs: &'a NamedDeviceInputs<'_>,
    results: &'a NamedDeviceArrays,
) -> NamedDeviceInputs<'a> {
    let wanted: BTreeSet<String> = program.input_names().into_iter().collect();
    let mut chosen: NamedDeviceInputs<'a> = inputs
        .iter()
        .filter(|(name, _)| wanted.contains(**name))
        .map(|(&name, input)| (name, reborrow(input)))
        .collect();
    chosen.extend(
        results
            .iter()
            .filter(|(name, _)| wanted.contains(*name))
            .map(|(name, array)| (name.as_str(), DeviceInput::Device(array))),
    );
    chosen
}

impl Program for PhasedProgram {
    fn input_names(&self) -> Vec<String> {
        self.inputs.input_names()
    }

    fn output_names(&self) -> Vec<String> {
        self.output_names.clone()
    }

    /// The user's inputs (of the first check) to the outputs; lengths the data decides are type
    /// variables named like their counts.
    fn datashape(&self) -> Option<pytato_datashape::Type> {
        use pytato_datashape::Type;
        let Type::Function(inputs, _) = self.inputs.datashape() else { return None };
        Some(Type::Function(inputs, Box::new(Type::Record(self.output_types.clone()))))
    }

    fn run_views(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        let mut results = self.run_phases(inputs)?;
        let mut outputs = match &self.last {
            Some(last) => last.run_views(&wanted_by(&**last, inputs, &results))?,
            None => NamedData::new(),
        };
        outputs.extend(self.direct_outputs(&mut results));
        self.keep_spares(results);
        Ok(outputs)
    }

    /// Steps with a kernel on the backend's device run there ([`Backend::device_steps`]): a
    /// program of phases on device data copies to the host only what the host computes.
    fn run_device(&self, inputs: &NamedDeviceInputs<'_>) -> Result<NamedDeviceArrays> {
        let Some(device) = &self.device else { return crate::backend::run_device_on_host(self, inputs) };
        let mut results = self.run_phases_on_device(&**device, inputs)?;
        let mut outputs = match &self.last {
            Some(last) => last.run_device(&wanted_on_device(&**last, inputs, &results))?,
            None => NamedDeviceArrays::new(),
        };
        outputs.extend(self.direct_outputs(&mut results));
        Ok(outputs)
    }

    fn run_into(&self, inputs: &NamedViews<'_>, outputs: &mut NamedViewsMut<'_>) -> Result<()> {
        let unknown: Vec<String> =
            outputs.keys().filter(|n| !self.output_names.iter().any(|k| k == *n)).map(|n| n.to_string()).collect();
        let missing: Vec<String> =
            self.output_names.iter().filter(|n| !outputs.contains_key(n.as_str())).cloned().collect();
        if !missing.is_empty() || !unknown.is_empty() {
            return Err(Error::OutputNames { missing, unknown, known: self.output_names.clone() });
        }
        let mut results = self.run_phases(inputs)?;
        let mut direct_views = Vec::with_capacity(self.direct.len());
        for (name, _) in &self.direct {
            direct_views.push(outputs.remove_entry(name.as_str()).expect("checked above"));
        }
        let ran = match &self.last {
            Some(last) => last.run_into(&wanted_by(&**last, inputs, &results), outputs),
            None => Ok(()),
        };
        let values = self.direct_outputs(&mut results);
        self.keep_spares(results);
        // The views go back where they were, whatever happened.
        let mut written = Ok(());
        for ((key, mut view), (_, value)) in direct_views.into_iter().zip(values) {
            if written.is_ok() && view.assign(&value.view()).is_none() {
                written = Err(Error::OutputArray {
                    name: key.to_string(),
                    expected_dtype: value.dtype(),
                    expected_shape: value.shape().to_vec(),
                    got_dtype: view.dtype(),
                    got_shape: view.shape().to_vec(),
                });
            }
            outputs.insert(key, view);
        }
        ran.and(written)
    }
}

/// [`NodeKind::Nonzero`] on the host: the row-major positions of the `true` elements, as an
/// `int64` array of shape `(ndim, count)`. Large masks are scanned in parallel: each thread counts
/// the `true` elements of its stretch, a prefix sum of the counts says where each stretch's
/// positions go, and each thread writes its own.
pub fn nonzero(mask: &ArrayDataView<'_>) -> Result<ArrayData> {
    nonzero_into(mask, ResultMemory::default())
}

/// [`nonzero`], its result in `memory` ([`crate::spare`]).
fn nonzero_into(mask: &ArrayDataView<'_>, memory: ResultMemory) -> Result<ArrayData> {
    let mask = mask.as_view::<bool>().ok_or_else(|| Error::Internal {
        backend: "phases".into(),
        message: format!("a nonzero step got a {} mask", mask.dtype()),
    })?;
    let mask = mask.as_standard_layout();
    let flat = mask.as_slice().expect("standard layout");
    let shape = mask.shape();
    let ndim = shape.len();
    // One stretch per thread of rayon's pool (which `RAYON_NUM_THREADS` sizes, as for the other
    // host steps), for masks large enough to pay for threads.
    const PER_THREAD: usize = 1 << 20;
    let threads = rayon::current_num_threads().min(flat.len() / PER_THREAD).max(1);
    let stretch = flat.len().div_ceil(threads).max(1);
    let counts: Vec<usize> = if threads == 1 {
        vec![flat.iter().filter(|&&b| b).count()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                flat.chunks(stretch).map(|c| scope.spawn(move || c.iter().filter(|&&b| b).count())).collect();
            handles.into_iter().map(|h| h.join().expect("counting never panics")).collect()
        })
    };
    let count: usize = counts.iter().sum();
    let mut positions = crate::spare::result_memory::<i64>(&[ndim, count], "nonzero", memory)?;
    // Row `a` of the result holds axis `a`'s indices; split every row at the stretches' offsets.
    let out = positions.as_slice_mut().expect("row-major");
    let mut rows: Vec<&mut [i64]> = out.chunks_mut(count.max(1)).take(ndim).collect();
    let mut pieces: Vec<Vec<&mut [i64]>> = (0..counts.len()).map(|_| Vec::with_capacity(ndim)).collect();
    for row in rows.iter_mut() {
        let mut rest: &mut [i64] = std::mem::take(row);
        for (piece, &c) in pieces.iter_mut().zip(&counts) {
            let (mine, tail) = rest.split_at_mut(c);
            piece.push(mine);
            rest = tail;
        }
    }
    // Writes the positions of one stretch; `false` where the stretch no longer holds as many
    // `true` elements as were counted (another thread wrote the mask during the run).
    let fill = |first: usize, selected: &[bool], mut piece: Vec<&mut [i64]>, counted: usize| -> bool {
        // The multi-index of `first`, then moved from one selected element to the next.
        let mut index = vec![0usize; ndim];
        let mut rest = first;
        for a in (0..ndim).rev() {
            index[a] = rest % shape[a].max(1);
            rest /= shape[a].max(1);
        }
        let (mut at, mut k) = (first, 0);
        // 64 elements at a time: a bit mask of the selected ones, whose set bits are visited in
        // order. (A branch per element mispredicts half the time on a random mask: `sum(x[x > 0])`
        // of 10^7 random signs took 43 ms with it, 25 ms with this.)
        for (c, chunk) in selected.chunks(64).enumerate() {
            let mut bits = selection_bits(chunk);
            while bits != 0 {
                if k == counted {
                    return false;
                }
                let flat = first + c * 64 + bits.trailing_zeros() as usize;
                if let [row] = piece.as_mut_slice() {
                    row[k] = flat as i64;
                } else {
                    advance(&mut index, shape, flat - at);
                    at = flat;
                    for (row, &i) in piece.iter_mut().zip(&index) {
                        row[k] = i as i64;
                    }
                }
                k += 1;
                bits &= bits - 1;
            }
        }
        k == counted
    };
    let consistent = if threads == 1 {
        fill(0, flat, pieces.pop().expect("one stretch"), count)
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = flat
                .chunks(stretch)
                .zip(pieces)
                .zip(&counts)
                .enumerate()
                .map(|(t, ((selected, piece), &c))| scope.spawn(move || fill(t * stretch, selected, piece, c)))
                .collect();
            handles.into_iter().all(|h| h.join().unwrap_or(false))
        })
    };
    if !consistent {
        return Err(Error::invalid(
            "nonzero",
            "the mask changed while it was read: another thread wrote an input during the run",
        ));
    }
    Ok(ArrayData::from(positions))
}

/// Bit `i` set where `selected[i]` (at most 64 elements): eight at a time, each byte of a
/// little-endian word (0 or 1) carried to its bit by one multiplication.
fn selection_bits(selected: &[bool]) -> u64 {
    let bytes: &[u8] = bytemuck::cast_slice(selected);
    let mut bits = 0u64;
    for (k, eight) in bytes.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..eight.len()].copy_from_slice(eight);
        // Byte `i` (0 or 1) of `w` times `2^(7j + 7)` for `j = 7 - i` lands on bit `56 + i`, and
        // no other product reaches the top byte or carries into it.
        let eight_bits = u64::from_le_bytes(word).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        bits |= eight_bits << (8 * k);
    }
    bits
}

/// Moves the row-major multi-index `index` of an array of `shape` forward by `steps` elements:
/// a division only where the last axis wraps.
fn advance(index: &mut [usize], shape: &[usize], steps: usize) {
    let mut carry = steps;
    for a in (0..index.len()).rev() {
        if carry == 0 {
            return;
        }
        let moved = index[a] + carry;
        let length = shape[a].max(1);
        if moved < length {
            index[a] = moved;
            return;
        }
        index[a] = moved % length;
        carry = moved / length;
    }
}

/// [`NodeKind::Scatter`] on the host: `array` with `values` written to (or added at) the flat
/// `positions` (negative ones from the end), in row-major order of `positions` (so the last of
/// repeated positions wins a [`ScatterMode::Set`]). A position outside the array is
/// [`Error::IndexOutOfBounds`].
pub fn scatter(
    array: &ArrayDataView<'_>,
    positions: &ArrayDataView<'_>,
    values: &ArrayDataView<'_>,
    mode: ScatterMode,
) -> Result<ArrayData> {
    scatter_into(array, positions, values, mode, ResultMemory::default())
}

/// [`scatter`], its result in `memory` ([`crate::spare`]).
fn scatter_into(
    array: &ArrayDataView<'_>,
    positions: &ArrayDataView<'_>,
    values: &ArrayDataView<'_>,
    mode: ScatterMode,
    memory: ResultMemory,
) -> Result<ArrayData> {
    let positions = positions.as_view::<i64>().ok_or_else(|| Error::Internal {
        backend: "phases".into(),
        message: format!("a scatter step got {} positions", positions.dtype()),
    })?;
    if values.shape() != positions.shape() {
        return Err(Error::Internal {
            backend: "phases".into(),
            message: format!("scatter: {:?} values for {:?} positions", values.shape(), positions.shape()),
        });
    }
    // Slices, not n-dimensional iterators: the loops below are the whole cost of the step.
    let positions = crate::spare::row_major(positions, "scatter")?;
    let positions = positions.as_slice().expect("standard layout");
    fn typed<T: ViewElement + NumpyArith + bytemuck::Zeroable>(
        array: &ArrayViewD<'_, T>,
        positions: &[i64],
        values: &ArrayDataView<'_>,
        mode: ScatterMode,
        memory: ResultMemory,
    ) -> Result<ArrayData> {
        let values = crate::spare::row_major(T::unwrap_view(values).expect("the dtypes were compared"), "scatter")?;
        let values = values.as_slice().expect("standard layout");
        let mut result = crate::spare::row_major_copy(array.view(), "scatter", memory)?;
        let out = result.as_slice_mut().expect("standard layout");
        let length = out.len();
        for (&p, &v) in positions.iter().zip(values) {
            let slot = slot(p, length)?;
            out[slot] = match mode {
                ScatterMode::Set => v,
                ScatterMode::Add => out[slot].numpy_add(v),
            };
        }
        Ok(T::wrap(result))
    }
    if values.dtype() != array.dtype() {
        return add_promoted(array, positions, values);
    }
    for_each_array_view!(ArrayDataView, array, a => typed(a, positions, values, mode, memory))
}

/// The flat position `p` of an array of `length` elements as an index (negative from the end), or
/// the error.
fn slot(p: i64, length: usize) -> Result<usize> {
    let from_end = |p: i64| (p < 0).then(|| length.checked_sub(p.unsigned_abs() as usize)).flatten();
    usize::try_from(p).ok().filter(|&p| p < length).or_else(|| from_end(p)).ok_or_else(|| Error::IndexOutOfBounds {
        op: "scatter".into(),
        index: p,
        axis: 0,
        length,
    })
}

/// `np.add.at` with values of another dtype: each addition in the promoted dtype, the sum cast
/// back to the array's dtype before the next one (numpy's order of operations, one element at a
/// time through [`Scalar`]).
fn add_promoted(array: &ArrayDataView<'_>, positions: &[i64], values: &ArrayDataView<'_>) -> Result<ArrayData> {
    let sum_dtype = result_type(array.dtype(), values.dtype());
    let mut out = array.try_to_owned("scatter")?;
    let length = out.len();
    for (i, &p) in positions.iter().enumerate() {
        let slot = slot(p, length)?;
        let (old, v) =
            (out.get_flat(slot).expect("a slot in the array"), values.get_flat(i).expect("a value per position"));
        // `set_flat` casts the sum back to the array's dtype.
        out.set_flat(slot, scalar_add(old.cast(sum_dtype), v.cast(sum_dtype))).expect("a row-major array");
    }
    Ok(out)
}

/// `a + b` for two scalars of one dtype, with numpy's semantics ([`NumpyArith`]).
fn scalar_add(a: Scalar, b: Scalar) -> Scalar {
    macro_rules! same {
        ($($v:ident),*) => {
            match (a, b) {
                $((Scalar::$v(x), Scalar::$v(y)) => Scalar::$v(x.numpy_add(y)),)*
                _ => unreachable!("both operands were cast to one dtype"),
            }
        };
    }
    same!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use ndarray::{ArrayD, IxDyn};
    use pytato_core::DType;
    use pytato_core::s;
    use pytato_core::tags::CountNamed;
    use pytato_frontend as pt;

    /// Host steps on broadcast views (stride 0) of one element standing for 2^40: each is out of
    /// memory, typed, before any copy or result of that size is attempted (they aborted the
    /// process).
    #[test]
    fn steps_on_broadcast_views_of_terabytes_are_out_of_memory() {
        use ndarray::ShapeBuilder;
        let (values, mask) = ([1.5f64], [true]);
        let shape = IxDyn(&[1 << 40, 1]).strides(IxDyn(&[0, 0]));
        let x = ArrayDataView::from(ArrayViewD::from_shape(shape.clone(), &values[..]).unwrap());
        let m = ArrayDataView::from(ArrayViewD::from_shape(shape, &mask[..]).unwrap());
        let results = [("r".to_string(), Shape::from([1i64]))];
        let (position, one) =
            (ArrayData::from(ndarray::arr1(&[0i64]).into_dyn()), ArrayData::from(ndarray::arr1(&[1.0]).into_dyn()));
        let steps = [
            (StepKind::Sort { axis: 1, descending: false, result: SortResult::Values }, vec![x.reborrow()]),
            (StepKind::Sort { axis: 0, descending: true, result: SortResult::Indices }, vec![x.reborrow()]),
            (StepKind::Scan { axis: 1, op: ScanOp::Sum }, vec![x.reborrow()]),
            (StepKind::Nonzero("count".into()), vec![m.reborrow()]),
            (StepKind::Scatter(ScatterMode::Add), vec![x.reborrow(), position.view(), one.view()]),
        ];
        for (kind, operands) in steps {
            match host_step(&kind, &results, &operands, ResultMemory::default()) {
                Err(Error::OutOfMemory { op, bytes, .. }) => {
                    assert_eq!(op, kind.name());
                    assert!(bytes >= 1 << 40, "{op}: {bytes} bytes");
                }
                Err(e) => panic!("{}: expected OutOfMemory, got {e}", kind.name()),
                Ok(_) => panic!("{}: a result of 2^40 elements", kind.name()),
            }
        }
    }

    #[test]
    fn equal_masks_share_a_count_and_named_counts_must_be_unique() {
        let a = pt::placeholder("a", [6], DType::F64).unwrap();
        let first = a.index(s![&pt::greater(&a, 0.0).unwrap()]).unwrap();
        let second = a.index(s![&pt::greater(&a, 0.0).unwrap()]).unwrap();
        assert_eq!(first.shape(), second.shape());
        assert!(first.shape().to_string().starts_with("(_pt_shp"));
        let other = a.index(s![&pt::less(&a, 0.0).unwrap()]).unwrap();
        assert_ne!(first.shape(), other.shape());

        let named = |m: Array| m.tagged(CountNamed("k".into())).unwrap();
        let p = a.index(s![&named(pt::greater(&a, 0.0).unwrap())]).unwrap();
        let q = a.index(s![&named(pt::less(&a, 0.0).unwrap())]).unwrap();
        let both = DictOfNamedArrays::new([("p", p.clone()), ("q", q)]).unwrap();
        let Err(err) = pytato_core::array::collect_inputs(both.iter().map(|(_, a)| a)) else {
            panic!("one name, two counts")
        };
        assert!(matches!(&err, Error::DuplicateName { name, .. } if name == "k"), "{err}");
        // A placeholder named like a count is a second meaning for the name.
        let clash = pt::placeholder("k", [2], DType::F64).unwrap();
        let both = DictOfNamedArrays::new([("p", p), ("c", clash)]).unwrap();
        assert!(matches!(
            pytato_core::array::collect_inputs(both.iter().map(|(_, a)| a)),
            Err(Error::DuplicateName { .. })
        ));
    }

    #[test]
    fn a_zero_dimensional_mask_and_a_reserved_count_name_are_typed_errors() {
        let a = pt::placeholder("a", pytato_core::Shape::scalar(), DType::F64).unwrap();
        assert!(matches!(pt::nonzero(&a), Err(Error::InvalidArgument { .. })));
        let m = pt::placeholder("m", [3], DType::Bool).unwrap();
        assert!(matches!(Array::new_nonzero(&m, "not a name"), Err(Error::InvalidName { .. })));
        let f = pt::placeholder("f", [3], DType::F64).unwrap();
        assert!(matches!(Array::new_nonzero(&f, "n"), Err(Error::InvalidArgument { .. })));
    }

    #[test]
    fn nonzero_lists_positions_in_row_major_order() {
        let mask = ArrayData::from(array![[true, false, true], [false, true, false]].into_dyn());
        let got = nonzero(&mask.view()).unwrap();
        let want = ArrayData::from(array![[0i64, 0, 1], [0, 2, 1]].into_dyn());
        assert_eq!(got, want);
        let none = ArrayData::from(ArrayD::<bool>::from_elem(IxDyn(&[0, 4]), false));
        assert_eq!(nonzero(&none.view()).unwrap().shape(), &[2, 0]);
    }

    #[test]
    fn nonzero_of_a_large_mask_scanned_in_parallel_is_the_simple_scan() {
        let (rows, cols) = (1537, 2048 + 3);
        let mask = ArrayD::from_shape_fn(IxDyn(&[rows, cols]), |i| (i[0] * 31 + i[1] * 7) % 11 < 3);
        let mut want: Vec<Vec<i64>> = vec![Vec::new(), Vec::new()];
        for (index, &selected) in mask.indexed_iter() {
            if selected {
                want[0].push(index[0] as i64);
                want[1].push(index[1] as i64);
            }
        }
        let got = nonzero(&ArrayData::from(mask).view()).unwrap();
        let got = got.as_array::<i64>().unwrap();
        assert_eq!(got.shape(), &[2, want[0].len()]);
        assert!(got.outer_iter().zip(&want).all(|(g, w)| g.iter().eq(w.iter())));
    }

    /// The positions of every shape and density against a walk of the mask: lengths on both
    /// sides of the 64-element chunks the scan reads as bit masks, rows shorter than a chunk,
    /// selected elements many rows apart (the multi-index carried over several rows), empty
    /// axes, masks all true and all false.
    #[test]
    fn nonzero_is_the_walk_of_the_mask_for_every_shape_and_density() {
        let shapes: [&[usize]; 9] = [&[0], &[1], &[63], &[64], &[65], &[130, 3], &[7, 0, 5], &[3, 5, 70], &[1 << 21]];
        let mut state = 12345u64;
        for shape in shapes {
            for density in [0u64, 1, 50, 99, 100] {
                let mask = ArrayD::from_shape_fn(IxDyn(shape), |_| {
                    state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    (state >> 33) % 100 < density
                });
                let mut want: Vec<Vec<i64>> = vec![Vec::new(); shape.len()];
                for (index, &selected) in mask.indexed_iter() {
                    if selected {
                        for (axis, w) in want.iter_mut().enumerate() {
                            w.push(index[axis] as i64);
                        }
                    }
                }
                let got = nonzero(&ArrayData::from(mask).view()).unwrap();
                let got = got.as_array::<i64>().unwrap();
                let count = want[0].len();
                assert_eq!(got.shape(), &[shape.len(), count], "{shape:?} at {density}%");
                assert!(got.outer_iter().zip(&want).all(|(g, w)| g.iter().eq(w.iter())), "{shape:?} at {density}%");
            }
        }
    }

    #[test]
    fn scatter_set_keeps_the_last_write_and_add_accumulates_in_order() {
        let x = ArrayData::from(array![0.0f64, 0.0, 0.0].into_dyn());
        let p = ArrayData::from(array![2i64, 0, 2].into_dyn());
        let v = ArrayData::from(array![1.0f64, 2.0, 3.0].into_dyn());
        assert_eq!(
            scatter(&x.view(), &p.view(), &v.view(), ScatterMode::Set).unwrap(),
            ArrayData::from(array![2.0, 0.0, 3.0].into_dyn())
        );
        assert_eq!(
            scatter(&x.view(), &p.view(), &v.view(), ScatterMode::Add).unwrap(),
            ArrayData::from(array![2.0, 0.0, 4.0].into_dyn())
        );
        let ints = ArrayData::from(array![i8::MAX].into_dyn());
        let one = ArrayData::from(array![1i8].into_dyn());
        let zero = ArrayData::from(array![0i64].into_dyn());
        assert_eq!(
            scatter(&ints.view(), &zero.view(), &one.view(), ScatterMode::Add).unwrap(),
            ArrayData::from(array![i8::MIN].into_dyn())
        );
        let from_end = ArrayData::from(array![-1i64].into_dyn());
        let one_value = ArrayData::from(array![1.0f64].into_dyn());
        assert_eq!(
            scatter(&x.view(), &from_end.view(), &one_value.view(), ScatterMode::Set).unwrap(),
            ArrayData::from(array![0.0, 0.0, 1.0].into_dyn())
        );
        let before = ArrayData::from(array![-4i64].into_dyn());
        assert!(matches!(
            scatter(&x.view(), &before.view(), &one_value.view(), ScatterMode::Add),
            Err(Error::IndexOutOfBounds { index: -4, length: 3, .. })
        ));
        let out = ArrayData::from(array![3i64].into_dyn());
        assert!(matches!(
            scatter(&x.view(), &out.view(), &v.clone().view(), ScatterMode::Set),
            Err(Error::Internal { .. })
        ));
        assert!(matches!(
            scatter(&x.view(), &out.view(), &one_value.view(), ScatterMode::Set),
            Err(Error::IndexOutOfBounds { index: 3, length: 3, .. })
        ));
    }
}
