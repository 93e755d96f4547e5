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


# The keywords each library reduction takes (``nanmax``/``nanmin`` neither ``dtype`` nor ``where``;
# ``max``/``min`` no ``dtype``, as numpy's).
_REDUCTION_KEYWORDS = {"sum": {"axis", "dtype", "keepdims", "initial", "where"},
                       "prod": {"axis", "dtype", "keepdims", "initial", "where"},
                       "all": {"axis", "keepdims", "where"}, "any": {"axis", "keepdims", "where"},
                       "max": {"axis", "keepdims", "initial", "where"}, "min": {"axis", "keepdims", "initial", "where"},
                       "nanmax": {"axis", "keepdims", "initial"}, "nanmin": {"axis", "keepdims", "initial"}}
# A left fold unrolls one operation per element reduced: beyond this many, an error says so.
_MAX_FOLD = 4096


def _reduce(pytato_rs, ufunc, array, kwargs):
    """``ufunc.reduce(array, **kwargs)``: a library reduction where one computes it; the
    log-depth reduction of an exact ufunc; else numpy's left fold, unrolled."""
    name = _REDUCTIONS.get(ufunc.__name__)
    if name is None and ufunc.__name__ in _BOOLEAN_REDUCTIONS and getattr(array, "dtype", None) == np.bool_:
        name = _BOOLEAN_REDUCTIONS[ufunc.__name__]
    if name in ("all", "any") and "initial" in kwargs:
        name = None
    if name is not None and _REDUCTION_KEYWORDS[name] >= kwargs.keys():
        kwargs.setdefault("axis", 0)
        return getattr(pytato_rs, name)(array, **kwargs)
    if ufunc.__name__ in _EXACT and {"axis", "dtype", "keepdims", "initial"} >= kwargs.keys():
        return _exact_method(pytato_rs, ufunc, "reduce", array, kwargs)
    return _fold(pytato_rs, ufunc, "reduce", array, kwargs)


def _accumulate(pytato_rs, ufunc, array, kwargs):
    """``ufunc.accumulate(array, axis=0, dtype=None)`` as a library scan, in the dtype numpy's
    ``accumulate`` gives (its own: ``add`` keeps int8, where ``cumsum`` takes int64; booleans
    add as int64); the log-depth scan of an exact ufunc; else numpy's left fold, unrolled."""
    name = _SCANS.get(ufunc.__name__)
    if name is None and ufunc.__name__ in _EXACT:
        return _exact_method(pytato_rs, ufunc, "accumulate", array, kwargs)
    if name is None:
        return _fold(pytato_rs, ufunc, "accumulate", array, kwargs)
    if not {"axis", "dtype"} >= kwargs.keys():
        return NotImplemented
    array = pytato_rs.asarray(array)
    dtype = _numpy_result_dtype(ufunc, "accumulate", array.dtype, kwargs.get("dtype"))
    return getattr(pytato_rs, name)(array, axis=kwargs.get("axis", 0), dtype=dtype)


def _numpy_probe(ufunc, method, array, *args, **kwargs):
    """numpy's ``ufunc.<method>`` of zeros of ``array``'s dtype and shape, each length cut to at
    most 1 but along ``_whole_axis`` (``reduceat``'s, whose indices numpy checks against it),
    with the same arguments (``where`` as a mask of ones): numpy's result dtype, and numpy's
    error where the call is invalid (a ufunc without a loop for the dtype, several axes of a
    ufunc that is not reorderable, an empty reduction without identity, a mask without an
    identity or ``initial``, an index out of range)."""
    whole_axis = kwargs.pop("_whole_axis", None)
    shape = tuple(n if k == whole_axis else min(n, 1) for k, n in enumerate(array.shape))
    if kwargs.get("where") is not None and kwargs["where"] is not True:
        kwargs["where"] = np.ones(shape, bool)
    with np.errstate(all="ignore"):
        return getattr(ufunc, method)(np.zeros(shape, array.dtype), *args, **kwargs)


