"""pytato API that upstream's test suite (run through python/upstream/) found missing: function
calls tagged for inlining, data wrappers' memory, the placeholder data-flow drawing, einsum's and
indexing's errors, positional binding names, mappers that override map_<node>."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt
import pytato_rs.transform.calls
from pytato_rs.transform import CachedWalkMapper, WalkMapper, deduplicate_data_wrappers


def _calls_dag(tracer):
    """A DAG of nested calls: tracer(f, *args) is pt.trace_call or a plain call."""

    def inner(a, b):
        return {"twice": 2 * a + b, "product": a * b}

    def outer(a, b):
        r = tracer(inner, a, b)
        return r["twice"] - tracer(inner, b, a)["product"]

    x = pt.make_placeholder("x", (5,), np.float64)
    y = pt.make_placeholder("y", (5,), np.float64)
    return {"u": tracer(outer, x, y) * 3, "v": tracer(outer, y, x) + tracer(inner, x, x)["twice"]}


def test_calls_tagged_to_be_inlined_give_the_values_of_plain_calls(backend):
    traced = pt.make_dict_of_named_arrays(_calls_dag(pt.trace_call))
    plain = pt.make_dict_of_named_arrays(_calls_dag(lambda f, *args: f(*args)))
    tagged = pt.tag_all_calls_to_be_inlined(traced)
    # The calls stay calls: outer twice and inner once in the DAG, inner twice in outer's body.
    assert pt.analysis.get_num_call_sites(traced) == 5
    assert pt.analysis.get_num_call_sites(tagged) == 5
    assert pt.analysis.get_num_call_sites(pt.inline_calls(traced)) == 0
    assert pt.analysis.get_node_type_counts(pt.inline_calls(traced)).get("CallResult", 0) == 0
    xv, yv = np.array([0.0, -0.0, 1.5, np.inf, 3e-310]), np.array([2.0, 1.0, -4.0, 1.0, 7.0])
    expected = pt.generate(plain, "interp")(x=xv, y=yv)
    for dag in (traced, tagged, pt.inline_calls(traced), pt.transform.calls.inline_calls(traced)):
        got = pt.generate(dag, backend)(x=xv, y=yv)
        for name in ("u", "v"):
            np.testing.assert_array_equal(got[name], expected[name])
    # The numpy oracle for one entry: u = 3 * ((2x + y) - y * x).
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(expected["u"], 3 * ((2 * xv + yv) - yv * xv))


def test_trace_call_takes_pytatos_identifier():
    x = pt.make_placeholder("x", (3,), np.float64)
    named = pt.trace_call(lambda a: 2 * a, x, identifier="twice")
    assert named == pt.trace_call(lambda a: 2 * a, x)  # the identifier names no code here
    with pytest.raises(TypeError, match="identifier must be a str"):
        pt.trace_call(lambda a: 2 * a, x, identifier=3)


def test_pytatos_import_paths_that_arraycontext_meshmode_and_grudge_use(backend):
    """Names found by a scan of arraycontext, meshmode and grudge for the pytato names they use
    (``pt.Axis``, ``pytato.function``, ``pytato.distributed.partition.PartId``, two tags, typing
    names): each is importable where pytato has it and means what pytato's does."""
    from pytato_rs.array import AxesT, ShapeType, make_placeholder
    from pytato_rs.distributed.partition import DistributedGraphPart, PartId
    from pytato_rs.function import Call, FunctionDefinition, NamedCallResult, ReturnType, trace_call
    from pytato_rs.scalar_expr import SCALAR_CLASSES
    from pytato_rs.tags import ForceValueArgTag, FunctionIdentifier
    from pytato_rs.transform import ArrayOrNames

    x = make_placeholder("x", (3,), np.float64, axes=(pt.Axis(frozenset()),))
    assert isinstance(x.axes, AxesT) and isinstance(x.shape, ShapeType) and x.axes[0] == pt.Axis(frozenset())
    assert isinstance(x, ArrayOrNames) and isinstance(pt.make_dict_of_named_arrays({"a": x}), ArrayOrNames)
    assert all(isinstance(v, SCALAR_CLASSES) for v in (1, 2.5, 1j, np.float32(1), np.True_, np.uint8(3)))
    assert not isinstance("1", SCALAR_CLASSES)
    assert trace_call is pt.trace_call and DistributedGraphPart is pt.DistributedGraphPart
    assert isinstance(("part", 0), PartId) and {r.name for r in ReturnType} == {
        "ARRAY", "DICT_OF_ARRAYS", "TUPLE_OF_ARRAYS"}
    result = trace_call(lambda a: {"twice": 2 * a}, x)["twice"]
    assert isinstance(result, NamedCallResult) and Call is pt.Call and FunctionDefinition is pt.FunctionDefinition
    # Tags that only name things for pytato's loopy target are carried, and change nothing.
    tagged = pt.make_placeholder("s", (), np.int64, tags=frozenset({ForceValueArgTag()}))
    assert ForceValueArgTag() in tagged.tags and FunctionIdentifier("f") == FunctionIdentifier("f")
    got = pt.generate(tagged * 2 + x, backend)(s=np.int64(3), x=np.array([1.0, -0.0, np.inf]))
    np.testing.assert_array_equal(got, 6 + np.array([1.0, -0.0, np.inf]))


