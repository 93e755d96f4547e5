"""Analyses of DAGs, under pytato's names (``pytato.analysis``)."""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import numpy as np

from . import _native
from .array import _classes_by_kind
from ._native import get_max_node_depth, get_num_call_sites, get_num_nodes
from .transform import CachedWalkMapper, TopoSortMapper, _dependencies

__all__ = [
    "collect_materialized_nodes",
    "is_einsum_similar_to_subscript",
    "get_list_of_users",
    "get_node_multiplicities",
    "get_num_tags_of_type", "get_max_node_depth", "get_num_call_sites", "get_node_type_counts", "get_num_nodes",
    "get_nusers",
]


def get_list_of_users(outputs):
    """For each node of the DAG ``outputs``, the list of the nodes that use it (a node using
    another twice, as two operands, is listed twice), as pytato's ``get_list_of_users``."""
    users = defaultdict(list)

    class _Users(CachedWalkMapper):
        def post_visit(self, expr):
            for child in _dependencies(expr):
                users[child].append(expr)

    _Users()(outputs)
    return users


def get_nusers(outputs):
    """For each node of the DAG ``outputs``, how many times nodes use it (see
    :func:`get_list_of_users`); 0 for nodes no node uses."""
    return defaultdict(int, {node: len(users) for node, users in get_list_of_users(outputs).items()})


class _NodeTypeCounts(dict):
    """``{node class: count}`` that also answers for a kind's name (``counts["IndexLambda"]``)."""

    def __missing__(self, key):
        if isinstance(key, str):
            return self.get(_classes_by_kind.get(key), 0)
        raise KeyError(key)


def _distinct_nodes(outputs):
    """Every node of the DAG ``outputs`` once per identity (equal nodes built apart each count)."""
    from .transform import _children

    seen, nodes = set(), []
    stack = list(_children(outputs)) if isinstance(outputs, _native.DictOfNamedArrays) else [outputs]
    while stack:
        node = stack.pop()
        if node._node_id in seen:
            continue
        seen.add(node._node_id)
        nodes.append(node)
        stack.extend(_dependencies(node))
    return nodes


def get_node_type_counts(outputs, count_duplicates=False):
    """``{node class: number of nodes}`` of the DAG ``outputs``, with pytato's classes as keys
    (``counts[pt.Placeholder]``; a kind's name works too): nodes equal in structure once, or,
    with ``count_duplicates``, once per node built."""
    if not count_duplicates:
        counts = _native.get_node_type_counts(outputs)
        return _NodeTypeCounts({_classes_by_kind[kind]: n for kind, n in counts.items()})
    counts = _NodeTypeCounts()
    for node in _distinct_nodes(outputs):
        cls = _classes_by_kind[node.node_type]
        counts[cls] = counts.get(cls, 0) + 1
    return counts


def get_node_multiplicities(outputs):
    """For each node of the DAG ``outputs`` (nodes equal in structure as one), how many times it
    was built apart (pytato's ``get_node_multiplicities``)."""
    multiplicities = defaultdict(int)
    for node in _distinct_nodes(outputs):
        multiplicities[node] += 1
    return dict(multiplicities)


def _subscript_indices(subscript, *, output):
    """The index letters of one operand's (or the result's) subscript, spaces ignored."""
    letters = [c for c in subscript if not c.isspace()]
    if "." in letters:
        raise NotImplementedError(f"einsum subscripts with an ellipsis ('{subscript}') are not supported here")
    for c in letters:
        if not c.isalpha():
            raise ValueError(f"cannot parse '{subscript}' as einsum indices")
    if output and len(set(letters)) != len(letters):
        raise ValueError(f"the output subscript '{subscript}' repeats an index")
    return letters


def is_einsum_similar_to_subscript(expr, subscripts):
    """Whether the einsum ``subscripts`` (explicit mode, ``"ij,jk->ik"``) of ``expr``'s
    arguments computes what the einsum ``expr`` computes: its operands index their axes the same
    way, up to the names of the indices (pytato's ``is_einsum_similar_to_subscript``)."""
    from .array import Einsum, EinsumElementwiseAxis

    if not isinstance(expr, Einsum):
        raise TypeError(f"an Einsum was expected, not a {expr.node_type}")
    if "->" not in subscripts:
        raise NotImplementedError("comparing with an implicit-mode einsum (no '->') is not supported")
    inputs, output = subscripts.split("->")
    operands = inputs.split(",")
    if len(operands) != len(expr.args):
        return False
    # Each index letter names one descriptor, and each descriptor one letter: a renaming.
    letter_to_axis = {c: EinsumElementwiseAxis(k) for k, c in enumerate(_subscript_indices(output, output=True))}
    axis_to_letter = {axis: c for c, axis in letter_to_axis.items()}
    for subscript, access in zip(operands, expr.access_descriptors):
        letters = _subscript_indices(subscript, output=False)
        if len(letters) != len(access):
            return False
        for c, axis in zip(letters, access):
            if letter_to_axis.setdefault(c, axis) != axis or axis_to_letter.setdefault(axis, c) != c:
                return False
    return True


