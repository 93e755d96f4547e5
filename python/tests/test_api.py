"""pytato's API: inputs, shapes, dtypes, operators, methods, tags, transforms, drawing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import pytato_rs as pt
from pytato_rs.tags import Tag, UniqueTag


def test_placeholder_shape_dtype_and_size_params():
    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n, 3), np.float32)
    assert x.name == "x" and x.ndim == 2 and x.dtype == np.float32
    assert x.shape[1] == 3 and str(x.shape[0]) == "n" and x.shape[0].params == ["n"]
    # A shape a node returns is a shape a node takes.
    y = pt.make_placeholder("y", x.shape, "float32")
    assert y.shape == x.shape
    assert pt.make_placeholder("z", (2 * 0 + 4,), float).dtype == np.float64
    with pytest.raises(ValueError, match="not known"):
        x.size
    with pytest.raises(ValueError, match="overflows"):
        pt.make_placeholder("big", (2**62, 2**62)).size
    assert pt.make_placeholder("w", (2, 3)).size == 6
    # numpy's itemsize and nbytes
    for dtype in (np.bool_, np.int16, np.float32, np.complex128):
        assert pt.make_placeholder("w", (2, 3), dtype).itemsize == np.zeros((2, 3), dtype).itemsize
        assert pt.make_placeholder("w", (2, 3), dtype).nbytes == np.zeros((2, 3), dtype).nbytes
    with pytest.raises(ValueError, match="not known"):
        x.nbytes
    with pytest.raises(ValueError, match="overflow"):
        pt.make_placeholder("big", (2**60, 4)).nbytes  # 2**62 elements, 2**65 bytes
    assert len(pt.make_placeholder("v", (5, 2))) == 5


def test_structural_equality_and_hashing():
    x = pt.make_placeholder("x", (3,), np.float64)
    a, b = pt.sin(x) + 1, pt.sin(x) + 1
    assert a == b and hash(a) == hash(b) and a is not b
    assert (a != pt.cos(x) + 1) and not (a != b)
    assert len({a, b, pt.cos(x)}) == 2


def test_operators_match_numpy(backend):
    x = pt.make_placeholder("x", (4,), np.float64)
    y = pt.make_placeholder("y", (4,), np.float64)
    i = pt.make_placeholder("i", (4,), np.int32)
    outputs = {
        "arith": (x + y) * 2 - y / 3 + 1 / (x + 10) - (-x) ** 2 + abs(y) + (+x),
        "floordiv": x // 0.5 + x % 0.75,
        "compare": (x < y) & (x <= 0.5) | (y > x) ^ (y >= 0),
        "ints": (i << 2) >> 1 | (~i & 7),
        "matmul": pt.reshape(x, (2, 2)) @ pt.reshape(y, (2, 2)),
        "rmatmul": np.eye(2) @ pt.reshape(x, (2, 2)),
        "scalars": 2 ** (i & 3) + 3 - x,
        "mixed": np.arange(4.0) + x,
    }
    xv, yv = np.array([0.25, -1.5, 2.0, 0.0]), np.array([1.0, 0.5, -3.0, 2.5])
    iv = np.array([1, -2, 3, 0], np.int32)
    got = pt.generate(pt.make_dict_of_named_arrays(outputs), backend)(x=xv, y=yv, i=iv)
    expected = {
        "arith": (xv + yv) * 2 - yv / 3 + 1 / (xv + 10) - (-xv) ** 2 + abs(yv) + (+xv),
        "floordiv": xv // 0.5 + xv % 0.75,
        "compare": (xv < yv) & (xv <= 0.5) | (yv > xv) ^ (yv >= 0),
        "ints": (iv << 2) >> 1 | (~iv & 7),
        "matmul": xv.reshape(2, 2) @ yv.reshape(2, 2),
        "rmatmul": np.eye(2) @ xv.reshape(2, 2),
        "scalars": 2 ** (iv & 3) + 3 - xv,
        "mixed": np.arange(4.0) + xv,
    }
    for name, value in expected.items():
        assert got[name].dtype == value.dtype, name
        np.testing.assert_allclose(got[name], value, rtol=1e-14, err_msg=name)


def test_methods_and_indexing_match_numpy():
    a = pt.make_placeholder("a", (2, 3, 4), np.float64)
    av = np.arange(24.0).reshape(2, 3, 4) - 7.5
    cases = {
        "T": (a.T, av.T),
        "transpose": (a.transpose(1, 0, 2), av.transpose(1, 0, 2)),
        "reshape": (a.reshape(6, 4), av.reshape(6, 4)),
        "reshape_f": (a.reshape((4, 6), order="F"), av.reshape((4, 6), order="F")),
        "sum": (a.sum(axis=(0, 2), keepdims=True), av.sum(axis=(0, 2), keepdims=True)),
        "max": (a.max(axis=1), av.max(axis=1)),
        "min": (a.min(), av.min()),
        "mean": (a.mean(axis=-1), av.mean(axis=-1)),
        "prod": (a[0, :2].prod(axis=0), av[0, :2].prod(axis=0)),
        "any": ((a > 10).any(axis=0), (av > 10).any(axis=0)),
        "index": (a[1, ::-2, None, ...], av[1, ::-2, None, ...]),
        "fancy": (a[:, [2, 0], 1], av[:, [2, 0], 1]),
        "mask": (a[a > 0], av[av > 0]),
        "ravel": (a.ravel(), av.ravel()),
        "astype": (a.astype(np.int16), av.astype(np.int16)),
        "real_conj": ((a * 1j).conj().imag, (av * 1j).conj().imag),
        "at_set": (a.at[0, 1].set(-1.0), np.where(np.arange(24).reshape(2, 3, 4) // 4 == 1, -1.0, av)),
    }
    prg = pt.generate({name: expr for name, (expr, _) in cases.items()})
    got = prg(a=av)
    for name, (_, expected) in cases.items():
        assert got[name].dtype == expected.dtype, name
        np.testing.assert_allclose(got[name], expected, err_msg=name)


def test_functions_match_numpy():
    x = pt.make_placeholder("x", (3, 4), np.float64)
    xv = np.linspace(-2, 2, 12).reshape(3, 4)
    cases = {
        "einsum": (pt.einsum("ij,kj->ik", x, x), np.einsum("ij,kj->ik", xv, xv)),
        "where": (pt.where(x > 0, x, 0.5), np.where(xv > 0, xv, 0.5)),
        "stack": (pt.stack([x, 2 * x], axis=1), np.stack([xv, 2 * xv], axis=1)),
        "concatenate": (pt.concatenate([x, x[:1]], axis=0), np.concatenate([xv, xv[:1]], axis=0)),
        "roll": (pt.roll(x, (1, -2), axis=(0, 1)), np.roll(xv, (1, -2), axis=(0, 1))),
        "roll_flat": (pt.roll(x, 5), np.roll(xv, 5)),
        "amax": (pt.amax(x, axis=0), np.amax(xv, axis=0)),
        "amin_initial": (pt.amin(x, initial=-0.5), np.amin(xv, initial=-0.5)),
        "sum_dtype": (pt.sum(x > 0, dtype=np.int8), np.sum(xv > 0, dtype=np.int8)),
        "var": (pt.var(x, axis=1, ddof=1), np.var(xv, axis=1, ddof=1)),
        "std": (pt.std(x, correction=1), np.std(xv, ddof=1)),
        "argmax": (pt.argmax(x, axis=1), np.argmax(xv, axis=1)),
        "sort": (pt.sort(-x, axis=0), np.sort(-xv, axis=0)),
        "argsort_flat": (pt.argsort(pt.abs(x), axis=None), np.argsort(np.abs(xv), axis=None, kind="stable")),
        "cumsum": (pt.cumsum(x, axis=1), np.cumsum(xv, axis=1)),
        "pad": (pt.pad(x, ((1, 0), (0, 2)), mode="reflect"), np.pad(xv, ((1, 0), (0, 2)), mode="reflect")),
        "clip": (pt.clip(x, -1, 1), np.clip(xv, -1, 1)),
        "tensordot": (pt.tensordot(x, x, axes=([1], [1])), np.tensordot(xv, xv, axes=([1], [1]))),
        "moveaxis": (pt.moveaxis(x[None], 0, -1), np.moveaxis(xv[None], 0, -1)),
        "eye": (pt.eye(3, 4, k=1) * x, np.eye(3, 4, k=1) * xv),
        "arange": (pt.arange(4) + x, np.arange(4) + xv),
        "linspace": (pt.linspace(0, 1, 4) * x, np.linspace(0, 1, 4) * xv),
        "full_like": (pt.full_like(x, 7, dtype=np.int32), np.full_like(xv, 7, dtype=np.int32)),
        "tril": (pt.tril(x, -1), np.tril(xv, -1)),
        "diff": (pt.diff(x, n=2), np.diff(xv, n=2)),
        "round": (pt.round(x * 10, 0) + pt.round(x, 1), np.round(xv * 10, 0) + np.round(xv, 1)),
        "data": (x * pt.make_data_wrapper(np.arange(4.0)), xv * np.arange(4.0)),
        "searchsorted": (pt.searchsorted(pt.ravel(x), np.array([0.1, -5.0]), side="right"),
                         np.searchsorted(xv.ravel(), np.array([0.1, -5.0]), side="right")),
    }
    got = pt.generate({name: expr for name, (expr, _) in cases.items()})(x=xv)
    for name, (_, expected) in cases.items():
        assert got[name].dtype == expected.dtype, name
        assert got[name].shape == expected.shape, name
        np.testing.assert_allclose(got[name], expected, rtol=1e-12, atol=1e-15, err_msg=name)


def test_data_dependent_lengths():
    x = pt.make_placeholder("x", (6,), np.float64)
    values, counts = pt.unique_counts(x)
    prg = pt.generate({"kept": x[x > 0], "nz": pt.nonzero(x)[0], "values": values, "counts": counts})
    xv = np.array([1.0, -2.0, 1.0, 0.0, 3.0, -2.0])
    got = prg(x=xv)
    np.testing.assert_array_equal(got["kept"], xv[xv > 0])
    np.testing.assert_array_equal(got["nz"], np.nonzero(xv)[0])
    expected_values, expected_counts = np.unique(xv, return_counts=True)
    np.testing.assert_array_equal(got["values"], expected_values)
    np.testing.assert_array_equal(got["counts"], expected_counts)


def test_every_dtype_round_trips(backend):
    for dtype in [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float16, np.float32, np.float64, np.complex64, np.complex128]:
        x = pt.make_placeholder("x", (2, 3), dtype)
        data = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
        try:
            got = pt.generate(x[::-1], backend)(x=data)
        except pt.UnsupportedError as e:  # wgpu without 64-bit types on this adapter
            assert backend == "wgpu", e
            continue
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, data[::-1])


def test_special_values_and_empty_arrays(backend):
    x = pt.make_placeholder("x", (pt.make_size_param("n"),), np.float64)
    prg = pt.generate({"s": pt.sum(x), "m": pt.maximum(x, 0.0), "sign": pt.signbit(x), "min": pt.amin(x, initial=np.inf)},
                      backend)
    xv = np.array([np.nan, -0.0, np.inf, -np.inf, 1e308])
    got = prg(x=xv)
    assert np.isnan(got["s"])
    np.testing.assert_array_equal(got["m"], np.maximum(xv, 0.0))
    np.testing.assert_array_equal(got["sign"], np.signbit(xv))
    got = prg(x=np.zeros(0))
    assert got["s"] == 0.0 and got["m"].shape == (0,) and got["min"] == np.inf


def test_inputs_of_any_layout_are_read_in_place():
    x = pt.make_placeholder("x", (3, 2), np.float64)
    prg = pt.generate(x * 1.0)
    base = np.arange(24.0).reshape(4, 6)
    for view in [base[::2, 1:5:2][:, ::-1][:3] if False else base[1:4, ::-3], base[:3, :2].T.T,
                 np.asfortranarray(base[:3, :2]), base[::-1, ::-1][:3, :2]]:
        np.testing.assert_array_equal(prg(x=view), view)
    # Lists go through numpy.asarray.
    np.testing.assert_array_equal(prg(x=[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), [[1, 2], [3, 4], [5, 6]])


def test_run_into_writes_the_callers_arrays():
    x = pt.make_placeholder("x", (3,), np.float64)
    prg = pt.generate({"double": 2 * x, "neg": -x})
    double, neg = np.zeros(3), np.zeros(3)
    assert prg.run_into({"double": double, "neg": neg}, x=np.array([1.0, 2.0, 3.0])) is None
    np.testing.assert_array_equal(double, [2, 4, 6])
    np.testing.assert_array_equal(neg, [-1, -2, -3])
    # A strided output array is written in place too.
    wide = np.zeros(6)
    pt.generate(2 * x).run_into(wide[::2], x=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(wide, [2, 0, 4, 0, 6, 0])


def test_results_are_owned_numpy_arrays():
    x = pt.make_placeholder("x", (1000,), np.float64)
    out = pt.generate(x + 1)(x=np.zeros(1000))
    assert isinstance(out, np.ndarray) and out.flags.c_contiguous and out.flags.writeable
    out[0] = 5.0  # the caller owns it


@dataclass(frozen=True)
class ElementAxis(UniqueTag):
    pass


@dataclass(frozen=True)
class DofAxis(UniqueTag):
    pass


@dataclass(frozen=True)
class Note(Tag):
    text: str


def test_tags_on_arrays_axes_and_results():
    x = pt.make_placeholder("x", (4, 3), np.float64, tags=Note("input"))
    assert x.tags == frozenset({Note("input")})
    y = (2 * x).tagged([pt.tags.ImplStored(), pt.tags.PrefixNamed("twice")])
    assert pt.tags.ImplStored() in y.tags and pt.tags.PrefixNamed("twice") in y.tags
    assert y.without_tags(pt.tags.ImplStored()).tags == frozenset({pt.tags.PrefixNamed("twice")})
    z = x.with_tagged_axis(0, ElementAxis()).with_tagged_axis(1, DofAxis())
    assert z.axes[0].tags == frozenset({ElementAxis()}) and z.axes[1].tags == frozenset({DofAxis()})
    # One tag per unique family.
    with pytest.raises(pt.UniqueTagConflictError):
        y.tagged(pt.tags.ImplInlined())
    with pytest.raises(TypeError, match="hashable"):
        x.tagged({"a": 1}.keys() and [[]])
    d = pt.make_dict_of_named_arrays({"y": y}).tagged(Note("result"))
    assert Note("result") in d.tags
    # Tags the backends act on work from Python: a stored, named node computes the same.
    np.testing.assert_array_equal(pt.generate(y)(x=np.ones((4, 3))), 2 * np.ones((4, 3)))


def test_unify_axes_tags_propagates_python_tags():
    u = pt.make_placeholder("u", (5, 3), np.float64).with_tagged_axis(0, ElementAxis()).with_tagged_axis(1, DofAxis())
    d = pt.make_placeholder("d", (3, 3), np.float64)
    out = pt.einsum("ej,ij->ei", u, d) + u  # the sum unifies the einsum's axes with u's
    unified = pt.unify_axes_tags(out)
    assert unified.axes[0].tags == frozenset({ElementAxis()})
    assert unified.axes[1].tags == frozenset({DofAxis()})
    # Only tags of the class asked for.
    only_elements = pt.unify_axes_tags(out, tag_t=ElementAxis)
    assert only_elements.axes[0].tags == frozenset({ElementAxis()}) and not only_elements.axes[1].tags


def test_unify_axes_tags_passes_reshapes_only_where_they_say_which_axes_they_keep():
    # A plain reshape's shapes cannot say which axes it keeps: (5, 4) -> (5, 1, 4) may as well
    # regroup its elements, so tags stay where they are (pytato's rule). expand_dims and
    # squeeze, and an index with np.newaxis, say it, and pass the tags along.
    x = pt.make_placeholder("x", (5, 4), np.float64).with_tagged_axis(0, ElementAxis()).with_tagged_axis(1, DofAxis())
    plain = pt.unify_axes_tags(pt.reshape(x, (5, 1, 4)) + 1)
    assert all(not axis.tags for axis in plain.axes)
    for expanded in (pt.expand_dims(x, 1), x[:, np.newaxis, :]):
        tags = [axis.tags for axis in pt.unify_axes_tags(expanded + 1).axes]
        assert tags == [frozenset({ElementAxis()}), frozenset(), frozenset({DofAxis()})]
    y = pt.make_placeholder("y", (5, 1, 4), np.float64).with_tagged_axis(2, DofAxis())
    squeezed = pt.unify_axes_tags(pt.squeeze(y) + 1)
    assert [axis.tags for axis in squeezed.axes] == [frozenset(), frozenset({DofAxis()})]
    values = np.arange(20.0).reshape(5, 1, 4)
    np.testing.assert_array_equal(pt.generate(pt.squeeze(y))(y=values), np.squeeze(values))


def test_transforms_and_analysis():
    x = pt.make_placeholder("x", (3,), np.float64)
    a = pt.sin(x) + pt.sin(x)  # two equal sin nodes built apart
    assert pt.analysis.get_num_nodes(a) > pt.analysis.get_num_nodes(pt.transform.deduplicate(a))
    counts = pt.analysis.get_node_type_counts(a)
    assert counts["Placeholder"] == 1
    dict_result = pt.transform.deduplicate({"a": a, "b": 2 * a})
    assert isinstance(dict_result, pt.DictOfNamedArrays) and set(dict_result) == {"a", "b"}
    assert pt.eliminate_dead_code(a) == a
    stored = pt.materialize_with_mpms(pt.exp(a) + pt.cos(a) * a)
    assert pt.analysis.get_max_node_depth(stored) >= 3
    dot = pt.get_dot_graph(a)
    assert dot.startswith("digraph") and "Placeholder x" in dot
    assert "<svg" in pt.get_html_graph(a)


def test_show_dot_graph_writes_a_page(tmp_path):
    x = pt.make_placeholder("x", (3,), np.float64)
    path = pt.show_dot_graph(x + 1, output_to=tmp_path / "dag.html")
    assert "<svg" in (tmp_path / "dag.html").read_text() and str(path).endswith("dag.html")
    # pytato's format names: a temporary file of that format
    svg = pt.show_dot_graph(x + 1, output_to="svg")
    with open(svg) as f:
        assert "<svg" in f.read() and svg.endswith(".svg")
    pt.visualization.show_dot_graph({"y": x * 2}, output_to=tmp_path / "dag.dot")
    assert (tmp_path / "dag.dot").read_text().startswith("digraph")
    with pytest.raises(ValueError, match="png"):
        pt.show_dot_graph(x, output_to=tmp_path / "dag.png")


def test_pytato_helper_modules():
    n = pt.make_size_param("n")
    a = pt.make_placeholder("a", (n, 3), np.float64)
    assert pt.utils.are_shapes_equal(a.shape, (n, 3)) and pt.utils.are_shapes_equal((2 * n + 1,), (n + n + 1,))
    assert not pt.utils.are_shapes_equal(a.shape, (n, 4)) and not pt.utils.are_shapes_equal(a.shape, (n,))
    assert pt.equality.EqualityComparer()(a + 1, a + 1)
    assert not pt.equality.EqualityComparer()(a + 1, a + 2)


def test_program_metadata():
    x = pt.make_placeholder("x", (pt.make_size_param("n"),), np.float32)
    prg = pt.generate({"y": x + 1})
    assert prg.input_names == ["x"] and prg.output_names == ["y"]
    assert prg.backend == pt.default_backend_name()
    assert prg.datashape == "{x: n, float32} -> {y: n, float32}"
    assert "BoundProgram" in repr(prg)
    assert pt.generate_numpy(x)(x=np.ones(2, np.float32)).dtype == np.float32


def test_iteration_and_numpy_integer_indices():
    x = pt.make_placeholder("x", (3, 2), np.float64)
    rows = list(x)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    xv = np.arange(6.0).reshape(3, 2)
    got = pt.generate({f"r{i}": r for i, r in enumerate(rows)} | {"i": x[np.int64(2), np.int32(-1)]})(x=xv)
    for i in range(3):
        np.testing.assert_array_equal(got[f"r{i}"], xv[i])
    assert got["i"] == xv[2, -1] and got["i"].shape == ()
    with pytest.raises(TypeError, match="first length"):
        list(pt.make_placeholder("y", ("n",), np.float64))


class UniqueTag:  # noqa: D101 - stands for pytools.tag.UniqueTag in code ported from pytato
    pass


@dataclass(frozen=True)
class PortedAxisTag(UniqueTag):
    name: str


def test_tags_of_code_ported_from_pytato():
    # Any hashable object is a tag; a class deriving from a UniqueTag (pytools' too) is a family.
    x = pt.make_placeholder("x", (2,), np.float64).with_tagged_axis(0, PortedAxisTag("a"))
    assert x.axes[0].tags == frozenset({PortedAxisTag("a")})
    with pytest.raises(pt.UniqueTagConflictError):
        x.tagged([PortedAxisTag("a"), PortedAxisTag("b")])
    unified = pt.unify_axes_tags(x * 2)
    assert unified.axes[0].tags == frozenset({PortedAxisTag("a")})
    with pytest.raises(TypeError, match="string"):
        x.tagged("ImplStored")


def test_trace_call_returns_what_the_function_returns(backend):
    def step(u, v):
        return {"sum": u + v, "scaled": pt.sin(u) * 2}

    x = pt.make_placeholder("x", (4,), np.float64)
    y = pt.make_placeholder("y", (4,), np.float64)
    first, second = pt.trace_call(step, x, y), pt.trace_call(step, y, x)
    pair = pt.trace_call(lambda a: (a * 2, pt.sum(a)), x)
    assert set(first) == {"sum", "scaled"} and isinstance(pair, tuple) and len(pair) == 2
    assert pt.analysis.get_node_type_counts(first["sum"] + second["sum"])["CallResult"] == 2
    prg = pt.generate({"a": first["sum"] * second["scaled"], "b": pair[0] + pair[1]}, backend)
    xv, yv = np.linspace(0, 1, 4), np.linspace(-1, 2, 4)
    got = prg(x=xv, y=yv)
    np.testing.assert_allclose(got["a"], (xv + yv) * (np.sin(yv) * 2), rtol=1e-13)
    np.testing.assert_allclose(got["b"], xv * 2 + np.sum(xv), rtol=1e-13)


def test_trace_call_errors():
    x = pt.make_placeholder("x", (2,), np.float64)

    def raises(a):
        raise KeyError("from the traced function")

    with pytest.raises(KeyError, match="from the traced function"):
        pt.trace_call(raises, x)
    with pytest.raises(TypeError, match="must return an Array"):
        pt.trace_call(lambda a: 3.0, x)
    with pytest.raises(pt.BroadcastMismatchError):
        pt.trace_call(lambda a: a + pt.make_placeholder("w", (3,), np.float64), x)


ALL_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float16, np.float32, np.float64, np.complex64, np.complex128]


def edge_values(dtype, rows):
    """`rows` x 3 values of `dtype` with its extremes: integer limits, NaN, infinities, -0.0."""
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        base = np.array([info.min, info.max, 0, 1, 7, info.max - 1])
    elif kind == "b":
        base = np.array([True, False, True, True, False, True])
    else:
        base = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5])
        if kind == "c":
            base = base.astype(np.complex128)
            base.imag = [1.0, -0.0, np.inf, 2.0, np.nan, -1.0]
    with np.errstate(invalid="ignore"):
        return np.resize(base.astype(dtype), rows * 3).reshape(rows, 3)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_one_program_every_size_with_edge_values(dtype, backend):
    """An output named like its input, a reduction inside a broadcast, a sum along an axis; one
    program run with 3, 1 and 0 rows, against numpy."""
    x = pt.make_placeholder("x", (pt.make_size_param("n"), 3), dtype)
    boolean, complex_ = dtype is np.bool_, np.dtype(dtype).kind == "c"
    plain = {"x": x | x if boolean else x * 2, "s": pt.sum(x, axis=1)}
    centered = not boolean
    outputs = dict(plain, centered=x - pt.max(x, axis=0)) if centered else plain
    try:
        prg, prg_plain = pt.generate(outputs, backend), pt.generate(plain, backend)
    except pt.UnsupportedError:  # wgpu without 64-bit types on this adapter
        assert backend == "wgpu"
        return
    for rows in (3, 1, 0):
        data = edge_values(dtype, rows)
        if centered and not rows:
            # numpy has no maximum of an empty axis; neither has the program, once n = 0 is known
            with pytest.raises(ValueError):
                np.max(data, axis=0)
            with pytest.raises(pt.InvalidForSizesError, match="zero-size reduction along axis 0"):
                prg(x=data)
        got = (prg if rows else prg_plain)(x=data)
        with np.errstate(all="ignore"):
            expected = {"x": data | data if boolean else data * np.array(2, dtype), "s": np.sum(data, axis=1)}
            if centered and rows:
                expected["centered"] = data - np.max(data, axis=0)
        for name, value in expected.items():
            assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
            np.testing.assert_allclose(got[name], value, rtol=2e-3 if dtype is np.float16 else 1e-6,
                                       equal_nan=True, err_msg=f"{name}, {rows} rows")
            if value.dtype.kind == "f":
                finite = np.isfinite(value)
                np.testing.assert_array_equal(np.signbit(got[name][finite]), np.signbit(value[finite]), err_msg=name)


def test_float16_maximum_and_minimum_keep_numpys_operand_on_ties_and_nans():
    # numpy's float16 loops return the first operand where the operands tie (-0.0 and 0.0) or
    # the first is NaN; its float32/64 loops return the second of a tie
    special = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -1.0, 1.0], np.float16)
    a, b = (np.repeat(special, len(special)), np.tile(special, len(special)))
    x = pt.make_placeholder("x", a.shape, np.float16)
    y = pt.make_placeholder("y", b.shape, np.float16)
    for backend, _ in pt.backends():
        for ours, theirs in ((pt.maximum, np.maximum), (pt.minimum, np.minimum)):
            got = pt.generate(ours(x, y), backend)(x=a, y=b)
            want = theirs(a, b)
            assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), (backend, theirs.__name__)