def test_data_wrapper_data_is_the_array_given():
    a = np.arange(27)
    x = pt.make_data_wrapper(a)
    assert x.data is a
    # An evaluated array's wrapper gives its values.
    e = pt.generate(pt.make_placeholder("p", (3,), np.int64) * 2).evaluate(p=np.arange(3))
    np.testing.assert_array_equal(pt.make_data_wrapper(e).data, [0, 2, 4])


def test_deduplicate_data_wrappers_merges_wrappers_of_the_same_memory(backend):
    a_np = np.arange(27.0)
    a = pt.make_data_wrapper(a_np)
    b = pt.make_data_wrapper(np.arange(27.0))  # equal values, other memory: kept apart
    c = pt.make_data_wrapper(a.data.view())  # the same memory as a
    d = pt.make_data_wrapper(a_np[::2])  # other elements of a's memory
    e = pt.make_data_wrapper(a_np)
    res = (a + b) * c - e + pt.sum(d)
    merged = deduplicate_data_wrappers(res)
    counts = pt.analysis.get_node_type_counts(merged)
    assert counts["DataWrapper"] == 3
    expected = (a_np + a_np) * a_np - a_np + np.sum(a_np[::2])
    np.testing.assert_allclose(pt.generate(merged, backend)(), expected, rtol=1e-15)


def test_deduplicate_data_wrappers_keeps_memory_changed_between_wrappers_apart():
    buf = np.array([1.0, 2.0, -0.0])
    first = pt.make_data_wrapper(buf)
    buf[0] = np.nan
    second = pt.make_data_wrapper(buf)
    merged = deduplicate_data_wrappers(first + second)
    assert pt.analysis.get_node_type_counts(merged)["DataWrapper"] == 2
    got = pt.generate(merged, "interp")()
    np.testing.assert_array_equal(got, np.array([np.nan, 4.0, -0.0]))
    assert np.signbit(got[2])


def test_placeholder_data_flow_drawing(tmp_path):
    x = pt.make_placeholder("x", (4,), np.float64)
    w = pt.make_placeholder("w", (4, 4), np.float64)
    y = w @ (2 * x + pt.make_data_wrapper(np.ones(4)))
    dot = pt.visualization.get_placeholder_data_flow_dot(y)
    assert "x: (4,) float64" in dot and "w: (4, 4) float64" in dot and "DataWrapper" not in dot
    svg = pt.show_fancy_placeholder_data_flow(y, output_to="svg")
    text = open(svg).read()
    assert "<svg" in text and text.rstrip().endswith("</svg>") and ">x: (4,) float64<" in text
    path = pt.show_fancy_placeholder_data_flow({"y": y}, output_to=str(tmp_path / "flow.html"))
    page = open(path).read()
    assert "<svg" in page and "<?xml" not in page and page.rstrip().endswith("</html>")
    with pytest.raises(ValueError, match=".svg, .html or .dot"):
        pt.show_fancy_placeholder_data_flow(y, output_to=str(tmp_path / "flow.png"))


def test_einsum_reports_a_wrong_spec_before_looking_at_operands():
    x = pt.make_placeholder("x", (2, 2), np.float64)
    for spec, operands, numpy_raises in [
        ("ij,j->jj", (("a", "b"),), True),  # an output letter twice, operands not arrays
        ("ij,j->j", (x,), True),  # two terms, one operand
        ("ij->k", (x,), True),  # an output letter no operand has
        ("i1->i", (x,), True),
    ]:
        with pytest.raises(ValueError):
            pt.einsum(spec, *operands)
        if numpy_raises:
            with pytest.raises(ValueError):
                np.einsum(spec, *[np.ones((2, 2))] * len(operands))


