//! The backend interface and the registry of linked backends.
//!
//! A [`Backend`] compiles [`Outputs`] (an array or a [`DictOfNamedArrays`](pytato_core::DictOfNamedArrays)) into a [`Program`];
//! [`Program::run_views`] takes named borrowed `ndarray` views of any layout and returns named
//! outputs, [`Program::run_into`] writes the outputs into arrays the caller owns (no allocation
//! for them, no copy where the kernels can write in place), and [`Program::run`] is the owned
//! convenience. Backends register
//! themselves with [`inventory::submit!`] and a [`BackendRegistration`]; linking a backend crate is
//! enough for it to appear in [`backends`].
//!
//! ```
//! use pytato_runtime::backend::{backends, Outputs};
//! // Which backends this binary links (none in pytato-core's own doc tests).
//! for b in backends() {
//!     println!("{}: {}", b.name, b.description);
//! }
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::device::{DeviceArray, DeviceInput, DeviceSteps, NamedDeviceArrays, NamedDeviceInputs};
use crate::spare::FreshMemoryAdvice;
use pytato_core::array::Array;
use pytato_core::data::ArrayData;
use pytato_core::error::{Error, Result};
use pytato_core::function::InlineRule;
use pytato_core::view::{ArrayDataView, ArrayDataViewMut};

pub use pytato_core::outputs::{Outputs, SINGLE_OUTPUT_NAME};

/// Named arrays going into or coming out of a program.
pub type NamedData = BTreeMap<String, ArrayData>;

/// Borrowed inputs of a run, by name: placeholders, and size parameters as 0-d integer arrays.
pub type NamedViews<'a> = BTreeMap<&'a str, ArrayDataView<'a>>;

/// The arrays [`Program::run_into`] writes, by output name.
pub type NamedViewsMut<'a> = BTreeMap<&'a str, ArrayDataViewMut<'a>>;

/// Views of every array of `data` (what [`Program::run`] passes to [`Program::run_views`]).
pub fn views(data: &NamedData) -> NamedViews<'_> {
    data.iter().map(|(name, d)| (name.as_str(), d.view())).collect()
}

/// A compiler from array expressions to runnable programs.
pub trait Backend: Send + Sync {
    /// The registered name (`"interp"`, `"cranelift"`, `"wgpu"`).
    fn name(&self) -> &str;

    /// Compiles `outputs`. Errors are [`Error::Unsupported`] for what the backend (or its device)
    /// cannot do, and the core's own errors for invalid DAGs.
    fn compile(&self, outputs: &Outputs) -> Result<Box<dyn Program>>;

    /// Which calls this backend inlines and which it compiles once per function and calls (see
    /// [`pytato_core::function`]); [`InlineRule::default`] unless the backend was configured otherwise.
    fn inline_rule(&self) -> InlineRule {
        InlineRule::default()
    }

    /// Copies `data` to this backend's device, for [`Program::run_device`]. Backends that compute
    /// in host memory keep a host copy (the default), or [`pytato_core::Error::OutOfMemory`]
    /// where it cannot be had (a broadcast view of a few bytes may stand for terabytes).
    fn upload(&self, data: &ArrayDataView<'_>) -> Result<DeviceArray> {
        Ok(DeviceArray::host(data.try_to_owned("upload")?))
    }

    /// Waits until the work this backend has enqueued is done, and reports the first error of a
    /// [`Program::run_device`] that was only enqueued (naming the run). Backends that finish each
    /// run before returning have nothing to wait for (the default). A download
    /// ([`DeviceArray::to_host`]) and a run on host data wait and report the same way.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    /// The host steps ([`crate::phases`]) this backend runs as kernels on its device, for
    /// programs run on device data ([`Program::run_device`]). `None` (the default): steps run on
    /// the host, which is where backends that compute in host memory keep their arrays anyway.
    fn device_steps(&self) -> Option<Arc<dyn DeviceSteps>> {
        None
    }

    /// How many threads the host steps of this backend's programs ([`crate::phases`]) run on:
    /// the number it runs its own work on, where it is told one. `None` (the default): rayon's
    /// global pool (`RAYON_NUM_THREADS`, else every core). See [`crate::host_threads`].
    fn host_threads(&self) -> Option<usize> {
        None
    }

    /// How the host steps of this backend's programs ([`crate::phases`]) prepare the fresh
    /// memory of their results before first writing it: a result handed to the caller is fresh
    /// memory every run, mapped page by page as it is written (see [`crate::spare`]). `None` (the
    /// default): the memory as the allocator gives it.
    fn fresh_memory_advice(&self) -> Option<FreshMemoryAdvice> {
        None
    }
}

