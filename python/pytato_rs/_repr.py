"""pytato's ``repr`` of arrays: each node as ``Kind(field=value, ...)`` with pytato's field names
and order, the nodes more than three levels below shown as ``(...)``, trivial tags, axes and
reduction descriptors left out, tuples as ``(a, b)``, dictionaries sorted by key, dtypes by name
(``'int64'``), slices as ``NormalizedSlice(start=0, stop=10, step=1)``, expressions as pymbolic
shows them, with their casts and their constants as Python numbers. The depth bound keeps it
short and non-recursive past three levels, whatever the DAG's depth."""

from __future__ import annotations

import numpy as np

#: How many levels below the node shown are shown; deeper nodes are ``(...)``.
_DEPTH = 3
_TRUNCATED = "(...)"

# pytato's fields of each kind, in its order (tags and axes, when not trivial, come last).
_FIELDS = {
    "Placeholder": ("shape", "dtype", "name"),
    "SizeParam": ("name",),
    "DataWrapper": ("data", "shape", "name"),
    "IndexLambda": ("shape", "dtype", "expr", "bindings", "var_to_reduction_descr"),
    "Einsum": ("access_descriptors", "args"),
    "Reshape": ("array", "newshape", "order"),
    "Roll": ("array", "shift", "axis"),
    "AxisPermutation": ("array", "axis_permutation"),
    "Stack": ("arrays", "axis"),
    "Concatenate": ("arrays", "axis"),
    "BasicIndex": ("array", "indices"),
    "AdvancedIndexInContiguousAxes": ("array", "indices"),
    "AdvancedIndexInNoncontiguousAxes": ("array", "indices"),
    "DistributedRecv": ("src_rank", "comm_tag", "shape", "dtype"),
    "DistributedSendRefHolder": ("send", "passthrough_data"),
    "CallResult": ("call", "name"),
}


def _python_numbers(expr):
    """``expr`` with numpy scalar constants as Python numbers (as pytato's literals are)."""
    from pymbolic.mapper import IdentityMapper

    from .scalar_expr import Reduce, TypeCast

    class ToPython(IdentityMapper):
        def map_constant(self, value, *args):
            return value.item() if isinstance(value, np.generic) else value

        def map_type_cast(self, e, *args):
            return TypeCast(e.dtype, self.rec(e.inner_expr))

        def map_reduce(self, e, *args):
            return Reduce(self.rec(e.inner_expr), e.op, e.bounds)

    return ToPython()(expr)


def _value(value, depth):
    from ._native import Array, Dim

    if isinstance(value, Array):
        return _node(value, depth)
    if isinstance(value, tuple):
        return "(" + ", ".join(_value(v, depth) for v in value) + ")"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "{" + ", ".join(f"{k!r}: {_value(v, depth)}" for k, v in items) + "}"
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(_value(v, depth) for v in value)) + "}"
    if isinstance(value, np.dtype):
        return f"'{value.name}'"
    if isinstance(value, slice):
        return f"NormalizedSlice(start={value.start}, stop={value.stop}, step={value.step})"
    if isinstance(value, Dim):
        return str(value)
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _node(array, depth):
    if depth > _DEPTH:
        return _TRUNCATED
    from .array import _KINDS

    kind = array.node_type
    fields = []
    for name in _FIELDS.get(kind, ("shape", "dtype")):
        if name == "var_to_reduction_descr" and not any(d.tags for d in array.var_to_reduction_descr.values()):
            continue
        if name == "expr":
            value = _python_numbers(array._expr_with_casts)
        elif name == "data":
            fields.append(f"data={array.data!r}")
            continue
        else:
            value = getattr(array, name)
        fields.append(f"{name}={_value(value, depth + 1)}")
    if array.tags:
        fields.append(f"tags={_value(frozenset(array.tags), depth + 1)}")
    if array.ndim > 1 and any(axis.tags for axis in array.axes):
        fields.append("axes=(" + ", ".join(f"Axis(tags={_value(frozenset(a.tags), depth + 1)})"
                                          for a in array.axes) + ")")
    return f"{_KINDS.get(kind, (kind,))[0]}({', '.join(fields)})"


def array_repr(array):
    """pytato's ``repr`` of ``array`` (see the module docs)."""
    return _node(array, 0)
