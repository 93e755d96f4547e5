//! Running a compiled program: buffers, kernel launches, threads, errors.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pytato_core::array::DataRef;
use pytato_core::data::DataElement;
use pytato_core::{ArrayData, DType, Error, Result, for_each_array_data, for_each_array_view};
use pytato_runtime::backend::{NamedData, NamedViews, NamedViewsMut};
use pytato_runtime::binding::{Bound, Signature};
use pytato_runtime::{ArrayDataView, ArrayDataViewMut};
use pytato_transform::contraction::{Contraction, recognize};
use pytato_transform::kernel::{BufferKind, KernelProgram};
use pytato_transform::split_reductions::Split;

use crate::codegen::SCRATCH_BYTES;
use crate::groups::launch_groups;
use crate::jit::{JitCode, KernelFunction};

/// Kernels with fewer element operations (expression nodes evaluated) than this run on one
/// thread: below it, waking threads costs more than it saves. On a 2-vCPU virtual machine a
/// fork-join on rayon's pool took 15 µs with its workers awake and about 300 µs once they had
/// gone to sleep (after a millisecond idle), while compiled kernels evaluate about ten nodes per
/// nanosecond; 4 Mi nodes is about 0.4 ms of work. (With 64 Ki, DG steps on 64² squares at order
/// 1 ran at half the speed of one thread.)
pub(crate) const PARALLEL_THRESHOLD: u128 = 1 << 22;

/// Kernel launches split across threads since the process started (see [`crate::kernels_split`]).
pub(crate) static SPLIT: AtomicU64 = AtomicU64::new(0);

/// Kernels run in a launch group with others since the process started (see
/// [`crate::grouped_kernels_run`]).
pub(crate) static GROUPED: AtomicU64 = AtomicU64::new(0);

/// Everything compiled for one DAG; shared by every program handle and the cache.
pub(crate) struct Compiled {
    pub(crate) signature: Signature,
    program: KernelProgram,
    /// The reductions split into parts for threads, whose size parameters each run derives.
    splits: Vec<Split>,
    code: JitCode,
    /// The kernels of each function of `code`, in launch order (module `crate::groups`).
    groups: Vec<Vec<usize>>,
    /// Per kernel: the matrix product it is, where the GEMM runs it (module `contraction`).
    products: Vec<Option<Contraction>>,
    /// Per kernel: its operations per output element where no length changes them (no
    /// reduction), counted once here: counting walks the expression, which cost a small
    /// program's runs more than its kernels (a few microseconds per kernel).
    fixed_work: Vec<Option<u128>>,
    /// Dense C-order host copies of data buffers that were not (not row-major, or held by a
    /// device), by buffer index.
    dense_data: HashMap<usize, ArrayData>,
    /// Temporaries of the last run (by buffer index), reused by the next one.
    scratch: Mutex<HashMap<usize, Vec<u64>>>,
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "cranelift".into(), message }
}

fn is_dense(data: &ArrayData) -> bool {
    for_each_array_data!(data, a => a.is_standard_layout())
}

fn dense_copy(data: &ArrayData) -> ArrayData {
    for_each_array_data!(data, a => DataElement::wrap(a.as_standard_layout().into_owned()))
}

fn base_ptr(data: &ArrayData) -> *mut u8 {
    for_each_array_data!(data, a => a.as_ptr() as *mut u8)
}

/// A fresh output array before its kernel has written it: allocated, not zeroed. The kernel IR
/// has one kernel write every element of an output (module docs of
/// `pytato_transform::kernel`), so zeros would only be overwritten, and writing them is a pass
/// over the output on one thread: for DG's `ij,ej->ei` on 10^5 elements, 16 MB, about as long
/// as the product itself on 16 threads.
struct UnwrittenOutput {
    /// The array, to be made only once its kernel has written every element: it holds the
    /// allocation (a vector of length 0 until then) and gives it its length.
    finish: Box<dyn FnOnce() -> ArrayData>,
    /// Where the kernel writes the first element.
    address: *mut u8,
}

