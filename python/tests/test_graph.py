"""The DAG as pytato's Python code sees it: node classes (``isinstance``), fields under
pytato's names, and the mapper family (``pytato_rs.transform``), subclassed as arraycontext and
meshmode subclass pytato's. Expected values are the arguments the nodes were built from, numpy's
results, or counts written out by hand."""

import numpy as np
import pytest

import pytato_rs as pt
from pytato_rs.analysis import get_list_of_users, get_nusers
from pytato_rs.transform import (
    CachedWalkMapper,
    CombineMapper,
    CopyMapper,
    InputGatherer,
    Mapper,
    SizeParamGatherer,
    TopoSortMapper,
    UnsupportedArrayError,
    WalkMapper,
    map_and_copy,
)


def nodes():
    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n, 3), np.float64)
    idx = pt.make_placeholder("idx", (5,), np.int64)
    cube = pt.make_placeholder("cube", (4, 3, 2), np.float64)
    data = np.arange(6.0).reshape(2, 3)
    return {
        "placeholder": x,
        "size_param": n,
        "data_wrapper": pt.make_data_wrapper(data),
        "index_lambda": x + 1.0,
        "einsum": pt.einsum("ij,kj->ik", x, x),
        "reshape": pt.reshape(cube, (4, 6)),
        "roll": pt.roll(x, 2, axis=0),
        "axis_permutation": pt.transpose(cube, (2, 0, 1)),
        "stack": pt.stack([x, x], axis=1),
        "concatenate": pt.concatenate([x, x], axis=0),
        "basic_index": x[1:, 0],
        "contiguous_advanced_index": cube[idx],
        "non_contiguous_advanced_index": cube[idx, :, idx % 2],
    }


def test_node_classes_classify_every_kind_of_node():
    classes = {
        "placeholder": pt.Placeholder,
        "size_param": pt.SizeParam,
        "data_wrapper": pt.DataWrapper,
        "index_lambda": pt.IndexLambda,
        "einsum": pt.Einsum,
        "reshape": pt.Reshape,
        "roll": pt.Roll,
        "axis_permutation": pt.AxisPermutation,
        "stack": pt.Stack,
        "concatenate": pt.Concatenate,
        "basic_index": pt.BasicIndex,
        "contiguous_advanced_index": pt.AdvancedIndexInContiguousAxes,
        "non_contiguous_advanced_index": pt.AdvancedIndexInNoncontiguousAxes,
    }
    built = nodes()
    for name, expr in built.items():
        assert isinstance(expr, pt.Array)
        for other, cls in classes.items():
            assert isinstance(expr, cls) == (other == name), (name, cls.__name__)
    inputs = {"placeholder", "size_param", "data_wrapper"}
    indexes = {"basic_index", "contiguous_advanced_index", "non_contiguous_advanced_index"}
    for name, expr in built.items():
        assert isinstance(expr, pt.InputArgumentBase) == (name in inputs), name
        assert isinstance(expr, pt.IndexBase) == (name in indexes), name
        remapping = indexes | {"roll", "axis_permutation", "reshape"}
        assert isinstance(expr, pt.IndexRemappingBase) == (name in remapping), name
    assert issubclass(pt.BasicIndex, pt.IndexBase) and issubclass(pt.IndexBase, pt.IndexRemappingBase)
    assert not issubclass(pt.Roll, pt.IndexBase) and not isinstance(3, pt.Placeholder)
    with pytest.raises(TypeError, match="einsum"):
        pt.Einsum(access_descriptors=(), args=())


def test_fields_have_pytatos_names_and_the_values_built_with():
    built = nodes()
    x = built["placeholder"]
    assert built["roll"].array == x and built["roll"].shift == 2 and built["roll"].axis == 0
    assert built["axis_permutation"].axis_permutation == (2, 0, 1)
    assert built["reshape"].newshape == (4, 6) and built["reshape"].order == "C"
    assert built["stack"].arrays == (x, x) and built["stack"].axis == 1
    assert built["concatenate"].axis == 0 and len(built["concatenate"].arrays) == 2
    start, first = built["basic_index"].indices
    assert first == 0 and (start.start, start.step) == (1, 1) and str(start.stop) == "n"
    assert built["basic_index"].array == x
    assert built["einsum"].args == (x, x)
    assert list(built["index_lambda"].bindings.values()) == [x]
    np.testing.assert_array_equal(built["data_wrapper"].data, np.arange(6.0).reshape(2, 3))
    adv = built["contiguous_advanced_index"]
    assert isinstance(adv.indices[0], pt.Placeholder) and adv.indices[0].name == "idx"
    assert adv.indices[1:] == (slice(0, 3, 1), slice(0, 2, 1))
    with pytest.raises(AttributeError, match="Placeholder"):
        _ = x.bindings


