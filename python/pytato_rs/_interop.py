"""numpy's ufuncs on the library's expressions (``Array.__array_ufunc__``)."""

from __future__ import annotations

import numpy as np


def _boxed(value):
    """``value`` as numpy sees an element of an object array: a 0-d object array holding it
    (an expression cannot become a numpy array of numbers)."""
    if isinstance(value, np.ndarray):
        return value
    box = np.empty((), dtype=object)
    box[()] = value
    return box


# ``ufunc.reduce`` as the library's reductions (numpy's default axis for it is 0); ``fmax`` and
# ``fmin`` pass over NaNs as ``nanmax`` and ``nanmin`` do (without ``dtype`` and ``where``).
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
               "logical_or": "any", "fmax": "nanmax", "fmin": "nanmin"}
# Of booleans, bitwise and/or are logical and/or.
_BOOLEAN_REDUCTIONS = {"bitwise_and": "all", "bitwise_or": "any"}
# ``ufunc.accumulate`` as the library's scans.
_SCANS = {"add": "cumsum", "multiply": "cumprod"}
# Ufuncs whose ``reduce`` and ``accumulate`` give the same values in any grouping (exact and
# associative; which NaN of several a maximum keeps aside): built here from the ufunc itself
# along an axis of known length, in log2(length) steps.
_EXACT = frozenset({"maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor",
                    "logical_and", "logical_or", "logical_xor", "gcd"})


def _numpy_result_dtype(ufunc, method, dtype, requested):
    """The dtype of numpy's ``ufunc.<method>`` (``reduce`` or ``accumulate``) of an array of
    ``dtype`` with ``dtype=requested``: numpy asked with one element."""
    return getattr(ufunc, method)(np.zeros(1, dtype), dtype=requested).dtype


def _along(axis, ndim, item):
    """An index of ``item`` on ``axis`` of an array of ``ndim`` axes, everything elsewhere."""
    return (slice(None),) * axis + (item,) + (slice(None),) * (ndim - axis - 1)


def _known_length(ufunc, method, array, axis):
    length = array.shape[axis]
    if not isinstance(length, int):
        raise NotImplementedError(f"{ufunc.__name__}.{method}: the length of axis {axis} ({length}) must be known "
                                  "when the expression is built")
    return length


def _doubling_accumulate(pytato_rs, ufunc, function, array, axis):
    """The running ``function`` of ``array`` along ``axis``: after the steps of shifts 1, 2, 4,
    ..., element ``i`` combines elements ``0..i`` (Hillis and Steele's scan), the earlier operand
    first, as numpy's running loop passes it."""
    length = _known_length(ufunc, "accumulate", array, axis)
    position = pytato_rs.reshape(pytato_rs.arange(length), (length,) + (1,) * (array.ndim - axis - 1))
    shift = 1
    while shift < length:
        earlier = pytato_rs.roll(array, shift, axis=axis)
        array = pytato_rs.where(position >= shift, function(earlier, array), array)
        shift *= 2
    return array


def _halving_reduce(pytato_rs, ufunc, function, array, axis):
    """``function`` of ``array``'s elements along ``axis``, an axis of length 1 left: halves
    combined until one element remains (an odd one out carried to the next step); the ufunc's
    identity for an empty axis."""
    length = _known_length(ufunc, "reduce", array, axis)
    if length == 0:
        shape = tuple(1 if k == axis else n for k, n in enumerate(array.shape))
        return pytato_rs.full(shape, ufunc.identity, array.dtype)
    while length > 1:
        half = length // 2
        combined = function(array[_along(axis, array.ndim, slice(0, half))],
                            array[_along(axis, array.ndim, slice(half, 2 * half))])
        if length % 2:
            combined = pytato_rs.concatenate([combined, array[_along(axis, array.ndim, slice(2 * half, length))]], axis)
        array, length = combined, half + length % 2
    return array


