"""numpy's ``linalg`` norms and the Array API's linear-algebra names, on expressions.

``norm`` follows numpy's ``numpy.linalg.norm`` operation by operation: the same orders, axes,
``keepdims`` and dtypes, values to the rounding of the library's summation order (numpy's
default vector norm goes through a BLAS dot product). The orders that need a singular value
decomposition (matrix ``2``, ``-2`` and ``'nuc'``) are not written: they raise
``NotImplementedError``.
"""

from __future__ import annotations

import math

import numpy as np

from . import _native as _pt
from ._native import matmul, matrix_transpose, tensordot, trace, vecdot  # noqa: F401

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "matrix_transpose", "outer", "tensordot",
           "trace", "vecdot", "diagonal"]


def outer(x1, x2, /):
    """The Array API's ``linalg.outer`` of two vectors."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: both operands must be vectors (got {x1.ndim}-d and {x2.ndim}-d)")
    return _pt.multiply(_pt.reshape(x1, (-1, 1)), _pt.reshape(x2, (1, -1)))


def diagonal(x, /, *, offset=0):
    """The Array API's ``linalg.diagonal``: the diagonals of the last two axes."""
    return _pt.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def _as_inexact(x):
    x = x if isinstance(x, _pt.Array) else _pt.asarray(np.asarray(x))
    # numpy's norm computes integers and bools in float64
    return x if x.dtype.kind in "fc" else _pt.astype(x, np.float64)


def _squares(x):
    """``(x.conj() * x).real``, numpy's squared magnitudes."""
    return _pt.real(_pt.multiply(_pt.conj(x), x)) if x.dtype.kind == "c" else _pt.multiply(x, x)


def _vector_norm(x, ord, axis, keepdims):
    if ord == math.inf:
        return _pt.max(_pt.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -math.inf:
        return _pt.min(_pt.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real_dtype = np.empty(0, x.dtype).real.dtype
        return _pt.sum(_pt.astype(_pt.not_equal(x, 0), real_dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _pt.sum(_pt.abs(x), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return _pt.sqrt(_pt.sum(_squares(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    total = _pt.sum(_pt.power(_pt.abs(x), ord), axis=axis, keepdims=keepdims)
    return _pt.power(total, np.reciprocal(ord, dtype=total.dtype))


def _matrix_norm(x, ord, axes, keepdims):
    row, col = (np.lib.array_utils.normalize_axis_index(int(a), x.ndim) for a in axes)
    if row == col:
        raise ValueError("Duplicate axes given.")
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm: the matrix norm ord={ord!r} needs singular values, which are not written")
    def extremum(sums, axis, largest):  # numpy's largest starts from 0, so empty axes give 0
        return _pt.max(sums, axis=axis, initial=0) if largest else _pt.min(sums, axis=axis)

    if ord in (1, -1):
        ret = extremum(_pt.sum(_pt.abs(x), axis=row), col - 1 if col > row else col, ord == 1)
    elif ord in (math.inf, -math.inf):
        ret = extremum(_pt.sum(_pt.abs(x), axis=col), row - 1 if row > col else row, ord == math.inf)
    elif ord in (None, "fro", "f"):
        ret = _pt.sqrt(_pt.sum(_squares(x), axis=(row, col)))
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        ret = _pt.reshape(ret, tuple(shape))
    return ret


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy's ``linalg.norm``: vector norms over one axis (``ord`` ``None``/2, 1, ``inf``,
    ``-inf``, 0, any other number), matrix norms over two (``None``/``'fro'``, 1, -1, ``inf``,
    ``-inf``), the 2-norm of all elements where ``axis`` is ``None`` and ``ord`` is ``None`` (or
    ``'fro'`` of a matrix, or 2 of a vector)."""
    x = _as_inexact(x)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and x.ndim == 2) or (ord == 2 and x.ndim == 1):
            ret = _pt.sqrt(_pt.sum(_squares(_pt.reshape(x, (-1,)))))
            return _pt.reshape(ret, (1,) * x.ndim) if keepdims else ret
        axis = tuple(range(x.ndim))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The Array API's ``linalg.vector_norm``: a vector norm over ``axis`` (all axes, flattened,
    where ``None``; several axes are taken as one vector)."""
    x = _as_inexact(x)
    if axis is None:
        flat = _vector_norm(_pt.reshape(x, (-1,)), ord, 0, False)
        return _pt.reshape(flat, (1,) * x.ndim) if keepdims else flat
    return _vector_norm(x, ord, axis, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The Array API's ``linalg.matrix_norm``: a matrix norm over the last two axes."""
    return _matrix_norm(_as_inexact(x), ord, (-2, -1), keepdims)
