//! The kernel IR shared by the compiled backends.
//!
//! A [`KernelProgram`] is a list of buffers, the size parameters, and kernels in execution order.
//! A [`Kernel`] writes one stored array: for every index `(_0, …, _{d-1})` of its output buffer's
//! shape it evaluates a scalar [`Expr`] that reads buffers and size parameters; reductions are
//! `Reduce` expressions (inner loops). Everything that is not stored is inlined into the
//! expressions that read it: this is where fusion happens.
//!
//! [`build_kernel_program`] gets there by dead-code elimination, CSE, lowering to index lambdas,
//! CSE again, and materialization ([`Mpms`] within an [`InlineLimit`], so that no expression grows
//! beyond a bounded depth or size however long the DAG).
//!
//! # Invariants
//!
//! - Every buffer is an input (a placeholder, by the name `run` accepts), wrapped data, a temporary
//!   or an output. Each temporary and output is written by exactly one kernel. An output name may
//!   also refer to an input or data buffer, which the program returns unchanged.
//! - Buffer names are unique, and no size parameter is named like a buffer: a name in an
//!   expression means one thing. Output names are not buffer names ([`KernelProgram::outputs`]
//!   maps them): an output may be called like an input.
//! - Kernels are in dependency order: a kernel reads only inputs, data, and buffers written by
//!   earlier kernels. A kernel never reads the buffer it writes.
//! - In a kernel's expression, `Subscript(b, idx)` reads buffer `b` (one integer index per axis) and
//!   `Var(b)` a 0-d buffer; `Var(p)` for a size parameter `p` is its `int64` value; `_k` are the
//!   output inames, `_rN` reduction inames bound by an enclosing `Reduce` (each bound once per kernel).
//! - The expression type-checks ([`Expr::dtype`]) with the buffers' dtypes and ranks, and its dtype
//!   is the output buffer's.
//! - Subscripts whose index depends on data (index arrays) may be out of range: backends check every
//!   subscript they cannot prove in range and report [`Error::IndexOutOfBounds`]. Branches of `If`
//!   are lazy: a subscript in an untaken branch must not be read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use pytato_core::array::DataRef;
use pytato_core::array::collect_inputs;
use pytato_core::expr::{Expr, Func, TypeEnv};
use pytato_core::function::InlineRule;
use pytato_core::names::{Reserved, classify, fresh_name};
use pytato_core::tags::{ImplStored, Named, PrefixNamed};
use pytato_core::{Array, DType, Dim, Error, NodeKind, Result, Shape};
use pytato_runtime::backend::Outputs;
use pytato_runtime::binding::node_size_params;

use crate::bounds::Ranges;
use crate::cse::deduplicate;
use crate::dce::eliminate_dead_code;
use crate::lower::lower_to_index_lambdas;
use crate::mapper::topological_sort;
use crate::materialize::{InlineLimit, MaterializationPolicy, Mpms, NodeContext, StoreShared, materialize};

/// The `buffer` of an out-of-range record (see [`KernelProgram::index_error`]) that a
/// [`Func::NormalizeIndex`] check made, not a subscript.
pub const INDEX_ARRAY: i64 = -1;

/// The `buffer` of a failure record (see [`KernelProgram::index_error`]) that an
/// [`Func::IntegerExponent`] check made: its `index` is
/// the negative exponent.
pub const NEGATIVE_EXPONENT: i64 = -2;

/// The `buffer` of a failure record (see [`KernelProgram::index_error`]) that a
/// [`Func::RequireNonNegative`] check made: its `axis` is the
/// [`ValueCheck`](pytato_core::ValueCheck)'s code.
pub const VALUE_CHECK: i64 = -3;

/// Index of a buffer in [`KernelProgram::buffers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub usize);

/// What a buffer holds.
#[derive(Clone, Debug)]
pub enum BufferKind {
    /// A program input, passed to `run` under the buffer's name.
    Input,
    /// Data known at compile time (a `DataWrapper`), in host memory or on a device.
    Data(DataRef),
    /// An intermediate result, written by one kernel and read by later ones.
    Temporary,
    /// A program output, written by one kernel.
    Output,
}

/// A named, typed, shaped array of the program.
#[derive(Clone, Debug)]
pub struct Buffer {
    /// The name expressions use for it.
    pub name: Arc<str>,
    /// Element type.
    pub dtype: DType,
    /// Shape, possibly in terms of size parameters.
    pub shape: Shape,
    /// What it holds.
    pub kind: BufferKind,
}