impl UnwrittenOutput {
    /// Room for an array of `dtype` and `shape`, or `OutOfMemory`.
    fn new(dtype: DType, shape: &[usize]) -> Result<UnwrittenOutput> {
        fn typed<T: DataElement>(shape: &[usize]) -> Result<UnwrittenOutput> {
            let out_of_memory = || Error::OutOfMemory {
                op: "run".into(),
                bytes: shape.iter().fold(std::mem::size_of::<T>() as u64, |b, &n| b.saturating_mul(n as u64)),
                what: format!("an output of dtype {} and shape {shape:?}", T::DTYPE),
            };
            let len = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or_else(out_of_memory)?;
            let mut values: Vec<T> = Vec::new();
            values.try_reserve_exact(len).map_err(|_| out_of_memory())?;
            let address = values.as_mut_ptr().cast::<u8>();
            advise_huge_pages(address, len.saturating_mul(std::mem::size_of::<T>()));
            let shape = shape.to_vec();
            let finish = move || {
                // SAFETY: `finish` runs only once the kernel writing this output has returned
                // without an error (`execute`), and that kernel wrote all `len` elements (the
                // kernel IR's invariant; a launch covers every row of the output, on one thread
                // or split over several, and the GEMM writes every element of its blocks), each
                // a valid `T` (the kernel's output dtype is `T::DTYPE`; booleans are written as
                // 0 or 1). `len` is the capacity reserved above, and the vector has not moved its
                // elements: moving a `Vec` moves no heap memory.
                unsafe { values.set_len(len) };
                T::wrap(ndarray::ArrayD::from_shape_vec(shape, values).expect("the length is the shape's"))
            };
            Ok(UnwrittenOutput { finish: Box::new(finish), address })
        }
        match dtype {
            DType::Bool => typed::<bool>(shape),
            DType::I8 => typed::<i8>(shape),
            DType::I16 => typed::<i16>(shape),
            DType::I32 => typed::<i32>(shape),
            DType::I64 => typed::<i64>(shape),
            DType::U8 => typed::<u8>(shape),
            DType::U16 => typed::<u16>(shape),
            DType::U32 => typed::<u32>(shape),
            DType::U64 => typed::<u64>(shape),
            DType::F16 => typed::<pytato_core::f16>(shape),
            DType::F32 => typed::<f32>(shape),
            DType::F64 => typed::<f64>(shape),
            DType::C64 => typed::<num_complex::Complex32>(shape),
            DType::C128 => typed::<num_complex::Complex64>(shape),
        }
    }
}

/// Asks Linux to back the whole 2 MiB pages within the `bytes` at `address` (a fresh output,
/// not yet touched, or a host step's fresh result: `Backend::fresh_memory_advice`) with
/// transparent huge pages, where the memory is large (`pytato_runtime::spare::whole_huge_pages`).
///
/// A fresh allocation's memory is mapped on first write, one page fault per page. For a
/// 128 MiB output, 32,768 faults of 4 KiB cost more than the kernel writing it: on a 2-vCPU
/// virtual machine, writing a fresh 128 MiB vector took 55 to 106 ms against 15 ms for one
/// already mapped, and 15 ms with this advice (64 faults of 2 MiB). `jax.jit` and most array
/// libraries keep freed buffers for reuse instead; outputs here are handed to the caller, so
/// their memory cannot be kept. Linux follows the advice where transparent huge pages are
/// `madvise` or `always`, the common defaults (`/sys/kernel/mm/transparent_hugepage/enabled`).
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages(address: *mut u8, bytes: usize) {
    if let Some(pages) = pytato_runtime::spare::whole_huge_pages(address, bytes) {
        // SAFETY: `pages` lies within the allocation of `bytes` bytes at `address` (rounded
        // inward to whole huge pages), which the caller owns. `MADV_HUGEPAGE` changes only how
        // the kernel backs those pages: it reads, writes and unmaps nothing, so no Rust value sees
        // a difference (whatever the range: one not mapped is an error return). A failure (a
        // kernel without transparent huge pages) leaves the pages as they were, which is correct
        // too.
        unsafe { libc::madvise(pages.start as *mut libc::c_void, pages.len(), libc::MADV_HUGEPAGE) };
    }
}

/// Elsewhere than Linux, fresh outputs keep the allocator's pages.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages(_address: *mut u8, _bytes: usize) {}

fn view_ptr(view: &ArrayDataView<'_>) -> *mut u8 {
    for_each_array_view!(ArrayDataView, view, a => a.as_ptr() as *mut u8)
}

fn view_ptr_mut(view: &mut ArrayDataViewMut<'_>) -> *mut u8 {
    for_each_array_view!(ArrayDataViewMut, view, a => a.as_mut_ptr().cast::<u8>())
}

