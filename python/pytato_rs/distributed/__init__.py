"""pytato's ``pytato.distributed``: communication nodes in the DAG, and running such DAGs over
MPI.

``make_distributed_recv`` is an array another rank sends; ``staple_distributed_send`` (or
``make_distributed_send`` and ``make_distributed_send_ref_holder``) attaches a send to an array,
made when a DAG holding it runs. Communication tags are ints, strings (so that
every rank orders them alike), classes (read back as themselves) and tuples and frozensets of
those. The nodes read as pytato's (``DistributedRecv.src_rank``,
``.comm_tag``; ``DistributedSendRefHolder.send.data``, ``.dest_rank``, ``.comm_tag``,
``.passthrough_data``) and mappers visit them.

Running, on every rank of an ``mpi4py`` communicator (``mpiexec -n 2 python prog.py``)::

    parts = pt.find_distributed_partition(comm, outputs)            # collective, verified
    parts, _ = pt.number_distributed_tags(comm, parts, base_tag=0)  # tags that are not ints
    prg = pt.generate_code_for_partition(parts)
    results = pt.execute_distributed_partition(parts, prg, None, comm, input_args={...})

Sends and receives that do not match across ranks raise, on every rank, the errors of
:mod:`pytato_rs.distributed.verify` (``MissingSendError``, ...). The library sends its messages
through mpi4py's own calls, so the extension needs no MPI build
of its own; a part runs as soon as the messages and parts it needs are there. Results are
:class:`~pytato_rs.EvaluatedArray` objects by output name.
"""

from __future__ import annotations

from .. import _native
from . import nodes, verify
from .nodes import *  # noqa: F403

DistributedGraphPartition = _native.DistributedGraphPartition
DistributedGraphPart = _native.DistributedGraphPart
DistributedProgram = _native.DistributedProgram
find_distributed_partition = _native.find_distributed_partition
number_distributed_tags = _native.number_distributed_tags
verify_distributed_partition = _native.verify_distributed_partition
generate_code_for_partition = _native.generate_code_for_partition
execute_distributed_partition = _native.execute_distributed_partition


def _rebuild_partition(rank, dag, send_tags, recv_tags, verdict):
    """A pickled :class:`DistributedGraphPartition`, cut again from its DAG (partitioning is
    deterministic) with its tags and what its cross-rank check found."""
    return _native._partition_from_source(rank, dag, send_tags, recv_tags, verdict)

__all__ = [
    *nodes.__all__,
    "DistributedGraphPart",
    "DistributedGraphPartition",
    "DistributedProgram",
    "execute_distributed_partition",
    "find_distributed_partition",
    "generate_code_for_partition",
    "number_distributed_tags",
    "verify_distributed_partition",
]