/// One loop nest: `output[_0, …] = expr` over the output buffer's shape.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The buffer written.
    pub output: BufferId,
    /// The scalar expression, see the module's invariants.
    pub expr: Expr,
}

impl Kernel {
    /// The work per output element and the loop iterations per element, for lengths `eval`
    /// gives: see [`KernelWork`].
    pub fn work(&self, eval: &dyn Fn(&Dim) -> Result<i64>) -> Result<KernelWork> {
        // Post-order over the expression: (operations, deepest loop iterations) of each node.
        let mut done: HashMap<*const Expr, (u128, u128)> = HashMap::new();
        let mut stack: Vec<(&Expr, bool)> = vec![(&self.expr, false)];
        while let Some((e, children_done)) = stack.pop() {
            if !children_done {
                stack.push((e, true));
                stack.extend(e.children().into_iter().map(|c| (c, false)));
                continue;
            }
            let children: Vec<(u128, u128)> = e.children().iter().map(|c| done[&(*c as *const Expr)]).collect();
            let ops = children.iter().fold(1u128, |acc, c| acc.saturating_add(c.0));
            let loops = children.iter().map(|c| c.1).max().unwrap_or(0);
            let value = match e {
                Expr::Reduce(r) => {
                    let mut trips = 1u128;
                    for b in &r.inames {
                        trips = trips.saturating_mul((eval(&b.upper)? - eval(&b.lower)?).max(0) as u128);
                    }
                    (trips.saturating_mul(ops), trips.saturating_mul(loops.max(1)))
                }
                _ => (ops, loops),
            };
            done.insert(e as *const Expr, value);
        }
        let (operations, loop_iterations) = done[&(&self.expr as *const Expr)];
        Ok(KernelWork { operations, loop_iterations })
    }
}

/// What one output element of a kernel costs, for given sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelWork {
    /// Expression nodes evaluated (each evaluation of a reduction body counts its nodes).
    pub operations: u128,
    /// The most iterations one loop statement runs for one element (a loop nested in another
    /// counts the iterations of both): what drivers that cap loops per invocation care about.
    pub loop_iterations: u128,
}

/// Buffers, size parameters and kernels in execution order; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct KernelProgram {
    /// Every buffer.
    pub buffers: Vec<Buffer>,
    /// The size parameters expressions and shapes use.
    pub size_params: Vec<String>,
    /// The kernels, in execution order.
    pub kernels: Vec<Kernel>,
    /// Output name → buffer (two names may share one buffer).
    pub outputs: Vec<(String, BufferId)>,
}

/// Which nodes become stored arrays (kernels of their own) and which are inlined into their
/// users, within the limits of [`KernelOptions`] (which always apply: they keep expressions
/// bounded, reductions from being recomputed and index checks complete).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Materialization {
    /// pytato's MPMS rule ([`Mpms`]): a node with several users and several stored predecessors
    /// is stored. The default.
    #[default]
    Mpms,
    /// Every node with more than one user is stored ([`StoreShared`]): nothing is computed twice.
    StoreShared,
    /// Every node is stored: one kernel per operation, each intermediate in memory (for
    /// debugging: each can be dumped and compared; the slowest choice).
    StoreAll,
}

/// Limits on inlining, and with them on expression size, and the materialization rule.
#[derive(Clone, Copy, Debug)]
pub struct KernelOptions {
    /// Deepest expression a kernel may inline.
    pub max_inline_depth: usize,
    /// Largest expression (operation count) a kernel may inline.
    pub max_inline_size: u64,
    /// Which nodes are stored within those limits.
    pub materialization: Materialization,
    /// Most buffers (inputs, data and stored arrays) one kernel reads: more are split into
    /// kernels of their own (see `MaterializationPolicy::max_buffers`). Unlimited by default; the
    /// wgpu backend lowers it to what its adapter binds per shader.
    pub max_buffers: usize,
}

impl Default for KernelOptions {
    fn default() -> KernelOptions {
        KernelOptions {
            max_inline_depth: 64,
            max_inline_size: 2048,
            materialization: Materialization::Mpms,
            max_buffers: usize::MAX,
        }
    }
}

/// Stores every node.
struct StoreAll;

impl MaterializationPolicy for StoreAll {
    fn store(&mut self, _: &NodeContext<'_>) -> bool {
        true
    }
}