def test_copy_mapper_rebuilds_an_equal_dag_and_subclasses_replace_nodes():
    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n,), np.float64)
    y = pt.make_placeholder("y", (n,), np.float64)
    out = pt.make_dict_of_named_arrays({"s": pt.sum(pt.sin(x) * y), "r": pt.roll(x, 1) - x[::-1]})
    copied = CopyMapper()(out)
    assert isinstance(copied, pt.DictOfNamedArrays) and set(copied) == {"s", "r"}
    for name in out:
        assert copied[name] == out[name]

    class Renamer(CopyMapper):
        """Reads input z where the DAG read x (as arraycontext's transforms swap inputs)."""

        def map_placeholder(self, expr):
            return pt.make_placeholder("z", expr.shape, expr.dtype) if expr.name == "x" else expr

    renamed = Renamer()(out)
    rng = np.random.default_rng(7)
    ys, zs = rng.standard_normal(9), rng.standard_normal(9)
    got = pt.generate(renamed, "interp")(z=zs, y=ys)
    np.testing.assert_allclose(got["s"], np.sum(np.sin(zs) * ys), rtol=1e-13)
    np.testing.assert_array_equal(got["r"], np.roll(zs, 1) - zs[::-1])
    assert {a.name for a in InputGatherer()(renamed) if isinstance(a, pt.Placeholder)} == {"y", "z"}
    assert {a.name for a in InputGatherer()(out) if isinstance(a, pt.Placeholder)} == {"x", "y"}


def test_combine_mappers_gather_inputs_and_size_params():
    n, m = pt.make_size_param("n"), pt.make_size_param("m")
    a = pt.make_placeholder("a", (n, m), np.float64)
    b = pt.make_placeholder("b", (m,), np.float64)
    w = pt.make_data_wrapper(np.ones(3))
    expr = pt.sum(a @ b) + pt.sum(w)
    inputs = InputGatherer()(expr)
    assert {i.name for i in inputs if isinstance(i, pt.Placeholder)} == {"a", "b"}
    assert sum(isinstance(i, pt.DataWrapper) for i in inputs) == 1
    assert {p.name for p in SizeParamGatherer()(expr)} == {"n", "m"}

    class Depth(CombineMapper):
        def combine(self, *depths):
            return 1 + max(depths, default=0)

    chain = b
    for _ in range(5):
        chain = chain * 2.0
    # The chain, b, and the size parameter m that b's shape names (pytato's mappers visit the
    # size parameters of shapes too).
    assert Depth()(chain) == 7
    fixed = pt.make_placeholder("f", (3,), np.float64) * 2.0
    assert Depth()(fixed) == 2


def test_walk_mappers_visit_each_node_children_first_and_stop_where_told():
    x = pt.make_placeholder("x", (3,), np.float64)
    shared = pt.sin(x)
    expr = shared + shared * 2.0
    order = TopoSortMapper()
    order(expr)
    assert len(order.topological_order) == 4  # x, sin(x), sin(x) * 2, the sum
    for k, node in enumerate(order.topological_order):
        for child in node._children():
            assert any(other == child for other in order.topological_order[:k])

    class Visits(WalkMapper):
        def __init__(self):
            self.seen = []

        def visit(self, expr):
            self.seen.append(expr.node_type)
            return True

    walk = Visits()
    walk(expr)
    # Without a cache the shared sin(x) and x are walked once per use.
    assert walk.seen.count("Placeholder") == 2

    class Once(CachedWalkMapper):
        def __init__(self):
            super().__init__()
            self.seen = []

        def visit(self, expr):
            self.seen.append(expr)
            return True

    once = Once()
    once(expr)
    assert len(once.seen) == 4

    class Shallow(WalkMapper):
        def __init__(self):
            self.seen = []

        def visit(self, expr):
            self.seen.append(expr.node_type)
            return False

    shallow = Shallow()
    shallow(expr)
    assert shallow.seen == ["IndexLambda"]


