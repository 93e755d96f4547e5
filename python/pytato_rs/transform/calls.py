"""pytato's import path ``pytato.transform.calls``: inlining function calls."""

from __future__ import annotations

from .._native import inline_calls, tag_all_calls_to_be_inlined

__all__ = ["inline_calls", "tag_all_calls_to_be_inlined"]
