//! pytato's distributed API from Python (`pytato.distributed`): sends stapled to arrays,
//! receives and their fields; partitions, tag numbering, verification, and runs over an `mpi4py`
//! communicator, which carries the library's messages (see [`Mpi4py`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFrozenSet, PyInt, PyList, PyString, PyTuple, PyType};
use pytato::Array;
use pytato::backend::Outputs;
use pytato::distributed::{self, CommTag, DistributedSend};
use pytato::error::Mismatch;
use pytato::run_distributed::{self, Communicator, DistributedPartition, DistributedProgram, Exchange, WireTag};

use crate::array::{PyArrayExpr, wrap};
use crate::convert::{outputs_from_py, shape_from_py};
use crate::data::dtype_from_py;
use crate::errors::{Result, lib, type_error, value_error};
use crate::evaluated::EvaluatedArray;
use crate::interrupt::interruptible;
use crate::program::{backend_by_name, borrow_inputs, download, host_views};
use crate::tags::tags_from_py;

/// A send of an array to another rank (pytato's `DistributedSend`): it has no value of its own;
/// `make_distributed_send_ref_holder` staples it to an array.
#[pyclass(name = "DistributedSend", module = "pytato_rs", frozen)]
pub(crate) struct PyDistributedSend {
    pub(crate) send: DistributedSend,
}

#[pymethods]
impl PyDistributedSend {
    /// The array sent.
    #[getter]
    fn data(&self, py: Python<'_>) -> PyResult<Py<PyArrayExpr>> {
        Ok(crate::graph::node_object(py, &self.send.data)?.unbind())
    }

    /// The receiving rank.
    #[getter]
    fn dest_rank(&self) -> usize {
        self.send.dest_rank
    }

    /// The message's tag.
    #[getter]
    fn comm_tag<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        comm_tag_to_py(py, &self.send.comm_tag)
    }

    fn __repr__(&self) -> String {
        format!(
            "DistributedSend(data={}, dest_rank={}, comm_tag={:?})",
            self.send.data.summary(),
            self.send.dest_rank,
            self.send.comm_tag
        )
    }
}

/// How a class or function used as a tag is spelled in a [`CommTag`]: its module and qualified
/// name after a NUL, which no tag a user writes starts with; the same on every rank.
const CLASS_TAG: &str = "\0class:";

/// The first entry of the tuple a `frozenset` tag becomes (its entries follow in `CommTag`'s
/// order, so that every rank spells one set alike).
const SET_TAG: &str = "\0frozenset";

/// The classes and functions used as tags in this process, by their spelling, to give them back
/// to Python.
static TAG_CLASSES: std::sync::Mutex<BTreeMap<String, Py<PyAny>>> = std::sync::Mutex::new(BTreeMap::new());

/// A communication tag from Python: an `int`, a `str`, a class (tags such as grudge's are tag
/// classes), a function, or a tuple or `frozenset` of tags.
pub(crate) fn comm_tag_from_py(tag: &Bound<'_, PyAny>) -> Result<CommTag> {
    if let Ok(text) = tag.cast::<PyString>() {
        return Ok(CommTag::from(text.to_str()?));
    }
    if tag.is_instance_of::<PyInt>() {
        return Ok(CommTag::Int(tag.extract()?));
    }
    if let Ok(items) = tag.cast::<PyTuple>() {
        return Ok(CommTag::tuple(items.iter().map(|item| comm_tag_from_py(&item)).collect::<Result<Vec<_>>>()?));
    }
    if let Ok(items) = tag.cast::<PyFrozenSet>() {
        let mut entries = items.iter().map(|item| comm_tag_from_py(&item)).collect::<Result<Vec<_>>>()?;
        entries.sort();
        return Ok(CommTag::tuple(std::iter::once(CommTag::from(SET_TAG)).chain(entries)));
    }
    // A class (grudge's tags are tag classes) or a function (upstream's example tags with its
    // `main`): spelled by module and qualified name, alike on every rank. Two objects spelled
    // alike are one tag.
    let named = if let Ok(class) = tag.cast::<PyType>() {
        Some((class.module()?.to_string(), class.qualname()?.to_string()))
    } else if tag.is_instance(&py_function_type(tag.py())?)? {
        Some((tag.getattr("__module__")?.extract()?, tag.getattr("__qualname__")?.extract()?))
    } else {
        None
    };
    if let Some((module, qualname)) = named {
        let spelling = format!("{CLASS_TAG}{module}.{qualname}");
        TAG_CLASSES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(spelling.clone())
            .or_insert_with(|| tag.clone().unbind());
        return Ok(CommTag::from(spelling.as_str()));
    }
    Err(type_error(format!(
        "a communication tag is an int, a str, a class, a function or a tuple or frozenset of them (every rank must \
         order them alike), not {}",
        tag.get_type().name()?
    )))
}