def test_an_index_array_into_an_axis_of_length_zero_is_an_index_error():
    n = pt.make_size_param("n")
    for length in (0, n - n):
        a = pt.make_placeholder("a", (length, 10), np.float64)
        with pytest.raises(IndexError):
            a[pt.zeros(5, dtype=np.int64)]
        with pytest.raises(IndexError):
            np.empty((0, 10))[np.zeros(5, dtype=np.int64)]
        # An empty index array selects nothing, as in numpy.
        assert a[pt.zeros(0, dtype=np.int64)].shape == (0, 10)
        assert np.empty((0, 10))[np.zeros(0, dtype=np.int64)].shape == (0, 10)
    # An index array of a length known only at run time is checked then.
    m = pt.make_size_param("m")
    a = pt.make_placeholder("a", (0, 10), np.float64)
    prg = pt.generate(a[pt.make_placeholder("i", (m,), np.int64)], "interp")
    assert prg(a=np.empty((0, 10)), i=np.zeros(0, np.int64)).shape == (0, 10)
    with pytest.raises(IndexError):
        prg(a=np.empty((0, 10)), i=np.zeros(2, np.int64))


def test_binding_names_are_pytatos_operand_positions():
    x = pt.make_placeholder("x", (3,), np.int64)
    y = pt.make_placeholder("y", (3,), np.int64)
    assert set((3 * x).bindings) == {"_in1"}
    assert set((x * 3).bindings) == {"_in0"}
    assert set((x + y).bindings) == {"_in0", "_in1"} and (x + y).bindings["_in1"] is not None
    assert (x + y).bindings["_in1"] == y
    assert set(pt.where(x > 0, 1, y).bindings) == {"_in0", "_in2"}
    assert len((x + x).bindings) == 1  # one node is bound once
    n = pt.make_size_param("n")
    z = pt.make_placeholder("z", (n,), np.int64)
    # A size parameter read by the expression takes the next free name.
    assert len(pt.arange(0, 3, dtype=np.int64).bindings) == 0
    assert len(set((3 * z).bindings)) == 1


def test_integer_powers_by_numpy_scalars_are_checked_when_built(backend):
    b = np.array([1, -2, 3], np.int32)
    base = pt.make_data_wrapper(b)
    for exponent in (2, np.int32(2), np.int64(3), np.int8(0)):
        out = base ** exponent
        assert not out.bindings.keys() - {"_in0"}  # the exponent is read in place
        expected = np.power(b, exponent)
        got = pt.generate(out, backend)()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    for exponent in (-1, np.int64(-2)):
        with pytest.raises(ValueError):
            np.power(b, exponent)
        with pytest.raises(ValueError, match="negative integer powers"):
            base ** exponent


def test_walk_mappers_dispatch_through_overridden_methods():
    class DataWrapperCounter(CachedWalkMapper):
        def __init__(self):
            super().__init__()
            self.count = 0

        def get_cache_key(self, expr):
            return id(expr)

        def map_data_wrapper(self, expr):
            self.count += 1
            return super().map_data_wrapper(expr)

    class StopAtSums(WalkMapper):
        def __init__(self):
            self.seen = []

        def visit(self, expr):
            self.seen.append(expr.node_type)
            return True

        def map_einsum(self, expr):
            self.seen.append("stopped")  # not calling super(): nothing below is walked

    a, b = pt.make_data_wrapper(np.arange(3.0)), pt.make_data_wrapper(np.ones(3))
    counter = DataWrapperCounter()
    counter(a + b + a)
    assert counter.count == 2
    walker = StopAtSums()
    walker(pt.einsum("i,i->", a, b) + a)
    assert walker.seen.count("stopped") == 1 and walker.seen.count("DataWrapper") == 1
    # A deep chain walks without recursion.
    x = pt.make_placeholder("x", (2,), np.float64)
    deep = x
    for _ in range(20_000):
        deep = deep + 1.0
    counter = DataWrapperCounter()
    counter(deep)
    assert counter.count == 0