/// A user's transformation of a kernel program before code generation (upstream pytato's
/// `transform_loopy_program`): split or reorder kernels, change expressions, rename buffers. The
/// result must keep the kernel IR's invariants ([`KernelProgram::check`]); one that breaks them is
/// [`Error::InvalidArgument`] when the DAG is compiled, never wrong code.
///
/// ```
/// use pytato_transform::kernel::{CodegenOptions, KernelTransform};
/// // Print every kernel program a backend compiles with these options, unchanged.
/// let log = KernelTransform::new(|program| {
///     println!("{program}");
///     Ok(program)
/// });
/// let options = CodegenOptions { transform: Some(log), ..CodegenOptions::default() };
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct KernelTransform(Arc<dyn Fn(KernelProgram) -> Result<KernelProgram> + Send + Sync>);

impl KernelTransform {
    /// Wraps `f`.
    pub fn new(f: impl Fn(KernelProgram) -> Result<KernelProgram> + Send + Sync + 'static) -> KernelTransform {
        KernelTransform(Arc::new(f))
    }

    /// `f(program)`, checked.
    pub fn apply(&self, program: KernelProgram) -> Result<KernelProgram> {
        let program = (self.0)(program)?;
        program.check().map_err(|e| {
            Error::invalid(
                "kernel transform",
                format!("the transformed program breaks an invariant of the kernel IR: {e}"),
            )
        })?;
        Ok(program)
    }

    /// The transformation's identity (the same closure is the same transformation), for caches
    /// of compiled programs.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }
}

impl fmt::Debug for KernelTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelTransform({:#x})", self.id())
    }
}

/// What a user chooses about the code the compiled backends generate (`Cranelift` and `Wgpu`
/// take it through `with_codegen`): the inlining limits of materialization, which function calls
/// are inlined, a transformation applied to each kernel program before it is translated, and
/// whether the CPU backend uses SIMD instructions. (The Cranelift backend's thread count is
/// `Cranelift::with_threads`.)
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    /// Inlining limits.
    pub kernel: KernelOptions,
    /// Which calls are inlined, and which compiled once per function and called
    /// ([`pytato_core::function`]).
    pub calls: InlineRule,
    /// Applied to every kernel program built with these options.
    pub transform: Option<KernelTransform>,
    /// Whether the Cranelift backend vectorizes innermost loops with 128-bit SIMD (default `true`;
    /// the results are the same bits either way). The wgpu backend has no such choice.
    pub simd: bool,
}

impl Default for CodegenOptions {
    fn default() -> CodegenOptions {
        CodegenOptions { kernel: KernelOptions::default(), calls: InlineRule::default(), transform: None, simd: true }
    }
}

impl CodegenOptions {
    /// The kernel program of `outputs` under these options.
    pub fn build(&self, outputs: &Outputs) -> Result<KernelProgram> {
        let program = build_kernel_program(outputs, self.kernel)?;
        match &self.transform {
            Some(t) => t.apply(program),
            None => Ok(program),
        }
    }

    /// What tells programs compiled under different options apart, for caches (of programs
    /// without calls: `calls` is not part of it).
    pub fn cache_key(&self) -> CodegenKey {
        let transform = self.transform.as_ref().map_or(0, |t| t.id());
        let k = &self.kernel;
        (k.max_inline_depth, k.max_inline_size, k.materialization, k.max_buffers, transform, self.simd)
    }
}

/// What tells [`CodegenOptions`] apart for caches of compiled programs: the inlining limits, the
/// materialization rule, the transformation's identity and `simd`.
pub type CodegenKey = (usize, u64, Materialization, usize, usize, bool);

/// `true` when the environment variable `PYTATO_DUMP` (a comma-separated list) names `what`.
pub fn dump_requested(what: &str) -> bool {
    std::env::var("PYTATO_DUMP").is_ok_and(|v| v.split(',').any(|w| w.trim() == what))
}