def _exact_method(pytato_rs, ufunc, method, array, kwargs):
    """``reduce`` (``axis``, ``dtype``, ``keepdims``, ``initial``) or ``accumulate`` (``axis``,
    ``dtype``) of an exact, associative ufunc (see ``_EXACT``), in numpy's result dtype (the
    operand cast to it first, as numpy's loop reads it), or ``NotImplemented``."""
    allowed = {"axis", "dtype", "keepdims", "initial"} if method == "reduce" else {"axis", "dtype"}
    function = getattr(pytato_rs, ufunc.__name__, None)
    if function is None or not allowed >= kwargs.keys():
        return NotImplemented
    array = pytato_rs.asarray(array)
    dtype = _numpy_result_dtype(ufunc, method, array.dtype, kwargs.get("dtype"))
    array = pytato_rs.astype(array, dtype)
    axis = kwargs.get("axis", 0)
    if method == "accumulate":
        axis = np.lib.array_utils.normalize_axis_index(axis, array.ndim)
        return _doubling_accumulate(pytato_rs, ufunc, function, array, axis)
    axes = tuple(range(array.ndim)) if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, array.ndim)
    for axis in sorted(axes, reverse=True):
        array = _halving_reduce(pytato_rs, ufunc, function, array, axis)
    if kwargs.get("initial") is not None:
        array = pytato_rs.astype(function(dtype.type(kwargs["initial"]), array), dtype)
    return array if kwargs.get("keepdims") else pytato_rs.squeeze(array, axes)


def _reduce(pytato_rs, ufunc, array, kwargs):
    """``ufunc.reduce(array, **kwargs)`` as a library reduction, or ``NotImplemented``."""
    name = _REDUCTIONS.get(ufunc.__name__)
    if name is None and ufunc.__name__ in _BOOLEAN_REDUCTIONS and getattr(array, "dtype", None) == np.bool_:
        name = _BOOLEAN_REDUCTIONS[ufunc.__name__]
    if ufunc.__name__ in _EXACT and (name is None or (name in ("all", "any") and "initial" in kwargs)):
        return _exact_method(pytato_rs, ufunc, "reduce", array, kwargs)
    if name is None or (name.startswith("nan") and ({"dtype", "where"} & kwargs.keys())):
        return NotImplemented
    kwargs.setdefault("axis", 0)
    return getattr(pytato_rs, name)(array, **kwargs)


def _accumulate(pytato_rs, ufunc, array, kwargs):
    """``ufunc.accumulate(array, axis=0, dtype=None)`` as a library scan, in the dtype numpy's
    ``accumulate`` gives (its own: ``add`` keeps int8, where ``cumsum`` takes int64; booleans
    add as int64), or ``NotImplemented``."""
    name = _SCANS.get(ufunc.__name__)
    if name is None and ufunc.__name__ in _EXACT:
        return _exact_method(pytato_rs, ufunc, "accumulate", array, kwargs)
    if name is None or not {"axis", "dtype"} >= kwargs.keys():
        return NotImplemented
    array = pytato_rs.asarray(array)
    dtype = _numpy_result_dtype(ufunc, "accumulate", array.dtype, kwargs.get("dtype"))
    return getattr(pytato_rs, name)(array, axis=kwargs.get("axis", 0), dtype=dtype)


def _outer(pytato_rs, ufunc, inputs, kwargs):
    """``ufunc.outer(a, b)``: ``ufunc`` of ``a`` with an axis of length 1 for each of ``b``'s,
    and ``b``: the shape ``a.shape + b.shape``."""
    function = getattr(pytato_rs, ufunc.__name__, None)
    if function is None or len(inputs) != 2:
        return NotImplemented
    a, b = (pytato_rs.asarray(i) for i in inputs)
    return function(a[(...,) + (None,) * b.ndim], b, **kwargs)


