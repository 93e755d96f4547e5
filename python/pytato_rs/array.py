"""pytato's node classes (``pytato.array``): ``isinstance(expr, pt.Placeholder)`` and friends.

Every expression is a :class:`pytato_rs.Array` (the library's node); these classes classify
it by its kind, as pytato's class hierarchy does, so that code written against pytato's classes
(``isinstance`` tests, mappers' ``map_<node>`` methods) works unchanged. A node's fields have
pytato's names: ``expr.array``, ``expr.arrays``, ``expr.axis``, ``expr.shift``,
``expr.axis_permutation``, ``expr.indices``, ``expr.bindings``, ``expr.data``, ``expr.name``,
``expr.shape``, ``expr.dtype``, ``expr.tags``, ``expr.axes``.

Calling a class builds a node of its kind from pytato's fields, where the library has a
constructor for it: ``IndexLambda(expr=..., shape=..., dtype=..., bindings=...,
var_to_reduction_descr=..., axes=..., tags=...)`` (``expr`` a pymbolic expression, typed by
numpy's rules and cast to ``dtype``, or left in its own dtype for ``dtype=None``; see
:mod:`pytato_rs.scalar_expr`), ``Placeholder``,
``SizeParam``, ``DataWrapper``, ``Reshape``, ``Roll``, ``AxisPermutation``, ``Stack`` and
``Concatenate``. Other classes (``Einsum``, the indexing nodes, ...) are built with pytato's
functions (``einsum``, ``x[...]``).
"""

from __future__ import annotations

import abc

from dataclasses import dataclass
from typing import Protocol

from ._native import (
    Array,
    DictOfNamedArrays,
    make_data_wrapper,
    make_dict_of_named_arrays,
    make_placeholder,
    make_size_param,
)
from .tags import Axis

#: pytato's type of a shape: a tuple of lengths (ints, size parameters, affine expressions).
ShapeType = tuple
#: pytato's type of an array's axes: a tuple of :class:`~pytato_rs.tags.Axis`.
AxesT = tuple


class DataInterface(Protocol):
    """What a data wrapper's data has (pytato's protocol of the same name): a ``shape`` and a
    ``dtype``. numpy arrays and the library's evaluated arrays have both."""

    @property
    def shape(self) -> ShapeType: ...

    @property
    def dtype(self) -> object: ...