impl Compiled {
    /// Compiles `program` (whose inputs `signature` checks, with the derived size parameters of
    /// `splits`) to machine code, vector loops where `simd`.
    pub(crate) fn new(
        signature: Signature,
        program: KernelProgram,
        splits: Vec<Split>,
        simd: bool,
    ) -> Result<Compiled> {
        let mut dense_data = HashMap::new();
        for (i, b) in program.buffers.iter().enumerate() {
            let BufferKind::Data(d) = &b.kind else { continue };
            match d.as_host() {
                Some(host) if is_dense(host) => {}
                Some(host) => _ = dense_data.insert(i, dense_copy(host)),
                None => _ = dense_data.insert(i, dense_copy(&*d.to_host()?)),
            }
        }
        let products: Vec<Option<Contraction>> = program
            .kernels
            .iter()
            .map(|k| recognize(&program, k).filter(|c| crate::contraction::supported(c.dtype)))
            .collect();
        let alone: Vec<bool> = products.iter().map(Option::is_some).collect();
        let groups = launch_groups(&program, &alone);
        let code = crate::jit::compile(&program, &groups, simd)?;
        let fixed_work = program
            .kernels
            .iter()
            // Counting fails exactly where it needs a length, which only a run knows.
            .map(|k| {
                k.work(&|_| Err(internal("lengths are bound when the program runs".into()))).ok().map(|w| w.operations)
            })
            .collect();
        Ok(Compiled {
            signature,
            program,
            splits,
            code,
            groups,
            products,
            fixed_work,
            dense_data,
            scratch: Mutex::new(HashMap::new()),
        })
    }

    /// The host array data buffer `i` (holding `data`) is read from: its dense copy, or the
    /// data itself.
    fn data<'a>(&'a self, i: usize, data: &'a DataRef) -> Result<&'a ArrayData> {
        let host = self.dense_data.get(&i).or_else(|| data.as_host().map(|a| &**a));
        host.ok_or_else(|| internal(format!("data buffer {i} has no host copy")))
    }

    /// Runs on borrowed inputs; the outputs are fresh arrays.
    pub(crate) fn run(&self, inputs: &NamedViews<'_>, threads: usize) -> Result<NamedData> {
        let mut bound = self.signature.bind(inputs)?;
        let mut outputs = self.execute(inputs, &mut bound, threads, None)?;
        let program = &self.program;
        let mut remaining: HashMap<usize, usize> = HashMap::new();
        for (_, id) in &program.outputs {
            *remaining.entry(id.0).or_default() += 1;
        }
        let mut result = NamedData::new();
        for (name, id) in &program.outputs {
            let buffer = &program.buffers[id.0];
            let data = match &buffer.kind {
                BufferKind::Output => {
                    let left = remaining.get_mut(&id.0).expect("counted");
                    *left -= 1;
                    if *left == 0 { outputs.remove(&id.0) } else { outputs.get(&id.0).cloned() }
                }
                BufferKind::Input => inputs.get(&*buffer.name).map(ArrayDataView::to_owned),
                BufferKind::Data(d) => Some(self.data(id.0, d)?.clone()),
                BufferKind::Temporary => None,
            };
            result.insert(name.clone(), data.ok_or_else(|| internal(format!("output {name} was not computed")))?);
        }
        Ok(result)
    }

