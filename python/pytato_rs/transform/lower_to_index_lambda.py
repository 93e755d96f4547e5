"""pytato's import path ``pytato.transform.lower_to_index_lambda``: :func:`to_index_lambda`."""

from __future__ import annotations

from .._native import to_index_lambda

__all__ = ["to_index_lambda"]