/// Python's type of functions written in Python (`types.FunctionType`).
fn py_function_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("types")?.getattr("FunctionType")
}

/// A communication tag as Python holds it.
pub(crate) fn comm_tag_to_py<'py>(py: Python<'py>, tag: &CommTag) -> PyResult<Bound<'py, PyAny>> {
    Ok(match tag {
        CommTag::Int(n) => n.into_pyobject(py)?.into_any(),
        CommTag::Str(s) => match TAG_CLASSES.lock().unwrap_or_else(|e| e.into_inner()).get(s.as_ref()) {
            Some(class) => class.bind(py).clone(),
            None => s.as_ref().into_pyobject(py)?.into_any(),
        },
        CommTag::Tuple(items) if items.first() == Some(&CommTag::from(SET_TAG)) => {
            let entries = items[1..].iter().map(|t| comm_tag_to_py(py, t)).collect::<PyResult<Vec<_>>>()?;
            PyFrozenSet::new(py, &entries)?.into_any()
        }
        CommTag::Tuple(items) => {
            PyTuple::new(py, items.iter().map(|t| comm_tag_to_py(py, t)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    })
}

fn array(obj: &Bound<'_, PyAny>) -> Result<Array> {
    Ok(obj.cast::<PyArrayExpr>().map_err(|_| type_error("expected an array expression"))?.get().array.clone())
}

/// A send of `sent_data` to `dest_rank` with `comm_tag`.
#[pyfunction]
fn make_distributed_send(
    sent_data: &Bound<'_, PyAny>,
    dest_rank: usize,
    comm_tag: &Bound<'_, PyAny>,
) -> Result<PyDistributedSend> {
    Ok(PyDistributedSend {
        send: lib(distributed::make_distributed_send(&array(sent_data)?, dest_rank, comm_tag_from_py(comm_tag)?))?,
    })
}

/// `passthrough_data` carrying `send`: the send happens when a DAG holding the result runs.
#[pyfunction]
fn make_distributed_send_ref_holder(
    send: PyRef<'_, PyDistributedSend>,
    passthrough_data: &Bound<'_, PyAny>,
) -> Result<Py<PyArrayExpr>> {
    wrap(distributed::staple_distributed_send(&array(passthrough_data)?, send.send.clone()))
}

/// `stapled_to` carrying a send of `sent_data` to `dest_rank` with `comm_tag`.
#[pyfunction]
fn staple_distributed_send(
    sent_data: &Bound<'_, PyAny>,
    dest_rank: usize,
    comm_tag: &Bound<'_, PyAny>,
    stapled_to: &Bound<'_, PyAny>,
) -> Result<Py<PyArrayExpr>> {
    let send = lib(distributed::make_distributed_send(&array(sent_data)?, dest_rank, comm_tag_from_py(comm_tag)?))?;
    wrap(distributed::staple_distributed_send(&array(stapled_to)?, send))
}

/// The array rank `src_rank` sends with `comm_tag`, of `shape` and `dtype`.
#[pyfunction]
#[pyo3(signature = (src_rank, comm_tag, shape, dtype = None, axes = None, tags = None))]
fn make_distributed_recv(
    src_rank: usize,
    comm_tag: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    axes: Option<&Bound<'_, PyAny>>,
    tags: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let dtype = match dtype {
        Some(d) => dtype_from_py(d)?,
        None => pytato::DType::F64,
    };
    let mut recv =
        lib(distributed::make_distributed_recv(src_rank, comm_tag_from_py(comm_tag)?, shape_from_py(shape)?, dtype))?;
    recv = lib(recv.tagged_with(tags_from_py(tags)?))?;
    if let Some(axes) = axes {
        recv = lib(recv.with_axes(crate::graph::axis_metadata_from_py(axes)?))?;
    }
    wrap(Ok(recv))
}

// ---- running over mpi4py ------------------------------------------------------------------

/// An `mpi4py` communicator as the library's [`Communicator`]: the all-gather and the messages
/// go through mpi4py's pickle-based calls (`allgather`, `isend`, `iprobe`, `recv`) on `bytes`,
/// so the extension links no MPI of its own. Every call takes the GIL for as long as it runs.
struct Mpi4py {
    comm: Py<PyAny>,
    rank: usize,
    size: usize,
}

impl Mpi4py {
    fn new(comm: &Bound<'_, PyAny>) -> Result<Mpi4py> {
        let has = |name: &str| comm.hasattr(name).unwrap_or(false);
        if !["allgather", "isend", "iprobe", "recv", "rank", "size"].iter().all(|n| has(n)) {
            return Err(type_error(format!(
                "an mpi4py communicator (mpi4py.MPI.Comm) is needed, not {}",
                comm.get_type().name()?
            )));
        }
        Ok(Mpi4py {
            comm: comm.clone().unbind(),
            rank: comm.getattr("rank")?.extract()?,
            size: comm.getattr("size")?.extract()?,
        })
    }

    /// A Python error raised by mpi4py as the library's communication error.
    fn error(&self, op: &str, e: PyErr) -> pytato::Error {
        pytato::Error::Communication { op: op.into(), rank: self.rank, message: e.to_string() }
    }
}

/// `bytes` as a vector (mpi4py returns what was pickled, so anything else is another program's).
fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(obj.cast::<PyBytes>()?.as_bytes().to_vec())
}

impl Communicator for Mpi4py {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_gather(&self, bytes: &[u8]) -> pytato::Result<Vec<Vec<u8>>> {
        Python::attach(|py| {
            let gathered = self.comm.bind(py).call_method1("allgather", (PyBytes::new(py, bytes),))?;
            gathered.try_iter()?.map(|b| bytes_of(&b?)).collect::<PyResult<Vec<_>>>()
        })
        .map_err(|e| self.error("all_gather", e))
    }

    fn exchange(&self, session: &mut dyn FnMut(&mut dyn Exchange) -> pytato::Result<()>) -> pytato::Result<()> {
        let mut exchange = Mpi4pyExchange { comm: self, requests: Vec::new() };
        let result = session(&mut exchange);
        // Every send completes before the session ends, after an error too: mpi4py keeps the
        // pickled message until its request is waited for.
        let requests = exchange.requests;
        let waited = Python::attach(|py| -> PyResult<()> {
            let request = py.import("mpi4py.MPI")?.getattr("Request")?;
            request.call_method1("waitall", (PyList::new(py, requests)?,))?;
            Ok(())
        })
        .map_err(|e| self.error("exchange", e));
        result.and(waited)
    }
}

/// Messages within one [`Communicator::exchange`] of an [`Mpi4py`] communicator.
struct Mpi4pyExchange<'a> {
    comm: &'a Mpi4py,
    /// The requests of the sends started, waited for when the session ends.
    requests: Vec<Py<PyAny>>,
}

