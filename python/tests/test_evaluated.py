"""EvaluatedArray: results the library holds, read into numpy by copy and put back into DAGs
without one. Expected values are numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt
from conftest import WGPU_UNAVAILABLE

SPECIAL_FLOATS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -5e-324, 1.5]


def _special(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array([True, False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1], dtype=dtype)
    values = np.array(SPECIAL_FLOATS, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if dtype.kind == "c":
            return (values + 1j * values[::-1]).astype(dtype)
        return values.astype(dtype)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_evaluate_returns_the_values_bit_for_bit(backend, dtype):
    data = _special(dtype)
    x = pt.make_placeholder("x", data.shape, data.dtype)
    result = pt.generate(x[::-1], backend=backend).evaluate(x=data)
    assert isinstance(result, pt.EvaluatedArray) and not isinstance(result, np.ndarray)
    assert (result.shape, result.dtype, result.ndim, result.size, len(result)) == (
        data.shape, data.dtype, 1, data.size, len(data))
    got = np.asarray(result)
    assert got.dtype == data.dtype
    assert got.tobytes() == data[::-1].tobytes()
    assert result.get().tobytes() == data[::-1].tobytes()


def test_a_dict_program_returns_a_dict_of_evaluated_arrays():
    x = pt.make_placeholder("x", (3, 0), np.float32)
    s = pt.make_placeholder("s", (), np.float64)
    program = pt.generate({"empty": x * 2, "scalar": s + 1})
    result = program.evaluate(x=np.zeros((3, 0), np.float32), s=np.float64(2.5))
    assert sorted(result) == ["empty", "scalar"]
    assert result["empty"].shape == (3, 0) and result["empty"].size == 0
    assert result["scalar"].shape == () and np.asarray(result["scalar"]) == 3.5
    with pytest.raises(TypeError):
        len(result["scalar"])


def test_reading_into_numpy_copies():
    x = pt.make_placeholder("x", (4,), np.float64)
    evaluated = pt.generate(x + 1).evaluate(x=np.arange(4.0))
    copy = np.asarray(evaluated)
    copy[:] = -1
    np.testing.assert_array_equal(np.asarray(evaluated), np.arange(4.0) + 1)
    with pytest.raises(ValueError, match="without a copy"):
        evaluated.__array__(copy=False)
    np.testing.assert_array_equal(np.asarray(evaluated, dtype=np.int32), np.arange(4) + 1)


def test_data_wrappers_share_the_buffer():
    x = pt.make_placeholder("x", (5,), np.float64)
    evaluated = pt.generate(x * 3).evaluate(x=np.arange(5.0))
    # A wrapper is equal only to a wrapper of the very same buffer: two wrappers of one
    # evaluated array are one node (no copy), two wrappers of one numpy array are not.
    assert pt.make_data_wrapper(evaluated) == pt.make_data_wrapper(evaluated)
    numpy_data = np.arange(5.0)
    assert pt.make_data_wrapper(numpy_data) != pt.make_data_wrapper(numpy_data)
    wrapper = pt.make_data_wrapper(evaluated)
    assert pt.make_data_wrapper(wrapper._evaluated) == wrapper
    # As a wrapped operand and as an input, the same values. Operators do not take evaluated
    # arrays unwrapped: mixing frozen and lazy arrays is what array contexts forbid.
    np.testing.assert_array_equal(pt.generate(wrapper + x)(x=np.ones(5)), np.arange(5.0) * 3 + 1)
    with pytest.raises(TypeError):
        evaluated + x
    np.testing.assert_array_equal(pt.generate(x - 1)(x=evaluated), np.arange(5.0) * 3 - 1)
    chained = pt.generate(x - 1).evaluate(x=evaluated)
    np.testing.assert_array_equal(np.asarray(chained), np.arange(5.0) * 3 - 1)


def test_metadata_goes_with_the_same_buffer():
    from pytato_rs.tags import PrefixNamed

    x = pt.make_placeholder("x", (2, 3), np.float64)
    evaluated = pt.generate(x).evaluate(x=np.ones((2, 3)))
    assert evaluated.tags == frozenset() and evaluated.axes is None
    tagged_expr = x.tagged(PrefixNamed("u")).with_tagged_axis(1, PrefixNamed("dofs"))
    tagged = evaluated.with_metadata(tagged_expr.tags, tagged_expr.axes)
    assert tagged.tags == frozenset({PrefixNamed("u")})
    assert tagged.axes == tagged_expr.axes
    assert pt.make_data_wrapper(tagged) == pt.make_data_wrapper(evaluated)
    rewrapped = pt.make_data_wrapper(tagged, tags=tagged.tags, axes=tagged.axes)
    assert rewrapped.tags_of_type(PrefixNamed) == frozenset({PrefixNamed("u")})
    assert rewrapped.axes[1].tags == frozenset({PrefixNamed("dofs")})


def test_shape_errors_still_name_the_input():
    x = pt.make_placeholder("x", (3,), np.float64)
    evaluated = pt.generate(pt.make_placeholder("y", (4,), np.float64) + 0).evaluate(y=np.zeros(4))
    with pytest.raises(pt.PytatoError, match="x"):
        pt.generate(x + 1)(x=evaluated)


def test_metadata_is_checked():
    x = pt.make_placeholder("x", (2, 3), np.float64)
    evaluated = pt.generate(x).evaluate(x=np.ones((2, 3)))
    with pytest.raises(TypeError, match="frozenset"):
        evaluated.with_metadata({1})
    with pytest.raises(ValueError, match="2 Axis objects"):
        evaluated.with_metadata(frozenset(), x.axes[:1])
    assert evaluated.with_metadata(frozenset(), None).axes is None


def test_pickles_as_a_copy_with_its_metadata():
    import pickle

    from pytato_rs.tags import PrefixNamed

    x = pt.make_placeholder("x", (3,), np.float32)
    named = x.tagged(PrefixNamed("u"))
    evaluated = pt.generate(x * -1).evaluate(x=np.array([1.5, -0.0, np.nan], np.float32))
    evaluated = evaluated.with_metadata(named.tags, named.axes)
    loaded = pickle.loads(pickle.dumps(evaluated))
    assert isinstance(loaded, pt.EvaluatedArray)
    assert loaded.get().tobytes() == evaluated.get().tobytes()
    assert loaded.tags == evaluated.tags and loaded.axes == evaluated.axes
    assert pt.make_data_wrapper(loaded) != pt.make_data_wrapper(evaluated), "a copy"


def _chain_values(dtype):
    """Inputs of the two-program chain below, with numpy's answers: signed zeros, infinities,
    NaN, subnormals (float32's included) and integer extremes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        x = np.array([info.min, info.max, -1, 0, 7], dtype=dtype)
    else:
        x = np.array([3.0, -0.0, np.inf, np.nan, 1e-40, -7.25], dtype=np.float64).astype(dtype)
    with np.errstate(all="ignore"):
        u = x * dtype.type(2) - dtype.type(1)
        v = u * x + u
    return x, u, v


def _assert_same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":
        real = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_results_stay_where_the_backend_computes(backend, dtype):
    x_values, u_want, v_want = _chain_values(dtype)
    x = pt.make_placeholder("x", x_values.shape, x_values.dtype)
    u = pt.generate(x * 2 - 1, backend=backend).evaluate(x=x_values)
    # wgpu keeps its results on the GPU; the host backends compute in host memory.
    assert u.on_device == (backend == "wgpu")
    # Thawed into a DAG (no copy), the second program reads it where it is.
    wrapped = pt.make_data_wrapper(u)
    v = pt.generate(wrapped * x + wrapped, backend=backend).evaluate(x=x_values)
    assert v.on_device == u.on_device
    _assert_same(v, v_want)
    _assert_same(u.get(), u_want)
    # As an input: evaluated, called (a numpy result) and written into an array.
    square = pt.generate(x * x, backend=backend)
    with np.errstate(all="ignore"):
        square_want = u_want * u_want
    assert square.evaluate(x=u).on_device == u.on_device
    _assert_same(square.evaluate(x=u), square_want)
    _assert_same(square(x=u), square_want)
    out = np.empty_like(u_want)
    square.run_into(out, x=u)
    _assert_same(out, square_want)
    # The wrapper itself as the output: the same values.
    _assert_same(pt.generate(wrapped + 0, backend=backend).evaluate(), u_want)
    import pickle

    _assert_same(pickle.loads(pickle.dumps(u)).get(), u_want)
    assert "EvaluatedArray(" in repr(u)


@pytest.mark.skipif(WGPU_UNAVAILABLE is not None, reason=str(WGPU_UNAVAILABLE))
@pytest.mark.parametrize("other", [name for name, _ in pt.backends() if name != "wgpu"])
def test_gpu_results_feed_host_backends(other):
    x_values, u_want, v_want = _chain_values("float64")
    x = pt.make_placeholder("x", x_values.shape, x_values.dtype)
    u = pt.generate(x * 2 - 1, backend="wgpu").evaluate(x=x_values)
    assert u.on_device
    wrapped = pt.make_data_wrapper(u)
    _assert_same(pt.generate(wrapped * x + wrapped, backend=other)(x=x_values), v_want)
    result = pt.generate(x * 1, backend=other).evaluate(x=u)
    assert not result.on_device
    _assert_same(result, u_want)
    # And back: a host result on the GPU.
    _assert_same(pt.generate(x * 2 - 1, backend="wgpu").evaluate(x=result), 2 * u_want - 1)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "uint64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_to_device_holds_a_copy_on_the_backend(backend, dtype):
    source = _special(dtype)
    want = source.copy()
    held = pt.to_device(source, backend=backend)
    assert isinstance(held, pt.EvaluatedArray)
    assert held.on_device == (backend == "wgpu")
    assert (held.shape, held.dtype) == (want.shape, want.dtype)
    source[...] = source[::-1]  # a copy: the source may change afterwards
    assert held.get().tobytes() == want.tobytes()
    x = pt.make_placeholder("x", want.shape, want.dtype)
    reverse = pt.generate(x[::-1], backend=backend)
    assert reverse.evaluate(x=held).get().tobytes() == want[::-1].tobytes()
    wrapped = pt.make_data_wrapper(held)
    assert pt.generate(wrapped[::-1], backend=backend)().tobytes() == want[::-1].tobytes()
    if held.on_device:
        assert pt.to_device(held, backend=backend) is held, "already on the device"


def test_to_device_keeps_metadata_and_refuses_what_numpy_cannot_hold(backend):
    from pytato_rs.tags import PrefixNamed

    x = pt.make_placeholder("x", (2,), np.float64).tagged(PrefixNamed("u"))
    evaluated = pt.generate(x, backend="interp").evaluate(x=np.array([1.0, -0.0]))
    evaluated = evaluated.with_metadata(x.tags, x.axes)
    held = pt.to_device(evaluated, backend=backend)
    assert held.tags == frozenset({PrefixNamed("u")}) and held.axes == x.axes
    assert held.get().tobytes() == np.array([1.0, -0.0]).tobytes()
    with pytest.raises(TypeError):
        pt.to_device(np.array([object()]), backend=backend)
    with pytest.raises(pt.PytatoError, match="nope"):
        pt.to_device(np.zeros(2), backend="nope")


def test_results_of_a_failed_run_are_never_read_as_good(backend):
    """An index out of range found by a run on evaluated arrays: the host backends raise at once;
    wgpu only enqueues and reports it at the next wait. Its results, and what is computed from
    them before that wait (by a program, and by a running sum and a compaction, steps of their
    own), report the run's error whenever they are read or used, not once: they were read back
    as good values after the wait had reported the error (``[0., 0., 2.]``, what the failed run
    left)."""
    n = 1000
    x = pt.make_placeholder("x", (n,), np.float64)
    i = pt.make_placeholder("i", (4,), np.int64)
    u = pt.make_placeholder("u", (4,), np.float64)
    gather = pt.generate(pt.take(x, i), backend=backend)
    double = pt.generate(u * 2, backend=backend)
    running = pt.generate(pt.cumsum(u), backend=backend)
    positive = pt.generate(u[u > 0], backend=backend)  # a compaction: its count is read back
    held = pt.to_device(np.arange(n, dtype=np.float64), backend=backend)
    bad = np.array([0, 1, n + 5, 2])
    if backend != "wgpu":
        with pytest.raises(IndexError, match="1005"):
            gather.evaluate(x=held, i=bad)
        return
    failed = gather.evaluate(x=held, i=bad)
    doubled, summed, kept = double.evaluate(u=failed), running.evaluate(u=failed), positive.evaluate(u=failed)
    good = double.evaluate(u=gather.evaluate(x=held, i=np.array([3, 2, 1, 0])))
    with pytest.raises(IndexError, match="1005"):
        pt.generate(x + 1, backend=backend)(x=np.zeros(n))  # the next wait reports it
    for _ in range(2):
        for result in (failed, doubled, summed, kept):
            with pytest.raises(IndexError, match="1005"):
                np.asarray(result)
        with pytest.raises(IndexError, match="1005"):
            double.evaluate(u=failed)
        with pytest.raises(IndexError, match="1005"):
            pt.generate(pt.make_data_wrapper(failed) + 1, backend=backend)()
    assert np.asarray(good).tolist() == [6.0, 4.0, 2.0, 0.0]