/// Builds the kernel program of `outputs`; see the module docs.
///
/// ```
/// use pytato_core::{DType, Dim};
/// use pytato_frontend as pt;
/// use pytato_transform::kernel::{build_kernel_program, KernelOptions};
/// let u = pt::placeholder("u", [Dim::param("n")], DType::F64)?;
/// let next = &u + 0.25 * &(pt::roll(&u, 1, Some(0))? - 2.0 * &u + pt::roll(&u, -1, Some(0))?);
/// let program = build_kernel_program(&(&next).into(), KernelOptions::default())?;
/// assert_eq!(program.kernels.len(), 1, "the whole update fuses into one loop");
/// println!("{program}");
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn build_kernel_program(outputs: &Outputs, options: KernelOptions) -> Result<KernelProgram> {
    // Input names as `run` knows them (unnamed placeholders numbered in order), from the DAG the
    // user built: transformations keep input nodes, so ids still match.
    let original_roots: Vec<Array> = outputs.entries().into_iter().map(|(_, a)| a).collect();
    let inputs = collect_inputs(&original_roots)?;
    let input_names: HashMap<usize, Arc<str>> =
        inputs.unnamed_placeholder_names().map(|(id, name)| (id, name.into())).collect();

    let lowered = deduplicate(&lower_to_index_lambdas(&deduplicate(&eliminate_dead_code(outputs)?)?)?)?;
    let (max_depth, max_size, max_buffers) = (options.max_inline_depth, options.max_inline_size, options.max_buffers);
    let stored = match options.materialization {
        Materialization::Mpms => {
            materialize(&lowered, &mut InlineLimit { policy: Mpms, max_depth, max_size, max_buffers })?
        }
        Materialization::StoreShared => {
            materialize(&lowered, &mut InlineLimit { policy: StoreShared, max_depth, max_size, max_buffers })?
        }
        Materialization::StoreAll => {
            materialize(&lowered, &mut InlineLimit { policy: StoreAll, max_depth, max_size, max_buffers })?
        }
    };

    let entries = stored.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    // Names the user's naming tags may not take: the inputs' and the size parameters'.
    let mut taken: BTreeSet<String> = inputs.taken_names();
    taken.extend(input_names.values().map(|n| n.to_string()));
    taken.extend(crate::mapper::size_params(&roots));
    // Generated buffer names go around those and around the names tags will ask for.
    let mut avoid = taken.clone();
    crate::mapper::walk(&roots, |n| avoid.extend(n.tags_of_type::<Named>().map(|Named(name)| name.clone())));
    let mut builder = Builder {
        program: KernelProgram::default(),
        buffer_of: HashMap::new(),
        input_names,
        next_data: 0,
        taken,
        avoid,
        size_params: crate::mapper::size_params(&roots).into_iter().collect(),
    };
    let mut params = BTreeSet::new();
    for node in topological_sort(&roots) {
        node_size_params(&node, &mut params);
        match node.kind() {
            NodeKind::Placeholder { .. } | NodeKind::DataWrapper { .. } => builder.input_buffer(&node),
            NodeKind::SizeParam { .. } => {}
            NodeKind::IndexLambda(_) if node.tags().contains(&ImplStored) => builder.kernel(&node, &entries)?,
            NodeKind::IndexLambda(_) => {}
            NodeKind::CallResult { .. } => {
                return Err(Error::Unsupported {
                    backend: "kernel IR".into(),
                    reason: format!(
                        "{} is a call: inline it first (pytato_core::function::inline_calls), as backends do",
                        node.summary()
                    ),
                });
            }
            NodeKind::DistributedRecv { .. } | NodeKind::DistributedSendRefHolder { .. } => {
                return Err(pytato_core::distributed::unpartitioned_error("kernel IR", &node));
            }
            _ if pytato_runtime::phases::is_host_step(&node) => {
                return Err(Error::Unsupported {
                    backend: "kernel IR".into(),
                    reason: format!(
                        "{} is a host step: compile the DAG with a backend, which runs it between phases \
                         (pytato_runtime::phases)",
                        node.summary()
                    ),
                });
            }
            other => {
                return Err(Error::Internal {
                    backend: "kernel IR".into(),
                    message: format!("{} survived lowering", other.name()),
                });
            }
        }
    }
    for (name, array) in &entries {
        // An output that is a size parameter gets a kernel of its own; inputs and data are
        // returned as they are.
        if !builder.buffer_of.contains_key(&array.id()) {
            builder.kernel(array, &entries)?;
        }
        let buffer = builder.buffer_of[&array.id()];
        builder.program.outputs.push((name.clone(), buffer));
    }
    let mut program = builder.program;
    program.size_params = params.into_iter().collect();
    program.check()?;
    Ok(program)
}

struct Builder {
    program: KernelProgram,
    buffer_of: HashMap<usize, BufferId>,
    input_names: HashMap<usize, Arc<str>>,
    next_data: usize,
    /// Names a naming tag may no longer take.
    taken: BTreeSet<String>,
    /// Names a generated buffer name may not take: `taken`, and every name a naming tag asks for.
    avoid: BTreeSet<String>,
    /// The size parameters the DAG names (for the ranges of index expressions).
    size_params: Vec<String>,
}

impl Builder {
    fn add_buffer(&mut self, node: &Array, name: Arc<str>, kind: BufferKind) -> BufferId {
        let id = BufferId(self.program.buffers.len());
        self.program.buffers.push(Buffer { name, dtype: node.dtype(), shape: node.shape().clone(), kind });
        self.buffer_of.insert(node.id(), id);
        id
    }

