"""numpy's ``pad`` with every mode but a callable one.

The library pads with ``constant`` (one value), ``edge``, ``reflect``, ``symmetric`` and ``wrap``
itself (``pytato::pad_with``); the rest is composed here of its operations, as numpy's
``numpy/lib/_arraypad_impl.py`` computes it: axis after axis, each axis's pads computed from
the array padded so far along the earlier axes and not yet along the later ones (so corners take
the statistics of pads), ``maximum``/``minimum``/``mean``/``median`` over ``stat_length``
elements at each end (rounded to the nearest integer, ties to even, for integer arrays),
``linear_ramp`` as numpy's ``linspace`` from ``end_values`` to the edge, ``constant`` with a
value per axis and side, ``reflect``/``symmetric`` with ``reflect_type="odd"`` (mirrored about
the edge value, a period at a time), and ``empty`` (numpy leaves those elements unset; here 0).
"""

from __future__ import annotations

import numpy as np

_NATIVE_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
_STAT_MODES = ("maximum", "minimum", "mean", "median")
# The keywords numpy's modes accept (numpy raises for any other).
_KEYWORDS = {
    "constant": {"constant_values"},
    "edge": set(),
    "wrap": set(),
    "empty": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "linear_ramp": {"end_values"},
    **{mode: {"stat_length"} for mode in _STAT_MODES},
}


def _as_pairs(x, ndim, as_index=False):
    """numpy's ``_as_pairs``: ``x`` (a number, a pair, or a pair per axis) as ``ndim``
    ``(before, after)`` pairs; as indices (widths, lengths) rounded to integers, which must not
    be negative (``None`` stays ``None``)."""
    if x is None:
        return ((None, None),) * ndim
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3 and (x.size == 1 or x.size == 2 and x.shape != (2, 1)):
        flat = x.ravel()
        pair = (flat[0], flat[-1])
        if as_index and (pair[0] < 0 or pair[1] < 0):
            raise ValueError("index can't contain negative values")
        # numpy scalars, as numpy's: not weak, so an int64 end value makes a float32 ramp float64
        return (pair,) * ndim
    if as_index and x.size and x.min() < 0:
        raise ValueError("index can't contain negative values")
    # Python numbers (``tolist``), as numpy's: weak, so these keep a float32 ramp float32
    return tuple(tuple(pair) for pair in np.broadcast_to(x, (ndim, 2)).tolist())


def _slice_along(a, axis, start, stop):
    return a[(slice(None),) * axis + (slice(start, stop),)]


def _block(value, like, axis, width):
    """``value`` (a number or an array with ``like``'s shape but 1 along ``axis``) repeated
    ``width`` times along ``axis``, in ``like``'s dtype (assigned as numpy assigns it)."""
    import pytato_rs as pt

    shape = tuple(width if k == axis else n for k, n in enumerate(like.shape))
    if isinstance(value, pt.Array):
        return pt.broadcast_to(pt.astype(value, like.dtype), shape)
    return pt.full(shape, _assigned(value, like.dtype), dtype=like.dtype)


def _assigned(value, dtype):
    """``value`` as numpy's pad writes it into an array of ``dtype`` (``padded[...] = value``):
    a numpy scalar (what numpy's ``_as_pairs`` gives for one or two values) cast unsafely, a
    Python number (what it gives for a pair per axis) by numpy's rules. Where numpy refuses
    (NaN into integers, a value out of range), the value goes on as it is, for the library to
    refuse with its own error (of the same builtin class)."""
    box = np.zeros(1, dtype)
    try:
        box[0] = value
    except (ValueError, OverflowError, TypeError):
        return value
    return box[0]


def _stat(pt, mode, chunk, axis, dtype):
    """numpy's ``_get_stats`` of one end: ``mode``'s statistic along ``axis`` (kept), rounded
    for integer arrays, in the array's dtype."""
    function = {"maximum": pt.max, "minimum": pt.min, "mean": pt.mean, "median": pt.median}[mode]
    stat = function(chunk, axis=axis, keepdims=True)
    if np.dtype(dtype).kind in "iu" and stat.dtype.kind not in "iub":
        stat = pt.round(stat)
    return pt.astype(stat, dtype)


def _ramp(pt, end_value, edge, axis, width, dtype):
    """numpy's ``linspace(end_value, edge, width, endpoint=False, dtype=dtype, axis=axis)`` for
    an ``edge`` kept along ``axis``: computed in the inexact result type of the two, as numpy's
    ``linspace`` computes it (``(i / n) * delta`` where some step is 0, else ``i * step``, plus
    the start), rounded down for integer dtypes."""
    stop = edge[(slice(None),) * axis + (0,)]
    if isinstance(end_value, pt.Array):
        raise TypeError("end_values must be numbers")
    compute = np.result_type(stop.dtype, end_value, 1.0)
    stop = pt.astype(stop, compute)
    delta = pt.subtract(stop, compute.type(end_value))
    i = pt.reshape(pt.arange(width, dtype=compute), (width,) + (1,) * stop.ndim)
    div = compute.type(width)
    step = delta / div
    some_step_zero = pt.any(pt.equal(step, 0))
    y = pt.where(some_step_zero, (i / div) * delta, i * step) + compute.type(end_value)
    y = pt.moveaxis(y, 0, axis)
    if np.dtype(dtype).kind in "iu":
        y = pt.floor(y)
    return pt.astype(y, dtype)