def test_data_wrappers_of_symbolic_shape_bind_their_sizes_from_the_data(backend):
    m, n = pt.make_size_param("m"), pt.make_size_param("n")
    a_np = np.array([[1.0, -0.0, np.inf], [np.nan, 5e-324, -2.0], [3.0, 4.0, 1e308]] * 3)  # 9 x 3
    x_np = np.array([0.5, -1.0, 2.0])
    a = pt.make_data_wrapper(a_np, shape=(2 * m + 1, n + 1))  # m = 4, n = 2
    x = pt.make_data_wrapper(x_np, shape=(n + 1,))
    assert [str(d) for d in a.shape] == ["2*m + 1", "n + 1"]
    y = pt.make_placeholder("y", (2 * m + 1,), np.float64)
    expr = {"ax": a @ x + y, "rows": pt.sum(a, axis=1), "n": pt.zeros(n, np.int8) + 1}
    prg = pt.generate(expr, backend)
    assert sorted(prg.input_names) == ["y"]  # m and n come from the data
    y_np = np.linspace(-1, 1, 9)
    got = prg(y=y_np)
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_allclose(got["ax"], a_np @ x_np + y_np, rtol=1e-15)
        np.testing.assert_allclose(got["rows"], a_np.sum(axis=1), rtol=1e-15)
    np.testing.assert_array_equal(got["n"], np.ones(2, np.int8))
    # Passing a size the data determines is fine where it agrees, an error where it does not.
    np.testing.assert_array_equal(prg(y=y_np, n=np.int64(2))["n"], np.ones(2, np.int8))
    with pytest.raises(pt.InputShapeError):
        prg(y=y_np, n=np.int64(3))
    with pytest.raises(pt.InputShapeError):
        prg(y=np.zeros(7))


def test_data_wrappers_of_symbolic_shape_report_lengths_no_size_gives():
    n = pt.make_size_param("n")
    with pytest.raises(ValueError, match="lengths differ"):
        pt.make_data_wrapper(np.zeros((3, 2)), shape=(n, 3))
    with pytest.raises(ValueError, match="lengths differ"):
        pt.make_data_wrapper(np.zeros((3, 2)), shape=(n,))
    with pytest.raises(ValueError):
        pt.make_data_wrapper(np.zeros(3), shape=(n - n - 1,))
    odd = pt.make_data_wrapper(np.zeros(4), shape=(2 * n + 1,))
    with pytest.raises(pt.InputShapeError, match="no non-negative n"):
        pt.generate(odd * 2, "interp")()
    # Two wrappers that disagree on n; messages name the wrapper, on every backend.
    three = pt.make_data_wrapper(np.ones(3), shape=(n,))
    four = pt.make_data_wrapper(np.ones(4), shape=(n,), name="four")
    for backend in [name for name, _ in pt.backends()]:
        try:
            prg = pt.generate(three + four, backend)
        except Exception:
            continue  # a backend that cannot start here
        with pytest.raises(pt.InputShapeError, match="data wrapper"):
            prg()
    square = pt.make_data_wrapper(np.ones((2, 3)), shape=(n, n), name="square")
    with pytest.raises(pt.InputShapeError, match='data wrapper "square"'):
        pt.generate(square * 2, "cranelift")()


def test_data_wrappers_of_symbolic_shape_pickle_with_their_shape():
    import pickle

    pytest.importorskip("pymbolic")
    n = pt.make_size_param("n")
    buf = np.arange(5.0)
    w = pt.make_data_wrapper(buf, shape=(n,))
    expr = 2 * w
    buf[0] = 42.0  # the pickle holds the wrapped values, not the array's later ones
    back = pickle.loads(pickle.dumps(expr))
    assert back.shape == expr.shape and str(back.shape[0]) == "n"
    np.testing.assert_array_equal(pt.generate(back, "interp")(), 2 * np.arange(5.0))


