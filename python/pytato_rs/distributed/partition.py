"""pytato's import path ``pytato.distributed.partition``: a DAG cut into parts that run between
messages (:func:`~pytato_rs.find_distributed_partition`)."""

from __future__ import annotations

from collections.abc import Hashable

from .. import _native

#: What names a part: any hashable value (pytato's ``PartId``).
PartId = Hashable

DistributedGraphPart = _native.DistributedGraphPart
DistributedGraphPartition = _native.DistributedGraphPartition
find_distributed_partition = _native.find_distributed_partition

__all__ = ["DistributedGraphPart", "DistributedGraphPartition", "PartId", "find_distributed_partition"]