    fn input_buffer(&mut self, node: &Array) {
        let (name, kind) = match node.kind() {
            NodeKind::Placeholder { name } => {
                let n = name
                    .clone()
                    .or_else(|| self.input_names.get(&node.id()).cloned())
                    .unwrap_or_else(|| "_pt_in".into());
                (n, BufferKind::Input)
            }
            NodeKind::DataWrapper { name, data } => {
                let n = name.clone().unwrap_or_else(|| {
                    self.next_data += 1;
                    self.generated_name("_pt_data", self.next_data - 1).into()
                });
                (n, BufferKind::Data(data.clone()))
            }
            _ => unreachable!("inputs only"),
        };
        self.add_buffer(node, name, kind);
    }

    /// The kernel of a stored lambda, with every non-stored predecessor inlined. Buffers written by
    /// kernels take names from the library's namespace (`_pt_out<k>` for outputs, `_pt_out_tmp<k>`
    /// for temporaries): an output's own name may be an input's (`{"u": step(u)}`), and buffer
    /// names must be unique.
    fn kernel(&mut self, node: &Array, entries: &[(String, Array)]) -> Result<()> {
        let k = self.program.kernels.len();
        let output = entries.iter().any(|(_, a)| a.ptr_eq(node));
        let (prefix, kind) =
            if output { ("_pt_out", BufferKind::Output) } else { ("_pt_out_tmp", BufferKind::Temporary) };
        let name = match self.tagged_name(node)? {
            Some(name) => name,
            None => self.generated_name(prefix, k).into(),
        };
        let expr = match node.kind() {
            NodeKind::IndexLambda(il) => {
                let identity: Vec<Expr> = (0..node.ndim()).map(Expr::iname).collect();
                let ranges = Ranges {
                    output: node.shape().dims(),
                    reductions: HashMap::new(),
                    size_params: &self.size_params,
                    index_buffers: HashMap::new(),
                    assumed: HashMap::new(),
                };
                self.expand(&il.expr, &il.bindings, &identity, &ranges, &mut 0)?
            }
            NodeKind::SizeParam { name } => Expr::Var(name.clone()),
            other => unreachable!("kernels compute index lambdas and size parameters, not {}", other.name()),
        };
        let output = self.add_buffer(node, name, kind);
        self.program.kernels.push(Kernel { output, expr });
        Ok(())
    }

    /// A buffer name of the library's, `prefix<k>` from `k = from` on, that no input, size
    /// parameter, naming tag or other buffer has.
    fn generated_name(&mut self, prefix: &str, from: usize) -> String {
        let name = fresh_name(prefix, from, &mut self.avoid);
        self.taken.insert(name.clone());
        name
    }

    /// The name a [`Named`] or [`PrefixNamed`] tag gives a stored node's buffer (and so its kernel,
    /// in dumps and errors): the name itself, which must be free, or the prefix and the first
    /// free `_<k>`.
    fn tagged_name(&mut self, node: &Array) -> Result<Option<Arc<str>>> {
        if let Some(Named(name)) = node.tags_of_type::<Named>().next() {
            pytato_core::names::check_array_name("Named tag", name)?;
            if !self.taken.insert(name.clone()) {
                return Err(Error::DuplicateName {
                    name: name.clone(),
                    first: "an input, a size parameter or another stored array of the program".into(),
                    second: node.summary(),
                });
            }
            return Ok(Some(name.as_str().into()));
        }
        if let Some(PrefixNamed(prefix)) = node.tags_of_type::<PrefixNamed>().next() {
            pytato_core::names::check_array_name("PrefixNamed tag", prefix)?;
            let name = fresh_name(&format!("{prefix}_"), 0, &mut self.avoid);
            self.taken.insert(name.clone());
            return Ok(Some(name.into()));
        }
        Ok(None)
    }