def test_users_are_counted_per_use():
    x = pt.make_placeholder("x", (3,), np.float64)
    s = pt.sin(x)
    expr = pt.stack([s, s, x])
    nusers = get_nusers(expr)
    assert nusers[s] == 2 and nusers[x] == 2 and nusers[expr] == 0
    assert get_list_of_users(expr)[s] == [expr, expr]


def test_map_and_copy_replaces_every_node_children_first():
    x = pt.make_placeholder("x", (4,), np.float64)
    expr = pt.roll(x, 1) * 3.0
    seen = []

    def record(node):
        seen.append(node.node_type)
        return node

    assert map_and_copy(expr, record) == expr
    assert seen == ["Placeholder", "Roll", "IndexLambda"]


def test_a_mapper_without_a_method_for_a_node_says_so():
    class OnlyPlaceholders(Mapper):
        def map_placeholder(self, expr):
            return expr.name

    x = pt.make_placeholder("x", (2,), np.float64)
    assert OnlyPlaceholders()(x) == "x"
    with pytest.raises(UnsupportedArrayError, match="IndexLambda"):
        OnlyPlaceholders()(x + 1)


def test_mappers_traverse_a_chain_of_a_hundred_thousand_nodes_without_recursing():
    x = pt.make_placeholder("x", (2,), np.float64)
    y = x
    for k in range(100_000):
        y = y + 1.0 if k % 2 else y * 1.5

    class Count(CombineMapper):
        def combine(self, *counts):
            return 1 + sum(counts)

    assert Count()(y) == 100_001
    assert CopyMapper()(y) == y
    order = TopoSortMapper()
    order(y)
    assert len(order.topological_order) == 100_001 and order.topological_order[0] == x
    assert {i.name for i in InputGatherer()(y)} == {"x"}
    assert get_nusers(y)[x] == 1
    # Every node of the chain, gathered in one walk: caching each node's set of dependencies,
    # as combining does, held 5 * 10^9 entries here and ran out of memory.
    from pytato_rs.transform import DependencyMapper
    dependencies = DependencyMapper()(y)
    assert len(dependencies) == 100_001 and x in dependencies and y in dependencies


def test_dependency_mapper_gathers_what_combining_gathers():
    from pytato_rs.transform import DependencyMapper

    class Combining(DependencyMapper):  # a subclass combines node by node, as pytato does
        pass

    n = pt.make_size_param("n")
    x, y = pt.make_placeholder("x", (n, 3), np.float64), pt.make_placeholder("y", (3,), np.float64)
    a = pt.sum(x * y, axis=0) + n
    b = pt.trace_call(lambda u: {"t": u * 2}, a)["t"]
    outputs = pt.make_dict_of_named_arrays({"a": a, "b": b + x[0], "c": pt.stack([a, b])})
    for expr in (x, n, a, b, outputs, outputs["c"].expr):
        assert DependencyMapper()(expr) == Combining()(expr)
    assert {d.node_type for d in DependencyMapper()(outputs)} >= {"SizeParam", "Placeholder", "CallResult", "Stack"}


def test_size_parameters_of_shapes_come_before_the_nodes_they_size():
    n = pt.make_size_param("n")
    a = pt.make_placeholder("a", (n,), np.float64)
    stack = pt.stack([a, 2 * a, a + 6])
    y = stack @ stack.T
    order = TopoSortMapper()
    order(y)
    kinds = [node.node_type for node in order.topological_order]
    assert kinds == ["SizeParam", "Placeholder", "IndexLambda", "IndexLambda", "Stack", "AxisPermutation", "Einsum"]
    assert get_nusers(y)[n] == 5  # a, 2a, a + 6, the stack, its transpose (not the 3x3 product)


def test_node_counts_by_class_and_duplicates():
    a = pt.make_placeholder("a", (2,), np.float64)
    twice = pt.sin(a) + pt.sin(a)  # two equal nodes built apart
    counts = pt.analysis.get_node_type_counts(twice)
    assert counts[pt.Placeholder] == 1 and counts["IndexLambda"] == counts[pt.IndexLambda]
    assert pt.analysis.get_num_nodes(twice, count_duplicates=True) == 4
    assert pt.analysis.get_num_nodes(twice, count_duplicates=False) == 3


