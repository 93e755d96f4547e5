"""pytato's ``pytato.distributed``: communication nodes in the DAG.

``make_distributed_recv`` is an array another rank sends; ``staple_distributed_send`` (or
``make_distributed_send`` and ``make_distributed_send_ref_holder``) attaches a send to an array,
made when a DAG holding it runs. Communication tags are ints, strings or tuples of them (so that
every rank orders them alike). The nodes read as pytato's (``DistributedRecv.src_rank``,
``.comm_tag``; ``DistributedSendRefHolder.send.data``, ``.dest_rank``, ``.comm_tag``,
``.passthrough_data``) and mappers visit them. Partitioning and running such DAGs from Python
(``find_distributed_partition``, ``execute_distributed_partition`` over ``mpi4py``) are not bound
yet: the Rust library does both (``pytato::run_distributed``)."""

from __future__ import annotations

from . import nodes
from .nodes import *  # noqa: F403

__all__ = nodes.__all__