/// A compiled program: run it as often as needed, with different inputs.
///
/// Every input is checked before anything runs: missing and unknown names, dtypes, shapes and
/// size parameters; index arrays are checked before they are used. Bad input is an [`Error`],
/// never a panic or undefined behaviour.
///
/// The facade crate `pytato` has a runnable example of `run_into` with borrowed inputs.
pub trait Program: Send + Sync {
    /// The inputs `run` accepts: placeholders by name, and size parameters that no input shape
    /// determines (pass them as 0-d integer arrays).
    fn input_names(&self) -> Vec<String>;

    /// The names of the outputs `run` returns.
    fn output_names(&self) -> Vec<String>;

    /// The program's type as a datashape, `{u: n, float64} -> {_pt_out: n, float64}` (see
    /// [`Signature::datashape`](crate::binding::Signature::datashape)); `None` where the
    /// backend does not state it.
    fn datashape(&self) -> Option<pytato_datashape::Type> {
        None
    }

    /// Runs the program on borrowed inputs of any layout (a backend copies a view only where its
    /// kernels need row-major memory) and returns the outputs.
    fn run_views(&self, inputs: &NamedViews<'_>) -> Result<NamedData>;

    /// Runs the program and writes each output into the array `outputs` gives for its name
    /// (any layout; compiled backends write row-major arrays in place). Every output needs an
    /// array of its dtype and shape, checked before anything runs: [`Error::OutputNames`],
    /// [`Error::OutputArray`]. On an error, the arrays may have been partly written.
    fn run_into(&self, inputs: &NamedViews<'_>, outputs: &mut NamedViewsMut<'_>) -> Result<()>;

    /// [`run_views`](Program::run_views) for owned inputs: the simple API.
    fn run(&self, inputs: &NamedData) -> Result<NamedData> {
        self.run_views(&views(inputs))
    }

    /// Runs the program on inputs that may be held by the backend ([`DeviceArray`]s, from
    /// [`Backend::upload`] or an earlier `run_device`) and leaves the outputs with the backend:
    /// a time loop passes each step's outputs to the next step, and copies to the host only what
    /// it reads ([`DeviceArray::to_host`]). Inputs are checked as [`run_views`](Program::run_views)
    /// checks them. A device array of another backend is copied through the host.
    ///
    /// The default, for backends that compute in host memory, runs on the host arrays in place
    /// and holds the outputs in host memory.
    ///
    /// ```
    /// # fn demo(backend: &dyn pytato_runtime::backend::Backend, program: &dyn pytato_runtime::backend::Program,
    /// #         u0: pytato_core::ArrayData) -> pytato_core::Result<pytato_core::ArrayData> {
    /// use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};
    /// let mut u = backend.upload(&u0.view())?;
    /// for _ in 0..100 {
    ///     let inputs = NamedDeviceInputs::from([("u", DeviceInput::Device(&u))]);
    ///     u = program.run_device(&inputs)?.remove("u_next").expect("the program's output");
    /// }
    /// u.to_host()
    /// # }
    /// ```
    fn run_device(&self, inputs: &NamedDeviceInputs<'_>) -> Result<NamedDeviceArrays> {
        run_device_on_host(self, inputs)
    }
}

/// [`Program::run_device`] for a program that computes in host memory (the trait's default): device
/// arrays held elsewhere are copied to the host, the program runs on host views, and its outputs
/// are held in host memory.
pub fn run_device_on_host(
    program: &(impl Program + ?Sized),
    inputs: &NamedDeviceInputs<'_>,
) -> Result<NamedDeviceArrays> {
    let copied: BTreeMap<&str, ArrayData> = inputs
        .iter()
        .filter_map(|(name, input)| match input {
            DeviceInput::Device(d) if d.storage().as_host().is_none() => Some(d.to_host().map(|h| (*name, h))),
            _ => None,
        })
        .collect::<Result<_>>()?;
    let views: NamedViews<'_> = inputs
        .iter()
        .map(|(name, input)| {
            let view = match input {
                DeviceInput::Host(v) => v.reborrow(),
                DeviceInput::Device(d) => match d.storage().as_host() {
                    Some(host) => host.view(),
                    None => copied[name].view(),
                },
            };
            (*name, view)
        })
        .collect();
    Ok(program.run_views(&views)?.into_iter().map(|(name, data)| (name, DeviceArray::host(data))).collect())
}

/// What every backend's [`Backend::compile`] does first, with one walk over the DAG: a DAG with
/// calls has the calls that the backend's [`Backend::inline_rule`] inlines inlined
/// ([`pytato_core::function::apply_inline_rule`]); one with calls left or host steps is compiled in
/// phases ([`crate::phases::compile`]), where each remaining call runs a program compiled once per
/// function. `None` for a DAG with neither, which the backend compiles itself. A DAG with
/// communication nodes ([`pytato_core::distributed`]) is an [`Error::Unsupported`](pytato_core::Error): it must
/// be partitioned first.
pub fn compile_calls_and_phases(backend: &dyn Backend, outputs: &Outputs) -> Option<Result<Box<dyn Program>>> {
    let entries = outputs.entries();
    let (mut calls, mut steps) = (false, false);
    for node in pytato_core::array::post_order(entries.iter().map(|(_, a)| a), Array::children) {
        if pytato_core::distributed::is_communication(&node) {
            return Some(Err(pytato_core::distributed::unpartitioned_error(backend.name(), &node)));
        }
        calls |= matches!(node.kind(), pytato_core::NodeKind::CallResult { .. });
        steps |= crate::phases::is_host_step(&node);
    }
    if calls {
        return Some(pytato_core::function::apply_inline_rule(outputs, backend.inline_rule()).and_then(|rewritten| {
            // Bodies inlined may have brought host steps: compiling again finds them.
            if pytato_core::function::has_calls(&rewritten) {
                crate::phases::compile(backend, &rewritten)
            } else {
                backend.compile(&rewritten)
            }
        }));
    }
    steps.then(|| crate::phases::compile(backend, outputs))
}

/// `backend` with another [`InlineRule`]: compiles calls the way `rule` says and everything
/// else as `backend` does. For experiments (the same DAG inlined and outlined) and for tests.
///
/// ```
/// # fn demo(cranelift: Box<dyn pytato_runtime::backend::Backend>) {
/// use pytato_runtime::backend::WithInlineRule;
/// use pytato_core::function::InlineRule;
/// // Every function compiled once and called, however small.
/// let outlining = WithInlineRule::new(cranelift, InlineRule::Never);
/// # let _ = outlining;
/// # }
/// ```
pub struct WithInlineRule {
    backend: Box<dyn Backend>,
    rule: InlineRule,
}

impl WithInlineRule {
    /// `backend`, compiling calls by `rule`.
    pub fn new(backend: Box<dyn Backend>, rule: InlineRule) -> WithInlineRule {
        WithInlineRule { backend, rule }
    }
}

impl Backend for WithInlineRule {
    fn name(&self) -> &str {
        self.backend.name()
    }