impl Exchange for Mpi4pyExchange<'_> {
    fn send(&mut self, dest: usize, tag: WireTag, message: Vec<u8>) -> pytato::Result<()> {
        let comm = self.comm;
        let request = Python::attach(|py| {
            let request = comm.comm.bind(py).call_method1("isend", (PyBytes::new(py, &message), dest, tag))?;
            Ok(request.unbind())
        })
        .map_err(|e| comm.error("send", e))?;
        self.requests.push(request);
        Ok(())
    }

    fn try_receive(&mut self, src: usize, tag: WireTag) -> pytato::Result<Option<Vec<u8>>> {
        Python::attach(|py| -> PyResult<Option<Vec<u8>>> {
            let comm = self.comm.comm.bind(py);
            let from = PyDict::new(py);
            from.set_item("source", src)?;
            from.set_item("tag", tag)?;
            if !comm.call_method("iprobe", (), Some(&from))?.extract::<bool>()? {
                return Ok(None);
            }
            Ok(Some(bytes_of(&comm.call_method("recv", (), Some(&from))?)?))
        })
        .map_err(|e| self.comm.error("receive", e))
    }
}

/// A DAG with sends and receives cut into parts for this rank (pytato's
/// `DistributedGraphPartition`), from `find_distributed_partition`.
#[pyclass(name = "DistributedGraphPartition", module = "pytato_rs", frozen)]
pub(crate) struct PyDistributedPartition {
    partition: Arc<DistributedPartition>,
    /// The DAG it was cut from: a partition pickles as this DAG, its rank and its tags, and is
    /// cut again when unpickled (partitioning is deterministic).
    source: Outputs,
    /// What the collective check found when it was made (every rank finds the same) and let
    /// through: a send or receive naming a rank the communicator lacks, which
    /// `generate_code_for_partition` raises. Such a partition is found and drawn, as in pytato,
    /// never run.
    verdict: Option<pytato::Error>,
}