def _odd_reflection(pt, a, widths, include_edge):
    """numpy's ``reflect``/``symmetric`` padding with ``reflect_type="odd"`` (``_set_reflect_both``):
    along each axis in turn, chunks of at most a period mirrored about the current edge value
    (``2 * edge - chunk``), repeated outward until the widths are filled; an axis of length 1 is
    padded with its edge."""
    padded = a
    for axis, (left, right) in enumerate(widths):
        n = a.shape[axis]
        if left == right == 0:
            continue
        if n == 1:
            edge = _slice_along(padded, axis, 0, 1)
            padded = pt.concatenate([_block(edge, padded, axis, left), padded, _block(edge, padded, axis, right)], axis=axis)
            continue
        while left > 0 or right > 0:
            length = padded.shape[axis]
            # the chunk a step mirrors: at most the filled length, in whole periods of the original
            if include_edge:
                chunk_max, offset = length // n * n, 1
            else:
                chunk_max, offset = (length - 1) // (n - 1) * (n - 1), 0
            parts = [padded]
            if left > 0:
                k = min(chunk_max, left)
                edge = _slice_along(padded, axis, 0, 1)
                mirrored = pt.flip(_slice_along(padded, axis, 1 - offset, 1 - offset + k), axis=axis)
                parts.insert(0, pt.astype(2 * edge - mirrored, a.dtype))  # bools: 2 * True is an int
                left -= k
            if right > 0:
                k = min(chunk_max, right)
                edge = _slice_along(padded, axis, length - 1, length)
                mirrored = pt.flip(_slice_along(padded, axis, length - 1 + offset - k, length - 1 + offset), axis=axis)
                parts.append(pt.astype(2 * edge - mirrored, a.dtype))
                right -= k
            padded = pt.concatenate(parts, axis=axis)
    return padded


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy's ``pad``: ``array`` widened by ``pad_width`` (an int, a ``(before, after)`` pair,
    or a pair per axis) with ``mode`` (``constant``, ``edge``, ``linear_ramp``, ``maximum``,
    ``mean``, ``median``, ``minimum``, ``reflect``, ``symmetric``, ``wrap``, ``empty``), taking
    numpy's keywords (``constant_values``, ``end_values``, ``stat_length``, ``reflect_type``)."""
    import pytato_rs as pt
    from ._native import pad as native_pad

    if callable(mode):
        raise NotImplementedError("pad with a function as mode runs Python on the values: not supported")
    if mode not in _KEYWORDS:
        raise ValueError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - _KEYWORDS[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    a = pt.asarray(array) if not isinstance(array, pt.Array) else array
    if np.asarray(pad_width).dtype.kind != "i":  # numpy's test: uint64 widths (2**63) are refused too
        raise TypeError("`pad_width` must be of integral type.")
    widths = tuple((int(before), int(after)) for before, after in _as_pairs(pad_width, a.ndim, as_index=True))
    odd = kwargs.get("reflect_type", "even") == "odd"  # numpy reads any other value as "even"
    values = kwargs.get("constant_values", 0)
    if mode in _NATIVE_MODES and (mode != "constant" or np.ndim(values) == 0) and not odd:
        # numpy's _as_pairs makes one constant a numpy scalar
        constant = _assigned(np.asarray(values)[()], a.dtype) if mode == "constant" else None
        return native_pad(a, list(widths), mode, constant)
    if mode not in ("constant", "empty"):
        for axis, (before, after) in enumerate(widths):
            if a.shape[axis] == 0 and (before or after):
                raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
    if odd:
        return _odd_reflection(pt, a, widths, include_edge=mode == "symmetric")
    per_axis = {
        "constant": _as_pairs(values, a.ndim),
        "linear_ramp": _as_pairs(kwargs.get("end_values", 0), a.ndim),
    }.get(mode)
    lengths = _as_pairs(kwargs.get("stat_length"), a.ndim, as_index=True) if mode in _STAT_MODES else None
    lengths = lengths and tuple(tuple(None if m is None else int(m) for m in pair) for pair in lengths)
    padded = a
    for axis, (before, after) in enumerate(widths):
        n = padded.shape[axis]
        if mode in ("maximum", "minimum") and 0 in (lengths[axis][0], lengths[axis][1]) and a.size:
            # numpy computes the statistics of every axis, padded or not
            raise ValueError("stat_length of 0 yields no value for padding")
        if before == after == 0:
            continue
        if mode == "empty":
            sides = (0, 0)
        elif mode == "constant":
            sides = per_axis[axis]
        elif mode == "linear_ramp":
            edges = (_slice_along(padded, axis, 0, 1), _slice_along(padded, axis, n - 1, n))
            left = _ramp(pt, per_axis[axis][0], edges[0], axis, before, a.dtype)
            right = pt.flip(_ramp(pt, per_axis[axis][1], edges[1], axis, after, a.dtype), axis=axis)
            padded = pt.concatenate([left, padded, right], axis=axis)
            continue
        else:
            left_length, right_length = (n if m is None or m > n else m for m in lengths[axis])
            sides = (_stat(pt, mode, _slice_along(padded, axis, 0, left_length), axis, a.dtype),
                     _stat(pt, mode, _slice_along(padded, axis, n - right_length, n), axis, a.dtype))
        left, right = (_block(value, padded, axis, width) for value, width in zip(sides, (before, after)))
        padded = pt.concatenate([left, padded, right], axis=axis)
    return padded