def array_ufunc(ufunc, method, inputs, kwargs):
    """``ufunc(*inputs)`` where an input is an expression: the library's function of the same
    name (with numpy's ``dtype``, ``casting`` and ``order``), or, where an input is a numpy
    array of objects (a container of arrays, as arraycontext makes them), the ufunc applied
    element by element, as numpy applies it to objects. ``ufunc.reduce`` of add, multiply,
    maximum, minimum, fmax, fmin and the logical (and, of booleans, bitwise) and/or as the
    library's reductions; ``accumulate`` of add and multiply as its scans; ``reduce`` and
    ``accumulate`` of the other exact, associative ufuncs (bitwise ones, ``logical_xor``,
    ``gcd``, running maxima) in log2(length) steps of the ufunc; ``outer`` of any binary ufunc. An ``out=`` array cannot be written lazily, nor can ``ufunc.at`` write its
    operand: a ``TypeError``. ``NotImplemented`` for what none covers (``reduceat``, ``where=``
    of a call, whose other elements numpy leaves uninitialized, ...), so that numpy raises its
    ``TypeError``."""
    import pytato_rs

    kwargs = dict(kwargs or {})
    out = kwargs.pop("out", None)
    if out is not None and not (isinstance(out, tuple) and all(o is None for o in out)):
        raise TypeError(f"{ufunc.__name__}.{method}: out= cannot be written by a lazy expression; use the result")
    if method == "at":
        raise TypeError(f"{ufunc.__name__}.at writes its operand in place, which a lazy array cannot: use "
                        "x.at[indices].add(values) (or .set, .multiply, ...), which returns the new array")
    if any(isinstance(i, np.ndarray) and i.dtype == object for i in inputs):
        if method != "__call__" or kwargs:
            return NotImplemented
        return np.frompyfunc(ufunc, len(inputs), ufunc.nout)(*(_boxed(i) for i in inputs))
    if method == "reduce" and len(inputs) == 1:
        return _reduce(pytato_rs, ufunc, inputs[0], kwargs)
    if method == "accumulate" and len(inputs) == 1:
        return _accumulate(pytato_rs, ufunc, inputs[0], kwargs)
    if method == "outer":
        return _outer(pytato_rs, ufunc, inputs, kwargs)
    if method == "__call__" and "where" in kwargs and kwargs["where"] is not True:
        raise TypeError(f"{ufunc.__name__}: where= leaves the other elements of numpy's out= as they were, and a "
                        f"lazy expression has no out=: write pytato_rs.where(condition, {ufunc.__name__}(...), other)")
    kwargs.pop("where", None)
    if method != "__call__" or not {"dtype", "casting", "order"} >= kwargs.keys():
        return NotImplemented
    function = getattr(pytato_rs, ufunc.__name__, None)
    if function is None:
        return NotImplemented
    return function(*inputs, **kwargs)


def _counterpart(func):
    """The library's function for numpy's ``func``: of the same name in the same namespace
    (``numpy.X`` is ``pytato_rs.X``, ``numpy.linalg.X`` is ``pytato_rs.linalg.X``), or ``None``.
    By identity, not by name: ``numpy.linalg.trace`` (of the last two axes), ``numpy.emath.sqrt``
    (complex for negative numbers) and ``numpy.char.add`` are not numpy's ``trace``, ``sqrt`` and
    ``add``, whose names they share."""
    import pytato_rs

    name = func.__name__
    for numpy_module, module in ((np, pytato_rs), (np.linalg, pytato_rs.linalg)):
        if getattr(numpy_module, name, None) is func:
            function = getattr(module, name, None)
            # numpy's own functions the package exports as they are (``issubdtype``, ...)
            if function is func or not callable(function) or isinstance(function, type):
                return None
            return function
    return None


def array_function(func, types, args, kwargs):
    """numpy's function ``func`` where an argument is an expression (NEP 18's
    ``__array_function__``): the library's function of the same name in the same namespace,
    lazily (``np.sum(x)`` is ``pytato_rs.sum(x)``, ``np.linalg.norm(x)`` is
    ``pytato_rs.linalg.norm(x)``); numpy's own implementation where the library has none, as
    before the protocol (``np.shape(x)`` reads ``x.shape``; ``np.emath.sqrt(x)`` needs numbers).
    An ``out=`` array cannot be written lazily: ``out=None`` is dropped, any other is numpy's
    ``TypeError``."""
    function = _counterpart(func)
    if function is None:
        return func._implementation(*args, **kwargs)
    if "out" in kwargs:
        if kwargs["out"] is not None:
            return NotImplemented
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    return function(*args, **kwargs)