#[pymethods]
impl PyDistributedPartition {
    /// The rank it was made for.
    #[getter]
    fn rank(&self) -> usize {
        self.partition.rank
    }

    /// The parts (each a program of its own, run when the messages and parts it needs are
    /// there), by id.
    #[getter]
    fn parts<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let parts = PyDict::new(py);
        for (index, _) in self.partition.parts.iter().enumerate() {
            let part = PyDistributedPart { partition: self.partition.clone(), index };
            parts.set_item(self.partition.parts[index].id, Bound::new(py, part)?)?;
        }
        Ok(parts)
    }

    /// The names of the DAG's outputs, which `execute_distributed_partition` returns.
    #[getter]
    fn overall_output_names(&self) -> Vec<String> {
        self.partition.outputs.iter().map(|(name, _)| name.clone()).collect()
    }

    /// The partition in Graphviz's dot language: parts, receives, sends and their order
    /// (`show_dot_graph` draws it).
    fn _dot(&self) -> String {
        run_distributed::partition_to_dot(&self.partition)
    }

    /// The partition drawn as an SVG document.
    fn _svg(&self) -> Result<String> {
        lib(run_distributed::partition_to_svg(&self.partition))
    }

    /// Equal partitions: the same parts (DAGs compared structurally), sends, receives and
    /// outputs.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyDistributedPartition>().is_ok_and(|o| *o.get().partition == *self.partition)
    }

    /// Pickled as its DAG, rank and tags; cut again when loaded.
    fn __reduce__<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyTuple>> {
        let p = &self.partition;
        let tags = |tags: Vec<&CommTag>| -> PyResult<Bound<'py, PyList>> {
            PyList::new(py, tags.into_iter().map(|t| comm_tag_to_py(py, t)).collect::<PyResult<Vec<_>>>()?)
        };
        let send_tags = tags(p.sends.iter().map(|s| &s.comm_tag).collect())?;
        let recv_tags = tags(p.receives.iter().map(|r| &r.comm_tag).collect())?;
        let dag = crate::convert::outputs_to_py(py, self.source.clone())?;
        let verdict = match &self.verdict {
            Some(pytato::Error::DistributedMismatch { message, .. }) => Some(message.clone()),
            _ => None,
        };
        let rebuild = py.import("pytato_rs.distributed")?.getattr("_rebuild_partition")?;
        let args = (p.rank, dag, send_tags, recv_tags, verdict).into_pyobject(py)?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }

    fn __repr__(&self) -> String {
        let p = &self.partition;
        format!(
            "DistributedGraphPartition(rank={}, parts={}, sends={}, receives={})",
            p.rank,
            p.parts.len(),
            p.sends.len(),
            p.receives.len()
        )
    }
}

