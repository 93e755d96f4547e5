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


def _reduce(pytato_rs, ufunc, array, kwargs):
    """``ufunc.reduce(array, **kwargs)`` as a library reduction, or ``NotImplemented``."""
    name = _REDUCTIONS.get(ufunc.__name__)
    if name is None and ufunc.__name__ in _BOOLEAN_REDUCTIONS and getattr(array, "dtype", None) == np.bool_:
        name = _BOOLEAN_REDUCTIONS[ufunc.__name__]
    if name is None or (name.startswith("nan") and ({"dtype", "where"} & kwargs.keys())):
        return NotImplemented
    kwargs.setdefault("axis", 0)
    return getattr(pytato_rs, name)(array, **kwargs)


def _accumulate(pytato_rs, ufunc, array, kwargs):
    """``ufunc.accumulate(array, axis=0, dtype=None)`` as a library scan, in the dtype numpy's
    ``accumulate`` gives (its own: ``add`` keeps int8, where ``cumsum`` takes int64; booleans
    add as int64), or ``NotImplemented``."""
    name = _SCANS.get(ufunc.__name__)
    if name is None or not {"axis", "dtype"} >= kwargs.keys():
        return NotImplemented
    array = pytato_rs.asarray(array)
    dtype = ufunc.accumulate(np.zeros(1, array.dtype), dtype=kwargs.get("dtype")).dtype
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
    library's reductions; ``accumulate`` of add and multiply as its scans; ``outer`` of any
    binary ufunc. An ``out=`` array cannot be written lazily, nor can ``ufunc.at`` write its
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
    if method != "__call__" or not {"dtype", "casting", "order"} >= kwargs.keys():
        return NotImplemented
    function = getattr(pytato_rs, ufunc.__name__, None)
    if function is None:
        return NotImplemented
    return function(*inputs, **kwargs)


def array_function(func, types, args, kwargs):
    """numpy's function ``func`` where an argument is an expression (NEP 18's
    ``__array_function__``): the library's function of the same name, lazily (``np.sum(x)`` is
    ``pytato_rs.sum(x)``); numpy's own implementation where the library has none, as before the
    protocol (``np.shape(x)`` reads ``x.shape``). An ``out=`` array cannot be written lazily:
    ``out=None`` is dropped, any other is numpy's ``TypeError``."""
    import pytato_rs

    function = getattr(pytato_rs, func.__name__, None)
    # numpy's own functions the package exports as they are (``issubdtype``, ...) too
    if function is None or function is func or not callable(function) or isinstance(function, type):
        return func._implementation(*args, **kwargs)
    if "out" in kwargs:
        if kwargs["out"] is not None:
            return NotImplemented
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    return function(*args, **kwargs)