    /// Runs on borrowed inputs and writes the outputs into `targets`: in place where a target is
    /// row-major, else through a fresh array.
    pub(crate) fn run_into(
        &self,
        inputs: &NamedViews<'_>,
        targets: &mut NamedViewsMut<'_>,
        threads: usize,
    ) -> Result<()> {
        let mut bound = self.signature.bind(inputs)?;
        self.signature.check_outputs(&bound, targets)?;
        let program = &self.program;
        // The target each output buffer is computed in: the first row-major one named for it.
        let mut in_place: HashMap<usize, &str> = HashMap::new();
        for (name, id) in &program.outputs {
            let row_major = targets.get(name.as_str()).is_some_and(ArrayDataViewMut::is_standard_layout);
            if matches!(program.buffers[id.0].kind, BufferKind::Output) && row_major {
                in_place.entry(id.0).or_insert(name.as_str());
            }
        }
        let fresh = {
            let mut direct: HashMap<usize, *mut u8> = HashMap::new();
            for (&i, &name) in &in_place {
                direct.insert(i, view_ptr_mut(targets.get_mut(name).expect("checked")));
            }
            self.execute(inputs, &mut bound, threads, Some(&direct))?
        };
        let fits = |name: &str| internal(format!("output {name} does not fit the checked array"));
        for (name, id) in &program.outputs {
            if in_place.get(&id.0) == Some(&name.as_str()) {
                continue;
            }
            let buffer = &program.buffers[id.0];
            // Another name of an array computed in place is copied from there: the map lends one
            // target at a time, so that one goes through an owned copy.
            let copied: ArrayData;
            let value = match &buffer.kind {
                BufferKind::Output => match in_place.get(&id.0) {
                    Some(&first) => {
                        copied = targets[first].view().to_owned();
                        copied.view()
                    }
                    None => fresh.get(&id.0).map(ArrayData::view).ok_or_else(|| fits(name))?,
                },
                BufferKind::Input => {
                    inputs.get(&*buffer.name).map(ArrayDataView::reborrow).ok_or_else(|| fits(name))?
                }
                BufferKind::Data(d) => self.data(id.0, d)?.view(),
                BufferKind::Temporary => return Err(fits(name)),
            };
            targets.get_mut(name.as_str()).expect("checked").assign(&value).ok_or_else(|| fits(name))?;
        }
        Ok(())
    }

    /// Runs every kernel. Output buffers are written at the addresses in `direct` (row-major
    /// arrays of the output's shape, checked by the caller) or into fresh arrays, returned by
    /// buffer index.
    fn execute(
        &self,
        inputs: &NamedViews<'_>,
        bound: &mut Bound<'_>,
        threads: usize,
        direct: Option<&HashMap<usize, *mut u8>>,
    ) -> Result<HashMap<usize, ArrayData>> {
        let program = &self.program;
        // Split reductions run in parts on several threads only: on one, the parts would only
        // cost their launches.
        let min_work = if threads > 1 { PARALLEL_THRESHOLD } else { u128::MAX };
        for split in &self.splits {
            split.bind(bound, min_work)?;
        }
        let bound = &*bound;
        let (sizes, shapes) = program.bind_sizes(bound)?;

        // Base addresses. Everything whose address is taken stays alive (and unmoved on the heap)
        // until the kernels are done: `copies`, `outputs`, `scratch`, the inputs and the targets.
        let mut pointers: Vec<*mut u8> = vec![std::ptr::null_mut(); program.buffers.len()];
        let mut copies: Vec<ArrayData> = Vec::new();
        let mut outputs: HashMap<usize, UnwrittenOutput> = HashMap::new();
        let mut own_scratch = HashMap::new();
        let mut shared_scratch = self.scratch.try_lock().ok();
        let scratch = shared_scratch.as_deref_mut().unwrap_or(&mut own_scratch);
        for (i, buffer) in program.buffers.iter().enumerate() {
            pointers[i] = match &buffer.kind {
                BufferKind::Input => {
                    let data = inputs
                        .get(&*buffer.name)
                        .ok_or_else(|| internal(format!("input {} passed the checks but is absent", buffer.name)))?;
                    if data.is_standard_layout() {
                        view_ptr(data)
                    } else {
                        copies.push(data.try_to_owned("run")?);
                        base_ptr(copies.last().expect("just pushed"))
                    }
                }
                BufferKind::Data(d) => base_ptr(self.data(i, d)?),
                BufferKind::Temporary => {
                    let bytes = shapes[i].iter().product::<usize>() * buffer.dtype.itemsize();
                    let words = scratch.entry(i).or_default();
                    if words.len() < bytes.div_ceil(8) {
                        *words = Vec::new(); // the old temporary goes before the new one comes
                        *words = bytemuck::allocation::try_zeroed_vec(bytes.div_ceil(8)).map_err(|()| {
                            Error::OutOfMemory {
                                op: "run".into(),
                                bytes: bytes as u64,
                                what: format!("the temporary {} of shape {:?}", buffer.name, shapes[i]),
                            }
                        })?;
                    }
                    words.as_mut_ptr() as *mut u8
                }
                BufferKind::Output => match direct.and_then(|d| d.get(&i)) {
                    Some(&p) => p,
                    None => {
                        let output = UnwrittenOutput::new(buffer.dtype, &shapes[i])?;
                        let p = output.address;
                        outputs.insert(i, output);
                        p
                    }
                },
            };
        }

        for (group, &function) in self.groups.iter().zip(&self.code.functions) {
            pytato_runtime::interrupt::check("cranelift run")?;
            // Every kernel of a group has the first axis of the first one.
            let shape = &shapes[program.kernels[group[0]].output.0];
            let outer = shape.first().copied().unwrap_or(1);
            if group.iter().all(|&k| shapes[program.kernels[k].output.0].contains(&0)) {
                continue;
            }
            if let ([k], Some(product)) = (group.as_slice(), &self.products[group[0]]) {
                let terms = bound.eval(&product.terms)?.max(0) as usize;
                if crate::contraction::run(product, program.kernels[*k].output, &pointers, &shapes, terms, threads) {
                    continue;
                }
            }
            if group.len() > 1 {
                GROUPED.fetch_add(group.len() as u64, Ordering::Relaxed);
            }
            // The work decides whether the launch is split over threads, and how many rows it
            // runs between two checks for an interrupt.
            let work = if outer > 1 { self.work(group, &shapes, bound)? } else { 0 };
            let parts = if threads <= 1 || outer <= 1 {
                1
            } else if self.splits.iter().any(|s| s.parts_kernel() == group[0]) {
                // A split reduction has parts only where they pay for the threads.
                threads.min(outer)
            } else if work >= PARALLEL_THRESHOLD {
                threads.min(outer)
            } else {
                1
            };
            let rows_per_check = rows_between_checks(work, outer);
            launch(function, &pointers, &sizes, outer, parts, rows_per_check).map_err(|stop| match stop {
                Stop::Index(e) => self.index_error(e),
                Stop::Interrupted => Error::Interrupted { op: "cranelift run".into() },
            })?;
        }
        // Every kernel has run without an error: each output is written.
        Ok(outputs.into_iter().map(|(i, output)| (i, (output.finish)())).collect())
    }