class _NodeClass(type):
    """The type of pytato's node classes: an expression is an instance of one when its kind
    (``expr.node_type``) is among the class's kinds; one class is a subclass of another when
    its kinds are among the other's."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Array) and obj.node_type in cls._kinds

    def __subclasscheck__(cls, sub):
        return isinstance(sub, _NodeClass) and sub._kinds <= cls._kinds

    def __call__(cls, *args, **kwargs):
        construct = _CONSTRUCTORS.get(cls.__name__)
        if construct is None:
            raise TypeError(
                f"pytato_rs.{cls.__name__} nodes are built with pytato's functions "
                "(einsum, indexing, ...), not by calling the class"
            )
        return construct(*args, **kwargs)


def _node_class(name, kinds, mapper_method=None, doc=""):
    return _NodeClass(
        name,
        (),
        {
            "_kinds": frozenset(kinds),
            "_mapper_method": mapper_method,
            "__doc__": doc,
            "__module__": __name__,
        },
    )


# Each kind of the library's nodes: pytato's class name and mapper method.
_KINDS = {
    "Placeholder": ("Placeholder", "map_placeholder"),
    "SizeParam": ("SizeParam", "map_size_param"),
    "DataWrapper": ("DataWrapper", "map_data_wrapper"),
    "IndexLambda": ("IndexLambda", "map_index_lambda"),
    "Einsum": ("Einsum", "map_einsum"),
    "Reshape": ("Reshape", "map_reshape"),
    "Roll": ("Roll", "map_roll"),
    "AxisPermutation": ("AxisPermutation", "map_axis_permutation"),
    "Stack": ("Stack", "map_stack"),
    "Concatenate": ("Concatenate", "map_concatenate"),
    "BasicIndex": ("BasicIndex", "map_basic_index"),
    "AdvancedIndexInContiguousAxes": ("AdvancedIndexInContiguousAxes", "map_contiguous_advanced_index"),
    "AdvancedIndexInNoncontiguousAxes": ("AdvancedIndexInNoncontiguousAxes", "map_non_contiguous_advanced_index"),
    "NamedArray": ("NamedArray", "map_named_array"),
    "CallResult": ("NamedCallResult", "map_named_call_result"),
    "DistributedRecv": ("DistributedRecv", "map_distributed_recv"),
    "DistributedSendRefHolder": ("DistributedSendRefHolder", "map_distributed_send_ref_holder"),
    # The library's host steps, which pytato has no node for.
    "Nonzero": ("Nonzero", "map_nonzero"),
    "Scatter": ("Scatter", "map_scatter"),
    "Sort": ("Sort", "map_sort"),
    "Scan": ("Scan", "map_scan"),
    "SearchSorted": ("SearchSorted", "map_search_sorted"),
}

_classes = {
    pytato_name: _node_class(pytato_name, [kind], method, f"A ``{kind}`` node (pytato's ``{pytato_name}``).")
    for kind, (pytato_name, method) in _KINDS.items()
}
globals().update(_classes)

#: The mapper method of each kind (``expr.node_type``).
MAPPER_METHODS = {kind: method for kind, (_, method) in _KINDS.items()}

# The class of each kind.
_classes_by_kind = {kind: _classes[pytato_name] for kind, (pytato_name, _) in _KINDS.items()}

InputArgumentBase = _node_class(
    "InputArgumentBase", ["Placeholder", "SizeParam", "DataWrapper"], doc="Placeholders, size parameters, data."
)
IndexBase = _node_class(
    "IndexBase",
    ["BasicIndex", "AdvancedIndexInContiguousAxes", "AdvancedIndexInNoncontiguousAxes"],
    doc="Indexing nodes.",
)
IndexRemappingBase = _node_class(
    "IndexRemappingBase",
    ["Roll", "AxisPermutation", "Reshape", *IndexBase._kinds],
    doc="Nodes whose elements are elements of one array, moved.",
)



@dataclass(frozen=True)
class ReductionDescriptor:
    """A reduction's metadata (``IndexLambda.var_to_reduction_descr``,
    ``Einsum.redn_axis_to_redn_descr``): its tags."""

    tags: frozenset

    def tags_of_type(self, tag_type):
        """The tags that are instances of ``tag_type``, as a frozenset."""
        return frozenset(tag for tag in self.tags if isinstance(tag, tag_type))


def _get_default_axes(ndim):
    """``ndim`` axes without tags."""
    return tuple(Axis(frozenset()) for _ in range(ndim))


def _get_default_tags():
    """No tags."""
    return frozenset()


def _np_result_dtype(*arrays_and_scalars):
    """numpy's result dtype of arrays (by their ``dtype``) and Python scalars."""
    import numpy as np

    return np.result_type(*(getattr(a, "dtype", a) for a in arrays_and_scalars))


def _with_metadata(node, tags, non_equality_tags, axes):
    """``node`` with ``tags`` and ``non_equality_tags`` added and ``axes`` (where given) set."""
    extra = frozenset(tags or ()) | frozenset(non_equality_tags or ())
    if extra:
        node = node.tagged(extra)
    return node if axes is None else node.copy(axes=axes)


def _index_lambda(expr, shape, dtype, bindings, axes=None, var_to_reduction_descr=None, tags=None,
                  non_equality_tags=None):
    import numpy as np

    from . import _native
    from .scalar_expr import to_postorder

    node = _native._index_lambda(to_postorder(expr), shape, None if dtype is None else np.dtype(dtype),
                                 dict(bindings),
                                 dict(var_to_reduction_descr or {}))
    return _with_metadata(node, tags, non_equality_tags, axes)


