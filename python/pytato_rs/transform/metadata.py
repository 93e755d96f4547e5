"""pytato's import path ``pytato.transform.metadata``: :func:`unify_axes_tags`."""

from __future__ import annotations

from .._native import unify_axes_tags

__all__ = ["unify_axes_tags"]
