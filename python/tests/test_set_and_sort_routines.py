"""numpy's set routines (``union1d``, ``intersect1d``, ``setdiff1d``, ``setxor1d``), sorting
routines (``lexsort``, ``partition``, ``argpartition``, ``sort_complex``), ``choose`` and the
matrix-vector products ``matvec``/``vecmat``, on every backend. Expected values come from numpy;
each program runs on several data of one shape, so the lengths the data decide change between
runs (empty included)."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt

SET_ROUTINES = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]


def _same(got, expected, label):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, label
    assert got.shape == expected.shape, label
    np.testing.assert_array_equal(got, expected, err_msg=label)


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.int32, np.float32), (np.uint8, np.int8),
                                    (np.complex64, np.int64), (np.bool_, np.bool_)])
def test_set_routines_as_numpys(backend, dtypes):
    # One program per routine and dtype pair, run on data with common values, none, NaNs (never
    # equal: twice in a symmetric difference, in no intersection) and empty unions.
    a = pt.make_placeholder("a", (6,), dtypes[0])
    b = pt.make_placeholder("b", (2, 2), dtypes[1])
    outputs = {name: getattr(pt, name)(a, b) for name in SET_ROUTINES}
    common, first, second = pt.intersect1d(a, b, return_indices=True)
    outputs.update({"common": common, "first": first, "second": second})
    prg = pt.generate(outputs, backend)
    data = [([3, 1, 2, 3, 0, 2], [[2, 2], [5, 1]]), ([0, 0, 0, 0, 0, 0], [[1, 1], [1, 1]]),
            ([1, 1, 1, 1, 1, 1], [[1, 1], [1, 1]]), ([4, -1, 7, 7, -1, 3], [[-1, 9], [7, 3]])]
    if np.dtype(dtypes[0]).kind == "f":
        data.append(([np.nan, 1, np.nan, -0.0, 2, 1], [[np.nan, 0], [1, 5]]))
    for x, y in data:
        x, y = np.array(x).astype(dtypes[0]), np.array(y).astype(dtypes[1])
        got = prg(a=x, b=y)
        for name in SET_ROUTINES:
            _same(got[name], getattr(np, name)(x, y), f"{name} {x} {y}")
        for name, want in zip(("common", "first", "second"), np.intersect1d(x, y, return_indices=True)):
            _same(got[name], want, f"intersect1d return_indices {name} {x} {y}")


def test_set_routines_assuming_unique_inputs_as_numpys(backend):
    # assume_unique skips the unique of each input: setdiff1d then keeps the first array's
    # order, as numpy does.
    a = pt.make_placeholder("a", (5,), np.int64)
    b = pt.make_placeholder("b", (3,), np.int64)
    prg = pt.generate({name: getattr(pt, name)(a, b, assume_unique=True)
                       for name in ("intersect1d", "setdiff1d", "setxor1d")}, backend)
    for x, y in [([9, 3, 5, 1, 0], [5, 2, 9]), ([4, 3, 2, 1, 0], [7, 8, 6])]:
        x, y = np.array(x), np.array(y)
        got = prg(a=x, b=y)
        for name in ("intersect1d", "setdiff1d", "setxor1d"):
            _same(got[name], getattr(np, name)(x, y, assume_unique=True), f"{name} {x} {y}")


def test_union_of_counts_is_one_program_for_every_count(backend):
    # Set routines of selections: lengths the data decide, combined (the union's input is the
    # sum of two counts, which alone determines neither: a later phase is given both).
    x = pt.make_placeholder("x", (8,), np.float64)
    prg = pt.generate({"u": pt.union1d(x[x > 0], x[x < -1]), "x": pt.setxor1d(x[x > 0], -x[x < -1])}, backend)
    rng = np.random.default_rng(3)
    for data in (rng.integers(-4, 5, 8).astype(float), np.zeros(8), np.full(8, -3.0)):
        got = prg(x=data)
        _same(got["u"], np.union1d(data[data > 0], data[data < -1]), f"union1d {data}")
        _same(got["x"], np.setxor1d(data[data > 0], -data[data < -1]), f"setxor1d {data}")


@pytest.mark.parametrize("axis", [-1, 0])
def test_lexsort_as_numpys(backend, axis):
    rng = np.random.default_rng(axis + 7)
    keys = [rng.integers(0, 3, (4, 6)), rng.integers(0, 2, (4, 6)).astype(np.float32),
            rng.integers(-2, 2, (4, 6)).astype(np.int8)]
    keys[1][0, :3] = np.nan  # NaNs sort last, as in numpy
    placeholders = [pt.make_placeholder(f"k{i}", k.shape, k.dtype) for i, k in enumerate(keys)]
    prg = pt.generate({"one": pt.lexsort(placeholders[:1], axis=axis), "all": pt.lexsort(placeholders, axis=axis)},
                      backend)
    got = prg(**{f"k{i}": k for i, k in enumerate(keys)})
    _same(got["one"], np.lexsort(keys[:1], axis=axis), "one key")
    _same(got["all"], np.lexsort(keys, axis=axis), "three keys")
    with pytest.raises(pt.ShapeMismatchError):
        pt.lexsort([placeholders[0], pt.make_placeholder("short", (4, 5), np.int64)])
    with pytest.raises(TypeError):
        pt.lexsort([])
    # 0-d keys are one element, at index 0, whatever the axis (and every key stays an input)
    scalars = [np.array(2.5), np.array(1j)]
    zero_d = [pt.make_placeholder(f"s{i}", (), s.dtype) for i, s in enumerate(scalars)]
    got = pt.generate({"one": pt.lexsort(zero_d[:1], axis=axis), "two": pt.lexsort(zero_d, axis=axis)},
                      backend)(s0=scalars[0], s1=scalars[1])
    _same(got["one"], np.lexsort(scalars[:1], axis=axis), "one 0-d key")
    _same(got["two"], np.lexsort(scalars, axis=axis), "two 0-d keys")


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_partitions_meet_numpys_contract(backend, axis):
    # A full sort: numpy's partition promises the element at each kth and which side every other
    # element is on, not their order; the kth elements must be numpy's.
    rng = np.random.default_rng(11)
    data = rng.integers(-5, 6, (5, 7)).astype(np.float64)
    data[1, 2] = np.nan
    x = pt.make_placeholder("x", data.shape, data.dtype)
    kth = [0, 3, -1]
    got = pt.generate({"p": pt.partition(x, kth, axis=axis), "i": pt.argpartition(x, kth, axis=axis)}, backend)(x=data)
    flat = data.ravel() if axis is None else data
    ax = 0 if axis is None else axis
    expected = np.partition(data, kth, axis=axis)
    for k in kth:
        np.testing.assert_array_equal(np.take(got["p"], k, axis=ax), np.take(expected, k, axis=ax))
        np.testing.assert_array_equal(np.take(np.take_along_axis(flat, got["i"], ax), k, axis=ax),
                                      np.take(expected, k, axis=ax))
    for f in (np.partition, pt.partition, np.argpartition, pt.argpartition):
        with pytest.raises(ValueError, match="out of bounds"):
            f(data if f.__module__.startswith("numpy") else x, 99, axis=axis)
    # numpy returns an array without elements at once: no kth is out of its bounds
    empty = np.zeros((0, 3))
    e = pt.make_placeholder("e", empty.shape, empty.dtype)
    got = pt.generate({"p": pt.partition(e, 99, axis=axis), "i": pt.argpartition(e, [5, -9], axis=axis)}, backend)(e=empty)
    _same(got["p"], np.partition(empty, 99, axis=axis), "partition of (0, 3)")
    _same(got["i"], np.argpartition(empty, [5, -9], axis=axis), "argpartition of (0, 3)")


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.float32, np.float64, np.complex64, np.bool_])
def test_sort_complex_as_numpys(backend, dtype):
    data = (np.array([[3, -1, 2, 0], [1, 1, -2, 5]]) * (1 if dtype != np.uint16 else -1) % 7).astype(dtype)
    x = pt.make_placeholder("x", data.shape, data.dtype)
    _same(pt.generate(pt.sort_complex(x), backend)(x=data), np.sort_complex(data), str(dtype))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_as_numpys(backend, mode):
    # The choices broadcast with the index and each other, in their common dtype.
    index = np.array([[0, 2, 1], [1, 0, 2]]) if mode == "raise" else np.array([[-1, 3, 1], [4, 0, -5]])
    choices = [np.array([10, 20, 30], np.int8), np.array([[0.5], [1.5]], np.float32), np.array(7, np.int64)]
    i = pt.make_placeholder("i", index.shape, index.dtype)
    cs = [pt.make_placeholder(f"c{k}", c.shape, c.dtype) for k, c in enumerate(choices)]
    prg = pt.generate(pt.choose(i, cs, mode=mode), backend)
    inputs = {"i": index, **{f"c{k}": c for k, c in enumerate(choices)}}
    _same(prg(**inputs), np.choose(index, choices, mode=mode), mode)
    if mode == "raise":
        for bad in (np.array([[0, 3, 1], [1, 0, 2]]), np.array([[0, -1, 1], [1, 0, 2]])):
            with pytest.raises(ValueError, match="invalid entry in choice array"):
                np.choose(bad, choices)
            with pytest.raises(ValueError, match="invalid entry in choice array"):
                prg(**{**inputs, "i": bad})
        # The whole index is checked, also where the program uses part of the result.
        first = pt.generate(pt.choose(i, cs, mode=mode)[0], backend)
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            first(**{**inputs, "i": np.array([[0, 1, 1], [1, 0, 9]])})
        _same(first(**inputs), np.choose(index, choices)[0], "after a failure")
    with pytest.raises(TypeError):
        pt.choose(pt.make_placeholder("f", (2,), np.float64), cs)


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.complex128, np.complex64), (np.int32, np.float32)])
def test_matvec_and_vecmat_as_numpys(backend, dtypes):
    rng = np.random.default_rng(2)
    m = (rng.integers(-3, 4, (2, 3, 4)) + (1j * rng.integers(-3, 4, (2, 3, 4)) if np.dtype(dtypes[0]).kind == "c"
                                           else 0)).astype(dtypes[0])
    v4 = rng.integers(-3, 4, (4,)).astype(dtypes[1])
    v3 = (rng.integers(-3, 4, (2, 1, 3)) + (1j if np.dtype(dtypes[1]).kind == "c" else 0)).astype(dtypes[1])
    ph = {k: pt.make_placeholder(k, a.shape, a.dtype) for k, a in (("m", m), ("v4", v4), ("v3", v3))}
    got = pt.generate({"mv": pt.matvec(ph["m"], ph["v4"]), "vm": pt.vecmat(ph["v3"], ph["m"])}, backend)(
        m=m, v4=v4, v3=v3)
    for name, want in (("mv", np.matvec(m, v4)), ("vm", np.vecmat(v3, m))):
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        np.testing.assert_allclose(got[name], want, rtol=1e-6, err_msg=name)
