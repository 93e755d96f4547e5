//! Programs that run in phases: data-dependent lengths (counts) and scatters.
//!
//! Two node kinds are *host steps*: [`NodeKind::Nonzero`] (the positions of a mask's `true`
//! elements, whose number is a count, a length the data decides) and [`NodeKind::Scatter`] (writes
//! at positions the data decides). No kernel computes them. A DAG with host steps runs in phases
//! on any backend:
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
//! Every program involved is compiled once, when the DAG is: counts are size variables, so new
//! data with other counts needs no new code. Backends call [`compile`] from their
//! `Backend::compile` when [`has_host_steps`] says so; nothing else in a backend knows about counts.
//!
//! ```
//! use pytato_core::{frontend as pt, s, DType};
//! use pytato_core::tags::CountNamed;
//! let a = pt::placeholder("A", [5], DType::F64).unwrap();
//! // The seed's example: A[(A > 0).tagged(CountNamed("mycount"))]
//! let mask = pt::greater(&a, 0.0).unwrap().tagged(CountNamed("mycount".into())).unwrap();
//! let positive = a.index(s![&mask]).unwrap();
//! assert_eq!(positive.shape().to_string(), "(mycount,)");
//! assert!(pytato_core::phases::has_host_steps(&positive.into()));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

use crate::array::{Array, DictOfNamedArrays, IdMap, NodeKind, ScatterMode, post_order};
use crate::backend::{Backend, NamedData, NamedViews, NamedViewsMut, Outputs, Program};
use crate::data::{ArrayData, DataElement};
use crate::dtype::result_type;
use crate::error::{Error, Result};
use crate::for_each_array_data;
use crate::scalar::Scalar;

/// The prefix of the placeholders that carry host-step results into later phases (in the `_pt_in`
/// namespace; unnamed placeholders are `_pt_in<k>`, so the two never meet).
pub const STEP_INPUT_PREFIX: &str = "_pt_in_step";

/// Whether `node` is a host step (see the [module docs](self)).
pub fn is_host_step(node: &Array) -> bool {
    matches!(node.kind(), NodeKind::Nonzero { .. } | NodeKind::Scatter { .. })
}

/// Whether the DAG of `outputs` has host steps, so that a backend must [`compile`] it in phases.
pub fn has_host_steps(outputs: &Outputs) -> bool {
    let entries = outputs.entries();
    post_order(entries.iter().map(|(_, a)| a), Array::children).iter().any(is_host_step)
}

/// One host step of a phase: what it computes, from which outputs of the phase's program.
struct Step {
    /// The name its result takes in later phases.
    input: String,
    kind: StepKind,
    /// Output names of the phase program holding the step's operands, in operand order.
    operands: Vec<String>,
}

#[derive(Clone)]
enum StepKind {
    /// With the count's name.
    Nonzero(String),
    Scatter(ScatterMode),
}

struct Phase {
    program: Box<dyn Program>,
    steps: Vec<Step>,
}

/// A program compiled in phases; see the [module docs](self).
struct PhasedProgram {
    phases: Vec<Phase>,
    last: Box<dyn Program>,
    /// Every input a user may pass, in the order programs list them.
    inputs: Vec<String>,
    /// The counts' names (their values are step results, never user inputs).
    counts: BTreeSet<String>,
}

