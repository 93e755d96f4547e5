"""``actx.np`` for :class:`~pytato_rs.arraycontext.PytatoRsArrayContext`: numpy's functions
on lazy arrays and on array containers.

Every function maps over array containers leaf by leaf (arraycontext's convention); a
reduction (``sum``, ``max``, ``all``...) reduces each leaf and then combines the leaves'
results. Numbers in, numbers out: ``actx.np.sin(0.5)`` is numpy's.
"""

from __future__ import annotations

from functools import partial, reduce
from typing import Any

import numpy as np
from arraycontext.container import NotAnArrayContainerError, serialize_container
from arraycontext.container.traversal import (
    multimapped_over_array_containers,
    rec_map_container,
    rec_map_reduce_array_container,
    rec_multimap_array_container,
)
from arraycontext.fake_numpy import BaseFakeNumpyLinalgNamespace, BaseFakeNumpyNamespace
from arraycontext.typing import is_scalar_like

import pytato_rs as pt

#: numpy's elementwise functions (ufuncs and ``where``) that map leaf by leaf onto the
#: function of the same name in :mod:`pytato_rs`.
ELEMENTWISE_FUNCTIONS = frozenset({
    # trigonometric and hyperbolic
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    # exponents and logarithms
    "exp", "expm1", "log", "log10", "log2", "log1p", "logaddexp",
    # rounding
    "floor", "ceil", "trunc", "rint",
    # arithmetic
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
    "mod", "remainder", "negative", "positive", "reciprocal", "square", "sqrt",
    "abs", "absolute", "sign", "clip", "maximum", "minimum", "copysign", "nextafter",
    "signbit",
    # complex numbers
    "real", "imag", "conj", "conjugate",
    # comparisons and logic
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_or", "logical_not", "isnan", "isinf", "isfinite",
    "where",
})


class PytatoRsFakeNumpyLinalgNamespace(BaseFakeNumpyLinalgNamespace):
    """``actx.np.linalg``: arraycontext's ``norm``, built on ``actx.np``."""


class PytatoRsFakeNumpyNamespace(BaseFakeNumpyNamespace):
    """A numpy work-alike over :mod:`pytato_rs` lazy arrays (see the module docs)."""

    def _get_fake_numpy_linalg_namespace(self):
        return PytatoRsFakeNumpyLinalgNamespace(self._array_context)

    def __getattr__(self, name: str):
        if name in ELEMENTWISE_FUNCTIONS:
            return multimapped_over_array_containers(getattr(pt, name))
        raise AttributeError(
            f"'{type(self._array_context).__name__}.np' has no attribute '{name}'")

    # {{{ creation

    def zeros(self, shape, dtype):
        return pt.zeros(shape, dtype)

    def _full_like_array(self, ary, fill_value):
        return pt.full(ary.shape, fill_value, ary.dtype).copy(axes=ary.axes, tags=ary.tags)

    def arange(self, *args: Any, **kwargs: Any):
        return pt.arange(*args, **kwargs)

    # }}}

    # {{{ manipulation

    def ravel(self, a, order="C"):
        """Flattens each leaf. pytato_rs arrays have no memory layout: ``"A"`` and ``"K"``
        read in row-major order, as ``"C"`` does."""
        if order not in ("C", "F", "A", "K"):
            raise ValueError(f"ravel: order must be 'C', 'F', 'A' or 'K', not {order!r}")

        def _ravel(leaf):
            if is_scalar_like(leaf):
                raise ValueError("ravel: cannot ravel a scalar")
            return pt.reshape(leaf, (-1,), order="F" if order == "F" else "C")

        return rec_map_container(_ravel, a)

    def broadcast_to(self, array, shape):
        return rec_map_container(
            lambda leaf: leaf if is_scalar_like(leaf) else pt.broadcast_to(leaf, shape),
            array)

    def concatenate(self, arrays, axis=0):
        return rec_multimap_array_container(
            lambda *leaves: pt.concatenate(leaves, axis=axis), *arrays)

    def stack(self, arrays, axis=0):
        return rec_multimap_array_container(
            lambda *leaves: pt.stack(leaves, axis=axis), *arrays)

    # }}}

    # {{{ logic

    def all(self, a, /):
        return rec_map_reduce_array_container(
            partial(reduce, pt.logical_and), pt.all, a)

    def any(self, a, /):
        return rec_map_reduce_array_container(
            partial(reduce, pt.logical_or), pt.any, a)

    def array_equal(self, a, b):
        """Whether *a* and *b* are containers of the same structure with equal leaves of
        equal shapes: a 0-d boolean array (a lazy one where any leaf is lazy)."""

        def equal(x, y):
            if type(x) is not type(y):
                return np.bool_(False)
            try:
                x_entries, y_entries = serialize_container(x), serialize_container(y)
            except NotAnArrayContainerError:
                if is_scalar_like(x):
                    return np.bool_(x == y)
                if x.shape != y.shape:
                    return np.bool_(False)
                return pt.all(pt.equal(x, y))
            if [k for k, _ in x_entries] != [k for k, _ in y_entries]:
                return np.bool_(False)
            return reduce(pt.logical_and,
                          [equal(xi, yi) for (_, xi), (_, yi)
                           in zip(x_entries, y_entries, strict=True)],
                          np.bool_(True))

        return equal(a, b)

    # }}}

    # {{{ reductions

    def sum(self, a, axis=None, dtype=None):
        return rec_map_reduce_array_container(
            sum, partial(pt.sum, axis=axis, dtype=dtype), a)

    def max(self, a, axis=None):
        return rec_map_reduce_array_container(
            partial(reduce, pt.maximum), partial(pt.amax, axis=axis), a)

    amax = max

    def min(self, a, axis=None):
        return rec_map_reduce_array_container(
            partial(reduce, pt.minimum), partial(pt.amin, axis=axis), a)

    amin = min

    def vdot(self, a, b):
        return rec_multimap_array_container(pt.vdot, a, b)

    # }}}
