"""Transformations of DAGs, under pytato's names (``pytato.transform``)."""

from __future__ import annotations

from ._native import deduplicate, eliminate_dead_code, materialize_with_mpms, unify_axes_tags

__all__ = ["deduplicate", "eliminate_dead_code", "materialize_with_mpms", "unify_axes_tags"]