/// Compiles `outputs`, whose DAG has host steps, into a program that runs in phases on `backend`
/// (see the [module docs](self)). A DAG without host steps compiles to one phase: the same
/// program `backend` makes, wrapped.
pub fn compile(backend: &dyn Backend, outputs: &Outputs) -> Result<Box<dyn Program>> {
    // Checks names (two masks whose counts share one name, an input named like a count) first.
    let entries = outputs.entries();
    crate::array::collect_inputs(entries.iter().map(|(_, a)| a))?;

    // One pass, children first: the rewritten node (host steps replaced by placeholders), and the
    // phase of each host step (one more than the latest host step below it).
    let nodes = post_order(entries.iter().map(|(_, a)| a), Array::children);
    let mut rewritten: IdMap<Array> = IdMap::default();
    let mut level: IdMap<usize> = IdMap::default();
    // Equal host steps (`x[x > 0]` written twice) are one step.
    let mut steps: HashMap<Array, usize> = HashMap::new();
    let mut planned: Vec<(usize, StepKind, Vec<Array>, Array)> = Vec::new();
    for node in &nodes {
        let children = node.children();
        let below = children.iter().map(|c| level[&c.id()]).max().unwrap_or(0);
        let new_children: Vec<Array> = children.iter().map(|c| rewritten[&c.id()].clone()).collect();
        let (new, lvl) = if is_host_step(node) {
            let k = match steps.get(node) {
                Some(&k) => k,
                None => {
                    let k = planned.len();
                    let name = format!("{STEP_INPUT_PREFIX}{k}");
                    let placeholder = Array::new_generated_placeholder(&name, node.shape().clone(), node.dtype())?;
                    let kind = match node.kind() {
                        NodeKind::Scatter { mode, .. } => StepKind::Scatter(*mode),
                        NodeKind::Nonzero { count, .. } => StepKind::Nonzero(count.to_string()),
                        other => unreachable!("{} is not a host step", other.name()),
                    };
                    planned.push((below, kind, new_children, placeholder));
                    steps.insert(node.clone(), k);
                    k
                }
            };
            (planned[k].3.clone(), below + 1)
        } else {
            (node.with_children(new_children)?, below)
        };
        rewritten.insert(node.id(), new);
        level.insert(node.id(), lvl);
    }

    let phase_count = planned.iter().map(|p| p.0 + 1).max().unwrap_or(0);
    let counts: BTreeSet<String> = planned
        .iter()
        .filter_map(|p| match &p.1 {
            StepKind::Nonzero(count) => Some(count.clone()),
            StepKind::Scatter(_) => None,
        })
        .collect();
    let mut phases = Vec::with_capacity(phase_count);
    let mut inputs: Vec<String> = Vec::new();
    for phase in 0..phase_count {
        let mut entries: BTreeMap<String, Array> = BTreeMap::new();
        let mut phase_steps = Vec::new();
        for (k, (lvl, kind, operands, _)) in planned.iter().enumerate() {
            if *lvl != phase {
                continue;
            }
            let names: Vec<String> = (0..operands.len()).map(|j| format!("step{k}_{j}")).collect();
            entries.extend(names.iter().cloned().zip(operands.iter().cloned()));
            phase_steps.push(Step { input: format!("{STEP_INPUT_PREFIX}{k}"), kind: kind.clone(), operands: names });
        }
        let dict = DictOfNamedArrays::new(entries.iter().map(|(n, a)| (n.as_str(), a.clone())))?;
        let program = backend.compile(&Outputs::Named(dict))?;
        add_user_inputs(&mut inputs, program.input_names(), &counts);
        phases.push(Phase { program, steps: phase_steps });
    }
    let last_outputs = match outputs {
        Outputs::Single(a) => Outputs::Single(rewritten[&a.id()].clone()),
        Outputs::Named(d) => Outputs::Named(DictOfNamedArrays::new(
            d.iter().map(|(n, a)| (n, rewritten[&a.id()].clone())).collect::<Vec<_>>(),
        )?),
    };
    let last = backend.compile(&last_outputs)?;
    add_user_inputs(&mut inputs, last.input_names(), &counts);
    Ok(Box::new(PhasedProgram { phases, last, inputs, counts }))
}

/// Adds to `inputs` the names a program takes that are the user's (not step results or counts).
fn add_user_inputs(inputs: &mut Vec<String>, names: Vec<String>, counts: &BTreeSet<String>) {
    for name in names {
        if !name.starts_with(STEP_INPUT_PREFIX) && !counts.contains(&name) && !inputs.contains(&name) {
            inputs.push(name);
        }
    }
}