def test_replace_if_different_swaps_children_and_tags():
    from pytato_rs.tags import ImplStored

    x = pt.make_placeholder("x", (3,), np.float64)
    z = pt.make_placeholder("z", (3,), np.float64)
    rolled = pt.roll(x, 1)
    assert rolled.replace_if_different(array=x) == rolled
    moved = rolled.replace_if_different(array=z)
    assert isinstance(moved, pt.Roll) and moved.array == z and moved.shift == 1
    summed = x + z
    (first, second) = summed.bindings
    swapped = summed.replace_if_different(bindings={first: z, second: x})
    np.testing.assert_array_equal(pt.generate(swapped, "interp")(x=np.ones(3), z=np.arange(3.0)), np.arange(3.0) + 1)
    stored = x.copy(tags=frozenset([ImplStored()]))
    assert stored.tags == frozenset([ImplStored()]) and stored.name == "x"
    with pytest.raises(ValueError, match="shift"):
        rolled.replace_if_different(shift=2)


def test_axes_answer_tags_of_type_and_axis_errors_are_value_errors():
    from pytato_rs.tags import ImplStored, Tag

    x = pt.make_placeholder("x", (3, 4), np.float64).with_tagged_axis(1, ImplStored())
    assert x.axes[1].tags_of_type(Tag) == frozenset([ImplStored()]) and x.axes[0].tags_of_type(Tag) == frozenset()
    # numpy's AxisError is both a ValueError and an IndexError.
    for error in (ValueError, IndexError):
        with pytest.raises(error):
            pt.roll(x, 1, axis=2)


def test_einsum_access_descriptors_and_similar_subscripts():
    from pytato_rs.analysis import is_einsum_similar_to_subscript
    from pytato_rs.array import EinsumElementwiseAxis, EinsumReductionAxis

    d = pt.make_placeholder("d", (2, 10, 10), np.float64)
    u = pt.make_placeholder("u", (100, 10), np.float64)
    g = pt.make_placeholder("g", (2, 100, 10), np.float64)
    expr = pt.einsum("dij,ej,dej->ei", d, u, g)
    # i and e are the result's axes 1 and 0; d and j are summed (their numbering is the
    # library's, so compare structure: one descriptor per letter).
    dd, uu, gg = expr.access_descriptors
    assert dd[1] == EinsumElementwiseAxis(1) and uu[0] == EinsumElementwiseAxis(0) == gg[1]
    assert isinstance(dd[0], EinsumReductionAxis) and dd[0] == gg[0] and dd[2] == uu[1] == gg[2] != dd[0]
    for spec in ["dij,ej,dej->ei", "abc,dc,adc->db", " dij , ej , dej -> ei "]:
        assert is_einsum_similar_to_subscript(expr, spec), spec
    assert not is_einsum_similar_to_subscript(expr, "dij,ej,dej->ie")
    assert not is_einsum_similar_to_subscript(expr, "dji,ej,dej->ei")
    assert not is_einsum_similar_to_subscript(expr, "dij,ej,aej->ei")  # two letters for one sum
    assert not is_einsum_similar_to_subscript(expr, "dij,ej->ei")  # another number of operands
    with pytest.raises(TypeError):
        is_einsum_similar_to_subscript(d, "ijk->ijk")


def test_users_multiplicities_and_duplicates():
    from pytato_rs.analysis import get_node_multiplicities
    from pytato_rs.transform import rec_get_user_nodes

    x1 = pt.make_placeholder("x1", (10, 4), np.float64)
    x2 = pt.make_placeholder("x2", (10, 4), np.float64)
    out = pt.make_dict_of_named_arrays({"out1": 2 * x1, "out2": 7 * x1 + 3 * x2})
    assert rec_get_user_nodes(out, x1) == frozenset({2 * x1, 7 * x1, 7 * x1 + 3 * x2, out})
    assert rec_get_user_nodes(out, x2) == frozenset({3 * x2, 7 * x1 + 3 * x2, out})
    twice = pt.sin(x1) + pt.sin(x1)
    multiplicities = get_node_multiplicities(twice)
    assert multiplicities[pt.sin(x1)] == 2 and multiplicities[x1] == 1 and multiplicities[twice] == 1
    counts = pt.analysis.get_node_type_counts(twice, count_duplicates=True)
    assert counts[pt.IndexLambda] == 3 and counts[pt.Placeholder] == 1