/// One part of a [`PyDistributedPartition`] (pytato's `DistributedGraphPart`).
#[pyclass(name = "DistributedGraphPart", module = "pytato_rs", frozen)]
pub(crate) struct PyDistributedPart {
    partition: Arc<DistributedPartition>,
    index: usize,
}

impl PyDistributedPart {
    fn part(&self) -> &run_distributed::DistributedPart {
        &self.partition.parts[self.index]
    }
}

#[pymethods]
impl PyDistributedPart {
    /// The part's id.
    #[getter]
    fn pid(&self) -> usize {
        self.part().id
    }

    /// The ids of the parts whose results it reads.
    #[getter]
    fn needed_pids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, &self.part().needed_parts)
    }

    /// The names of the values it computes (for the DAG's outputs, for later parts and for sends).
    #[getter]
    fn output_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, self.part().outputs.names().collect::<Vec<_>>())
    }

    /// The names of the received arrays it reads.
    #[getter]
    fn received_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, &self.part().received)
    }

    /// The names of the values it reads from other parts: received arrays and other parts'
    /// outputs (pytato's `partition_input_names`).
    #[getter]
    fn partition_input_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, self.part().partition_input_names())
    }

    /// The sends of the values it computes, by the value's name among `output_names` (pytato's
    /// `name_to_send_nodes`): each a `DistributedSend` of the array the DAG sent. The first part
    /// also lists the sends of user inputs and received arrays, by their names: they go out
    /// before any part runs (pytato's first part sends them).
    #[getter]
    fn name_to_send_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sends = PyDict::new(py);
        let first = self.index == 0;
        let at_start =
            self.partition.sends.iter().enumerate().filter(|(_, s)| first && s.part.is_none()).map(|(k, _)| k);
        for k in at_start.chain(self.part().sends.iter().copied()) {
            let send = &self.partition.sends[k];
            let node =
                DistributedSend { data: send.node.clone(), dest_rank: send.dest_rank, comm_tag: send.comm_tag.clone() };
            let name = run_distributed::partition::output_key(&send.data);
            let list = match sends.get_item(name)? {
                Some(list) => list.cast_into::<PyList>()?,
                None => {
                    let list = PyList::empty(py);
                    sends.set_item(name, &list)?;
                    list
                }
            };
            list.append(Bound::new(py, PyDistributedSend { send: node })?)?;
        }
        Ok(sends)
    }
}

/// The programs of a partition's parts (pytato's `generate_code_for_partition` result).
#[pyclass(name = "DistributedProgram", module = "pytato_rs", frozen)]
pub(crate) struct PyDistributedProgram {
    program: DistributedProgram,
    /// The partition it was compiled from (`execute_distributed_partition` checks it is given).
    partition: Arc<DistributedPartition>,
}