impl PhasedProgram {
    /// Runs every phase and its host steps; returns the step results by input name.
    fn run_phases(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        let mut results = NamedData::new();
        for phase in &self.phases {
            let wanted: BTreeSet<String> = phase.program.input_names().into_iter().collect();
            let values = phase.program.run_views(&select(inputs, &results, |name| wanted.contains(name)))?;
            for step in &phase.steps {
                let operands: Vec<&ArrayData> = step.operands.iter().map(|n| &values[n]).collect();
                let result = match &step.kind {
                    StepKind::Nonzero(count) => {
                        let positions = nonzero(operands[0])?;
                        // The count, for programs that read it without the positions' shape.
                        let value = i64::try_from(positions.shape()[1]).expect("a count fits in i64");
                        results.insert(count.clone(), ArrayData::from_scalar(Scalar::I64(value)));
                        positions
                    }
                    StepKind::Scatter(mode) => scatter(operands[0], operands[1], operands[2], *mode)?,
                };
                results.insert(step.input.clone(), result);
            }
        }
        Ok(results)
    }

    /// The inputs of the last program: the step results, what it lists, and every user input no
    /// phase took (so that it reports unknown names and checks sizes passed explicitly).
    fn last_inputs<'a>(&self, inputs: &'a NamedViews<'_>, results: &'a NamedData) -> NamedViews<'a> {
        let wanted: BTreeSet<String> = self.last.input_names().into_iter().collect();
        let taken: BTreeSet<String> = self.phases.iter().flat_map(|p| p.program.input_names()).collect();
        select(inputs, results, |name| wanted.contains(name) || (inputs.contains_key(name) && !taken.contains(name)))
    }

    /// Step results and counts are not the user's to pass.
    fn check_names(&self, inputs: &NamedViews<'_>) -> Result<()> {
        match inputs.keys().find(|n| n.starts_with(STEP_INPUT_PREFIX) || self.counts.contains(**n)) {
            Some(name) => Err(Error::UnknownInput { name: name.to_string(), known: self.inputs.clone() }),
            None => Ok(()),
        }
    }

    fn user_error(&self, error: Error) -> Error {
        match error {
            Error::UnknownInput { name, .. } => Error::UnknownInput { name, known: self.inputs.clone() },
            other => other,
        }
    }
}

/// The user inputs and step results `keep` accepts.
fn select<'a>(inputs: &'a NamedViews<'_>, results: &'a NamedData, keep: impl Fn(&str) -> bool) -> NamedViews<'a> {
    let mut views: NamedViews<'a> =
        inputs.iter().filter(|(name, _)| keep(name)).map(|(&name, view)| (name, view.reborrow())).collect();
    views.extend(results.iter().filter(|(name, _)| keep(name)).map(|(name, data)| (name.as_str(), data.view())));
    views
}

impl Program for PhasedProgram {
    fn input_names(&self) -> Vec<String> {
        self.inputs.clone()
    }

    fn output_names(&self) -> Vec<String> {
        self.last.output_names()
    }

    fn run_views(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        self.check_names(inputs)?;
        let results = self.run_phases(inputs).map_err(|e| self.user_error(e))?;
        self.last.run_views(&self.last_inputs(inputs, &results)).map_err(|e| self.user_error(e))
    }

    fn run_into(&self, inputs: &NamedViews<'_>, outputs: &mut NamedViewsMut<'_>) -> Result<()> {
        self.check_names(inputs)?;
        let results = self.run_phases(inputs).map_err(|e| self.user_error(e))?;
        self.last.run_into(&self.last_inputs(inputs, &results), outputs).map_err(|e| self.user_error(e))
    }
}

/// [`NodeKind::Nonzero`] on the host: the row-major positions of the `true` elements, as an
/// `int64` array of shape `(ndim, count)`.
pub fn nonzero(mask: &ArrayData) -> Result<ArrayData> {
    let mask = mask.as_array::<bool>().ok_or_else(|| Error::Internal {
        backend: "phases".into(),
        message: format!("a nonzero step got a {} mask", mask.dtype()),
    })?;
    let ndim = mask.ndim();
    let mut columns: Vec<Vec<i64>> = vec![Vec::new(); ndim];
    for (index, &selected) in mask.indexed_iter() {
        if selected {
            for (axis, column) in columns.iter_mut().enumerate() {
                column.push(index[axis] as i64);
            }
        }
    }
    let count = columns.first().map_or(0, Vec::len);
    let flat: Vec<i64> = columns.into_iter().flatten().collect();
    let positions = ArrayD::from_shape_vec(IxDyn(&[ndim, count]), flat).expect("ndim * count values");
    Ok(ArrayData::from(positions))
}

