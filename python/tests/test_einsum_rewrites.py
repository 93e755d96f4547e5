"""pytato's einsum rewrites: the distributive law (``pytato_rs.transform.einsum_distributive_law``)
and ``rewrite_einsums_with_no_broadcasts``; each result is checked for its structure and, against
numpy, for its values."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt

pytest.importorskip("pymbolic")
from pytato_rs.transform.einsum_distributive_law import (  # noqa: E402
    DoDistribute,
    DoNotDistribute,
    apply_distributive_property_to_einsums,
)


def matvec_on(operand):
    def decide(expr):
        if pt.analysis.is_einsum_similar_to_subscript(expr, "ij,j->i"):
            return DoDistribute(ioperand=operand)
        return DoNotDistribute()

    return decide


def values(expr, **inputs):
    return pt.generate(expr)(**inputs)


def test_distributing_over_sums_differences_and_constant_multiples():
    rng = np.random.default_rng(1)
    data = {"x1": rng.random(4), "x2": rng.random(4), "a1": rng.random((6, 4)), "a2": rng.random((6, 4))}
    x1, x2 = (pt.make_placeholder(n, 4, np.float64) for n in ("x1", "x2"))
    a1, a2 = (pt.make_placeholder(n, (6, 4), np.float64) for n in ("a1", "a2"))
    y = (7 * a1 + 8 * pt.sin(a2)) @ (2 * x1 - 3 * x2)

    over_vector = apply_distributive_property_to_einsums(y, matvec_on(1))
    assert over_vector == 2 * ((7 * a1 + 8 * pt.sin(a2)) @ x1) - 3 * ((7 * a1 + 8 * pt.sin(a2)) @ x2)
    over_matrix = apply_distributive_property_to_einsums(y, matvec_on(0))
    assert over_matrix == 7 * (a1 @ (2 * x1 - 3 * x2)) + 8 * (pt.sin(a2) @ (2 * x1 - 3 * x2))

    expected = (7 * data["a1"] + 8 * np.sin(data["a2"])) @ (2 * data["x1"] - 3 * data["x2"])
    for rewritten in (over_vector, over_matrix):
        np.testing.assert_allclose(values(rewritten, **data), expected, rtol=1e-13)


def test_operands_that_are_not_sums_and_undistributed_dags_are_kept():
    x = pt.make_placeholder("x", 10, np.float64)
    a = pt.make_placeholder("a", (3, 10), np.float64)
    nothing = pt.make_dict_of_named_arrays({"y0": a @ pt.sin(x), "y1": pt.stack([5 * x, 3 * x])})
    assert apply_distributive_property_to_einsums(nothing, matvec_on(1)) is nothing
    # a sum with a broadcast term is not taken apart: the terms must have the operand's shape
    b = a @ (x + 1.0)
    assert apply_distributive_property_to_einsums(b, matvec_on(1)) == b
    dict_result = apply_distributive_property_to_einsums(
        pt.make_dict_of_named_arrays({"y": a @ (x + 2 * x)}), matvec_on(1)
    )
    assert dict_result == pt.make_dict_of_named_arrays({"y": a @ x + 2 * (a @ x)})


def test_rewrite_einsums_with_no_broadcasts():
    a = pt.make_placeholder("a", (10, 4, 1), np.float64)
    b = pt.make_placeholder("b", (10, 1, 4), np.float64)
    c = pt.einsum("ijk,ijk->ijk", a, b)
    expr = pt.einsum("ijk,ijk,ijk->i", a, b, c)
    new = pt.rewrite_einsums_with_no_broadcasts(expr)
    assert pt.analysis.is_einsum_similar_to_subscript(new, "ij,ik,ijk->i")
    assert pt.analysis.is_einsum_similar_to_subscript(new.args[2], "ij,ik->ijk")
    rng = np.random.default_rng(2)
    data = {"a": rng.random((10, 4, 1)), "b": rng.random((10, 1, 4))}
    expected = np.einsum("ijk,ijk,ijk->i", data["a"], data["b"], data["a"] * data["b"])
    np.testing.assert_allclose(values(new, **data), expected, rtol=1e-13)