def get_num_tags_of_type(outputs, tag_types):
    """How many nodes of the DAG ``outputs`` (nodes equal in structure once) carry a tag of
    each of ``tag_types`` (a tag class or an iterable of them; none: every node)."""
    if isinstance(tag_types, type):
        tag_types = (tag_types,)
    tag_types = tuple(tag_types)
    order = TopoSortMapper()
    order(outputs)
    return sum(
        1
        for node in order.topological_order
        if not isinstance(node, _native.DictOfNamedArrays) and all(node.tags_of_type(t) for t in tag_types)
    )


@cache
def _key_builder_class():
    from pytools.persistent_dict import KeyBuilder

    from ._pickle import dict_records, records

    class PytatoKeyBuilder(KeyBuilder):
        """pytools' ``KeyBuilder`` that also keys expressions (by the nodes that pickling
        writes: kinds, fields, children by position, tags), dictionaries of them, numpy arrays
        and symbolic lengths; equal DAGs get equal keys, in any process."""

        def update_for_Array(self, key_hash, key):  # noqa: N802 (pytools' method names)
            self.rec(key_hash, ("Array", tuple(records(key))))

        def update_for_DictOfNamedArrays(self, key_hash, key):  # noqa: N802
            out, roots = dict_records(key)
            self.rec(key_hash, ("DictOfNamedArrays", tuple(out), roots))

        def update_for_dict(self, key_hash, key):
            self.rec(key_hash, tuple(sorted(key.items())))

        update_for__Bounds = update_for_dict  # a reduction's bounds  # noqa: N815

        def update_for_ndarray(self, key_hash, key):
            self.rec(key_hash, (str(key.dtype), key.shape, np.ascontiguousarray(key).tobytes()))

        def update_for_Dim(self, key_hash, key):  # noqa: N802
            self.rec(key_hash, ("Dim", str(key)))

    return PytatoKeyBuilder


def __getattr__(name):
    # pytools is needed only by those who key persistent dictionaries
    if name == "PytatoKeyBuilder":
        return _key_builder_class()
    raise AttributeError(f"module 'pytato_rs.analysis' has no attribute {name!r}")


# The kinds whose every node a program stores: inputs, received arrays, call results, and the
# library's host steps (pytato has no node for those; its CSR products and loopy calls, stored
# there, are expressions of these or fused expressions here).
_STORED_KINDS = frozenset({
    "Placeholder", "DataWrapper", "SizeParam", "DistributedRecv", "CallResult",
    "Nonzero", "Scatter", "Sort", "Scan", "SearchSorted",
})


def collect_materialized_nodes(expr, include_outputs=True):
    """The nodes of the DAG ``expr`` (an array, a :class:`DictOfNamedArrays` or a
    :class:`~pytato_rs.FunctionDefinition`) that a program stores in memory, as pytato's
    ``collect_materialized_nodes``: inputs (placeholders, data wrappers, size parameters),
    received arrays, nodes tagged :class:`~pytato_rs.tags.ImplStored`, the data sends send, the
    arguments and results of calls and the results of the functions called (their bodies are
    walked too), the library's host steps (sorts, scans, scatters, searches, ``nonzero``), and
    the outputs where ``include_outputs`` (the top level's only). Unlike pytato's, a CSR product
    or a loopy call is no node of its own here: its host steps are stored and the rest fuses."""
    from .tags import ImplStored

    materialized = {}  # an ordered set

    def add(node):
        materialized.setdefault(node, None)

    def roots_of(value):
        if isinstance(value, _native.FunctionDefinition):
            return list(value.returns.values())
        if isinstance(value, _native.DictOfNamedArrays):
            return [value[name].expr for name in value]
        return [value]

    seen_functions = set()
    pending = [(expr, include_outputs)]
    while pending:
        value, outputs_too = pending.pop()
        roots = roots_of(value)
        walker = TopoSortMapper()
        for root in roots:
            walker(root)
        for node in walker.topological_order:
            if node.node_type in _STORED_KINDS or node.tags_of_type(ImplStored):
                add(node)
            if node.node_type == "DistributedSendRefHolder":
                add(node.send.data)
            if node.node_type == "CallResult":
                call = node.call
                for argument in call.bindings.values():
                    add(argument)
                if call.function not in seen_functions:
                    seen_functions.add(call.function)
                    pending.append((call.function, True))
        if outputs_too:
            for root in roots:
                add(root)
    return frozenset(materialized)