    /// The expression nodes the kernels of `group` evaluate, for the lengths `bound` gives.
    fn work(&self, group: &[usize], shapes: &[Vec<usize>], bound: &Bound<'_>) -> Result<u128> {
        let mut work = 0u128;
        for &k in group {
            let kernel = &self.program.kernels[k];
            let elements: usize = shapes[kernel.output.0].iter().product();
            let per_element = match self.fixed_work[k] {
                Some(operations) => operations,
                None => kernel.work(&|d| bound.eval(d))?.operations,
            };
            work = work.saturating_add((elements as u128).saturating_mul(per_element));
        }
        Ok(work)
    }

    fn index_error(&self, e: [i64; 4]) -> Error {
        let [buffer, axis, index, length] = e;
        self.program.index_error(buffer, axis, index, length)
    }
}

thread_local! {
    /// This thread's scratch memory for kernel functions that take it: allocated on first use,
    /// kept for the thread's life (512 KiB, far more than most thread stacks could spare).
    static SCRATCH: RefCell<Option<Box<[u128]>>> = const { RefCell::new(None) };
}

/// Calls `f` with `SCRATCH_BYTES` bytes, 16-byte aligned, that nothing else uses until it
/// returns: this thread's scratch, or, should a call further up this thread hold that (kernels
/// run no kernels, so none does), memory of its own.
fn with_scratch<R>(f: impl FnOnce(*mut u8) -> R) -> R {
    let fresh = || vec![0u128; SCRATCH_BYTES / size_of::<u128>()].into_boxed_slice();
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => f(slot.get_or_insert_with(fresh).as_mut_ptr().cast()),
        Err(_) => f(fresh().as_mut_ptr().cast()),
    })
}

/// Element operations a launch runs between two checks for an interrupt
/// ([`pytato_runtime::interrupt`]): a few milliseconds of a thread's work.
const WORK_PER_CHECK: u128 = 1 << 26;

/// The most element operations the floor of 1024 rows between checks may hold (about a second of
/// a thread's work): where 1024 rows are more, the floor is lowered to what this allows.
const MOST_WORK_PER_CHECK: u128 = 1 << 30;

