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


# ``ufunc.reduce`` as the library's reductions (numpy's default axis for it is 0).
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
               "logical_or": "any"}


def array_ufunc(ufunc, method, inputs, kwargs):
    """``ufunc(*inputs)`` where an input is an expression: the library's function of the same
    name, or, where an input is a numpy array of objects (a container of arrays, as
    arraycontext makes them), the ufunc applied element by element, as numpy applies it to
    objects; ``ufunc.reduce`` of add, multiply, maximum, minimum, logical_and and logical_or as
    the library's reductions. ``NotImplemented`` for what none covers (``out=``, ``accumulate``,
    ...), so that numpy raises its ``TypeError``."""
    import pytato_rs

    kwargs = dict(kwargs or {})
    if method == "reduce" and ufunc.__name__ in _REDUCTIONS and len(inputs) == 1:
        if kwargs.pop("out", None) is not None or "where" in kwargs:
            return NotImplemented
        kwargs.setdefault("axis", 0)
        return getattr(pytato_rs, _REDUCTIONS[ufunc.__name__])(inputs[0], **kwargs)
    if method != "__call__" or kwargs:
        return NotImplemented
    if any(isinstance(i, np.ndarray) and i.dtype == object for i in inputs):
        return np.frompyfunc(ufunc, len(inputs), ufunc.nout)(*(_boxed(i) for i in inputs))
    function = getattr(pytato_rs, ufunc.__name__, None)
    if function is None:
        return NotImplemented
    return function(*inputs)


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
