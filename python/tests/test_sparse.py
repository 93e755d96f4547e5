"""CSR matrices (``pt.make_csr_matrix``): products against a CSR loop written here (row by row,
entries in order, from zero, as scipy computes them), bit for bit, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt


def csr_of(dense):
    rows, cols = np.nonzero(dense)
    row_starts = np.searchsorted(rows, np.arange(dense.shape[0] + 1)).astype(np.int64)
    return dense[rows, cols], cols.astype(np.int64), row_starts


def csr_loop(values, cols, row_starts, x):
    out = np.zeros((len(row_starts) - 1, *x.shape[1:]), np.result_type(values, x))
    for i in range(len(row_starts) - 1):
        acc = np.zeros(x.shape[1:], out.dtype)
        for k in range(row_starts[i], row_starts[i + 1]):
            acc = acc + values[k] * x[cols[k]]
        out[i] = acc
    return out


def matrix(nrows, ncols, nnz_shape, dtype=np.float64):
    return pt.make_csr_matrix(
        (nrows, ncols),
        pt.make_placeholder("v", nnz_shape, dtype),
        pt.make_placeholder("c", nnz_shape, np.int64),
        pt.make_placeholder("r", (nrows + 1,), np.int64),
    )


@pytest.mark.parametrize("backend", [name for name, _ in pt.backends()])
def test_products_have_the_bits_of_a_csr_loop(backend):
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((9, 7)) * (rng.random((9, 7)) < 0.5)
    dense[4] = 0.0  # an empty row
    values, cols, starts = csr_of(dense)
    a = matrix(9, 7, values.shape)
    for x in (rng.standard_normal(7), rng.standard_normal((7, 3))):
        xp = pt.make_placeholder("x", x.shape, np.float64)
        got = pt.generate(a @ xp, backend)(v=values, c=cols, r=starts, x=x)
        np.testing.assert_array_equal(got, csr_loop(values, cols, starts, x))


def test_symbolic_sizes_no_entries_and_promotion():
    n = pt.make_size_param("n")
    nnz = pt.make_size_param("nnz")
    a = pt.make_csr_matrix(
        (n, n),
        pt.make_placeholder("v", (nnz,), np.float32),
        pt.make_placeholder("c", (nnz,), np.int32),
        pt.make_placeholder("r", (n + 1,), np.int64),
    )
    x = pt.make_placeholder("x", (n,), np.float64)
    prg = pt.generate(a @ x)
    dense = np.diag(np.arange(1, 5, dtype=np.float32))
    values, cols, starts = csr_of(dense)
    xv = np.linspace(0, 1, 4)
    np.testing.assert_array_equal(prg(v=values, c=cols.astype(np.int32), r=starts, x=xv),
                                  csr_loop(values, cols, starts, xv))
    empty = prg(v=np.zeros(0, np.float32), c=np.zeros(0, np.int32), r=np.zeros(5, np.int64), x=xv)
    np.testing.assert_array_equal(empty, np.zeros(4))


def test_bad_matrices_and_operands_are_errors():
    a = matrix(8, 10, (8,))
    a @ pt.make_placeholder("b", (10,), np.float64)
    with pytest.raises(ValueError, match="do not fit"):
        a @ pt.make_placeholder("b", (20,), np.float64)
    with pytest.raises(ValueError, match="one or two axes"):
        a @ pt.make_placeholder("b", (), np.float64)
    v = pt.make_placeholder("v", (8,), np.float64)
    c = pt.make_placeholder("c", (8,), np.int64)
    with pytest.raises(ValueError, match="row starts"):
        pt.make_csr_matrix((8, 10), v, c, pt.make_placeholder("r", (8,), np.int64))
    with pytest.raises(TypeError, match="integers"):
        pt.make_csr_matrix((8, 10), v, pt.make_placeholder("c", (8,), np.float64),
                           pt.make_placeholder("r", (9,), np.int64))
    with pytest.raises(ValueError, match="one element per entry"):
        pt.make_csr_matrix((8, 10), v, pt.make_placeholder("c", (7,), np.int64),
                           pt.make_placeholder("r", (9,), np.int64))
    # a column outside the matrix: an IndexError when the program runs, as numpy's indexing
    prg = pt.generate(matrix(2, 3, (2,)) @ pt.make_placeholder("x", (3,), np.float64))
    with pytest.raises(IndexError):
        prg(v=np.ones(2), c=np.array([0, 3]), r=np.array([0, 1, 2]), x=np.ones(3))