    /// `expr` of a lambda with `bindings`, at output index `index`: inlined reads expanded,
    /// stored and input reads turned into buffer reads, reduction inames renamed apart.
    fn expand(
        &self,
        expr: &Expr,
        bindings: &BTreeMap<Arc<str>, Array>,
        index: &[Expr],
        ranges: &Ranges<'_>,
        fresh: &mut usize,
    ) -> Result<Expr> {
        // Rename this lambda's reduction inames to kernel-unique ones.
        let mut renames: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        expr.walk(&mut |e| {
            if let Expr::Reduce(r) = e {
                for b in &r.inames {
                    renames.entry(b.iname.clone()).or_insert_with(|| {
                        *fresh += 1;
                        format!("_r{}", *fresh - 1).into()
                    });
                }
            }
        });
        let mut failure = None;
        let out = expr.rewrite(&mut |e| {
            let replaced: Option<Result<Expr>> = match e {
                Expr::Var(v) => match classify(v) {
                    Some(Reserved::Iname(k)) => Some(Ok(index[k].clone())),
                    Some(Reserved::ReductionIname(_)) => renames.get(v).map(|n| Ok(Expr::Var(n.clone()))),
                    _ => self.read(bindings, v, &[], ranges, fresh),
                },
                Expr::Subscript(name, idx) => self.read(bindings, name, idx, ranges, fresh),
                // Index arithmetic that composing reshapes makes and that undoes itself (the
                // children are rewritten first, so this sees them simplified).
                Expr::Binary(..) => ranges.simplified(e).map(Ok),
                Expr::Reduce(r) => {
                    let mut renamed = (**r).clone();
                    for b in &mut renamed.inames {
                        if let Some(n) = renames.get(&b.iname) {
                            b.iname = n.clone();
                        }
                    }
                    Some(Ok(Expr::Reduce(Arc::new(renamed))))
                }
                _ => None,
            };
            match replaced {
                Some(Ok(x)) => Some(x),
                Some(Err(err)) => {
                    failure = Some(err);
                    None
                }
                None => None,
            }
        });
        match failure {
            Some(err) => Err(err),
            None => Ok(out),
        }
    }

    /// A read of binding `name` at `idx` (already expanded).
    fn read(
        &self,
        bindings: &BTreeMap<Arc<str>, Array>,
        name: &str,
        idx: &[Expr],
        ranges: &Ranges<'_>,
        fresh: &mut usize,
    ) -> Option<Result<Expr>> {
        let array = bindings.get(name)?;
        if let NodeKind::SizeParam { name } = array.kind() {
            return Some(Ok(Expr::Var(name.clone())));
        }
        if let Some(buffer) = self.buffer_of.get(&array.id()) {
            let b = self.program.buffers[buffer.0].name.clone();
            return Some(Ok(if idx.is_empty() { Expr::Var(b) } else { Expr::Subscript(b, idx.into()) }));
        }
        let NodeKind::IndexLambda(il) = array.kind() else {
            return Some(Err(Error::Internal {
                backend: "kernel IR".into(),
                message: format!("{} is neither stored nor an index lambda", array.summary()),
            }));
        };
        // A 0-d lambda read as a variable has no index.
        Some(self.expand(&il.expr, &il.bindings, idx, ranges, fresh))
    }
}

impl KernelProgram {
    /// Every buffer by name.
    pub fn buffer_ids(&self) -> HashMap<&str, BufferId> {
        self.buffers.iter().enumerate().map(|(i, b)| (&*b.name, BufferId(i))).collect()
    }

    /// The values of the size parameters (in [`Self::size_params`] order) and the shape of every
    /// buffer, for inputs bound by [`pytato_runtime::binding::Signature::bind`].
    pub fn bind_sizes(&self, bound: &pytato_runtime::binding::Bound<'_>) -> Result<(Vec<i64>, Vec<Vec<usize>>)> {
        let sizes = self
            .size_params
            .iter()
            .map(|p| {
                bound.sizes.get(p).copied().ok_or_else(|| Error::Internal {
                    backend: "kernel IR".into(),
                    message: format!("size parameter {p} is unbound"),
                })
            })
            .collect::<Result<_>>()?;
        let shapes = self.buffers.iter().map(|b| bound.shape(&b.shape)).collect::<Result<_>>()?;
        Ok((sizes, shapes))
    }

    /// The buffers kernels fill with `normalize_index` (index arrays made non-negative and
    /// checked against an extent), with that extent: a failed check fails the run, so where the
    /// failure stops the run before any later kernel reads the buffer, every value read from it
    /// lies in `[0, extent - 1]` ([`Ranges::index_buffers`]).
    pub fn normalized_indices(&self) -> HashMap<Arc<str>, Dim> {
        let ranges = Ranges {
            output: &[],
            reductions: HashMap::new(),
            size_params: &self.size_params,
            index_buffers: HashMap::new(),
            assumed: HashMap::new(),
        };
        let mut found = HashMap::new();
        for kernel in &self.kernels {
            if let Expr::Call(Func::NormalizeIndex, args) = &kernel.expr
                && let Some((lo, hi)) = args.get(1).and_then(|extent| ranges.interval(extent))
                && lo == hi
            {
                found.insert(self.buffers[kernel.output.0].name.clone(), lo);
            }
        }
        found
    }

