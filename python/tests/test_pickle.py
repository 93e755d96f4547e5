"""Pickled expressions come back equal (``pickle.loads(pickle.dumps(e)) == e``), with their tags,
and compute what they computed; deep chains pickle without recursion."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import pytato_rs as pt

pytest.importorskip("pymbolic")


class Scaled(pt.tags.Tag):
    def __eq__(self, other):
        return type(other) is Scaled

    def __hash__(self):
        return hash("Scaled")


def round_trip(expr):
    return pickle.loads(pickle.dumps(expr))


def test_every_picklable_kind_comes_back_equal_and_computes_the_same():
    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (6, 4), np.float64)
    y = pt.make_placeholder("y", (n,), np.float32)
    i = pt.make_placeholder("i", (3,), np.int64)
    exprs = [
        2 * x + np.nan,
        pt.sum(x, axis=1).with_tagged_reduction("_r0", Scaled()),
        pt.einsum("ij,kj->ik", x, x),
        x.reshape((4, 6), order="F"),
        pt.roll(x, -2, axis=0),
        x.T,
        pt.stack([x, 2 * x], axis=1),
        pt.concatenate([x, x[::-1]], axis=0),
        x[4:0:-2, 1],
        x[i, ::2],
        x[i, 1:3][:, None] * 3,
        x[:, i],
        y[1:] - y[::-1][1:],
        (x + 1).tagged(Scaled()).with_tagged_axis(1, Scaled()),
        pt.where(x > 0, pt.sqrt(x), pt.zeros_like(x)),
        # host steps: scans, sorts, binary searches, mask positions, scatters
        pt.cumsum(x, axis=1) + pt.cumulative_prod(x.astype(np.complex64), axis=0, include_initial=True)[1:],
        pt.sort(x, axis=0) - pt.sort(x, axis=1, descending=True) + pt.argsort(x, axis=0),
        pt.searchsorted(pt.sort(y), y, side="right") + pt.searchsorted(pt.sort(y), y),
        x[x > 0] * 2,
        pt.trim_zeros(pt.where(x > 1, x, 0)),
        x.at[i].add(1.0).at[i[:1]].set(-1.0),
        # ldexp holds its exponent in the mantissa's float dtype, which numpy's ldexp refuses:
        # reading .expr (and so pickling) raised numpy's refusal (found by a Python-side fuzzer)
        pt.ldexp(x, 3) + pt.ldexp(x, i[:1]) + pt.ldexp(2.5, i[:1]),
        pt.ldexp(y, np.int16(-5)) + pt.ldexp(y.astype(np.float16), True),
    ]
    rng = np.random.default_rng(4)
    inputs = {"x": rng.standard_normal((6, 4)), "i": np.array([3, 0, 2]), "y": rng.random(5).astype(np.float32)}
    for expr in exprs:
        back = round_trip(expr)
        assert back == expr, expr
        assert back.tags == expr.tags and [a.tags for a in back.axes] == [a.tags for a in expr.axes]
        needed = {k: v for k, v in inputs.items() if k in pt.generate(expr).input_names}
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(pt.generate(back)(**needed), pt.generate(expr)(**needed))
    outputs = pt.make_dict_of_named_arrays({"a": 2 * x, "b": pt.sum(x)})
    assert round_trip(outputs) == outputs


def test_data_comes_back_as_data_of_its_own():
    data = np.arange(12.0).reshape(3, 4)
    wrapped = pt.make_data_wrapper(data, name="d")
    back = round_trip(wrapped)
    np.testing.assert_array_equal(back.data, data)
    assert back.shape == wrapped.shape and back.dtype == wrapped.dtype
    assert back != wrapped  # data wrappers are equal only to themselves, as in pytato


def test_deep_chains_pickle_without_recursion():
    x = pt.make_placeholder("x", (2,), np.float64)
    chain = x
    for _ in range(20_000):
        chain = chain + 1
    back = round_trip(chain)
    assert back == chain
    np.testing.assert_array_equal(pt.generate(back)(x=np.zeros(2)), np.full(2, 20_000.0))


def test_nodes_not_picklable_yet_say_so():
    x = pt.make_placeholder("x", (4,), np.float64)
    with pytest.raises(pickle.PicklingError, match="CallResult"):
        pickle.dumps(pt.trace_call(lambda a: 2 * a, x))


def test_persistent_keys_are_equal_for_equal_dags_and_stable_across_processes():
    import subprocess
    import sys

    pytest.importorskip("pytools")
    from pytato_rs.analysis import PytatoKeyBuilder

    program = """
