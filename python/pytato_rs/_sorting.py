"""numpy's sorting routines composed of the library's stable ``argsort``: ``lexsort``,
``partition``, ``argpartition`` and ``sort_complex``.

``partition`` and ``argpartition`` sort fully. That meets numpy's contract (the element at each
``kth`` is the one a sort puts there, none before it is larger and none after it smaller) but
not numpy's order of the other elements, which its selection algorithm decides and does not
promise.
"""

from __future__ import annotations

import operator

import numpy as np


def lexsort(keys, axis=-1):
    """numpy's ``lexsort``: the indices that sort by several keys of one shape, the last key
    first and ties broken by the ones before it (a stable sort per key, from the first key to
    the last). ``keys`` is a sequence of arrays or an array whose first axis runs over them."""
    import pytato_rs as pt

    keys = [pt.asarray(k) if not isinstance(k, pt.Array) else k for k in keys]
    if not keys:
        raise TypeError("lexsort: need a sequence of keys with len > 0")
    if any(k.shape != keys[0].shape for k in keys):
        raise pt.ShapeMismatchError(
            f"lexsort: all keys need to be the same shape, got {[tuple(k.shape) for k in keys]}")
    if keys[0].ndim == 0:  # numpy sorts 0-d keys as one element whatever the axis
        return sum((pt.zeros_like(k, dtype=np.int64) for k in keys[1:]), pt.zeros_like(keys[0], dtype=np.int64))
    order = pt.argsort(keys[0], axis=axis, stable=True)
    for key in keys[1:]:
        order = pt.take_along_axis(order, pt.argsort(pt.take_along_axis(key, order, axis), axis=axis, stable=True),
                                   axis)
    return order


def _check_kth(pt, a, kth, axis):
    """numpy's checks of ``kth``: integers within the axis (negative ones from its end), the
    latter only where the array has elements (numpy returns an empty one at once)."""
    if axis is None:
        length = a.size
    else:
        length = a.shape[np.lib.array_utils.normalize_axis_index(axis, a.ndim)]
    if isinstance(kth, pt.Array):
        raise TypeError("partition: kth must be integers, not an expression (a full sort needs no kth, but "
                        "numpy checks it when the call is made)")
    for k in np.atleast_1d(kth).ravel().tolist():
        k = operator.index(k)
        if isinstance(length, int) and not -length <= k < length and 0 not in a.shape:
            raise pt.InvalidArgumentError(f"partition: kth(={k}) out of bounds ({length})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy's ``partition``, by a full sort along ``axis`` (the flattened array for ``None``):
    numpy's contract, not its order of the elements around each ``kth`` (see the module
    docs)."""
    import pytato_rs as pt

    a = a if isinstance(a, pt.Array) else pt.asarray(a)
    if order is not None:
        raise NotImplementedError("partition: order= (structured arrays) is not supported")
    _check_kth(pt, a, kth, axis)
    return pt.sort(a, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy's ``argpartition``, by a full stable ``argsort``: see :func:`partition`."""
    import pytato_rs as pt

    a = a if isinstance(a, pt.Array) else pt.asarray(a)
    if order is not None:
        raise NotImplementedError("argpartition: order= (structured arrays) is not supported")
    _check_kth(pt, a, kth, axis)
    return pt.argsort(a, axis=axis, stable=True)


def sort_complex(a):
    """numpy's ``sort_complex``: the array sorted along its last axis, as complex numbers
    (8- and 16-bit integers as complex64, everything else real as complex128)."""
    import pytato_rs as pt

    a = pt.sort(a if isinstance(a, pt.Array) else pt.asarray(a), axis=-1)
    if a.dtype.kind == "c":
        return a
    return pt.astype(a, np.complex64 if a.dtype.char in "bhBH" else np.complex128)