    /// The buffers `kernel` touches: its output first, then every buffer its expression reads,
    /// in the order of first reading. `names` is [`Self::buffer_ids`].
    pub fn kernel_buffers(&self, names: &HashMap<&str, BufferId>, kernel: &Kernel) -> Result<Vec<BufferId>> {
        let mut used = vec![kernel.output];
        let mut unknown = None;
        kernel.expr.walk(&mut |e| {
            if let Expr::Var(n) | Expr::Subscript(n, _) = e
                && !is_iname(n)
                && !self.size_params.iter().any(|p| p == &**n)
            {
                match names.get(&**n) {
                    Some(id) if !used.contains(id) => used.push(*id),
                    Some(_) => {}
                    None => unknown = Some(n.clone()),
                }
            }
        });
        match unknown {
            Some(n) => Err(Error::Internal {
                backend: "kernel IR".into(),
                message: format!("a kernel reads `{n}`, which is neither a buffer nor a size parameter"),
            }),
            None => Ok(used),
        }
    }

    /// The dtype of `e`, an expression or subexpression of a kernel of this program that
    /// [`KernelProgram::check`] accepted, found by following first operands (the expression
    /// type-checked as a whole, so nothing is checked again). `names` is [`Self::buffer_ids`].
    pub fn expr_dtype(&self, names: &HashMap<&str, BufferId>, e: &Expr) -> Result<DType> {
        let bug = |message: String| Error::Internal { backend: "kernel IR".into(), message };
        Ok(match e {
            Expr::Const(s) => s.dtype(),
            Expr::Var(n) if is_iname(n) || self.size_params.iter().any(|p| p == &**n) => DType::I64,
            Expr::Var(n) | Expr::Subscript(n, _) => {
                let id = names.get(&**n).ok_or_else(|| bug(format!("unknown buffer {n}")))?;
                self.buffers[id.0].dtype
            }
            Expr::Unary(_, a) | Expr::Binary(_, a, _) | Expr::If(_, a, _) => self.expr_dtype(names, a)?,
            Expr::Compare(..) => DType::Bool,
            Expr::Cast(to, _) => *to,
            Expr::Call(f, args) => {
                let arg = self.expr_dtype(names, args.first().ok_or_else(|| bug("call without arguments".into()))?)?;
                f.result_dtype(arg).map_err(|why| bug(format!("{}({arg}): {why}", f.name())))?
            }
            Expr::Reduce(r) => self.expr_dtype(names, &r.body)?,
        })
    }

    /// What a buffer is to the user, for messages: the input's name, `output u`, or `a temporary`.
    pub fn describe_buffer(&self, id: BufferId) -> String {
        let Some(buffer) = self.buffers.get(id.0) else { return format!("buffer #{}", id.0) };
        match buffer.kind {
            BufferKind::Input | BufferKind::Data(_) => buffer.name.to_string(),
            BufferKind::Output => {
                let names: Vec<&str> = self.outputs.iter().filter(|(_, b)| *b == id).map(|(n, _)| n.as_str()).collect();
                format!("output {}", names.join("/"))
            }
            BufferKind::Temporary => format!("temporary {}", buffer.name),
        }
    }

    /// The error a backend reports for the out-of-range index it recorded as
    /// `[buffer, axis, index, length]` (see [`INDEX_ARRAY`] for `buffer`).
    pub fn index_error(&self, buffer: i64, axis: i64, index: i64, length: i64) -> Error {
        if buffer == NEGATIVE_EXPONENT {
            return Error::negative_exponent(index);
        }
        if buffer == VALUE_CHECK {
            return match pytato_core::ValueCheck::from_code(axis) {
                Some(check) => check.error(),
                None => {
                    Error::Internal { backend: "kernel IR".into(), message: format!("a value check of code {axis}") }
                }
            };
        }
        let op = if buffer == INDEX_ARRAY {
            "an index array".to_string()
        } else {
            format!("subscript of {}", self.describe_buffer(BufferId(buffer.max(0) as usize)))
        };
        Error::IndexOutOfBounds { op, index, axis: axis.max(0) as usize, length: length.max(0) as usize }
    }