def test_dictionary_entries_are_named_arrays_of_their_dictionary():
    x = pt.make_placeholder("x", (10,), np.float64)
    pair = pt.make_dict_of_named_arrays({"y1": 2 * x, "y2": 3 * x})
    y1 = pair["y1"]
    assert isinstance(y1, pt.NamedArray) and y1.name == "y1"
    assert y1.expr == 2 * x and y1.shape == (10,) and y1.dtype == np.float64
    assert set(y1._container) == {"y1", "y2"}
    assert [v.name for v in pair.values()] == ["y1", "y2"]
    with pytest.raises(KeyError):
        pair["y3"]
    # An entry computes its array, alone or in further expressions.
    xs = np.linspace(0, 1, 10)
    np.testing.assert_array_equal(pt.generate(y1 + pair["y2"], "interp")(x=xs), 2 * xs + 3 * xs)
    # Mappers see the dictionary's arrays.
    assert {a.name for a in InputGatherer()(pair)} == {"x"}
    copied = CopyMapper()(pair)
    assert all(copied[name].expr == pair[name].expr for name in pair)


def test_walks_pass_their_extra_arguments_to_the_cache_key_and_visits():
    x = pt.make_placeholder("x", (3,), np.float64)
    expr = pt.sin(x) + pt.cos(x)

    class Tally(CachedWalkMapper):
        def __init__(self):
            super().__init__()
            self.visits = []

        def get_cache_key(self, expr, step):
            return (expr, step)

        def post_visit(self, expr, step):
            self.visits.append((expr.node_type, step))

    tally = Tally()
    tally(expr, 1)
    tally(expr, step=1)  # the same key: nothing walked again
    tally(expr, 2)
    assert len(tally.visits) == 8 and {s for _, s in tally.visits} == {1, 2}
    with pytest.raises(TypeError):
        tally(expr, wrong=3)


def test_tags_of_type_on_arrays_and_dictionaries():
    from pytato_rs.tags import ImplementationStrategy, ImplStored, Named, Tag

    x = pt.make_placeholder("x", (3,), np.float64, tags=frozenset([ImplStored(), Named("u")]))
    assert x.tags_of_type(ImplementationStrategy) == frozenset([ImplStored()])
    assert x.tags_of_type(Named) == frozenset([Named("u")]) and len(x.tags_of_type(Tag)) == 2
    assert x.non_equality_tags == frozenset()
    out = pt.make_dict_of_named_arrays({"y": x + 1}).tagged(ImplStored())
    assert out.tags_of_type(ImplStored) == frozenset([ImplStored()]) and out.tags_of_type(Named) == frozenset()


def test_transforms_import_from_pytatos_module_paths():
    from pytato_rs.transform.dead_code_elimination import eliminate_dead_code
    from pytato_rs.transform.materialize import materialize_with_mpms
    from pytato_rs.transform.metadata import unify_axes_tags

    x = pt.make_placeholder("x", (3,), np.float64)
    expr = pt.sin(x) * 2.0
    assert eliminate_dead_code(expr) == expr
    assert unify_axes_tags(expr) == expr
    np.testing.assert_allclose(pt.generate(materialize_with_mpms(expr), "interp")(x=np.ones(3)), 2 * np.sin(np.ones(3)))


def test_index_lambda_expressions_read_as_pytatos_pymbolic_expressions():
    prim = pytest.importorskip("pymbolic.primitives", reason="IndexLambda.expr needs pymbolic")
    from pymbolic.mapper import IdentityMapper
    from pytato_rs.scalar_expr import Reduce, SumReductionOperation, TypeCast

    x = pt.make_placeholder("x", (4, 3), np.float64)
    # pytato's binding names: operand k of an operation is _in<k> (in 2 * x, x is operand 1)
    assert set((2 * x).bindings) == {"_in1"}
    i, j = prim.Variable("_0"), prim.Variable("_1")
    assert (2 * x).expr == prim.Product((2.0, prim.Subscript(prim.Variable("_in1"), (i, j))))
    name = "_in0"
    _in = prim.Variable(name)
    assert (x - 1.5).expr == prim.Sum((prim.Subscript(_in, (i, j)), prim.Product((-1, 1.5))))
    assert pt.sin(x).expr == prim.Call(prim.Variable("pytato.c99.sin"), (prim.Subscript(_in, (i, j)),))
    assert (x > 0).expr == prim.Comparison(prim.Subscript(_in, (i, j)), ">", 0.0)
    cast = x.astype(np.int32).expr
    assert isinstance(cast, TypeCast) and cast.dtype == np.int32 and str(cast) == f"cast(int32, {name}[_0, _1])"
    total = pt.sum(x, axis=1).expr
    assert isinstance(total, Reduce) and isinstance(total.op, SumReductionOperation)
    ((iname, bounds),) = total.bounds.items()
    assert bounds == (0, 3) and total.inner_expr == prim.Subscript(_in, (i, prim.Variable(iname)))
    # pymbolic's mappers take them, as pytato's users' code does.
    assert IdentityMapper()((2 * x).expr) == (2 * x).expr


