"""pytato's import path ``pytato.transform.dead_code_elimination``: :func:`eliminate_dead_code`."""

from __future__ import annotations

from .._native import eliminate_dead_code

__all__ = ["eliminate_dead_code"]
