"""pytato's node classes (``pytato.array``): ``isinstance(expr, pt.Placeholder)`` and friends.

Every expression is a :class:`pytato_rs.Array` (the library's node); these classes classify
it by its kind, as pytato's class hierarchy does, so that code written against pytato's classes
(``isinstance`` tests, mappers' ``map_<node>`` methods) works unchanged. A node's fields have
pytato's names: ``expr.array``, ``expr.arrays``, ``expr.axis``, ``expr.shift``,
``expr.axis_permutation``, ``expr.indices``, ``expr.bindings``, ``expr.data``, ``expr.name``,
``expr.shape``, ``expr.dtype``, ``expr.tags``, ``expr.axes``.

The classes are abstract: build nodes with pytato's functions (``make_placeholder``,
``einsum``, ...), not by calling them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._native import Array, DictOfNamedArrays
from .tags import Axis


class _NodeClass(type):
    """The type of pytato's node classes: an expression is an instance of one when its kind
    (``expr.node_type``) is among the class's kinds; one class is a subclass of another when
    its kinds are among the other's."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Array) and obj.node_type in cls._kinds

    def __subclasscheck__(cls, sub):
        return isinstance(sub, _NodeClass) and sub._kinds <= cls._kinds

    def __call__(cls, *args, **kwargs):
        raise TypeError(
            f"pytato_rs.{cls.__name__} classifies nodes; build one with pytato's functions "
            "(make_placeholder, make_data_wrapper, einsum, ...)"
        )


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
class EinsumAxisDescriptor:
    """How an einsum operand's axis is indexed (``Einsum.access_descriptors``)."""

    dim: int


@dataclass(frozen=True)
class EinsumElementwiseAxis(EinsumAxisDescriptor):
    """The axis runs along axis ``dim`` of the result."""


@dataclass(frozen=True)
class EinsumReductionAxis(EinsumAxisDescriptor):
    """The axis is summed over, as the einsum's reduction index ``dim``."""


__all__ = [
    "MAPPER_METHODS",
    "Axis",
    "EinsumAxisDescriptor",
    "EinsumElementwiseAxis",
    "EinsumReductionAxis",
    "Array",
    "DictOfNamedArrays",
    "IndexBase",
    "IndexRemappingBase",
    "InputArgumentBase",
    *_classes,
]