def test_placeholders_and_data_take_axes_and_data_its_shape():
    from pytato_rs.tags import Axis, ImplStored

    axes = (Axis(frozenset()), Axis(frozenset([ImplStored()])))
    x = pt.make_placeholder("x", (3, 4), np.float64, axes=axes)
    assert x.axes == axes
    data = np.arange(12.0).reshape(3, 4)
    w = pt.make_data_wrapper(data, shape=(3, 4), axes=axes)
    assert w.axes == axes and w.shape == (3, 4)
    np.testing.assert_array_equal(pt.generate(w + x, "interp")(x=np.ones((3, 4))), data + 1)
    with pytest.raises(ValueError, match="shape"):
        pt.make_data_wrapper(data, shape=(4, 3))
    # A symbolic length is bound from the data when the program runs.
    symbolic = pt.make_data_wrapper(data, shape=(pt.make_size_param("n"), 4))
    assert str(symbolic.shape[0]) == "n"
    np.testing.assert_array_equal(pt.generate(symbolic * 2, "interp")(), data * 2)
    with pytest.raises(ValueError):
        pt.make_placeholder("y", (3, 4), np.float64, axes=axes[:1])  # one Axis per axis


def test_dependency_mapper_collects_every_node_below_and_itself():
    from pytato_rs.transform import DependencyMapper

    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n,), np.float64)
    s = pt.sin(x)
    out = pt.make_dict_of_named_arrays({"a": s * 2.0, "b": s})
    deps = DependencyMapper()(out)
    assert deps == frozenset({n, x, s, s * 2.0})
    assert DependencyMapper()(s) == frozenset({n, x, s})


def test_nodes_with_tags_of_given_types_are_counted():
    from pytato_rs.analysis import get_num_tags_of_type
    from pytato_rs.tags import ImplStored, Named, Tag

    class Unused(Tag):
        pass

    x = pt.make_placeholder("x", (3,), np.float64, tags=frozenset([Named("x")]))
    y = (pt.sin(x) * 2.0).tagged(frozenset([ImplStored(), Named("y")]))
    out = pt.make_dict_of_named_arrays({"y": y + 1.0})
    assert get_num_tags_of_type(out, frozenset()) == 4  # x, sin(x), the product, the sum
    assert get_num_tags_of_type(out, Named) == 2
    assert get_num_tags_of_type(out, (ImplStored, Named)) == 1
    assert get_num_tags_of_type(out, [ImplStored, Unused]) == 0


def test_users_collector_maps_every_node_to_its_users():
    from pytato_rs.transform import UsersCollector

    a = pt.make_placeholder("a", (1,), np.int64)
    y = a + 1
    z = pt.stack([y, a])
    collector = UsersCollector()
    collector(z)
    assert collector.node_to_users == {a: {y, z}, y: {z}, z: set()}


def test_to_index_lambda_lowers_one_node_and_keeps_its_value():
    from pytato_rs.transform.lower_to_index_lambda import to_index_lambda

    x = pt.make_placeholder("x", (10, 4), np.float64)
    for expr, numpy_of in [
        (pt.roll(x, 3, axis=0), lambda v: np.roll(v, 3, axis=0)),
        (x.reshape(5, 8), lambda v: v.reshape(5, 8)),
        (pt.transpose(x), lambda v: v.T),
        (pt.stack([x, 2 * x], axis=1), lambda v: np.stack([v, 2 * v], axis=1)),
        (x[::-2, 1], lambda v: v[::-2, 1]),
    ]:
        lowered = to_index_lambda(expr)
        assert isinstance(lowered, pt.IndexLambda) and lowered.shape == expr.shape, expr.node_type
        xs = np.arange(40.0).reshape(10, 4)
        np.testing.assert_array_equal(pt.generate(lowered, "interp")(x=xs), numpy_of(xs))
    # One node only: the reshape below stays a reshape.
    nested = pt.ones(12).reshape(6, 2).reshape(3, 4)
    (binding,) = pt.to_index_lambda(nested).bindings.values()
    assert isinstance(binding, pt.Reshape)
    assert pt.to_index_lambda(x) == x


