"""pytato's ``pytato.distributed.verify``: checking a partition against every rank's.

``verify_distributed_partition`` (and ``find_distributed_partition``, which calls it) raise the
same error on every rank; each kind of mismatch has pytato's class, a
:class:`~pytato_rs.DistributedMismatchError` (a ``ValueError``).
"""

from __future__ import annotations

from .._native import verify_distributed_partition
from ..exceptions import (
    DistributedMismatchError,
    DuplicateRecvError,
    DuplicateSendError,
    MissingRecvError,
    MissingSendError,
    PartitionInducedCycleError,
)

#: pytato's base class of the verification errors.
DistributedPartitionVerificationError = DistributedMismatchError

__all__ = [
    "DistributedPartitionVerificationError",
    "DuplicateRecvError",
    "DuplicateSendError",
    "MissingRecvError",
    "MissingSendError",
    "PartitionInducedCycleError",
    "verify_distributed_partition",
]
