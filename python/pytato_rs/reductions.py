"""pytato's reduction operations (``pytato.reductions``), the ``op`` of a
:class:`pytato_rs.scalar_expr.Reduce`. The functions that reduce arrays (``sum``, ``amax``,
...) are at the package's top level."""

from __future__ import annotations

from .scalar_expr import (
    AllReductionOperation,
    AnyReductionOperation,
    MaxReductionOperation,
    MinReductionOperation,
    ProductReductionOperation,
    ReductionOperation,
    SumReductionOperation,
)

__all__ = [
    "AllReductionOperation",
    "AnyReductionOperation",
    "MaxReductionOperation",
    "MinReductionOperation",
    "ProductReductionOperation",
    "ReductionOperation",
    "SumReductionOperation",
]
