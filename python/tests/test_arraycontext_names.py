"""pytato API that arraycontext's ``PytatoJAXArrayContext`` uses, found by running arraycontext's
own tests against pytato_rs (``ARRAYCONTEXT_TEST=pytato:jax``): function definitions built from
pytato's fields and called (arraycontext's outlining), ``DictOfNamedArrays._data``, data
wrappers that give back the array they wrap whatever its library, the transform cache and type
names, ``pytato.codegen``'s naming of temporaries and the loopy target classes it imports.
Expected values are numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt
from pytato_rs.function import FunctionDefinition, ReturnType


def _body():
    a = pt.make_placeholder("a", (4,), np.float64)
    b = pt.make_placeholder("b", (4,), np.float64)
    return a, b, {"sum": a + b, "scaled": 3 * a}


def test_a_definition_from_pytatos_fields_is_called_as_pytato_calls_it(backend):
    a, b, returns = _body()
    x = pt.make_placeholder("x", (4,), np.float64)
    y = pt.make_placeholder("y", (4,), np.float64)
    x_in, y_in = np.arange(4.0), np.array([0.5, -1.0, 2.0, 7.0])

    as_dict = FunctionDefinition(frozenset({"a", "b"}), ReturnType.DICT_OF_ARRAYS, returns)
    assert as_dict.parameters == frozenset({"a", "b"}) and as_dict.return_type is ReturnType.DICT_OF_ARRAYS
    results = as_dict(a=x, b=y)
    assert set(results) == {"sum", "scaled"}
    out = pt.generate(pt.make_dict_of_named_arrays({"s": results["sum"], "t": results["scaled"]}), backend)(
        x=x_in, y=y_in
    )
    np.testing.assert_array_equal(out["s"], x_in + y_in)
    np.testing.assert_array_equal(out["t"], 3 * x_in)

    one = FunctionDefinition(frozenset({"a"}), ReturnType.ARRAY, {"_": returns["scaled"]})
    np.testing.assert_array_equal(pt.generate(one(a=y), backend)(y=y_in), 3 * y_in)

    # equal definitions are one function, called at two sites
    assert one == FunctionDefinition(frozenset({"a"}), ReturnType.ARRAY, {"_": 3 * a})
    twice = one(a=x) + one(a=y)
    np.testing.assert_array_equal(pt.generate(twice, backend)(x=x_in, y=y_in), 3 * x_in + 3 * y_in)
    # pytato's tuples name their results _0, _1, ..., which the library reserves for inames
    with pytest.raises(pt.ReservedNameError):
        FunctionDefinition(frozenset({"a", "b"}), ReturnType.TUPLE_OF_ARRAYS, {"_0": a - b, "_1": b})


def test_definitions_and_calls_refuse_what_does_not_fit():
    a, b, returns = _body()
    x = pt.make_placeholder("x", (4,), np.float64)
    with pytest.raises(ValueError, match='"c"'):
        FunctionDefinition(frozenset({"a", "b", "c"}), ReturnType.DICT_OF_ARRAYS, returns)
    with pytest.raises(ValueError, match="ARRAY"):
        FunctionDefinition(frozenset({"a", "b"}), ReturnType.ARRAY, returns)
    with pytest.raises(ValueError, match="not a parameter"):
        FunctionDefinition(frozenset({"a"}), ReturnType.DICT_OF_ARRAYS, returns)
    f = FunctionDefinition(frozenset({"a", "b"}), ReturnType.DICT_OF_ARRAYS, returns)
    with pytest.raises(TypeError, match="missing"):
        f(a=x)
    with pytest.raises(TypeError, match="extra"):
        f(a=x, b=x, c=x)
    with pytest.raises(ValueError, match="shape"):
        f(a=x, b=pt.make_placeholder("z", (5,), np.float64))
    with pytest.raises(ValueError, match="int64"):
        f(a=x, b=pt.make_placeholder("z", (4,), np.int64))


def test_dict_of_named_arrays_data_holds_the_arrays_themselves():
    x = pt.make_placeholder("x", (3,), np.float64)
    d = pt.make_dict_of_named_arrays({"u": 2 * x, "v": x + 1})
    data = d._data
    assert set(data) == {"u", "v"}
    assert data["u"] == 2 * x and data["v"] == x + 1
    assert data["u"].node_type == "IndexLambda"  # not NamedArray nodes


class _ForeignArray:
    """An array of another library: pytato's DataInterface (shape, dtype) and numpy's protocol."""

    def __init__(self, values):
        self._values = values
        self.shape, self.dtype = values.shape, values.dtype

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)


def test_data_wrappers_give_back_the_array_they_wrap(backend):
    values = np.arange(6.0).reshape(2, 3)
    foreign = _ForeignArray(values)
    wrapper = pt.make_data_wrapper(foreign)
    assert wrapper.data is foreign
    np.testing.assert_array_equal(pt.generate(2 * wrapper, backend)(), 2 * values)
    numpy_array = values.copy()
    assert pt.make_data_wrapper(numpy_array).data is numpy_array
    # a list is no DataInterface: its values come back as a numpy array
    listed = pt.make_data_wrapper([1.0, 2.0]).data
    assert isinstance(listed, np.ndarray)
    np.testing.assert_array_equal(listed, [1.0, 2.0])


def test_a_transform_cache_is_shared_by_mappers():
    from typing import TypeVar

    from pytato_rs.transform import ArrayOrNamesTc, CopyMapper, TransformMapperCache

    assert isinstance(ArrayOrNamesTc, TypeVar)
    assert TransformMapperCache[object, []] is TransformMapperCache
    cache = TransformMapperCache(err_on_collision=True, err_on_created_duplicate=True)
    x = pt.make_placeholder("x", (3,), np.float64)
    expr = 2 * x + 1
    first = CopyMapper(_cache=cache)(expr)
    assert first == expr and len(cache) >= 3  # x, 2*x, 2*x+1
    second = CopyMapper(_cache=cache)(expr)
    assert second is first


def test_temporaries_are_named_from_their_tags():
    pytools = pytest.importorskip("pytools")
    from pytato_rs.codegen import _generate_name_for_temp
    from pytato_rs.tags import Named, PrefixNamed

    names = pytools.UniqueNameGenerator()
    x = pt.make_placeholder("x", (3,), np.float64)
    assert _generate_name_for_temp(x, names, "_tmp") == "_tmp"
    assert _generate_name_for_temp(x, names, "_tmp") == "_tmp_0"
    assert _generate_name_for_temp((2 * x).tagged(Named("twice")), names) == "twice"
    with pytest.raises(ValueError, match="twice"):
        _generate_name_for_temp((3 * x).tagged(Named("twice")), names)
    assert _generate_name_for_temp((4 * x).tagged(PrefixNamed("q")), names) == "q"


def test_loopy_target_classes_can_be_named_and_subclassed():
    from pytato_rs.target import Target
    from pytato_rs.target.loopy import LoopyPyOpenCLTarget, LoopyTarget

    class Limited(LoopyPyOpenCLTarget):
        def __init__(self, limit):
            super().__init__()
            self.limit = limit

    target = Limited(16)
    assert isinstance(target, LoopyTarget) and isinstance(target, Target) and target.device is None
    assert pt.function.ReturnType is ReturnType
