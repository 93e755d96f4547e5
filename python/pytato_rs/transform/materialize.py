"""pytato's import path ``pytato.transform.materialize``: :func:`materialize_with_mpms`."""

from __future__ import annotations

from .._native import materialize_with_mpms

__all__ = ["materialize_with_mpms"]