/// Collective: cuts `outputs` (an array, a `DictOfNamedArrays` or a dict) at its sends and
/// receives into parts for this rank of `mpi_communicator` (an mpi4py communicator), and checks
/// the partition against every rank's as `verify_distributed_partition` does: sends and
/// receives that do not match between ranks raise pytato's error on every rank (a send no rank
/// receives is a `MissingRecvError`, ...). One that names a rank the communicator lacks does
/// not stop it, as it does not stop pytato's (upstream's example draws a 2-rank partition in one
/// process): every rank finds it, and `generate_code_for_partition` raises it on every rank.
/// Tags that are not integers must be numbered (`number_distributed_tags`) before code is
/// generated.
#[pyfunction]
pub(crate) fn find_distributed_partition(
    py: Python<'_>,
    mpi_communicator: &Bound<'_, PyAny>,
    outputs: &Bound<'_, PyAny>,
) -> Result<PyDistributedPartition> {
    let comm = Mpi4py::new(mpi_communicator)?;
    let outputs = outputs_from_py(outputs)?;
    let partition = lib(run_distributed::find_distributed_partition(comm.rank, &outputs))?;
    // pytato's find_distributed_partition refuses sends and receives that do not match between
    // its ranks, and lets those that name ranks the communicator lacks through (its example draws
    // a 2-rank partition in one process): such a partition is made, and never compiled.
    let verdict = match py.detach(|| run_distributed::verify_distributed_partition(&comm, &partition)) {
        Ok(()) => None,
        Err(far @ pytato::Error::DistributedMismatch { problem: Mismatch::NoSuchRank, .. }) => Some(far),
        Err(e) => return lib(Err(e)),
    };
    Ok(PyDistributedPartition { partition: Arc::new(partition), source: outputs, verdict })
}

/// Collective: the partition with every communication tag replaced by an integer from
/// `base_tag`, the same on every rank, and the next unused tag: `(partition, next_tag)`.
#[pyfunction]
pub(crate) fn number_distributed_tags(
    py: Python<'_>,
    mpi_communicator: &Bound<'_, PyAny>,
    partition: &PyDistributedPartition,
    base_tag: WireTag,
) -> Result<(PyDistributedPartition, WireTag)> {
    let comm = Mpi4py::new(mpi_communicator)?;
    let (numbered, next) =
        py.detach(|| lib(run_distributed::number_distributed_tags(&comm, &partition.partition, base_tag)))?;
    let numbered = PyDistributedPartition {
        partition: Arc::new(numbered),
        source: partition.source.clone(),
        verdict: partition.verdict.clone(),
    };
    Ok((numbered, next))
}

/// The partition of `outputs` for `rank` with its sends' and receives' tags set to `send_tags`
/// and `recv_tags` (in the partition's order) and the check's `verdict` (`None`, or the message
/// of the missing rank it found): how a pickled partition is made again. Not checked again: the
/// partition pickled was.
#[pyfunction]
pub(crate) fn _partition_from_source(
    rank: usize,
    outputs: &Bound<'_, PyAny>,
    send_tags: Vec<Bound<'_, PyAny>>,
    recv_tags: Vec<Bound<'_, PyAny>>,
    verdict: Option<String>,
) -> Result<PyDistributedPartition> {
    let source = outputs_from_py(outputs)?;
    let mut partition = lib(run_distributed::find_distributed_partition(rank, &source))?;
    if partition.sends.len() != send_tags.len() || partition.receives.len() != recv_tags.len() {
        return Err(value_error(format!(
            "a pickled partition has {} send and {} receive tags; its DAG cuts into {} sends and {} receives",
            send_tags.len(),
            recv_tags.len(),
            partition.sends.len(),
            partition.receives.len()
        )));
    }
    for (send, tag) in partition.sends.iter_mut().zip(&send_tags) {
        send.comm_tag = comm_tag_from_py(tag)?;
    }
    for (receive, tag) in partition.receives.iter_mut().zip(&recv_tags) {
        receive.comm_tag = comm_tag_from_py(tag)?;
    }
    let verdict = verdict.map(|message| pytato::Error::DistributedMismatch {
        op: "verify_distributed_partition".into(),
        rank,
        problem: Mismatch::NoSuchRank,
        message,
    });
    Ok(PyDistributedPartition { partition: Arc::new(partition), source, verdict })
}