def test_traceback_tags_say_where_nodes_were_built_and_do_not_change_equality():
    from pytato_rs.tags import CreatedAt

    a = pt.make_placeholder("a", (3,), np.float64)
    b = pt.make_placeholder("b", (3,), np.float64)
    pt.set_traceback_tag_enabled(True)
    try:
        first = a + b
        second = a + b
        same_line = [a + b, a + b]
    finally:
        pt.set_traceback_tag_enabled(False)
    assert first == second and hash(first) == hash(second) and first.tags == frozenset()
    assert first.non_equality_tags != second.non_equality_tags
    assert same_line[0].non_equality_tags == same_line[1].non_equality_tags
    (tag,) = first.non_equality_tags
    assert isinstance(tag, CreatedAt)
    frame = tag.traceback.frames[-1]
    assert frame.name == "test_traceback_tags_say_where_nodes_were_built_and_do_not_change_equality"
    assert "first = a + b" in frame.line and len(tag.traceback.to_stacksummary()) == len(tag.traceback.frames)
    # Off again: no tags; and tagged nodes still compile and run.
    assert (a + b).non_equality_tags == frozenset()
    np.testing.assert_array_equal(pt.generate(first, "interp")(a=np.ones(3), b=np.arange(3.0)), np.arange(3.0) + 1)


def test_traceback_tags_survive_transforms_and_show_in_drawings():
    a = pt.make_placeholder("a", (3,), np.float64)
    pt.set_traceback_tag_enabled(True)
    try:
        first = a + a
        second = a + a
        both = first + second
    finally:
        pt.set_traceback_tag_enabled(False)
    # deduplicate merges first and second and rebuilds `both`, keeping where it was built
    merged = pt.transform.deduplicate(both)
    assert merged.non_equality_tags == both.non_equality_tags != frozenset()
    assert merged.bindings["_in0"] is merged.bindings["_in1"] or len(set(merged._children())) == 1
    dot = pt.get_dot_graph(first)
    assert "first = a + a [test_graph.py:" in dot


def test_a_node_has_one_object_while_it_is_held():
    a = pt.make_placeholder("a", (3,), np.float64)
    scaled = np.nan * a
    (read,) = scaled.bindings.values()
    assert read is a and scaled._children()[0] is a
    assert a.astype(a.dtype) is a
    assert scaled.replace_if_different(expr=scaled.expr) is scaled
    assert scaled.replace_if_different(tags=scaled.tags) is scaled
    # id()-keyed caches see each node once in a traversal, however many objects were dropped
    chain = a
    for _ in range(1000):
        chain = chain + 1
    seen = set()

    class Ids(pt.transform.CachedWalkMapper):
        def get_cache_key(self, expr):
            return id(expr)

        def post_visit(self, expr):
            seen.add(expr._node_id)

    Ids()(chain)
    assert len(seen) == 1001


def test_with_new_tags_replaces_the_tags():
    # pytools' Taggable protocol, which meshmode calls when it unpickles arrays.
    from pytato_rs.tags import ImplStored, PrefixNamed

    x = pt.make_placeholder("x", (2,), np.float64).tagged(ImplStored())
    retagged = x._with_new_tags(frozenset({PrefixNamed("u")}))
    assert retagged.tags == frozenset({PrefixNamed("u")})
    assert x._with_new_tags(x.tags) is x


def test_pytatos_abstract_result_and_reduction_descriptor_names():
    x = pt.make_placeholder("x", (3,), np.float64)
    named = pt.make_dict_of_named_arrays({"a": x + 1})
    assert isinstance(named, pt.AbstractResultWithNamedArrays)
    assert not isinstance(x, pt.AbstractResultWithNamedArrays)
    assert pt.ReductionDescriptor is pt.array.ReductionDescriptor
    assert pt.AbstractResultWithNamedArrays is pt.array.AbstractResultWithNamedArrays
