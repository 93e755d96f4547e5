"""numpy's index routines (``unravel_index``, ``ravel_multi_index``, ``ix_``, ``diag_indices``,
``tril_indices``/``triu_indices`` and their ``_from`` forms) and ``fromfunction``, ``copy``,
``row_stack`` and ``bitwise_count``, on every backend against numpy: every integer dtype,
both orders, empty and size-1 axes, symbolic lengths run with other sizes, and indices out of
range (an error when the program runs)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pytato_rs as pt


def _run(expr, backend, **inputs):
    if isinstance(expr, tuple):
        return tuple(_run(e, backend, **inputs) for e in expr)
    program = pt.generate(expr, backend)
    return program(**{k: v for k, v in inputs.items() if k in program.input_names})


def _assert_same(got, want, label):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (label, got, want)
        for g, w in zip(got, want):
            _assert_same(g, w, label)
        return
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (label, got, want)
    np.testing.assert_array_equal(got, want, err_msg=label)


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_index_is_numpys_and_refuses_indices_out_of_range(backend, order):
    for shape in [(2, 3), (6,), (3, 1, 2), (1,), (2, 0, 3)]:
        size = int(np.prod(shape))
        for dtype in [np.int64, np.int8, np.uint32, np.bool_]:
            if dtype == np.bool_ and size < 2:
                continue
            flat = np.array([True, False]) if dtype == np.bool_ else np.arange(size)[::-1].astype(dtype)
            fixed = pt.make_placeholder("i", flat.shape, flat.dtype)
            symbolic = pt.make_placeholder("i", ("n",), flat.dtype)
            want = np.unravel_index(flat, shape, order=order)
            for i in (fixed, symbolic):
                got = _run(pt.unravel_index(i, shape, order=order), backend, i=flat)
                _assert_same(got, want, f"{shape} {dtype.__name__} {i.shape}")
        one = pt.make_placeholder("i", ("n",), np.int64)
        coordinates = dict(enumerate(pt.unravel_index(one, shape, order=order)))
        program = pt.generate({f"c{k}": c for k, c in coordinates.items()}, backend)
        for bad in [size, -1, size + 7]:
            with pytest.raises(ValueError):
                np.unravel_index(np.array([bad]), shape, order=order)
            with pytest.raises(ValueError, match="out of bounds for an array with the shape's size"):
                program(i=np.array([bad]))
    # The lengths of a symbolic shape; the flat index of an argmax.
    x = pt.make_placeholder("x", ("n", "m"), np.float32)
    data = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1]
    rows, cols = pt.unravel_index(pt.arange(12) + 0 * pt.sum(x).astype(np.int64), x.shape, order=order)
    _assert_same(_run((rows, cols), backend, x=data), np.unravel_index(np.arange(12), (3, 4), order=order), "symbolic")
    y = pt.make_placeholder("y", (3, 4), np.float32)
    _assert_same(_run(pt.unravel_index(pt.argmax(y), y.shape, order=order), backend, y=data),
                 np.unravel_index(np.argmax(data), data.shape, order=order), "argmax")
    assert pt.unravel_index(5, (2, 3), order=order) == np.unravel_index(5, (2, 3), order=order)


def test_ravel_multi_index_modes_orders_and_broadcasting(backend):
    rows, cols = np.array([[1], [0]]), np.array([2, 1, -1, 5])
    r, c = pt.make_placeholder("r", rows.shape, rows.dtype), pt.make_placeholder("c", cols.shape, cols.dtype)
    for mode in ["wrap", "clip", ("clip", "wrap"), ("wrap", "clip")]:
        for order in "CF":
            _assert_same(_run(pt.ravel_multi_index((r, c), (2, 3), mode=mode, order=order), backend, r=rows, c=cols),
                         np.ravel_multi_index((rows, cols), (2, 3), mode=mode, order=order), f"{mode} {order}")
    small = np.array([2, 1, 0], np.uint8)
    s = pt.make_placeholder("c", small.shape, small.dtype)
    _assert_same(_run(pt.ravel_multi_index((r, s), (2, 3)), backend, r=rows, c=small),
                 np.ravel_multi_index((rows, small), (2, 3)), "raise")
    _assert_same(_run(pt.ravel_multi_index((True, s), (2, 3)), backend, c=small),
                 np.ravel_multi_index((True, small), (2, 3)), "bool coordinate")
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        np.ravel_multi_index((rows, cols), (2, 3))
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        _run(pt.ravel_multi_index((r, c), (2, 3)), backend, r=rows, c=cols)
    # Symbolic lengths: the flat index of every coordinate of x, and an axis empty at run time,
    # which numpy refuses in every mode.
    x = pt.make_placeholder("x", ("n", "m"), np.float64)
    i, j = pt.unravel_index(pt.arange(12), (3, 4))
    flat = pt.ravel_multi_index((i, j), x.shape) + 0 * pt.sum(x).astype(np.int64)
    _assert_same(_run(flat, backend, x=np.zeros((3, 4))), np.arange(12), "symbolic dims")
    wrapped = pt.generate(pt.ravel_multi_index((s, s), x.shape, mode="wrap") + 0 * pt.sum(x).astype(np.int64), backend)
    _assert_same(wrapped(x=np.zeros((2, 2)), c=small), np.ravel_multi_index((small, small), (2, 2), mode="wrap"), "wrap")
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        wrapped(x=np.zeros((0, 2)), c=small)
    with pytest.raises(ValueError, match="zero entries"):
        pt.ravel_multi_index((s, s), (0, 3), mode="wrap")
    with pytest.raises(ValueError, match="sequence of length 2"):
        pt.ravel_multi_index((s,), (2, 3))
    with pytest.raises(ValueError, match="clipmode"):
        pt.ravel_multi_index((s, s), (2, 3), mode="bad")
    with pytest.raises(TypeError, match="only int indices"):
        pt.ravel_multi_index((s, pt.asarray(np.array([1.0, 0.0, 1.0]))), (2, 3))


def test_ix_diag_and_triangle_indices_index_as_numpys(backend):
    a = np.arange(20.0).reshape(4, 5)
    x = pt.make_placeholder("a", a.shape, a.dtype)
    for rows, cols in [([1, 3], [0, 4, 2]), ([True, False, True, True], [4]), ([], [1]),
                       (np.array([2], np.int8), np.array([True] * 5))]:
        _assert_same(_run(x[pt.ix_(rows, cols)], backend, a=a), a[np.ix_(rows, cols)], f"ix_ {rows} {cols}")
        lazy = pt.ix_(pt.asarray(np.asarray(rows)), pt.asarray(np.asarray(cols)))
        _assert_same(_run(lazy, backend), np.ix_(np.asarray(rows), np.asarray(cols)), f"ix_ of arrays {rows}")
    with pytest.raises(ValueError, match="1 dimensional"):
        pt.ix_(pt.asarray(np.ones((2, 2))))
    square = pt.make_placeholder("d", ("n", "n"), np.float64)
    for n in (0, 1, 3):
        d = np.arange(float(n * n)).reshape(n, n)
        _assert_same(_run(square[pt.diag_indices_from(square)], backend, d=d), d[np.diag_indices_from(d)], f"diag {n}")
        for k in (0, 1, -1):
            _assert_same(_run(pt.tril_indices(n, k, 4), backend), np.tril_indices(n, k, 4), f"tril {n} {k}")
            _assert_same(_run(pt.asarray(d)[pt.triu_indices_from(pt.asarray(d), k)], backend),
                         d[np.triu_indices_from(d, k)], f"triu_from {n} {k}")
    cube = pt.make_placeholder("q", ("k",), np.int8)
    _assert_same(_run(pt.diag_indices(cube.shape[0], 3), backend, k=3), np.diag_indices(3, 3), "diag_indices")
    with pytest.raises(ValueError, match="equal length"):
        pt.diag_indices_from(pt.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError, match="2-d"):
        pt.tril_indices_from(pt.asarray(np.ones(3)))
    with pytest.raises(NotImplementedError, match="number of indices"):
        pt.tril_indices(cube.shape[0])


def test_fromfunction_copy_row_stack_and_bitwise_count(backend):
    _assert_same(_run(pt.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int), backend),
                 np.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int), "fromfunction int")
    _assert_same(_run(pt.fromfunction(lambda i, j, k: i - j / (k + 1.0), (2, 3, 2)), backend),
                 np.fromfunction(lambda i, j, k: i - j / (k + 1.0), (2, 3, 2)), "fromfunction float")
    data = np.array([1.0, -0.0])
    copied = pt.copy(data)
    data[0] = 9.0  # after the copy: the expression keeps the values it was given
    _assert_same(_run(copied + 0, backend), np.array([1.0, -0.0]), "copy")
    expr = pt.make_placeholder("e", (2,), np.float64)
    assert pt.copy(expr) is expr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stacked = pt.row_stack([pt.asarray(np.ones(2)), pt.asarray(np.zeros(2))])
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    _assert_same(_run(stacked, backend), np.vstack([np.ones(2), np.zeros(2)]), "row_stack")
    for dtype in [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]:
        if dtype == np.bool_:
            values = np.array([True, False])
        else:
            info = np.iinfo(dtype)
            values = np.array([0, 1, 5, 127, info.min, info.max, info.max // 3, info.min + 1], dtype)
            if info.min < 0:
                values = np.concatenate([values, np.array([-1, -2, -127], dtype)])
        x = pt.make_placeholder("x", values.shape, values.dtype)
        _assert_same(_run(pt.bitwise_count(x), backend, x=values), np.bitwise_count(values), dtype.__name__)
    _assert_same(_run(pt.bitwise_count(x, dtype=np.uint8), backend, x=values),
                 np.bitwise_count(values, dtype=np.uint8), "dtype=")
    with pytest.raises(TypeError, match="bitwise_count"):
        pt.bitwise_count(pt.asarray(np.ones(2)))
    assert pt.bitwise_count(-128) == np.bitwise_count(-128)