def test_collect_materialized_nodes_lists_what_programs_store():
    from pytato_rs.analysis import collect_materialized_nodes
    from pytato_rs.tags import ImplStored

    x = pt.make_placeholder("x", (10,), np.float64)
    y = pt.make_data_wrapper(np.arange(10.0))
    z = x + y
    expr = 2 * z
    assert collect_materialized_nodes(expr) == {x, y, expr}
    assert collect_materialized_nodes(expr, include_outputs=False) == {x, y}
    stored = (x + y).tagged(ImplStored())
    assert stored in collect_materialized_nodes(2 * stored)
    # Calls: arguments and the function's results, in its body too, whatever include_outputs.
    u, v = 2 * x, 3 * y
    result = pt.trace_call(lambda a, b: a + b, u, v)
    definition = result.call.function
    assert isinstance(definition, pt.FunctionDefinition) and definition.parameters == {"arg0", "arg1"}
    assert result.call.bindings == {"arg0": u, "arg1": v}
    found = collect_materialized_nodes(2 * result, include_outputs=False)
    assert {u, v, result} <= found and set(definition.returns.values()) <= found
    # The data a send sends, received arrays; host steps store their results.
    send = pt.make_distributed_send(2 * x, dest_rank=1, comm_tag="t")
    recv = pt.make_distributed_recv(src_rank=1, comm_tag="t", shape=(10,), dtype=np.float64)
    held = pt.make_distributed_send_ref_holder(send, recv + 1)
    assert collect_materialized_nodes(held) == {x, 2 * x, recv, held}
    ordered = pt.sort(x)
    assert ordered in collect_materialized_nodes(ordered + 1, include_outputs=False)
    # Deep chains walk without recursion.
    deep = x
    for _ in range(20_000):
        deep = deep * 1.0
    assert collect_materialized_nodes(deep) == {x, deep}


def test_repr_is_pytatos_for_every_kind_of_node():
    import pytato_rs._repr as reprs

    strip = lambda text: "".join(text.split())  # noqa: E731
    x = pt.make_placeholder("x", (10, 4), np.int64)
    y = pt.make_placeholder("y", (10, 4), np.int64)
    # pytato's form, written out: positional binding names, constants as Python numbers, the cast
    # promotion implies, nodes more than three levels down elided.
    assert strip(repr(y * pt.not_equal(x, 3))) == strip(
        "IndexLambda(shape=(10, 4), dtype='int64', expr=Product((Subscript(Variable('_in0'), "
        "(Variable('_0'), Variable('_1'))), TypeCast(dtype('int64'), Subscript(Variable('_in1'), "
        "(Variable('_0'), Variable('_1')))))), bindings={'_in0': Placeholder(shape=(10, 4), "
        "dtype='int64', name='y'), '_in1': IndexLambda(shape=(10, 4), dtype='bool', "
        "expr=Comparison(Subscript(Variable('_in0'), (Variable('_0'), Variable('_1'))), '!=', 3), "
        "bindings={'_in0': Placeholder(shape=(10, 4), dtype='int64', name='x')})})")
    assert strip(repr(pt.roll(x.reshape(2, 20).reshape(-1), 3))) == strip(
        "Roll(array=Reshape(array=Reshape(array=Placeholder(shape=(10, 4), dtype='int64', name='x'), "
        "newshape=(2, 20), order='C'), newshape=(40), order='C'), shift=3, axis=0)")
    n = pt.make_size_param("n")
    z = pt.make_placeholder("z", (n, 3), np.float16).tagged(pt.tags.ImplStored())
    w = pt.make_data_wrapper(np.arange(3.0))
    called = pt.trace_call(lambda a: 2 * a, w)
    recv = pt.make_distributed_recv(src_rank=1, comm_tag=("t", 2), shape=(3,), dtype=np.float64)
    held = pt.staple_distributed_send(w, dest_rank=1, comm_tag=5, stapled_to=recv)
    nodes = [z, n, w, pt.sum(z, axis=1), pt.einsum("ij,j->i", z, pt.make_placeholder("v", (3,), np.float16)),
             pt.stack([w, w]), pt.concatenate([w, w]), z.T, z[1:, ::2], z[pt.zeros(2, np.int64)],
             z[:, pt.zeros(2, np.int64)][pt.zeros(2, np.int64)], called, recv, held, pt.sort(w),
             pt.cumsum(w), pt.searchsorted(w, w), pt.nonzero(w)[0], w.at[pt.zeros(1, np.int64)].add(1.0)]
    for node in nodes:
        text = reprs.array_repr(node)  # raises where the printer fails (repr() falls back)
        assert repr(node) == text and "=" in text and text.endswith(")"), text
    assert "tags={ImplStored()}" in repr(z)
    # A deep chain prints three levels, the rest elided.
    deep = x
    for _ in range(100_000):
        deep = deep + 1
    assert repr(deep).count("IndexLambda(") == 4 and "(...)" in repr(deep)