def _replaced_index_lambda(node, changes):
    """``node`` (an index lambda) with the fields ``changes`` names replaced: itself where every
    new value equals the old one."""
    fields = {
        "expr": node.expr,
        "shape": node.shape,
        "dtype": node.dtype,
        "bindings": node.bindings,
        "var_to_reduction_descr": node.var_to_reduction_descr,
        "axes": node.axes,
        "tags": node.tags,
        "non_equality_tags": node.non_equality_tags,
    }
    unknown = set(changes) - set(fields)
    if unknown:
        raise TypeError(f"an IndexLambda has no fields {sorted(unknown)}")
    if all(_same(fields[name], value) for name, value in changes.items()):
        return node
    fields.update(changes)
    rebuilt = _index_lambda(**fields)
    if "expr" not in changes:
        # the same computation: it needs what the sizes had to satisfy (a new expression is the
        # caller's, as a new index lambda's is)
        rebuilt = rebuilt._with_size_checks(node._size_checks)
    # the library compares constants by their bits (a NaN equals itself), pymbolic by value
    return node if rebuilt == node and rebuilt.non_equality_tags == node.non_equality_tags else rebuilt


def _same(old, new):
    try:
        return bool(old == new)
    except Exception:  # pymbolic and numpy values that do not compare as a whole
        return False


def _placeholder(name, shape, dtype, axes=None, tags=None, non_equality_tags=None):
    from . import _native

    return _with_metadata(_native.make_placeholder(name, shape, dtype), tags, non_equality_tags, axes)


def _size_param(name, axes=(), tags=None, non_equality_tags=None):
    from . import _native

    return _with_metadata(_native.make_size_param(name), tags, non_equality_tags, None)


def _data_wrapper(data, shape=None, axes=None, tags=None, name=None, non_equality_tags=None):
    from . import _native

    return _with_metadata(_native.make_data_wrapper(data, name=name, shape=shape), tags, non_equality_tags, axes)


def _by_function(function, *fields):
    """A constructor from pytato's ``fields`` of a node that ``function`` builds from them."""

    def construct(*args, axes=None, tags=None, non_equality_tags=None, **kwargs):
        from . import _native

        values = dict(zip(fields, args))
        values.update(kwargs)
        node = getattr(_native, function)(*(values[f] for f in fields if f in values))
        return _with_metadata(node, tags, non_equality_tags, axes)

    return construct


_CONSTRUCTORS = {
    "IndexLambda": _index_lambda,
    "Placeholder": _placeholder,
    "SizeParam": _size_param,
    "DataWrapper": _data_wrapper,
    "Reshape": _by_function("reshape", "array", "newshape", "order"),
    "Roll": _by_function("roll", "array", "shift", "axis"),
    "AxisPermutation": _by_function("transpose", "array", "axis_permutation"),
    "Stack": _by_function("stack", "arrays", "axis"),
    "Concatenate": _by_function("concatenate", "arrays", "axis"),
}


@dataclass(frozen=True)
class EinsumAxisDescriptor:
    """How an einsum operand's axis is indexed (``Einsum.access_descriptors``)."""

    dim: int


@dataclass(frozen=True)
class EinsumElementwiseAxis(EinsumAxisDescriptor):
    """The axis runs along axis ``dim`` of the result."""


@dataclass(frozen=True)
class EinsumReductionAxis(EinsumAxisDescriptor):
    """The axis is summed over, as the einsum's reduction index ``dim``."""


class AbstractResultWithNamedArrays(abc.ABC):  # noqa: B024 (a class to test against)
    """pytato's base class of results with named arrays: ``isinstance(d,
    AbstractResultWithNamedArrays)`` holds for every :class:`DictOfNamedArrays`."""


AbstractResultWithNamedArrays.register(DictOfNamedArrays)


__all__ = [
    "MAPPER_METHODS",
    "AbstractResultWithNamedArrays",
    "AxesT",
    "Axis",
    "ShapeType",
    "make_data_wrapper",
    "make_dict_of_named_arrays",
    "make_placeholder",
    "make_size_param",
    "EinsumAxisDescriptor",
    "EinsumElementwiseAxis",
    "EinsumReductionAxis",
    "Array",
    "DictOfNamedArrays",
    "IndexBase",
    "IndexRemappingBase",
    "InputArgumentBase",
    "ReductionDescriptor",
    *_classes,
]
