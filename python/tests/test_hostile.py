"""Hostile and careless input never aborts the process, panics into Python, hangs or gives a
wrong value: each case runs in a child process of its own (with a time limit, and a memory limit
where it matters), so that an abort or a hang is a failing test, not a lost test run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pytato_rs as pt

PRELUDE = """
import numpy as np, pytato_rs as pt
"""


def run_child(code: str, backend: str, timeout: float = 120, memory_gib: float | None = None) -> str:
    """Runs `code` (with `backend` bound) in a fresh interpreter; returns its output. Fails the
    test on a signal, a non-zero exit or a timeout."""
    limit = ""
    if memory_gib is not None:
        limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({int(memory_gib * 2**30)},) * 2)\n"
    source = limit + PRELUDE + f"backend = {backend!r}\n" + textwrap.dedent(code)
    try:
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, RUST_BACKTRACE="0"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {timeout} s (a hang)")
    assert done.returncode == 0, f"exit status {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "PanicException" not in done.stdout + done.stderr, done.stderr
    return done.stdout


def test_allocations_that_cannot_succeed_are_memory_errors(backend):
    if backend == "wgpu":
        pytest.skip("the wgpu backend refuses such buffers by the adapter's limits (tested in Rust)")
    out = run_child("""
        prg = pt.generate(pt.zeros((10**15 // 8,)), backend)
        try:
            prg()
        except MemoryError as e:
            assert isinstance(e, pt.PytatoError), type(e)
            print("memory error")
        x = pt.make_placeholder("x", (2**59,), np.float64)
        huge = np.broadcast_to(np.zeros(1), (2**59,))
        try:
            pt.generate(pt.sum(x), backend)(x=huge)
        except pt.PytatoError as e:
            print("refused:", type(e).__name__)
        # The interpreter reads an input where it lies: one element of a broadcast input costs no
        # copy of 2**59. A compiled backend copies such an input to row-major first, and says so.
        try:
            print("element", float(pt.generate(x[2**58] + 1.0, backend)(x=huge)))
        except MemoryError as e:
            print("refused:", type(e).__name__)
    """, backend, memory_gib=8)
    assert "memory error" in out
    assert "refused: OutOfMemoryError" in out or "refused: UnsupportedError" in out, out
    if backend == "interp":
        assert "element 1.0" in out, out


def test_bool_bytes_beyond_one_read_as_numpy_reads_them(backend):
    raw = np.array([0, 2, 0, 255, 1], np.uint8).view(np.bool_)
    x = pt.make_placeholder("x", (5,), np.float64)
    b = pt.make_placeholder("b", (5,), np.bool_)
    prg = pt.generate({"sel": x[b], "not": pt.logical_not(b), "i": b.astype(np.int32),
                       "w": pt.where(b, x, -x), "n": pt.sum(b)}, backend)
    data = np.arange(5.0)
    got = prg(x=data, b=raw)
    truth = raw.view(np.uint8) != 0
    np.testing.assert_array_equal(got["sel"], data[truth])
    np.testing.assert_array_equal(got["not"], ~truth)
    np.testing.assert_array_equal(got["i"], truth.astype(np.int32))
    np.testing.assert_array_equal(got["w"], np.where(truth, data, -data))
    assert got["n"] == 3
    # A boolean output with such bytes is overwritten with proper ones.
    out = np.array([7, 0, 9, 0, 3], np.uint8).view(np.bool_)
    pt.generate(pt.logical_not(b), backend).run_into(out, b=raw)
    np.testing.assert_array_equal(out.view(np.uint8), (~truth).astype(np.uint8))


def test_arrays_numpy_allows_are_errors_or_values_never_panics(backend):
    x = pt.make_placeholder("x", (4,), np.float64)
    prg = pt.generate(x * 2, backend)
    unaligned = np.zeros(33, np.uint8)[1:].view(np.float64)
    unaligned[:] = [1, 2, 3, 4]
    np.testing.assert_array_equal(prg(x=unaligned), [2, 4, 6, 8])
    with pytest.raises(pt.InvalidArgumentError, match="aligned"):
        prg.run_into(unaligned, x=np.ones(4))
    shared = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(4,), strides=(0,), writeable=True)
    with pytest.raises(pt.InvalidArgumentError, match="share memory"):
        prg.run_into(shared, x=np.ones(4))
    with pytest.raises(pt.ArgumentTypeError):
        prg.run_into([0.0] * 4, x=np.ones(4))
    with pytest.raises(pt.PytatoError):
        prg(x=np.array(["a"] * 4))


@pytest.mark.parametrize("step", [-2**63, 2**63 - 1, -2**62, 3])
def test_extreme_slices_as_numpy(backend, step):
    y = pt.make_placeholder("y", (5,), np.float64)
    data = np.arange(5.0)
    for start in (None, 0, 4, -1, 2**63 - 1, -2**63):
        expr = y[start::step]
        np.testing.assert_array_equal(pt.generate(expr, backend)(y=data), data[start::step])


def test_slice_bounds_beyond_int64_are_clamped_and_integers_beyond_it_refused_as_numpy(backend):
    y = pt.make_placeholder("y", (5,), np.float64)
    data = np.arange(5.0)
    for key in (slice(10**20, None, -2), slice(-10**20, 10**20), slice(None, -10**20, -1),
                slice(None, None, 10**20), slice(None, None, -10**20), (Ellipsis, slice(3, 10**30))):
        np.testing.assert_array_equal(pt.generate(y[key], backend)(y=data), data[key])
    for key in (10**30, -10**30, (slice(None), 10**20)):
        with pytest.raises(IndexError):
            data[key]
        with pytest.raises(IndexError):
            y[key]


def test_integer_powers_and_empty_reductions_raise_as_numpy(backend):
    x = pt.make_placeholder("x", (3,), np.int32)
    y = pt.make_placeholder("y", (3,), np.int32)
    prg = pt.generate(x ** y, backend)
    with pytest.raises(ValueError):
        np.array([1, 2, 3], np.int32) ** np.array([1, -1, 0], np.int32)
    with pytest.raises(pt.InvalidArgumentError, match="negative integer powers"):
        prg(x=np.array([1, 2, 3], np.int32), y=np.array([1, -1, 0], np.int32))
    np.testing.assert_array_equal(prg(x=np.array([1, 2, 3], np.int32), y=np.array([3, 2, 0], np.int32)), [1, 4, 1])


def test_every_error_is_a_pytato_error():
    x = pt.make_placeholder("x", (3,), np.float64)
    attempts = [
        lambda: pt.generate(x)(x=np.zeros(4)),
        lambda: pt.generate(x)(x=np.zeros(3, np.float32)),
        lambda: pt.generate(x)(),
        lambda: pt.generate(x).run_into([1, 2, 3], x=np.zeros(3)),
        lambda: pt.generate(x + 1).run_into(np.zeros(3, np.float32), x=np.zeros(3)),
        lambda: pt.make_placeholder("x", (2.5,), np.float64),
        lambda: pt.add(x, "a string"),  # (`x + "a string"` is Python's own TypeError: NotImplemented)
        lambda: x[1.5],
        lambda: pt.make_placeholder("x", (3,), "float128"),
        lambda: pt.generate(x, backend="no such backend"),
        lambda: x.at[5].set(1.0),
        lambda: pt.generate(x)(x=np.zeros((3, 1))),
    ]
    for attempt in attempts:
        try:
            attempt()
        except pt.PytatoError:
            continue
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"{type(e).__name__} is not a PytatoError: {e}")
        pytest.fail("no error")


def test_input_shape_errors_read_well():
    n = pt.make_size_param("n")
    u = pt.make_placeholder("u", (n, 3), np.float64)
    with pytest.raises(pt.InputShapeError) as info:
        pt.generate(u + 1)(u=np.zeros((3, 4)))
    assert "dimension 2 is 4, expected 3" in str(info.value), info.value
    with pytest.raises(pt.IndexOutOfBoundsError, match="index -5 is out of bounds for axis 0 with size 3"):
        pt.generate(pt.make_placeholder("v", (n,), np.float64)[-5])(v=np.zeros(3))


def test_ten_thousand_programs_keep_memory_flat(backend):
    """Programs compiled one after another, each run once and dropped: the process's memory
    stays flat (the program and pipeline caches are bounded, constants do not make new
    shaders)."""
    out = run_child("""
        import gc
        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096
        x = pt.make_placeholder("x", (16,), np.float64)
        data = np.arange(16.0)
        def program(k):
            c = 1.0 + k * 1e-4
            prg = pt.generate(pt.sin(x * c) + k, backend)
            got = prg(x=data)
            assert np.allclose(got, np.sin(data * c) + k), k
        for k in range(500):  # warm: caches fill, allocators settle
            program(k)
        gc.collect()
        before = rss()
        for k in range(500, 10_500):
            program(k)
        gc.collect()
        print("grew", (rss() - before) / 2**20)
    """, backend, timeout=600)
    grew = float(out.split("grew")[1])
    assert grew < 64, f"memory grew by {grew:.1f} MiB over 10,000 programs"


def test_a_forked_child_gets_an_error_not_a_hang(backend):
    if backend != "wgpu":
        pytest.skip("only the wgpu backend holds a device a fork cannot share")
    out = run_child("""
        import os
        x = pt.make_placeholder("x", (3,), np.float32)
        prg = pt.generate(x + 1, "wgpu")
        assert (prg(x=np.zeros(3, np.float32)) == 1).all()
        pid = os.fork()
        if pid == 0:
            try:
                prg(x=np.zeros(3, np.float32))
                code = 3
            except pt.UnsupportedError as e:
                code = 0 if "fork" in str(e) else 4
            try:
                pt.generate(x * 2, "wgpu")
                code = 5
            except pt.UnsupportedError:
                pass
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        assert (prg(x=np.ones(3, np.float32)) == 2).all()  # the parent's device still works
    """, backend, timeout=120)
    assert "child exit 0" in out, out


def test_arguments_found_by_random_calls_are_errors_not_panics():
    # A random-call probe of every function found these two panicking into Python. Widths of
    # 2**63 are numpy's TypeError (not of a signed integer type); 2**62 overflows the shape.
    for width in (2**63, (2**63, 2**63)):
        with pytest.raises(TypeError):
            pt.pad(pt.make_placeholder("x", (1,), np.float64), width)
    with pytest.raises(pt.OverflowError):
        pt.pad(pt.make_placeholder("x", (1,), np.float64), 2**62)
    assert pt.get_placeholder_data_flow_svg({"a": 1}).startswith("<svg")


@pytest.mark.parametrize("ndim", [32, 33, 40, 64])
def test_arrays_of_up_to_64_axes_cross_both_ways(backend, ndim):
    """numpy allows 64 axes, rust-numpy's views 32 (it panicked beyond them), and the wgpu
    backend named the index of axis 32 `i32`, which shadows WGSL's type."""
    rng = np.random.default_rng(ndim)
    shape = (1,) * (ndim - 3) + (2, 1, 3)
    a = rng.standard_normal(shape)
    x = pt.make_placeholder("x", shape, np.float64)
    prg = pt.generate(pt.make_dict_of_named_arrays({"y": 2 * x + 1, "t": pt.transpose(x), "m": x.max(axis=-1)}),
                      backend)
    for given in (a, np.asfortranarray(a), np.ascontiguousarray(a[..., ::-1])[..., ::-1]):
        got = prg(x=given)
        np.testing.assert_array_equal(got["y"], 2 * a + 1, strict=True)
        np.testing.assert_array_equal(got["t"], a.T, strict=True)
        np.testing.assert_array_equal(got["m"], a.max(axis=-1), strict=True)
    out = np.zeros(shape)
    pt.generate(x * 3, backend).run_into(out, x=a)
    np.testing.assert_array_equal(out, a * 3)
    np.testing.assert_array_equal(pt.generate(pt.make_data_wrapper(a) - 1, backend)(), a - 1, strict=True)
    if ndim > 32:
        with pytest.raises(ValueError, match="C-contiguous"):
            pt.generate(x * 3, backend).run_into(np.zeros(shape[::-1]).T, x=a)


def test_results_of_more_axes_than_numpy_allows_are_value_errors(backend):
    x = pt.make_placeholder("x", (2,), np.float64)
    with pytest.raises(ValueError, match="numpy allows at most 64"):
        pt.generate(x.reshape((1,) * 70 + (2,)), backend)(x=np.arange(2.0))
    np.testing.assert_array_equal(pt.generate(x.reshape((1,) * 63 + (2,)), backend)(x=np.arange(2.0)),
                                  np.arange(2.0).reshape((1,) * 63 + (2,)), strict=True)


def test_masked_arrays_are_refused_not_read_without_their_masks(backend):
    """``numpy.asarray`` drops a masked array's mask: an input, an operand or a data wrapper
    read so gave values where numpy's masked arithmetic gives masked elements."""
    x = pt.make_placeholder("x", (3,), np.float64)
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    prg = pt.generate(x * 2, backend)
    for attempt in (lambda: prg(x=masked), lambda: x + masked, lambda: pt.make_data_wrapper(masked)):
        with pytest.raises(TypeError, match="masked arrays are not supported"):
            attempt()
    np.testing.assert_array_equal(prg(x=masked.filled(0.0)), [2.0, 0.0, 6.0])
    subclass = type("Subclass", (np.ndarray,), {})
    np.testing.assert_array_equal(prg(x=np.arange(3.0).view(subclass)), [0.0, 2.0, 4.0])  # other subclasses


def test_empty_arrays_with_numpys_strides(backend):
    # numpy gives empty arrays non-zero strides ((16, 4) for a float32 (0, 4) made by reshape);
    # ndarray's copies of such views failed its own layout check, a PanicException in debug
    # builds, in the scan and sort host steps (found by red_sweep.py, seed 3132).
    for shape, axis in (((0, 4), 0), ((0, 4), 1), ((3, 0), 0), ((2, 0, 3), 2)):
        data = np.array([], np.float32).reshape(shape)
        assert any(data.strides)
        x = pt.make_placeholder("x", shape, np.float32)
        outputs = {
            "cumsum": pt.cumsum(x, axis=axis),
            "cumprod": pt.cumprod(x, axis=axis),
            "sort": pt.sort(x, axis=axis),
            "argsort": pt.argsort(x, axis=axis),
            "flip": pt.flip(x, axis=axis),
            "sum": pt.sum(x, axis=axis),
            "scatter": x.at[..., 0:0].add(1.0) if shape[-1] else x.at[0:0].set(2.0),
            "wrapped": pt.make_data_wrapper(data) * 2,
        }
        expected = {
            "cumsum": np.cumsum(data, axis=axis), "cumprod": np.cumprod(data, axis=axis),
            "sort": np.sort(data, axis=axis), "argsort": np.argsort(data, axis=axis),
            "flip": np.flip(data, axis=axis), "sum": np.sum(data, axis=axis),
            "scatter": data, "wrapped": data * 2,
        }
        prg = pt.generate(outputs, backend)
        got = prg(x=data)
        for name, want in expected.items():
            assert got[name].shape == want.shape and got[name].dtype == want.dtype, (shape, axis, name)
        out = np.array([], np.float32).reshape(shape)
        pt.generate(pt.cumsum(x, axis=axis), backend).run_into(out, x=data)
        assert out.shape == shape