/// Rows a launch runs between two checks for an interrupt: about [`WORK_PER_CHECK`] operations'
/// worth, and at least 1024 where those are at most [`MOST_WORK_PER_CHECK`], so that a kernel
/// summing columns in strips (whose rows are the output's columns) keeps strips of 8 KiB of each
/// input row (narrower ones were measured slower; only inputs of more than 2^20 rows get
/// narrower strips than without checks). A launch of few, long rows (20 sums of 10^9 terms each,
/// the 64 parts of a split reduction of 10^11 terms) checks after every row: with the floor
/// alone, it never checked and ran its minutes to the end after Ctrl-C. Any cut of the rows
/// gives the same bits: a launch split over threads is cut the same way.
fn rows_between_checks(work: u128, outer: usize) -> usize {
    let per_row = (work / outer.max(1) as u128).max(1);
    let floor = (MOST_WORK_PER_CHECK / per_row).clamp(1, 1024);
    usize::try_from((WORK_PER_CHECK / per_row).max(floor)).unwrap_or(usize::MAX)
}

/// Why a launch stopped before its end.
enum Stop {
    /// An out-of-range subscript, as `[buffer, axis, index, length]`.
    Index([i64; 4]),
    /// A stop was requested ([`pytato_runtime::interrupt`]).
    Interrupted,
}

/// Runs one function (the kernels of a launch group) over `[0, outer)` of their first axis, split
/// into `parts` contiguous ranges on as many threads, each run `rows_per_check` rows at a time
/// with a check for an interrupt before each.
fn launch(
    kernel: KernelFunction,
    pointers: &[*mut u8],
    sizes: &[i64],
    outer: usize,
    parts: usize,
    rows_per_check: usize,
) -> Result<(), Stop> {
    // Addresses cross threads as integers: every thread only reads the pointer tables.
    let (buffers, sizes) = (pointers.as_ptr() as usize, sizes.as_ptr() as usize);
    let call_rows = move |lo: usize, hi: usize| -> Result<(), [i64; 4]> {
        let mut error = [0i64; 4];
        let error_slots = error.as_mut_ptr();
        // SAFETY: `buffers` holds the base address of every buffer of the program, each dense and
        // in C order with the shape the kernel computes from `sizes` (inputs were checked against
        // those shapes by `Signature::bind` and copied where not row-major; outputs written in
        // place were checked by `Signature::check_outputs` and are row-major; other outputs and
        // temporaries were allocated with those shapes),
        // and all of them outlive this call. The function writes only its kernels' outputs, at
        // first indices in [lo, hi), which no other thread writes or reads (a kernel reads
        // another kernel's output of its group only at the row it computes). It reads and writes
        // nothing out of bounds: subscripts are checked, or proved, a read through an index array
        // counting as proved only once `normalize_index` checked the array (`execute` stops at the
        // first launch that fails, and a group's later kernel reads only rows this call checked);
        // `error` has the four slots it may fill; `scratch` is null only for a function that does
        // not use it, else `SCRATCH_BYTES` bytes, 16-byte aligned, that nothing else reads or
        // writes during the call (`with_scratch`).
        let run = |scratch: *mut u8| unsafe {
            (kernel.code)(buffers as *const *mut u8, sizes as *const i64, lo as i64, hi as i64, error_slots, scratch)
        };
        let status = if kernel.scratch { with_scratch(run) } else { run(std::ptr::null_mut()) };
        if status == 0 { Ok(()) } else { Err(error) }
    };
    let call = move |lo: usize, hi: usize| -> Result<(), Stop> {
        let mut start = lo;
        while start < hi {
            if pytato_runtime::interrupt::requested() {
                return Err(Stop::Interrupted);
            }
            let end = hi.min(start.saturating_add(rows_per_check));
            call_rows(start, end).map_err(Stop::Index)?;
            start = end;
        }
        Ok(())
    };
    if parts <= 1 {
        return call(0, outer);
    }
    SPLIT.fetch_add(1, Ordering::Relaxed);
    // The parts run on rayon's pool, whose threads persist between kernels and programs: a small
    // kernel pays a queue push per part, not a thread start.
    let chunk = outer.div_ceil(parts);
    let results: Vec<Mutex<Result<(), Stop>>> = (0..parts).map(|_| Mutex::new(Ok(()))).collect();
    rayon::scope(|s| {
        for (p, slot) in results.iter().enumerate().skip(1) {
            let (lo, hi) = (p * chunk, ((p + 1) * chunk).min(outer));
            if lo < hi {
                s.spawn(move |_| *slot.lock().unwrap_or_else(|e| e.into_inner()) = call(lo, hi));
            }
        }
        *results[0].lock().unwrap_or_else(|e| e.into_inner()) = call(0, chunk.min(outer));
    });
    results.into_iter().try_for_each(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()))
}
