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


def array_ufunc(ufunc, method, inputs, kwargs):
    """``ufunc(*inputs)`` where an input is an expression: the library's function of the same
    name, or, where an input is a numpy array of objects (a container of arrays, as
    arraycontext makes them), the ufunc applied element by element, as numpy applies it to
    objects. ``NotImplemented`` for what neither covers (``out=``, ``reduce``, ...), so that
    numpy raises its ``TypeError``."""
    import pytato_rs

    if method != "__call__" or kwargs:
        return NotImplemented
    if any(isinstance(i, np.ndarray) and i.dtype == object for i in inputs):
        return np.frompyfunc(ufunc, len(inputs), ufunc.nout)(*(_boxed(i) for i in inputs))
    function = getattr(pytato_rs, ufunc.__name__, None)
    if function is None:
        return NotImplemented
    return function(*inputs)