    /// Checks the invariants of the module docs; an [`Error::Internal`] names the one broken.
    pub fn check(&self) -> Result<()> {
        let bug = |message: String| Error::Internal { backend: "kernel IR".into(), message };
        let mut names = BTreeSet::new();
        if let Some(b) = self.buffers.iter().find(|b| !names.insert(&*b.name)) {
            return Err(bug(format!("two buffers are named {}", b.name)));
        }
        if let Some(p) = self.size_params.iter().find(|p| names.contains(p.as_str())) {
            return Err(bug(format!("size parameter {p} shares its name with a buffer")));
        }
        let mut written: BTreeSet<usize> = BTreeSet::new();
        for (k, kernel) in self.kernels.iter().enumerate() {
            let out = self.buffers.get(kernel.output.0).ok_or_else(|| bug(format!("kernel {k} writes no buffer")))?;
            if matches!(out.kind, BufferKind::Input | BufferKind::Data(_)) || !written.insert(kernel.output.0) {
                return Err(bug(format!("kernel {k} writes {} twice or writes an input", out.name)));
            }
            let env =
                ProgramTypes { program: self, ndim: out.shape.ndim(), visible: &written, writing: kernel.output.0 };
            let dtype = kernel.expr.dtype(&env).map_err(|e| bug(format!("kernel {k} ({}): {e}", out.name)))?;
            if dtype != out.dtype {
                return Err(bug(format!("kernel {k} computes {dtype} for {} of dtype {}", out.name, out.dtype)));
            }
        }
        // Nothing is read or returned unwritten.
        if let Some(i) = (0..self.buffers.len()).find(|i| {
            matches!(self.buffers[*i].kind, BufferKind::Temporary | BufferKind::Output) && !written.contains(i)
        }) {
            return Err(bug(format!("no kernel writes {}", self.describe_buffer(BufferId(i)))));
        }
        if let Some((name, _)) = self.outputs.iter().find(|(_, b)| b.0 >= self.buffers.len()) {
            return Err(bug(format!("output {name} is no buffer")));
        }
        Ok(())
    }
}

impl KernelProgram {
    /// The dtype of `expr`, a part of the expression of `kernel` (reduction inames it uses bound
    /// by reductions inside it), with every buffer readable.
    pub(crate) fn dtype_in(&self, kernel: &Kernel, expr: &Expr) -> Result<DType> {
        let visible: BTreeSet<usize> = (0..self.buffers.len()).collect();
        let ndim = self.buffers[kernel.output.0].shape.ndim();
        expr.dtype(&ProgramTypes { program: self, ndim, visible: &visible, writing: kernel.output.0 })
    }
}

/// An output or reduction iname (other reserved names, like `_pt_out_tmp0`, are buffers).
fn is_iname(name: &str) -> bool {
    matches!(classify(name), Some(Reserved::Iname(_) | Reserved::ReductionIname(_)))
}

/// Typing environment of one kernel: buffers it may read (inputs, data, earlier kernels' outputs)
/// and size parameters.
struct ProgramTypes<'a> {
    program: &'a KernelProgram,
    ndim: usize,
    visible: &'a BTreeSet<usize>,
    writing: usize,
}

impl TypeEnv for ProgramTypes<'_> {
    fn ndim(&self) -> usize {
        self.ndim
    }
    fn binding(&self, name: &str) -> Option<(DType, usize)> {
        if self.program.size_params.iter().any(|p| p == name) {
            return Some((DType::I64, 0));
        }
        let (i, b) = self.program.buffers.iter().enumerate().find(|(_, b)| &*b.name == name)?;
        let readable = matches!(b.kind, BufferKind::Input | BufferKind::Data(_))
            || (self.visible.contains(&i) && i != self.writing);
        readable.then(|| (b.dtype, b.shape.ndim()))
    }
    fn describe(&self) -> String {
        let names: Vec<&str> = self.program.buffers.iter().map(|b| &*b.name).collect();
        format!("buffers [{}], size parameters {:?}", names.join(", "), self.program.size_params)
    }
}

impl fmt::Display for KernelProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kernel program: {} buffers, {} kernels, sizes {:?}",
            self.buffers.len(),
            self.kernels.len(),
            self.size_params
        )?;
        for b in &self.buffers {
            let kind = match b.kind {
                BufferKind::Input => "input",
                BufferKind::Data(_) => "data",
                BufferKind::Temporary => "temporary",
                BufferKind::Output => "output",
            };
            writeln!(f, "  {kind:9} {}: {} {}", b.name, b.dtype, b.shape)?;
        }
        for (name, id) in &self.outputs {
            writeln!(f, "  output {name} is {}", self.buffers[id.0].name)?;
        }
        for (k, kernel) in self.kernels.iter().enumerate() {
            let out = &self.buffers[kernel.output.0];
            let idx: Vec<String> = (0..out.shape.ndim()).map(|i| format!("_{i}")).collect();
            writeln!(f, "  kernel {k}: over {}: {}[{}] = {}", out.shape, out.name, idx.join(", "), kernel.expr)?;
        }
        Ok(())
    }
}
