"""pytato's ``pytato.distributed.nodes``: the communication nodes' constructors."""

from __future__ import annotations

from .._native import (
    DistributedSend,
    make_distributed_recv,
    make_distributed_send,
    make_distributed_send_ref_holder,
    staple_distributed_send,
)

__all__ = [
    "DistributedSend",
    "make_distributed_recv",
    "make_distributed_send",
    "make_distributed_send_ref_holder",
    "staple_distributed_send",
]
