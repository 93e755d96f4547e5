"""numpy's routines that make index arrays: ``ix_``, ``unravel_index``, ``ravel_multi_index``,
``diag_indices`` (``_from``), ``tril_indices`` and ``triu_indices`` (``_from``).

Where no argument is an expression, numpy computes them (as the library's functions of numbers
alone are numpy's): ``tril_indices(3)`` is numpy's arrays, wrapped. Where one is, the library
builds them lazily. numpy refuses an index out of range by its value (a ``ValueError``), and so
does the program when it runs: ``ravel_multi_index`` with numpy's message, ``unravel_index``
with numpy's words but not the index (numpy's message names it).
"""

from __future__ import annotations

import numpy as np

from . import _native


def _is_expression(*values):
    import pytato_rs as pt

    return any(isinstance(v, (pt.Array, pt.Dim)) for v in values)


def _int_operand(pt, value):
    """``value`` as an int64 expression; numpy's ``TypeError`` for anything but integers and
    bools (numpy casts those to ``intp``)."""
    value = value if isinstance(value, pt.Array) else pt.asarray(value)
    if value.dtype.kind not in "biu":
        raise TypeError("only int indices permitted")
    return pt.astype(value, np.int64)


def _checked(pt, coordinate, length, check):
    """``coordinate`` (int64); one outside ``0..length`` fails the program when it runs with
    numpy's ``ValueError`` of ``check`` (see ``_native._require_non_negative``)."""
    outside = pt.logical_or(coordinate < 0, coordinate >= length)
    return _native._require_non_negative(pt.where(outside, -1, coordinate), check)


def _strides(shape, order):
    """Row-major (``"C"``) or column-major (``"F"``) strides of ``shape``, as numbers or
    expressions of its lengths."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    axes = range(len(shape)) if order == "F" else reversed(range(len(shape)))
    strides, stride = [None] * len(shape), 1
    for axis in axes:
        strides[axis] = stride
        stride = stride * shape[axis]
    return strides


def ix_(*args):
    """numpy's ``ix_``: an open mesh of 1-d sequences, for indexing the cross product (``a[ix_(rows,
    cols)]``); a boolean sequence stands for the positions of its ``True`` elements."""
    import pytato_rs as pt

    out = []
    for k, arg in enumerate(args):
        if not isinstance(arg, pt.Array):
            data = np.asarray(arg)
            if data.size == 0:
                data = data.astype(np.intp)  # numpy's rule: an empty sequence indexes
            arg = pt.asarray(data)
        if arg.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if arg.dtype == np.bool_:
            arg = pt.nonzero(arg)[0]
        out.append(pt.reshape(arg, (1,) * k + (arg.shape[0],) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def unravel_index(indices, shape, order="C"):
    """numpy's ``unravel_index``: the coordinates in an array of ``shape`` of each flat index,
    as a tuple of int64 arrays of ``indices``'s shape. ``shape`` may hold symbolic lengths. An
    index outside ``0..size`` is numpy's ``ValueError`` when the program runs."""
    import pytato_rs as pt

    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not _is_expression(indices, *shape):
        return np.unravel_index(indices, shape, order=order)
    flat = _int_operand(pt, indices)
    strides = _strides(shape, order)
    # The slowest axis takes no modulo: its quotient is out of range exactly when the flat index
    # is, for a nonempty shape. Every coordinate is checked: in an empty shape the empty axis's
    # is out of range (the remainder of a division by 0 is 0) whatever the index.
    slowest = 0 if order == "C" else len(shape) - 1
    coordinates = []
    for axis, (length, stride) in enumerate(zip(shape, strides)):
        quotient = flat if isinstance(stride, int) and stride == 1 else pt.floor_divide(flat, stride)
        coordinate = quotient if axis == slowest else pt.remainder(quotient, length)
        coordinates.append(_checked(pt, coordinate, length, "flat_index"))
    return tuple(coordinates)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """numpy's ``ravel_multi_index``: the flat index in an array of shape ``dims`` of each tuple of
    coordinates (broadcast together), int64. ``mode`` (one, or one per axis): ``"raise"``
    refuses a coordinate out of range (numpy's ``ValueError`` when the program runs), ``"wrap"``
    takes it modulo the length, ``"clip"`` clips it into the axis."""
    import pytato_rs as pt

    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    multi_index = tuple(multi_index)
    if not _is_expression(*multi_index, *dims):
        return np.ravel_multi_index(multi_index, dims, mode=mode, order=order)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims):
        raise ValueError(f"mode must be a string or a sequence of {len(dims)} strings")
    flat = None
    for coordinate, length, stride, axis_mode in zip(multi_index, dims, _strides(dims, order), modes):
        if isinstance(length, int) and length == 0:
            raise ValueError("cannot unravel if shape has zero entries (is empty).")
        coordinate = _int_operand(pt, coordinate)
        if axis_mode == "wrap":
            coordinate = pt.remainder(coordinate, length)
        elif axis_mode == "clip":
            coordinate = pt.clip(coordinate, 0, pt.maximum(length - 1, 0))
        elif axis_mode != "raise":
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {axis_mode!r})")
        # Wrapped and clipped coordinates are in range but on an axis that is empty when the
        # program runs, which numpy refuses in every mode.
        term = _checked(pt, coordinate, length, "coordinate") * stride
        flat = term if flat is None else flat + term
    if flat is None:
        return pt.zeros((), np.int64)
    return pt.astype(flat, np.int64)


def diag_indices(n, ndim=2):
    """numpy's ``diag_indices``: ``ndim`` times ``arange(n)``, the indices of the main diagonal of
    an ``n``-cube (``n`` may be a symbolic length)."""
    import pytato_rs as pt

    if not _is_expression(n):
        return np.diag_indices(n, ndim)
    index = pt.arange(n)
    return (index,) * ndim


def diag_indices_from(arr):
    """numpy's ``diag_indices_from``: ``diag_indices`` of a square array of at least 2 axes."""
    import pytato_rs as pt

    if not isinstance(arr, pt.Array):
        return np.diag_indices_from(arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if any(length != arr.shape[0] for length in arr.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def _triangle_indices(which, n, k, m):
    import pytato_rs as pt

    if _is_expression(n, k, m):
        raise NotImplementedError(f"{which}: the number of indices must be known when the expression is built")
    rows, cols = getattr(np, which)(n, k, m)
    return pt.asarray(rows), pt.asarray(cols)


def tril_indices(n, k=0, m=None):
    """numpy's ``tril_indices`` (computed by numpy: the sizes are numbers), as two arrays."""
    return _triangle_indices("tril_indices", n, k, m)


def triu_indices(n, k=0, m=None):
    """numpy's ``triu_indices`` (computed by numpy: the sizes are numbers), as two arrays."""
    return _triangle_indices("triu_indices", n, k, m)


def _triangle_indices_from(which, arr, k):
    import pytato_rs as pt

    if not isinstance(arr, pt.Array):
        return getattr(np, f"{which}_from")(arr, k)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return _triangle_indices(which, arr.shape[-2], k, arr.shape[-1])


def tril_indices_from(arr, k=0):
    """numpy's ``tril_indices_from``: ``tril_indices`` of a 2-d array's shape."""
    return _triangle_indices_from("tril_indices", arr, k)


def triu_indices_from(arr, k=0):
    """numpy's ``triu_indices_from``: ``triu_indices`` of a 2-d array's shape."""
    return _triangle_indices_from("triu_indices", arr, k)
