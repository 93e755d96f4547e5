"""Analyses of DAGs, under pytato's names (``pytato.analysis``)."""

from __future__ import annotations

from collections import defaultdict

from . import _native
from .array import _classes_by_kind
from ._native import get_max_node_depth, get_num_nodes
from .transform import CachedWalkMapper, _dependencies

__all__ = ["get_list_of_users", "get_max_node_depth", "get_node_type_counts", "get_num_nodes", "get_nusers"]


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


def get_node_type_counts(outputs):
    """``{node class: number of nodes}`` of the DAG ``outputs`` (each distinct node once), with
    pytato's classes as keys (``counts[pt.Placeholder]``); a kind's name works too."""
    return _NodeTypeCounts({_classes_by_kind[kind]: n for kind, n in _native.get_node_type_counts(outputs).items()})
