"""Analyses of DAGs, under pytato's names (``pytato.analysis``)."""

from __future__ import annotations

from ._native import get_max_node_depth, get_node_type_counts, get_num_nodes

__all__ = ["get_max_node_depth", "get_node_type_counts", "get_num_nodes"]
