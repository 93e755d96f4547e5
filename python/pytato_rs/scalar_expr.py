"""Scalar expressions as pymbolic expressions, as pytato gives them (``IndexLambda.expr``).

The library keeps an index lambda's expression in its own form; reading ``expr.expr`` builds the
pymbolic expression pytato would hold: variables and subscripts of the bindings and inames
(``_0``, ``_in0[_0, _1]``), ``Sum``/``Product``/``Quotient``/... for the operations,
``Comparison``, ``If``, ``LogicalAnd``/``Or``/``Not``, ``Bitwise*``, calls of ``pytato.c99.<name>``
for functions (numpy's names), and :class:`TypeCast` and :class:`Reduce` nodes as in pytato's
``pytato.scalar_expr``. Needs pymbolic (``pip install pymbolic``), imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

try:
    import pymbolic.primitives as prim
    from pymbolic import expr_dataclass
except ImportError:  # pymbolic is optional: only reading IndexLambda.expr needs it
    prim = None


@dataclass(frozen=True)
class ReductionOperation:
    """A reduction's operation (pytato's classes of the same names, below)."""

    def __repr__(self):
        return f"{type(self).__name__}()"


class SumReductionOperation(ReductionOperation):
    pass


class ProductReductionOperation(ReductionOperation):
    pass


class MaxReductionOperation(ReductionOperation):
    pass


class MinReductionOperation(ReductionOperation):
    pass


class AllReductionOperation(ReductionOperation):
    pass


class AnyReductionOperation(ReductionOperation):
    pass


_REDUCTIONS = {
    "sum": SumReductionOperation,
    "product": ProductReductionOperation,
    "max": MaxReductionOperation,
    "min": MinReductionOperation,
    "all": AllReductionOperation,
    "any": AnyReductionOperation,
}


class _Bounds(dict):
    """A reduction's ``{iname: (lower, upper)}``, hashable as pymbolic nodes must be."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))


if prim is not None:
    from pymbolic.mapper.stringifier import PREC_NONE, StringifyMapper

    class _Stringifier(StringifyMapper):
        """pymbolic's stringifier, knowing :class:`TypeCast` and :class:`Reduce`."""

        def map_type_cast(self, expr, enclosing_prec, *args, **kwargs):
            return f"cast({expr.dtype}, {self.rec(expr.inner_expr, PREC_NONE, *args, **kwargs)})"

        def map_reduce(self, expr, enclosing_prec, *args, **kwargs):
            bounds = ", ".join(f"{i}: [{lo}, {hi})" for i, (lo, hi) in expr.bounds.items())
            inner = self.rec(expr.inner_expr, PREC_NONE, *args, **kwargs)
            return f"{type(expr.op).__name__[: -len('ReductionOperation')].lower()}({bounds}; {inner})"

    class _Node(prim.ExpressionNode):
        def make_stringifier(self, originating_stringifier=None):
            return _Stringifier()

    @expr_dataclass()
    class Reduce(_Node):
        """``op`` of ``inner_expr`` as each iname of ``bounds`` runs over ``[lower, upper)``."""

        inner_expr: object
        op: ReductionOperation
        bounds: _Bounds

    @expr_dataclass()
    class TypeCast(_Node):
        """``inner_expr`` converted to ``dtype`` (numpy's ``astype``)."""

        dtype: np.dtype
        inner_expr: object


def _binary(op, a, b):
    if op == "Add":
        return prim.Sum((a, b))
    if op == "Sub":
        return prim.Sum((a, prim.Product((-1, b))))
    if op == "Mul":
        return prim.Product((a, b))
    simple = {
        "Div": prim.Quotient,
        "FloorDiv": prim.FloorDiv,
        "Rem": prim.Remainder,
        "Pow": prim.Power,
    }
    if op in simple:
        return simple[op](a, b)
    joined = {
        "LogicalAnd": prim.LogicalAnd,
        "LogicalOr": prim.LogicalOr,
        "BitAnd": prim.BitwiseAnd,
        "BitOr": prim.BitwiseOr,
        "BitXor": prim.BitwiseXor,
    }
    return joined[op]((a, b))


def _unary(op, a):
    if op == "Neg":
        return prim.Product((-1, a))
    return {"LogicalNot": prim.LogicalNot, "BitNot": prim.BitwiseNot}[op](a)


def from_postorder(entries):
    """The pymbolic expression of the library's expression listed in postorder (children
    first; see ``graph.rs``'s ``expr_postorder``), built with a stack, not recursion."""
    if prim is None:
        raise ImportError("reading IndexLambda.expr needs pymbolic: pip install pymbolic")
    stack = []

    def take(n):
        taken = tuple(stack[len(stack) - n :]) if n else ()
        del stack[len(stack) - n :]
        return taken

    for entry in entries:
        kind = entry[0]
        if kind == "const":
            stack.append(entry[1])
        elif kind == "var":
            stack.append(prim.Variable(entry[1]))
        elif kind == "subscript":
            stack.append(prim.Subscript(prim.Variable(entry[1]), take(entry[2])))
        elif kind == "unary":
            stack.append(_unary(entry[1], *take(1)))
        elif kind == "binary":
            stack.append(_binary(entry[1], *take(2)))
        elif kind == "compare":
            a, b = take(2)
            stack.append(prim.Comparison(a, entry[1], b))
        elif kind == "if":
            stack.append(prim.If(*take(3)))
        elif kind == "cast":
            stack.append(TypeCast(np.dtype(entry[1]), *take(1)))
        elif kind == "call":
            stack.append(prim.Call(prim.Variable(f"pytato.c99.{entry[1]}"), take(entry[2])))
        elif kind == "reduce":
            bounds = _Bounds({iname: (lower, upper) for iname, lower, upper in entry[2]})
            stack.append(Reduce(take(1)[0], _REDUCTIONS[entry[1]](), bounds))
        else:
            raise ValueError(f"an expression node of unknown kind {kind!r}")
    (expr,) = stack
    return expr


__all__ = [
    "AllReductionOperation",
    "AnyReductionOperation",
    "MaxReductionOperation",
    "MinReductionOperation",
    "ProductReductionOperation",
    "Reduce",
    "ReductionOperation",
    "SumReductionOperation",
    "TypeCast",
    "from_postorder",
]