/// numpy's `+` for one dtype, as `np.add.at` applies it: integers wrap, `bool` is `or`.
trait NumpyAdd: Copy {
    fn numpy_add(self, other: Self) -> Self;
}

macro_rules! wrapping_add {
    ($($t:ty),*) => {$(
        impl NumpyAdd for $t {
            fn numpy_add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}
wrapping_add!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! plain_add {
    ($($t:ty),*) => {$(
        impl NumpyAdd for $t {
            fn numpy_add(self, other: Self) -> Self {
                self + other
            }
        }
    )*};
}
plain_add!(f32, f64, Complex32, Complex64);

impl NumpyAdd for bool {
    fn numpy_add(self, other: Self) -> Self {
        self | other
    }
}

/// [`NodeKind::Scatter`] on the host: `array` with `values` written to (or added at) the flat
/// `positions`, in row-major order of `positions` (so the last of repeated positions wins a
/// [`ScatterMode::Set`]). A position outside the array is [`Error::IndexOutOfBounds`].
pub fn scatter(array: &ArrayData, positions: &ArrayData, values: &ArrayData, mode: ScatterMode) -> Result<ArrayData> {
    let positions = positions.as_array::<i64>().ok_or_else(|| Error::Internal {
        backend: "phases".into(),
        message: format!("a scatter step got {} positions", positions.dtype()),
    })?;
    fn typed<T: DataElement + NumpyAdd>(
        array: &ArrayD<T>,
        positions: &ArrayD<i64>,
        values: &ArrayData,
        mode: ScatterMode,
    ) -> Result<ArrayData> {
        let values = T::unwrap_ref(values).ok_or_else(|| Error::Internal {
            backend: "phases".into(),
            message: format!("a scatter step got {} values for a {} array", values.dtype(), T::DTYPE),
        })?;
        if values.shape() != positions.shape() {
            return Err(Error::Internal {
                backend: "phases".into(),
                message: format!("scatter: {:?} values for {:?} positions", values.shape(), positions.shape()),
            });
        }
        let mut result = array.as_standard_layout().into_owned();
        let out = result.as_slice_mut().expect("standard layout");
        let length = out.len();
        for (&p, &v) in positions.iter().zip(values.iter()) {
            let slot = usize::try_from(p).ok().filter(|&p| p < length).ok_or(Error::IndexOutOfBounds {
                op: "scatter".into(),
                index: p,
                axis: 0,
                length,
            })?;
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
    for_each_array_data!(array, a => typed(a, positions, values, mode))
}

/// `np.add.at` with values of another dtype: each addition in the promoted dtype, the sum cast
/// back to the array's dtype before the next one (numpy's order of operations, one element at a
/// time through [`Scalar`]).
fn add_promoted(array: &ArrayData, positions: &ArrayD<i64>, values: &ArrayData) -> Result<ArrayData> {
    let (own, sum_dtype) = (array.dtype(), result_type(array.dtype(), values.dtype()));
    let mut out = array.to_scalars();
    let length = out.len();
    for (&p, v) in positions.iter().zip(values.to_scalars()) {
        let slot = usize::try_from(p).ok().filter(|&p| p < length).ok_or(Error::IndexOutOfBounds {
            op: "scatter".into(),
            index: p,
            axis: 0,
            length,
        })?;
        out[slot] = scalar_add(out[slot].cast(sum_dtype), v.cast(sum_dtype)).cast(own);
    }
    Ok(ArrayData::from_scalars(own, array.shape(), out).expect("values of the array's dtype and size"))
}

/// `a + b` for two scalars of one dtype, with numpy's semantics ([`NumpyAdd`]).
fn scalar_add(a: Scalar, b: Scalar) -> Scalar {
    macro_rules! same {
        ($($v:ident),*) => {
            match (a, b) {
                $((Scalar::$v(x), Scalar::$v(y)) => Scalar::$v(x.numpy_add(y)),)*
                _ => unreachable!("both operands were cast to one dtype"),
            }
        };
    }
    same!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;
    use crate::frontend as pt;
    use crate::s;
    use crate::tags::CountNamed;
    use ndarray::array;

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
        let Err(err) = crate::array::collect_inputs(both.iter().map(|(_, a)| a)) else {
            panic!("one name, two counts")
        };
        assert!(matches!(&err, Error::DuplicateName { name, .. } if name == "k"), "{err}");
        // A placeholder named like a count is a second meaning for the name.
        let clash = pt::placeholder("k", [2], DType::F64).unwrap();
        let both = DictOfNamedArrays::new([("p", p), ("c", clash)]).unwrap();
        assert!(matches!(crate::array::collect_inputs(both.iter().map(|(_, a)| a)), Err(Error::DuplicateName { .. })));
    }

    #[test]
    fn a_zero_dimensional_mask_and_a_reserved_count_name_are_typed_errors() {
        let a = pt::placeholder("a", crate::Shape::scalar(), DType::F64).unwrap();
        assert!(matches!(pt::nonzero(&a), Err(Error::InvalidArgument { .. })));
        let m = pt::placeholder("m", [3], DType::Bool).unwrap();
        assert!(matches!(Array::new_nonzero(&m, "not a name"), Err(Error::InvalidName { .. })));
        let f = pt::placeholder("f", [3], DType::F64).unwrap();
        assert!(matches!(Array::new_nonzero(&f, "n"), Err(Error::InvalidArgument { .. })));
    }

    #[test]
    fn nonzero_lists_positions_in_row_major_order() {
        let mask = ArrayData::from(array![[true, false, true], [false, true, false]].into_dyn());
        let got = nonzero(&mask).unwrap();
        let want = ArrayData::from(array![[0i64, 0, 1], [0, 2, 1]].into_dyn());
        assert_eq!(got, want);
        let none = ArrayData::from(ArrayD::<bool>::from_elem(IxDyn(&[0, 4]), false));
        assert_eq!(nonzero(&none).unwrap().shape(), &[2, 0]);
    }

    #[test]
    fn scatter_set_keeps_the_last_write_and_add_accumulates_in_order() {
        let x = ArrayData::from(array![0.0f64, 0.0, 0.0].into_dyn());
        let p = ArrayData::from(array![2i64, 0, 2].into_dyn());
        let v = ArrayData::from(array![1.0f64, 2.0, 3.0].into_dyn());
        assert_eq!(scatter(&x, &p, &v, ScatterMode::Set).unwrap(), ArrayData::from(array![2.0, 0.0, 3.0].into_dyn()));
        assert_eq!(scatter(&x, &p, &v, ScatterMode::Add).unwrap(), ArrayData::from(array![2.0, 0.0, 4.0].into_dyn()));
        let ints = ArrayData::from(array![i8::MAX].into_dyn());
        let one = ArrayData::from(array![1i8].into_dyn());
        let zero = ArrayData::from(array![0i64].into_dyn());
        assert_eq!(scatter(&ints, &zero, &one, ScatterMode::Add).unwrap(), ArrayData::from(array![i8::MIN].into_dyn()));
        let out = ArrayData::from(array![3i64].into_dyn());
        assert!(matches!(scatter(&x, &out, &v.clone(), ScatterMode::Set), Err(Error::Internal { .. })));
        let one_value = ArrayData::from(array![1.0f64].into_dyn());
        assert!(matches!(
            scatter(&x, &out, &one_value, ScatterMode::Set),
            Err(Error::IndexOutOfBounds { index: 3, length: 3, .. })
        ));
    }
}
