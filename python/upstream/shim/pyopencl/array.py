"""``pyopencl.array`` on ``pytato_rs``: device arrays are ``EvaluatedArray`` objects."""

from __future__ import annotations

import numpy as np

import pytato_rs

Array = pytato_rs.EvaluatedArray


def to_device(queue, ary, allocator=None):
    return pytato_rs.to_device(np.asarray(ary))


def empty(cq=None, shape=(), dtype=float, order="C", allocator=None, **kwargs):
    return pytato_rs.to_device(np.empty(shape, dtype=dtype, order=order))


def zeros(cq=None, shape=(), dtype=float, order="C", allocator=None, **kwargs):
    return pytato_rs.to_device(np.zeros(shape, dtype=dtype, order=order))
