"""numpy's ``linalg`` norms, products (``matrix_power``, ``multi_dot``) and the Array API's
linear-algebra names, on expressions.

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
from ._native import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "matrix_transpose", "outer", "tensordot",
           "trace", "vecdot", "diagonal", "cross", "matrix_power", "multi_dot", "LinAlgError"]

LinAlgError = np.linalg.LinAlgError


def outer(x1, x2, /):
    """The Array API's ``linalg.outer`` of two vectors."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: both operands must be vectors (got {x1.ndim}-d and {x2.ndim}-d)")
    return _pt.multiply(_pt.reshape(x1, (-1, 1)), _pt.reshape(x2, (1, -1)))


def trace(x, /, *, offset=0, dtype=None):
    """The Array API's ``linalg.trace``: the sums of the diagonals of the last two axes (numpy's
    ``trace`` takes the first two)."""
    return _pt.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


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


def cross(x1, x2, /, *, axis=-1):
    """The Array API's ``linalg.cross``: the cross product of 3-vectors along ``axis``."""
    x1, x2 = (x if isinstance(x, _pt.Array) else _pt.asarray(np.asarray(x)) for x in (x1, x2))
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{x1.shape[axis]} and {x2.shape[axis]} dimensional instead.")
    import pytato_rs

    return pytato_rs.cross(x1, x2, axis=axis)


def _square_matrices(a, name):
    if a.ndim < 2:
        raise LinAlgError(f"{name}: {a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{name}: last 2 dimensions of the array must be square (shape {a.shape})")


def matrix_power(a, n):
    """numpy's ``linalg.matrix_power`` for ``n >= 0``: the identity for 0, else products in
    numpy's order (``a @ a``, ``(a @ a) @ a``, then squarings from the lowest bit of ``n`` up,
    multiplied into the result where a bit is set), so that the values round as numpy's do. A
    negative ``n`` needs an inverse, which is not written."""
    import operator

    a = a if isinstance(a, _pt.Array) else _pt.asarray(np.asarray(a))
    _square_matrices(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n < 0:
        raise NotImplementedError("matrix_power: a negative power needs an inverse, which is not written")
    if n == 0:
        return _pt.broadcast_to(_pt.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = matmul(result, a)
        return result
    square = result = None
    while n > 0:
        square = a if square is None else matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else matmul(result, square)
    return result


def _chain_order(lengths):
    """The cheapest parenthesization of a chain of matrix products, the matrices of shapes
    ``(lengths[k], lengths[k + 1])`` (the classic dynamic program; ties go to the first split,
    as numpy's ``multi_dot`` takes them): ``split[i][j]``, where the product of matrices ``i``
    to ``j`` is split."""
    count = len(lengths) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for span in range(1, count):
        for i in range(count - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + lengths[i] * lengths[k + 1] * lengths[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """numpy's ``linalg.multi_dot``: the product of a chain of matrices (the first may be a row
    vector, the last a column vector, given 1-d) in the cheapest order, as numpy picks it, where
    the lengths are known; left to right where one is symbolic."""
    _pt._no_out("multi_dot", out)
    arrays = [a if isinstance(a, _pt.Array) else _pt.asarray(np.asarray(a)) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return _pt.dot(arrays[0], arrays[1])
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = _pt.reshape(arrays[0], (1, -1))
    if last_vector:
        arrays[-1] = _pt.reshape(arrays[-1], (-1, 1))
    for a in arrays:
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    lengths = [a.shape[0] for a in arrays] + [arrays[-1].shape[1]]
    if all(isinstance(n, int) for n in lengths):
        split = _chain_order(lengths)

        def product(i, j):
            if i == j:
                return arrays[i]
            return _pt.dot(product(i, split[i][j]), product(split[i][j] + 1, j))

        result = product(0, len(arrays) - 1)
    else:
        result = arrays[0]
        for a in arrays[1:]:
            result = _pt.dot(result, a)
    if first_vector and last_vector:
        return result[0, 0]
    if first_vector:
        return result[0]
    return result[:, 0] if last_vector else result
