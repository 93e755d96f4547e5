"""Sparse matrices in compressed sparse row form (pytato's ``make_csr_matrix``).

``make_csr_matrix(shape, elem_values, elem_col_indices, row_starts)`` describes the matrix whose
row ``i`` holds ``elem_values[k]`` at column ``elem_col_indices[k]`` for ``k`` from
``row_starts[i]`` up to ``row_starts[i + 1]``. ``A @ x`` (``x`` of one or two axes) is an
ordinary expression, so it runs on every backend: each stored entry is multiplied by the row of
``x`` it needs, and the products are added into their rows with ``add_at``, which adds in the
entries' order, one after another from zero: the order of a CSR loop (scipy's), so the result
has its bits. ``row_starts`` must be nondecreasing from 0 to the number of entries, as CSR
requires; a column index outside the matrix is an ``IndexError`` when the program runs.
"""

from __future__ import annotations

import numpy as np

from . import _native
from .utils import are_shape_components_equal, are_shapes_equal


class CSRMatrix:
    """A sparse matrix in compressed sparse row form (see the module docs)."""

    def __init__(self, shape, elem_values, elem_col_indices, row_starts, tags=frozenset(), axes=None):
        self.shape = shape
        self.elem_values = elem_values
        self.elem_col_indices = elem_col_indices
        self.row_starts = row_starts
        self.dtype = elem_values.dtype
        self.tags = frozenset(tags)
        self.axes = axes
        self.ndim = 2

    def __matmul__(self, other):
        other = other if isinstance(other, _native.Array) else _native.make_data_wrapper(np.asarray(other))
        if other.ndim not in (1, 2):
            raise ValueError(f"a CSR matrix of shape {self.shape} multiplies arrays of one or two axes, "
                             f"not shape {other.shape}")
        if not are_shape_components_equal(other.shape[0], self.shape[1]):
            raise ValueError(f"matmul: a CSR matrix of shape {self.shape} and an array of shape "
                             f"{other.shape} do not fit")
        nnz = self.elem_values.shape[0]
        # the row of each stored entry: the last row starting at or before it
        entry = _native._index_lambda([("var", "_0")], (nnz,), np.dtype(np.int64), {})
        rows = _native.searchsorted(self.row_starts, entry, side="right") - 1
        values = self.elem_values if other.ndim == 1 else self.elem_values[:, None]
        products = values * other[self.elem_col_indices]
        result = _native.zeros((self.shape[0], *other.shape[1:]), products.dtype)
        return result.at[rows].add(products)


def make_csr_matrix(shape, elem_values, elem_col_indices, row_starts, tags=frozenset(), axes=None):
    """A :class:`CSRMatrix` of ``shape`` (two lengths): see the module docs. The arrays must
    have one axis each, ``row_starts`` one more element than rows and integer entries, as must
    ``elem_col_indices``; ``elem_values`` and ``elem_col_indices`` one element per entry."""
    shape = tuple(shape)
    if len(shape) != 2:
        raise ValueError(f"a CSR matrix has two axes, not shape {shape}")
    for name, array in (("elem_values", elem_values), ("elem_col_indices", elem_col_indices),
                        ("row_starts", row_starts)):
        if len(array.shape) != 1:
            raise ValueError(f"make_csr_matrix: '{name}' must have one axis, not shape {array.shape}")
    for name, array in (("elem_col_indices", elem_col_indices), ("row_starts", row_starts)):
        if not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"make_csr_matrix: '{name}' must hold integers, not {array.dtype}")
    if not are_shapes_equal(row_starts.shape, (shape[0] + 1,)):
        raise ValueError(f"make_csr_matrix: 'row_starts' has shape {row_starts.shape}; a matrix of "
                         f"{shape[0]} rows needs {shape[0]} + 1 row starts")
    if not are_shapes_equal(elem_values.shape, elem_col_indices.shape):
        raise ValueError(f"make_csr_matrix: 'elem_values' (shape {elem_values.shape}) and "
                         f"'elem_col_indices' (shape {elem_col_indices.shape}) must have one element per entry")
    return CSRMatrix(shape, elem_values, elem_col_indices, row_starts, tags, axes)


__all__ = ["CSRMatrix", "make_csr_matrix"]
