"""Index lambdas built from pymbolic expressions (``pt.IndexLambda(expr=...)``,
``replace_if_different(expr=...)``), the other node constructors, reductions' descriptors and
tags, affine shapes from Python, and mappers that create duplicates. Values are checked against
numpy computing the same expression."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt

prim = pytest.importorskip("pymbolic.primitives")
from pymbolic import parse  # noqa: E402

from pytato_rs.scalar_expr import Reduce, TypeCast  # noqa: E402


def run(expr, **inputs):
    return pt.generate(expr)(**inputs)


def var(name):
    return prim.Variable(name)


def sub(name, *index):
    return prim.Subscript(var(name), index)


def test_round_trip_of_every_frontend_expression_gives_the_same_node():
    x = pt.make_placeholder("x", (5, 3), np.float32)
    i = pt.make_placeholder("i", (5,), np.int16)
    exprs = [
        3 * x,
        x - 2 * x,
        -x,
        x / 3,
        x // 2,
        x % 2,
        x**2,
        pt.where(x > 0, x, 0.5),
        pt.sin(x) + pt.arctan2(x, x),
        pt.maximum(x, 1),
        x.astype(np.int64) & 3,
        ~(i | 1),
        pt.logical_and(x > 0, x < 1),
        pt.sum(x, axis=1),
        pt.amax(x, axis=0),
        x[i[:, None] % 5, :2],
    ]
    for e in exprs:
        if not isinstance(e, pt.IndexLambda):
            e = pt.to_index_lambda(e)
        rebuilt = pt.IndexLambda(
            expr=e.expr,
            shape=e.shape,
            dtype=e.dtype,
            bindings=e.bindings,
            var_to_reduction_descr=e.var_to_reduction_descr,
        )
        assert rebuilt == e, (e.expr, rebuilt.expr)
        assert e.replace_if_different(expr=e.expr) == e


def test_untyped_constants_follow_numpy_2_promotion():
    x = pt.make_placeholder("x", (4,), np.float32)
    name, = (2 * x).bindings
    # a Python int stays weak: the float32 of x, exactly what 3 * x builds
    assert (2 * x).replace_if_different(expr=parse(f"3*{name}[_0]")) == 3 * x
    # a numpy float64 is typed, as in numpy
    lam = pt.IndexLambda(
        expr=prim.Product((np.float64(0.1), sub("_in0", var("_0")))),
        shape=(4,),
        dtype=np.float64,
        bindings={"_in0": x},
    )
    data = np.linspace(-1, 1, 4, dtype=np.float32)
    np.testing.assert_array_equal(run(lam, x=data), np.float64(0.1) * data)
    # declared dtype differing from the computed one: cast, as pytato's code generators assign
    lam = pt.IndexLambda(expr=sub("_in0", var("_0")) / 3, shape=(4,), dtype=np.float16, bindings={"_in0": x})
    np.testing.assert_array_equal(run(lam, x=data), (data / np.float32(3)).astype(np.float16))


def test_indirect_subscripts_casts_conditionals_and_calls_against_numpy():
    a = pt.make_placeholder("a", (6, 4), np.float64)
    idx = pt.make_placeholder("idx", (6,), np.int32)
    expr = prim.If(
        prim.Comparison(sub("_in0", sub("_in1", var("_0")), var("_1")), ">", 0),
        prim.Call(var("pytato.c99.sqrt"), (sub("_in0", sub("_in1", var("_0")), var("_1")),)),
        TypeCast(np.dtype(np.int8), prim.FloorDiv(var("_1"), 2)),
    )
    lam = pt.IndexLambda(expr=expr, shape=(6, 4), dtype=np.float64, bindings={"_in0": a, "_in1": idx})
    rng = np.random.default_rng(0)
    a_data = rng.standard_normal((6, 4))
    idx_data = rng.integers(0, 6, 6).astype(np.int32)
    gathered = a_data[idx_data]
    j = np.broadcast_to(np.arange(4), (6, 4))
    with np.errstate(invalid="ignore"):
        expected = np.where(gathered > 0, np.sqrt(gathered), (j // 2).astype(np.int8))
    np.testing.assert_array_equal(run(lam, a=a_data, idx=idx_data), expected)


def test_reductions_with_descriptors_and_tagged_reductions():
    from pytato_rs.tags import Tag

    class Summed(Tag):
        def __eq__(self, other):
            return type(other) is Summed

        def __hash__(self):
            return hash("Summed")

    b = pt.make_placeholder("b", (5, 7), np.float64)
    body = prim.Product((sub("_in0", var("_0"), var("_r0")), sub("_in0", var("_0"), var("_r0"))))
    lam = pt.IndexLambda(
        expr=Reduce(body, pt.reductions.SumReductionOperation, {"_r0": (0, 7)}),
        shape=(5,),
        dtype=np.float64,
        bindings={"_in0": b},
        var_to_reduction_descr={"_r0": pt.array.ReductionDescriptor(frozenset())},
    )
    data = np.arange(35.0).reshape(5, 7)
    np.testing.assert_array_equal(run(lam, b=data), (data * data).sum(axis=1))
    assert lam == pt.sum(b * b, axis=1) or np.allclose(run(pt.sum(b * b, axis=1), b=data), run(lam, b=data))

    tagged = lam.with_tagged_reduction("_r0", Summed())
    assert tagged.var_to_reduction_descr["_r0"].tags_of_type(Summed) == frozenset([Summed()])
    with pytest.raises(pt.diagnostic.NotAReductionAxis):
        lam.with_tagged_reduction("_0", Summed())

    colsum = pt.einsum("ij->j", b)
    with pytest.raises(TypeError):
        colsum.with_tagged_reduction("i", Summed())
    descr = colsum.access_descriptors[0][0]
    tagged = colsum.with_tagged_reduction(descr, Summed())
    assert tagged.redn_axis_to_redn_descr[descr].tags_of_type(Summed) == frozenset([Summed()])


def test_bad_expressions_are_errors_naming_what_is_wrong():
    x = pt.make_placeholder("x", (3,), np.float64)
    cases = [
        (sub("_in1", var("_0")), "bindings"),  # an unknown binding
        (sub("_in0", var("_0"), 0), "subscripts"),  # wrong number of indices
        (sub("_in0", sub("_in0", var("_0"))), "integer"),  # a float index
        (var("_3"), "iname"),  # an iname beyond the result's axes
    ]
    for expr, word in cases:
        with pytest.raises(pt.PytatoError, match=word):
            pt.IndexLambda(expr=expr, shape=(3,), dtype=np.float64, bindings={"_in0": x})
    with pytest.raises(NotImplementedError, match="Lookup"):
        pt.IndexLambda(expr=prim.Lookup(var("_in0"), "real"), shape=(3,), dtype=np.float64, bindings={"_in0": x})


def test_deep_expressions_are_walked_without_recursion_and_bounded():
    x = pt.make_placeholder("x", (2,), np.int64)

    def chain(n):
        expr = sub("_in0", var("_0"))
        for _ in range(n):
            expr = prim.Sum((expr, 1))
        return expr

    lam = pt.IndexLambda(expr=chain(1000), shape=(2,), dtype=np.int64, bindings={"_in0": x})
    for backend, _ in pt.backends():
        np.testing.assert_array_equal(pt.generate(lam, backend)(x=np.array([1, 2])), np.array([1001, 1002]))
    # beyond the library's bound on expression depth: an error, not a stack overflow (300,000
    # levels were built whole before the bound was checked, and dropping them overflowed the
    # stack: the bound now holds as the expression is typed)
    for depth in (20_000, 300_000):
        with pytest.raises(pt.InvalidArgumentError, match="levels deep"):
            pt.IndexLambda(expr=chain(depth), shape=(2,), dtype=np.int64, bindings={"_in0": x})


def test_other_node_constructors_build_what_the_functions_build():
    x = pt.make_placeholder("x", (4, 6), np.float64)
    assert pt.Placeholder(name="x", shape=(4, 6), dtype=np.float64) == x
    assert pt.Reshape(x, (6, 4), "C") == pt.reshape(x, (6, 4))
    assert pt.Roll(array=x, shift=2, axis=1) == pt.roll(x, 2, axis=1)
    assert pt.AxisPermutation(x, (1, 0)) == pt.transpose(x)
    assert pt.Stack(arrays=(x, x), axis=0) == pt.stack([x, x])
    assert pt.Concatenate(arrays=(x, x), axis=1) == pt.concatenate([x, x], axis=1)
    n = pt.SizeParam("n")
    assert n == pt.make_size_param("n")


def test_affine_shapes_written_with_python_operators():
    n = pt.make_size_param("n")
    m = pt.make_size_param("m")
    a = pt.make_placeholder("a", (2 * n + 1, n - n, 3 * m - n), np.float64)
    assert [str(d) for d in a.shape] == ["2*n + 1", "0", "3*m - n"]
    x = pt.make_placeholder("x", (2 * n + 1,), np.float64)
    np.testing.assert_array_equal(run(2 * x, x=np.arange(7.0)), 2 * np.arange(7.0))
    with pytest.raises(TypeError, match="affine"):
        pt.make_placeholder("y", (n * m,), np.float64)


def test_transform_mapper_reports_duplicates_it_creates():
    x1 = pt.make_placeholder("x", (3,), np.float64)
    x2 = pt.make_placeholder("x", (3,), np.float64)
    dag = x1 + x2

    class Copying(pt.transform.TransformMapper):
        def map_index_lambda(self, expr):
            bindings = {name: self.rec(b) for name, b in expr.bindings.items()}
            return expr.replace_if_different(bindings=bindings)

        def map_placeholder(self, expr):
            return pt.Placeholder(name=expr.name, shape=expr.shape, dtype=expr.dtype)

    class Keeping(Copying):
        def map_placeholder(self, expr):
            return expr

    Keeping(err_on_created_duplicate=True)(dag)  # duplicates in the input are merged, not created
    with pytest.raises(ValueError, match="equal"):
        Copying(err_on_created_duplicate=True)(dag)
    assert Copying()(dag) == dag


def test_expressions_read_without_the_casts_promotion_implies():
    i = pt.make_placeholder("i", (3,), np.int64)
    f = pt.make_placeholder("f", (3,), np.float32)
    # what numpy's rules put back is left out, as pytato writes expressions
    assert str((i * 2.5).expr) == "_in0[_0]*2.5"
    assert str((i / i).expr) == "_in0[_0] / _in0[_0]"
    assert str(pt.sin(i).expr) == "pytato.c99.sin(_in0[_0])"
    # a cast that decides a value stays: astype, and an int8 sum computed in int8
    assert isinstance(i.astype(np.int8).expr, TypeCast)
    small = pt.make_placeholder("s", (3,), np.int8)
    lam = pt.IndexLambda(expr=TypeCast(np.dtype(np.int8), sub("_in0", var("_0"))) + 1, shape=(3,),
                         dtype=np.int64, bindings={"_in0": i})
    assert "cast(int8" in str(lam.expr)
    for e in (i * 2.5, f + i, lam, small * 3):
        rebuilt = pt.IndexLambda(expr=e.expr, shape=e.shape, dtype=e.dtype, bindings=e.bindings)
        assert rebuilt == e


def test_dtype_none_keeps_the_computed_dtype():
    big = np.array([2**62 + 1, -(2**63)], dtype=np.int64)
    x = pt.make_placeholder("x", (2,), np.int64)
    kept = pt.IndexLambda(expr=sub("x", var("_0")) + 1, shape=(2,), dtype=None, bindings={"x": x})
    assert kept.dtype == np.int64
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run(kept, x=big), big + 1)
    cast = pt.IndexLambda(expr=sub("x", var("_0")), shape=(2,), dtype=np.float32, bindings={"x": x})
    assert cast.dtype == np.float32
