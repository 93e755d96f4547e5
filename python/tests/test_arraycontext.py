"""PytatoRsArrayContext on arraycontext's interface. Expected values are numpy's.

arraycontext is not on the package registry at a current version (PyPI has 2021.1): these
tests run where it is installed from its repository (github.com/inducer/arraycontext) and
are skipped, saying so, elsewhere. call_loopy's translation is tested without it
(test_loopy_call.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import pytato_rs as pt

arraycontext = pytest.importorskip(
    "arraycontext.typing", reason="arraycontext is not installed (pip install from "
    "github.com/inducer/arraycontext: PyPI's 2021.1 is too old)")

from arraycontext import (  # noqa: E402
    ArrayOrContainer,
    dataclass_array_container,
    with_container_arithmetic,
)
from pytools.obj_array import new_1d as obj_array_1d  # noqa: E402
from pytools.tag import Tag  # noqa: E402

from pytato_rs.arraycontext import PytatoRsArrayContext  # noqa: E402


class DOFTag(Tag):
    """A tag for the tests."""


@with_container_arithmetic(bcasts_across_obj_array=True, rel_comparison=True)
@dataclass_array_container
@dataclass(frozen=True)
class State:
    u: ArrayOrContainer
    v: ArrayOrContainer

    __array_ufunc__: ClassVar[None] = None


@pytest.fixture
def actx(backend):
    return PytatoRsArrayContext(backend=backend)


def test_freeze_computes_and_keeps_tags_and_axes(actx):
    a = np.arange(12.0).reshape(3, 4)
    lazy = actx.tag_axis(1, DOFTag(), actx.tag(DOFTag(), 2 * actx.from_numpy(a) + 1))
    frozen = actx.freeze(lazy)
    assert isinstance(frozen, pt.EvaluatedArray) and not isinstance(frozen, np.ndarray)
    np.testing.assert_array_equal(frozen.get(), 2 * a + 1)
    assert DOFTag() in frozen.tags
    assert frozen.axes[1].tags_of_type(DOFTag) and not frozen.axes[0].tags_of_type(DOFTag)
    thawed = actx.thaw(frozen)
    assert isinstance(thawed, pt.DataWrapper)
    assert thawed.tags_of_type(DOFTag) and thawed.axes[1].tags_of_type(DOFTag)
    # Thawing shares the buffer: two thaws are one node, and freezing again is free.
    assert actx.thaw(frozen) == thawed
    assert actx.thaw(actx.freeze(thawed)) == thawed


def test_containers_round_trip_through_numpy(actx):
    u, v = np.linspace(0, 1, 5), np.linspace(-1, 0, 5)
    state = actx.from_numpy(State(u=u, v=obj_array_1d([v, 2 * v])))
    result = actx.to_numpy(actx.np.sin(state) * 2 + state)
    np.testing.assert_allclose(result.u, np.sin(u) * 2 + u, rtol=1e-15)
    np.testing.assert_allclose(result.v[1], np.sin(2 * v) * 2 + 2 * v, rtol=1e-15)
    frozen = actx.freeze(state)
    assert isinstance(frozen.v[0], pt.EvaluatedArray)
    assert isinstance(actx.thaw(frozen).v[1], pt.DataWrapper)


def test_np_namespace_matches_numpy(actx):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    x, y = actx.from_numpy(a), actx.from_numpy(b)
    cases = {
        "where": (actx.np.where(x > y, x, y), np.where(a > b, a, b)),
        "arctan2": (actx.np.arctan2(x, y), np.arctan2(a, b)),
        "sum axis": (actx.np.sum(x, axis=1), a.sum(axis=1)),
        "max": (actx.np.max(x), a.max()),
        "min axis": (actx.np.min(x, axis=0), a.min(axis=0)),
        "stack": (actx.np.stack([x, y], axis=1), np.stack([a, b], axis=1)),
        "concatenate": (actx.np.concatenate([x, y], axis=1), np.concatenate([a, b], axis=1)),
        "ravel F": (actx.np.ravel(x, order="F"), a.ravel(order="F")),
        "reshape": (actx.np.reshape(x, (5, 4)), a.reshape(5, 4)),
        "vdot": (actx.np.vdot(x, y), np.vdot(a, b)),
        "zeros_like": (actx.np.zeros_like(x), np.zeros_like(a)),
        "norm": (actx.np.linalg.norm(x), np.linalg.norm(a)),
        "einsum": (actx.einsum("ij,kj->ik", x, y), np.einsum("ij,kj->ik", a, b)),
    }
    for name, (got, expected) in cases.items():
        np.testing.assert_allclose(actx.to_numpy(got), expected, rtol=1e-13, err_msg=name)
    assert bool(actx.to_numpy(actx.np.all(x == x))) and not bool(actx.to_numpy(actx.np.any(x != x)))
    assert bool(actx.to_numpy(actx.np.array_equal(State(u=x, v=y), State(u=x, v=y))))
    assert not bool(actx.to_numpy(actx.np.array_equal(State(u=x, v=y), State(u=y, v=x))))
    assert actx.np.sin(0.5) == np.sin(0.5)


def test_einsum_names_operands_that_have_no_name(actx):
    from arraycontext.metadata import NameHint

    from pytato_rs.tags import PrefixNamed

    a = np.arange(6.0).reshape(2, 3)
    named = actx.tag(NameHint("jac"), actx.from_numpy(a) * 1)
    unnamed = actx.from_numpy(a) * 2
    result = actx.einsum("ij,ij->i", named, unnamed, arg_names=("area", "u"))
    assert result.args[0].tags_of_type(PrefixNamed) == frozenset({PrefixNamed("jac")})
    assert result.args[1].tags_of_type(PrefixNamed) == frozenset({PrefixNamed("u")})
    np.testing.assert_array_equal(actx.to_numpy(result), (a * a * 2).sum(axis=1))


def test_compile_traces_once_per_kind_of_argument(actx):
    traced = []

    def rhs(t, state):
        traced.append(1)
        return State(u=-state.v * t, v=state.u)

    compiled = actx.compile(rhs)
    for t in [0.5, 2.0]:
        u, v = np.arange(4.0), np.arange(4.0) + 10
        result = actx.to_numpy(compiled(t, actx.from_numpy(State(u=u, v=v))))
        np.testing.assert_array_equal(result.u, -v * t)
        np.testing.assert_array_equal(result.v, u)
    assert len(traced) == 1, "a new number and new data: the same program"
    compiled(1.0, state=actx.from_numpy(State(u=np.zeros(7), v=np.zeros(7))))
    assert len(traced) == 2, "another shape: traced again"
    ignoring = actx.compile(lambda t, state, unused: State(u=state.u * t, v=state.v))
    result = actx.to_numpy(ignoring(2.0, actx.from_numpy(State(u=np.ones(3), v=np.ones(3))),
                                    actx.from_numpy(np.zeros(5))))
    np.testing.assert_array_equal(result.u, 2 * np.ones(3))
    lazy = actx.from_numpy(State(u=np.ones(7), v=np.ones(7))) * 3
    result = actx.to_numpy(compiled(1.0, lazy))
    np.testing.assert_array_equal(result.u, -3 * np.ones(7))
    assert len(traced) == 2, "lazy arguments are computed first, then passed as data"


def test_call_loopy_and_sparse_products(actx):
    lp = pytest.importorskip("loopy")
    knl = lp.make_kernel("{[e, i]: 0 <= e < nel and 0 <= i < n}",
                         "out[e, i] = ary[perm[e], i] * 2",
                         [lp.GlobalArg("ary", None, shape="nsrc, n"), "..."],
                         lang_version=(2018, 2))
    ary, perm = np.arange(6.0).reshape(3, 2), np.array([2, 0, 1])
    out = actx.call_loopy(knl, ary=actx.from_numpy(ary), perm=actx.from_numpy(perm))["out"]
    np.testing.assert_array_equal(actx.to_numpy(out), ary[perm] * 2)

    values, cols, starts = np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1]), np.array([0, 2, 2, 3])
    matrix = actx.make_csr_matrix((3, 3), *(actx.from_numpy(a) for a in (values, cols, starts)))
    x = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(actx.to_numpy(matrix @ actx.from_numpy(x)),
                                  [1 * 10 + 2 * 30, 0, 3 * 20])


def test_errors_name_the_context_and_the_type(actx):
    with pytest.raises(TypeError, match="PytatoRsArrayContext.thaw"):
        actx.thaw(np.zeros(3))
    with pytest.raises(TypeError, match="PytatoRsArrayContext.freeze"):
        actx.freeze(obj_array_1d([[1, 2]]))


def test_the_pytest_plugin_registers_the_context():
    from arraycontext.pytest import _ARRAY_CONTEXT_FACTORY_REGISTRY

    import pytato_rs.arraycontext.pytest as plugin

    factory = _ARRAY_CONTEXT_FACTORY_REGISTRY["pytato_rs"]
    assert factory is plugin.PytestPytatoRsArrayContextFactory
    assert isinstance(factory()(), PytatoRsArrayContext)