/// Collective: checks that every send meets a receive on its rank (and the other way round) with
/// one dtype and shape, and that no cycle of waits exists; every rank raises the same error.
#[pyfunction]
pub(crate) fn verify_distributed_partition(
    py: Python<'_>,
    mpi_communicator: &Bound<'_, PyAny>,
    partition: &PyDistributedPartition,
) -> Result<()> {
    let comm = Mpi4py::new(mpi_communicator)?;
    py.detach(|| lib(run_distributed::verify_distributed_partition(&comm, &partition.partition)))
}

/// Compiles every part of `partition` for a backend (default: `default_backend_name()`). A
/// partition whose sends and receives do not match across ranks (`find_distributed_partition`'s
/// check) raises that mismatch here, on every rank.
#[pyfunction]
#[pyo3(signature = (partition, backend = None))]
pub(crate) fn generate_code_for_partition(
    py: Python<'_>,
    partition: &PyDistributedPartition,
    backend: Option<&str>,
) -> Result<PyDistributedProgram> {
    if let Some(mismatch) = &partition.verdict {
        // Every rank found the same mismatch: none runs a program that would wait forever.
        return lib(Err(mismatch.clone()));
    }
    let backend = backend_by_name(backend)?;
    let parts = (*partition.partition).clone();
    let program = interruptible(py, || DistributedProgram::from_partition(&*backend, parts))?;
    Ok(PyDistributedProgram { program, partition: partition.partition.clone() })
}

/// Runs this rank's parts: every rank of `mpi_communicator` calls it at the same time. Inputs
/// (numpy or evaluated arrays) by name in `input_args`; returns a dict of `EvaluatedArray`s by
/// output name. `queue` and `allocator` are pyopencl's and unused here (nothing to enqueue on).
#[pyfunction]
#[pyo3(signature = (partition, prg_per_partition, queue, mpi_communicator, *, input_args = None, allocator = None))]
pub(crate) fn execute_distributed_partition<'py>(
    py: Python<'py>,
    partition: &PyDistributedPartition,
    prg_per_partition: &PyDistributedProgram,
    queue: &Bound<'py, PyAny>,
    mpi_communicator: &Bound<'py, PyAny>,
    input_args: Option<&Bound<'py, PyDict>>,
    allocator: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyDict>> {
    let _ = (queue, allocator);
    if !Arc::ptr_eq(&partition.partition, &prg_per_partition.partition) {
        return Err(value_error(
            "execute_distributed_partition: the programs were generated for another partition \
             (generate_code_for_partition(partition))",
        ));
    }
    let comm = Mpi4py::new(mpi_communicator)?;
    let mut borrowed = borrow_inputs(input_args)?;
    download(py, &mut borrowed)?;
    let views = host_views(&borrowed)?;
    let program = &prg_per_partition.program;
    let (results, _) = interruptible(py, || program.run_views(&comm, &views))?;
    let dict = PyDict::new(py);
    for (name, data) in results {
        dict.set_item(name, Bound::new(py, EvaluatedArray::new(py, data)?)?)?;
    }
    Ok(dict)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDistributedSend>()?;
    m.add_function(wrap_pyfunction!(make_distributed_send, m)?)?;
    m.add_function(wrap_pyfunction!(make_distributed_send_ref_holder, m)?)?;
    m.add_function(wrap_pyfunction!(staple_distributed_send, m)?)?;
    m.add_function(wrap_pyfunction!(make_distributed_recv, m)?)?;
    m.add_class::<PyDistributedPartition>()?;
    m.add_class::<PyDistributedPart>()?;
    m.add_class::<PyDistributedProgram>()?;
    m.add_function(wrap_pyfunction!(find_distributed_partition, m)?)?;
    m.add_function(wrap_pyfunction!(number_distributed_tags, m)?)?;
    m.add_function(wrap_pyfunction!(_partition_from_source, m)?)?;
    m.add_function(wrap_pyfunction!(verify_distributed_partition, m)?)?;
    m.add_function(wrap_pyfunction!(generate_code_for_partition, m)?)?;
    m.add_function(wrap_pyfunction!(execute_distributed_partition, m)?)?;
    Ok(())
}
