"""pytato's ``pytato.transform.einsum_distributive_law``: einsums distributed over sums.

``apply_distributive_property_to_einsums(expr, how_to_distribute)`` asks
``how_to_distribute(einsum)`` about every einsum of ``expr`` (with its operands already
rewritten); where it answers ``DoDistribute(ioperand=k)``, operand ``k`` is taken apart into
terms (an elementwise sum or difference of two arrays of its shape and dtype, or a constant
multiple of one, recursively) and the einsum becomes the same sum of einsums, one per term:
``A @ (2*x - 3*y)`` becomes ``2*(A @ x) - 3*(A @ y)``, built with the same functions so that the
result equals what one would write by hand. The answer is asked again of each new einsum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..array import Einsum, IndexLambda
from . import CopyMapper


class EinsumDistributiveLawDescriptor:
    """What to do with an einsum: :class:`DoDistribute` or :class:`DoNotDistribute`."""


@dataclass(frozen=True)
class DoDistribute(EinsumDistributiveLawDescriptor):
    """Distribute the einsum over the terms of its operand ``ioperand``."""

    ioperand: int


@dataclass(frozen=True)
class DoNotDistribute(EinsumDistributiveLawDescriptor):
    """Leave the einsum as it is."""


def _operand_of(lam, expr):
    """The binding ``expr`` reads at the lambda's own index (an array of its shape and
    dtype), else ``None``."""
    import pymbolic.primitives as prim

    if not (isinstance(expr, prim.Subscript) and isinstance(expr.aggregate, prim.Variable)):
        return None
    index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
    if index != tuple(prim.Variable(f"_{k}") for k in range(len(lam.shape))):
        return None
    array = lam.bindings.get(expr.aggregate.name)
    if array is None or array.shape != lam.shape or array.dtype != lam.dtype:
        return None
    return array


def _split(array):
    """``(combine, terms)`` where ``array`` is an elementwise combination of ``terms`` (arrays
    of its shape and dtype) that ``combine(*results)`` rebuilds over other arrays: a sum, a
    difference, or a constant multiple. ``None`` for any other array."""
    if not isinstance(array, IndexLambda):
        return None
    import pymbolic.primitives as prim

    from .. import _native

    expr = array.expr
    if isinstance(expr, prim.Sum) and len(expr.children) == 2:
        first, second = expr.children
        negated = (
            isinstance(second, prim.Product)
            and len(second.children) == 2
            and isinstance(second.children[0], (int, np.integer))
            and second.children[0] == -1
        )
        a = _operand_of(array, first)
        b = _operand_of(array, second.children[1] if negated else second)
        if a is not None and b is not None:
            return (_native.subtract if negated else _native.add), (a, b)
    if isinstance(expr, prim.Product) and len(expr.children) == 2:
        left, right = expr.children
        if isinstance(left, np.generic) and _operand_of(array, right) is not None:
            return (lambda t: _native.multiply(left, t)), (_operand_of(array, right),)
        if isinstance(right, np.generic) and _operand_of(array, left) is not None:
            return (lambda t: _native.multiply(t, right)), (_operand_of(array, left),)
    return None


class EinsumDistributiveLawMapper(CopyMapper):
    """Distributes the einsums ``how_to_distribute`` says to (see the module docs)."""

    def __init__(self, how_to_distribute):
        super().__init__()
        self.how_to_distribute = how_to_distribute

    def map_einsum(self, expr):
        expr = self._default(expr)
        return self._distributed(expr)

    def _distributed(self, einsum):
        decision = self.how_to_distribute(einsum)
        if not isinstance(decision, DoDistribute):
            return einsum
        split = _split(einsum.args[decision.ioperand])
        if split is None:
            return einsum
        combine, terms = split
        parts = []
        for term in terms:
            args = list(einsum.args)
            args[decision.ioperand] = term
            parts.append(self._distributed(einsum.replace_if_different(args=args)))
        return combine(*parts)


def apply_distributive_property_to_einsums(expr, how_to_distribute):
    """``expr`` (an array or a dictionary of them) with einsums distributed as
    ``how_to_distribute`` decides (see the module docs); ``expr`` itself where nothing is."""
    result = EinsumDistributiveLawMapper(how_to_distribute)(expr)
    return expr if result == expr else result


__all__ = [
    "DoDistribute",
    "DoNotDistribute",
    "EinsumDistributiveLawDescriptor",
    "EinsumDistributiveLawMapper",
    "apply_distributive_property_to_einsums",
]