import numpy as np, pytato_rs as pt
from pytato_rs.analysis import PytatoKeyBuilder
n = pt.make_size_param("n")
x = pt.make_placeholder("x", (n, 4), np.float64)
e = pt.sum(2 * x[1:] + pt.make_data_wrapper(np.arange(4.0)), axis=0) @ pt.ones(4)
print(PytatoKeyBuilder()(pt.make_dict_of_named_arrays({"e": e, "t": x.T})))
"""
    here = {}
    exec(program.replace("print(", "here['key'] = ("), {"here": here})
    elsewhere = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert elsewhere.stdout.strip() == here["key"]
    kb = PytatoKeyBuilder()
    x = pt.make_placeholder("x", (3,), np.float64)
    assert kb(2 * x) == kb(2 * x) != kb(3 * x)


def test_copy_of_an_expression_is_the_expression():
    import copy

    x = pt.make_placeholder("x", (3,), np.float64)
    y = pt.sin(x) + 1
    assert copy.copy(y) is y  # immutable, as a tuple: no pickling round trip
    assert copy.deepcopy(y) == y


def test_positions_counted_from_the_end_of_symbolic_axes_pickle():
    """A slice bound or an integer index normalized to ``n - k`` on an axis of symbolic length
    ``n`` comes back as ``-k``, as it was written, and computes the same for every ``n``."""
    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n, 3), np.float64)
    exprs = [x[1:-1], x[-3:], x[-2::-1], x[-2], x[-1, 1], x[:, -2:] * x[1:][::-1][0, :2], pt.diff(x, axis=0)]
    for expr in exprs:
        back = round_trip(expr)
        assert back == expr
        for rows in (3, 5, 9):
            data = np.arange(3.0 * rows).reshape(rows, 3)
            np.testing.assert_array_equal(pt.generate(back)(x=data), pt.generate(expr)(x=data))


def test_outputs_that_share_nodes_come_back_sharing_them(backend):
    # Each output was written apart, so a node two outputs share came back twice: a data wrapper
    # with two copies of its data, and a mask's count under one name for two nodes, which no
    # program could run (DuplicateNameError; found by a Python-side fuzzer, seed 97100128).
    data = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 3.0], [4.0, 0.0, np.nan]])
    x = pt.make_data_wrapper(data)
    positions = pt.flatnonzero(x)
    outputs = pt.make_dict_of_named_arrays({"a": positions + 1, "b": positions * 2, "c": x[x > 0], "d": x})
    back = round_trip(outputs)
    wrappers = {id(n.data) for n in pt.transform.DependencyMapper()(back) if isinstance(n, pt.DataWrapper)}
    assert len(wrappers) == 1
    got = pt.generate(back, backend)()
    np.testing.assert_array_equal(got["a"], np.flatnonzero(data) + 1)
    np.testing.assert_array_equal(got["b"], np.flatnonzero(data) * 2)
    np.testing.assert_array_equal(got["c"], data[data > 0])
    np.testing.assert_array_equal(got["d"], data)


def test_conditions_on_sizes_come_back_with_the_node(backend):
    # A reduction without identity over a symbolic axis, or an integer index on one, holds what
    # the sizes must satisfy beside its expression. Pickling and deepcopy rebuilt the node from
    # its expression alone, so a pickled max over an axis empty at run time gave -inf (argmax the
    # largest int64) where numpy raises; copy() with new reduction tags lost it too.
    import copy

    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n, 3), np.float64)
    z = pt.make_placeholder("z", (n, 3), np.complex128)
    cases = [
        (lambda p, a, c: p.max(a, axis=0), "x"),
        (lambda p, a, c: p.min(a, axis=0), "x"),
        (lambda p, a, c: p.argmax(a, axis=0), "x"),
        (lambda p, a, c: p.argmin(a, axis=1), "x"),
        (lambda p, a, c: p.max(c, axis=0), "z"),
        (lambda p, a, c: a[-1], "x"),
        (lambda p, a, c: a[2] * 2, "x"),
    ]

    def retagged(node):
        # copy() with new reduction tags rebuilds an index lambda from its fields
        old = getattr(node, "var_to_reduction_descr", {})
        descriptors = {k: pt.ReductionDescriptor(frozenset({Scaled()})) for k in old}
        return node.copy(var_to_reduction_descr=descriptors) if descriptors else node

    for build, name in cases:
        expr = build(pt, x, z)
        for copied in (round_trip(expr), copy.deepcopy(expr), retagged(expr)):
            program = pt.generate(copied, backend)
            for rows in (0, 1, 4):
                rng = np.random.default_rng(rows)
                data = rng.standard_normal((rows, 3))
                if name == "z":
                    data = data + 1j * rng.standard_normal((rows, 3))
                try:
                    expected = build(np, data, data)
                except (ValueError, IndexError) as numpy_error:
                    with pytest.raises(type(numpy_error)):
                        program(**{name: data})
                    continue
                np.testing.assert_array_equal(program(**{name: data}), expected)


def test_malformed_size_checks_are_refused():
    # what a hand-made or corrupted pickle could hold: an axis beyond its shape, a zero step
    x = pt.make_placeholder("x", (pt.make_size_param("n"), 3), np.float64)
    node = pt.max(x, axis=0)
    for bad in [[("non_empty", "max", (3,), 1)], [("slice_inside", "x", 0, 2, 0, 0, (4,))], [("no_such", "x")], [5]]:
        with pytest.raises(ValueError):
            node._with_size_checks(bad)
    with pytest.raises(ValueError):
        x._with_size_checks([("non_empty", "max", (3,), 0)])  # only index lambdas hold checks


def test_index_lambdas_come_back_node_for_node():
    # Index lambdas travelled as pymbolic expressions, typed again by numpy's rules on the way
    # back: equivalent, but not always the same node (an integer power's exponent checked a second
    # time, a constant of logaddexp2 cast otherwise), so the round trip was unequal.
    n = pt.make_size_param("n")
    a = pt.make_placeholder("a", (4,), np.int64)
    b = pt.make_placeholder("b", (4,), np.int64)
    f = pt.make_placeholder("f", (4,), np.float64)
    h = pt.make_placeholder("h", (4,), np.float16)
    c = pt.make_placeholder("c", (n, 3), np.complex128)
    exprs = [a ** b, a ** 3, a << b, a >> 2, pt.logaddexp2(f, 1.0), pt.max(c, axis=0), pt.sin(h) * h + 1,
             pt.prod(c, axis=0, initial=2 - 1j), pt.where(f > 0, f, -0.0), (h > 1) | (f < np.float32(2))]
    for expr in exprs:
        assert round_trip(expr) == expr, expr


def test_malformed_expression_entries_are_refused():
    x = pt.make_placeholder("x", (3,), np.float64)
    entries = (2 * x)._expr_entries
    make = pt._native._index_lambda_from_entries
    good = make(entries, (3,), {"_in1": x}, {})
    assert good == 2 * x
    for bad in [entries[:-1], entries + entries[-1:], (("no_such",),), (("binary", "Nope"),) + entries,
                (("const", 1.0), ("unary", "Neg"), ("binary", "Add")), [5], (("cast", "float99"),)]:
        with pytest.raises(ValueError):
            make(bad, (3,), {"_in1": x}, {})
    # a million levels deep: refused while it is read (building it, then dropping it, recursed
    # as deep and overflowed the stack)
    with pytest.raises(ValueError, match="levels deep"):
        make((("var", "_0"),) + (("unary", "Neg"),) * 1_000_000, (3,), {}, {})
    # well formed, ill typed: the index lambda's own checks refuse it
    with pytest.raises(pt.exceptions.PytatoError):
        make((("var", "_0"), ("const", np.float64(1.0)), ("binary", "BitAnd")), (3,), {}, {})
