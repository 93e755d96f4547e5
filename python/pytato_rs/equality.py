"""pytato's ``pytato.equality``: structural equality of expressions.

Nodes compare structurally with ``==`` (in linear time on shared DAGs, without recursion);
:class:`EqualityComparer` is that comparison under pytato's name, for code that calls it."""

from __future__ import annotations


class EqualityComparer:
    """``EqualityComparer()(a, b)``: whether expressions ``a`` and ``b`` are structurally equal."""

    def __call__(self, expr1, expr2):
        return bool(expr1 == expr2)


__all__ = ["EqualityComparer"]