    fn inline_rule(&self) -> InlineRule {
        self.rule
    }

    fn compile(&self, outputs: &Outputs) -> Result<Box<dyn Program>> {
        // Calls are decided here, by this rule (bodies compiled apart come back here too); what
        // is left has none, and `backend` compiles it as it would.
        match compile_calls_and_phases(self, outputs) {
            Some(program) => program,
            None => self.backend.compile(outputs),
        }
    }

    fn upload(&self, data: &ArrayDataView<'_>) -> Result<DeviceArray> {
        self.backend.upload(data)
    }

    fn synchronize(&self) -> Result<()> {
        self.backend.synchronize()
    }

    fn device_steps(&self) -> Option<Arc<dyn DeviceSteps>> {
        self.backend.device_steps()
    }

    fn host_threads(&self) -> Option<usize> {
        self.backend.host_threads()
    }

    fn fresh_memory_advice(&self) -> Option<FreshMemoryAdvice> {
        self.backend.fresh_memory_advice()
    }
}

/// How a backend makes itself known: submit one with [`inventory::submit!`].
pub struct BackendRegistration {
    /// The name users pick it by.
    pub name: &'static str,
    /// One line saying what it is.
    pub description: &'static str,
    /// Higher is preferred by [`default_backend`] (cranelift 30 > wgpu 20 > interp 10).
    pub priority: u32,
    /// Makes an instance; an error when the backend cannot run here (no GPU adapter, say).
    pub constructor: fn() -> Result<Box<dyn Backend>>,
}

inventory::collect!(BackendRegistration);

/// The linked backends, most preferred first.
pub fn backends() -> Vec<&'static BackendRegistration> {
    let mut all: Vec<&'static BackendRegistration> = inventory::iter::<BackendRegistration>.into_iter().collect();
    all.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(b.name)));
    all
}

/// The linked backend called `name`.
pub fn backend(name: &str) -> Result<Box<dyn Backend>> {
    match backends().into_iter().find(|b| b.name == name) {
        Some(reg) => (reg.constructor)(),
        None => Err(Error::UnknownBackend {
            name: name.to_string(),
            available: backends().iter().map(|b| b.name.to_string()).collect(),
        }),
    }
}

/// The backend named by the environment variable `PYTATO_BACKEND`, or else the most preferred
/// linked backend that can be constructed here.
pub fn default_backend() -> Result<Box<dyn Backend>> {
    if let Ok(name) = std::env::var("PYTATO_BACKEND")
        && !name.is_empty()
    {
        return backend(&name);
    }
    let mut last_error = None;
    for reg in backends() {
        match (reg.constructor)() {
            Ok(b) => return Ok(b),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or(Error::UnknownBackend { name: "(default)".into(), available: Vec::new() }))
}