def _fold(pytato_rs, ufunc, method, array, kwargs):
    """``reduce`` (``axis``, ``dtype``, ``keepdims``, ``initial``, ``where``) or ``accumulate``
    (``axis``, ``dtype``) of any binary ufunc as numpy's loop computes it: a left fold, the
    result so far first (``((a0 - a1) - a2) - ...``), in numpy's result dtype, one operation per
    element along axes of known length. Several axes (of a reorderable ufunc) are folded in C
    order. ``where`` skips the elements it masks out, starting from ``initial`` or the
    identity."""
    function = getattr(pytato_rs, ufunc.__name__, None)
    allowed = {"axis", "dtype", "keepdims", "initial", "where"} if method == "reduce" else {"axis", "dtype"}
    if function is None or ufunc.nin != 2 or ufunc.nout != 1 or not allowed >= kwargs.keys():
        return NotImplemented
    array = pytato_rs.asarray(array)
    if any(not isinstance(n, int) for n in array.shape):
        raise NotImplementedError(f"{ufunc.__name__}.{method}: the lengths {array.shape} must be known when the "
                                  "expression is built (the fold is unrolled)")
    dtype = _numpy_probe(ufunc, method, array, **kwargs).dtype
    axis = kwargs.get("axis", 0)
    axes = tuple(range(array.ndim)) if axis is None else np.lib.array_utils.normalize_axis_tuple(axis, array.ndim)
    kept = [k for k in range(array.ndim) if k not in axes]
    length = int(np.prod([array.shape[k] for k in axes], dtype=np.int64))
    if length > _MAX_FOLD:
        raise NotImplementedError(f"{ufunc.__name__}.{method} over {length} elements: a ufunc without a library "
                                  f"reduction is folded one operation per element, and at most {_MAX_FOLD} are")
    # the reduced axes last, in their order, as one axis: C order over them
    moved = pytato_rs.reshape(pytato_rs.permute_dims(pytato_rs.astype(array, dtype), kept + list(axes)),
                              tuple(array.shape[k] for k in kept) + (length,))
    elements = [moved[..., i] for i in range(length)]

    def step(so_far, element):
        return pytato_rs.astype(function(so_far, element), dtype)

    if method == "accumulate":
        if length == 0:
            return pytato_rs.astype(array, dtype)
        results = [elements[0]]
        for element in elements[1:]:
            results.append(step(results[-1], element))
        return pytato_rs.stack(results, axis=axes[0])
    where = kwargs.get("where", True)
    start = kwargs.get("initial")
    if start is None and (where is not True or length == 0):
        start = ufunc.identity  # numpy's probe refused these without an identity
    if where is not True:
        mask = pytato_rs.broadcast_to(pytato_rs.asarray(where), array.shape)
        mask = pytato_rs.reshape(pytato_rs.permute_dims(mask, kept + list(axes)), moved.shape)
    out_shape = tuple(array.shape[k] for k in kept)
    if start is None:
        result, rest = elements[0], range(1, length)
    else:
        result, rest = pytato_rs.full(out_shape, dtype.type(start), dtype), range(length)
    for i in rest:
        combined = step(result, elements[i])
        result = combined if where is True else pytato_rs.where(mask[..., i], combined, result)
    if kwargs.get("keepdims"):
        result = pytato_rs.expand_dims(result, tuple(axes))
    return result


def _reduceat(pytato_rs, ufunc, array, indices, kwargs):
    """``ufunc.reduceat(array, indices, axis=0, dtype=None)``: along ``axis``, the reduction of
    each run ``indices[i]:indices[i + 1]`` (to the end for the last), or element ``indices[i]``
    itself where the next index is not beyond it; ``indices`` numbers (they pick the result's
    shape)."""
    if not {"axis", "dtype"} >= kwargs.keys() or getattr(ufunc, "nin", 0) != 2:
        return NotImplemented
    if isinstance(indices, pytato_rs.Array):
        raise TypeError(f"{ufunc.__name__}.reduceat: give the indices as numbers; an expression's would make a "
                        "length the data decides")
    array = pytato_rs.asarray(array)
    axis = np.lib.array_utils.normalize_axis_index(kwargs.get("axis", 0), array.ndim)
    length = array.shape[axis]
    if not isinstance(length, int):
        raise NotImplementedError(f"{ufunc.__name__}.reduceat: the length of axis {axis} ({length}) must be known "
                                  "when the expression is built")
    indices = np.asarray(indices)
    dtype = _numpy_probe(ufunc, "reduceat", array, indices, axis=axis, dtype=kwargs.get("dtype"),
                         _whole_axis=axis).dtype
    array = pytato_rs.astype(array, dtype)
    runs = []
    for k, start in enumerate(indices.tolist()):
        stop = indices[k + 1] if k + 1 < len(indices) else length
        run = array[_along(axis, array.ndim, slice(start, stop if stop > start else start + 1))]
        if stop > start + 1:
            run = getattr(ufunc, "reduce")(run, axis=axis, dtype=dtype, keepdims=True)
        runs.append(pytato_rs.astype(run, dtype))
    if not runs:
        return array[_along(axis, array.ndim, slice(0, 0))]
    return pytato_rs.concatenate(runs, axis=axis)


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
    ``gcd``, running maxima) in log2(length) steps of the ufunc; of any other binary ufunc
    (``subtract``, ``logaddexp``, ``hypot``, ...), numpy's left fold, unrolled over axes of
    known length; ``reduceat`` with indices given as numbers; ``outer`` of any binary ufunc. An
    ``out=`` array cannot be written lazily, nor can ``ufunc.at`` write its operand: a
    ``TypeError``. ``NotImplemented`` for what none covers (``where=`` of a call, whose other
    elements numpy leaves uninitialized, ...), so that numpy raises its ``TypeError``."""
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
    if method == "reduceat" and len(inputs) == 2:
        return _reduceat(pytato_rs, ufunc, inputs[0], inputs[1], kwargs)
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
