"""Scalar expressions as pymbolic expressions, as pytato gives them (``IndexLambda.expr``).

The library keeps an index lambda's expression in its own form; reading ``expr.expr`` builds the
pymbolic expression pytato would hold: variables and subscripts of the bindings and inames
(``_0``, ``_in0[_0, _1]``), ``Sum``/``Product``/``Quotient``/... for the operations,
``Comparison``, ``If``, ``LogicalAnd``/``Or``/``Not``, ``Bitwise*``, calls of ``pytato.c99.<name>``
for functions (numpy's names), and :class:`TypeCast` and :class:`Reduce` nodes as in pytato's
``pytato.scalar_expr``. Needs pymbolic (``pip install pymbolic``), imported on first use.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

#: The Python and numpy scalar classes an expression takes as constants (pytato's
#: ``SCALAR_CLASSES``, pymbolic's ``VALID_CONSTANT_CLASSES``).
SCALAR_CLASSES = (int, float, complex, np.number, np.bool_)

#: An index lambda's output iname (``_0``, ``_1``, ...), in its canonical spelling.
IDX_LAMBDA_AXIS_INDEX = re.compile(r"^_(?P<index>0|[1-9][0-9]*)$")
#: Any iname of an index lambda, of an output axis or a reduction (``_1``, ``_r0``, ...), as
#: pytato names it.
IDX_LAMBDA_REDUCTION_AXIS_INDEX = re.compile(r"^_r?(?P<index>0|[1-9][0-9]*)$")

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


@dataclass(frozen=True, repr=False)
class ProductReductionOperation(ReductionOperation):
    """A product; ``start``, where not ``None``, is a complex product's first value (numpy's
    ``prod(z, initial=c)`` multiplies ``c`` in first, and a product that starts at ``1 + 0j``
    is not the same where ``c * z0`` has an infinite part). pytato has no such field: its
    products start at the identity."""

    start: object = None

    def __repr__(self):
        start = "" if self.start is None else f"start={self.start!r}"
        return f"ProductReductionOperation({start})"


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
            op = _REDUCTIONS[entry[1]]() if entry[3] is None else ProductReductionOperation(start=entry[3])
            stack.append(Reduce(take(1)[0], op, bounds))
        else:
            raise ValueError(f"an expression node of unknown kind {kind!r}")
    (expr,) = stack
    return expr


# pytato's function names (``pytato.c99.<name>``, C's spelling) that numpy spells otherwise.
_C99_NAMES = {
    "fabs": "abs",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "pow": "power",
    "fmax": "maximum",
    "fmin": "minimum",
}

_COMPARISONS = {
    "==": "equal",
    "!=": "not_equal",
    "<": "less",
    "<=": "less_equal",
    ">": "greater",
    ">=": "greater_equal",
}


def _is_minus_one(expr):
    return not isinstance(expr, (bool, np.bool_)) and isinstance(expr, (int, np.integer)) and expr == -1


def _negated(expr):
    """The ``t`` of a term ``-1 * t`` (how pymbolic writes ``-t``), else ``None``."""
    if isinstance(expr, prim.Product) and len(expr.children) == 2 and _is_minus_one(expr.children[0]):
        return expr.children[1]
    return None


def _function_name(function):
    if not isinstance(function, prim.Variable):
        raise NotImplementedError(f"a call of {function!r}: only calls of named functions are supported")
    name = function.name
    for prefix in ("pytato.c99.", "pytato.c99_", "c99."):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    return _C99_NAMES.get(name, name)


def _reduction_name(op):
    cls = op if isinstance(op, type) else type(op)
    for name, known in _REDUCTIONS.items():
        if cls.__name__ == known.__name__:
            return name
    raise NotImplementedError(f"the reduction operation {op!r}")


def _operands(expr):
    """``(operands, entry)``: the subexpressions of pymbolic ``expr`` in evaluation order and the
    entry that combines their values (see ``scalar_expr.rs``)."""
    if isinstance(expr, prim.Variable):
        return (), ("var", expr.name)
    if isinstance(expr, prim.Subscript):
        if not isinstance(expr.aggregate, prim.Variable):
            raise NotImplementedError(f"a subscript of {expr.aggregate!r}: only bindings can be subscripted")
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        return index, ("subscript", expr.aggregate.name, len(index))
    if isinstance(expr, prim.Sum):
        terms, negated = [], []
        for k, child in enumerate(expr.children):
            inner = _negated(child) if k else None
            terms.append(child if inner is None else inner)
            negated.append(inner is not None)
        return tuple(terms), ("sum", tuple(negated))
    if isinstance(expr, prim.Product):
        inner = _negated(expr)
        if inner is not None:
            return (inner,), ("apply", "negative", 1)
        return expr.children, ("fold", "multiply", len(expr.children))
    binary = {
        prim.Quotient: "divide",
        prim.FloorDiv: "floor_divide",
        prim.Remainder: "remainder",
    }
    if type(expr) in binary:
        return (expr.numerator, expr.denominator), ("apply", binary[type(expr)], 2)
    if isinstance(expr, prim.Power):
        return (expr.base, expr.exponent), ("apply", "power", 2)
    if isinstance(expr, (prim.LeftShift, prim.RightShift)):
        name = "left_shift" if isinstance(expr, prim.LeftShift) else "right_shift"
        return (expr.shiftee, expr.shift), ("apply", name, 2)
    if isinstance(expr, prim.Comparison):
        return (expr.left, expr.right), ("apply", _COMPARISONS[expr.operator], 2)
    folds = {
        prim.LogicalAnd: "logical_and",
        prim.LogicalOr: "logical_or",
        prim.BitwiseAnd: "bitwise_and",
        prim.BitwiseOr: "bitwise_or",
        prim.BitwiseXor: "bitwise_xor",
        prim.Min: "minimum",
        prim.Max: "maximum",
    }
    if type(expr) in folds:
        return expr.children, ("fold", folds[type(expr)], len(expr.children))
    if isinstance(expr, prim.LogicalNot):
        return (expr.child,), ("apply", "logical_not", 1)
    if isinstance(expr, prim.BitwiseNot):
        return (expr.child,), ("apply", "invert", 1)
    if isinstance(expr, prim.If):
        return (expr.condition, expr.then, expr.else_), ("apply", "where", 3)
    if isinstance(expr, prim.Call):
        return expr.parameters, ("apply", _function_name(expr.function), len(expr.parameters))
    if isinstance(expr, TypeCast):
        return (expr.inner_expr,), ("cast", np.dtype(expr.dtype))
    if isinstance(expr, Reduce):
        bounds = tuple((iname, lower, upper) for iname, (lower, upper) in expr.bounds.items())
        return (expr.inner_expr,), ("reduce", _reduction_name(expr.op), bounds, getattr(expr.op, "start", None))
    if isinstance(expr, (bool, int, float, complex, np.generic)):
        return (), ("const", expr)
    raise NotImplementedError(f"{type(expr).__name__} in an index lambda's expression: {expr!r}")


def to_postorder(expr):
    """The entries of pymbolic ``expr`` in postorder (operands first), which the library types
    into its own expression (``scalar_expr.rs``): the inverse of :func:`from_postorder`, with an
    explicit stack instead of recursion."""
    if prim is None:
        raise ImportError("building an IndexLambda from an expression needs pymbolic: pip install pymbolic")
    entries = []
    stack = [(expr, None)]
    while stack:
        node, entry = stack.pop()
        if entry is not None:
            entries.append(entry)
            continue
        operands, entry = _operands(node)
        stack.append((None, entry))
        stack.extend((operand, None) for operand in reversed(operands))
    return entries


_MAX_CAST_CHECKS = 64


def _replace_one(expr, target, replacement):
    """``expr`` with the one subexpression that *is* ``target`` (by identity) replaced."""
    from pymbolic.mapper import IdentityMapper

    class _Replace(IdentityMapper):
        def __call__(self, e, *args, **kwargs):
            if e is target:
                return replacement
            return super().__call__(e, *args, **kwargs)

        rec = __call__

        def map_type_cast(self, e):
            return TypeCast(e.dtype, self.rec(e.inner_expr))

        def map_reduce(self, e):
            return Reduce(self.rec(e.inner_expr), e.op, e.bounds)

    return _Replace()(expr)


def _casts(expr):
    """The TypeCast nodes of ``expr``, innermost first."""
    found, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, TypeCast):
            found.append(e)
            stack.append(e.inner_expr)
        elif isinstance(e, Reduce):
            stack.append(e.inner_expr)
        elif isinstance(e, prim.ExpressionNode):
            fields = (getattr(e, f.name) for f in dataclasses.fields(e))
            stack.extend(c for c in fields if isinstance(c, (prim.ExpressionNode, tuple)))
        elif isinstance(e, tuple):
            stack.extend(e)
    return found[::-1]


def without_implied_casts(node, expr):
    """``expr`` (an index lambda's, with every cast the library holds) without the casts that
    numpy's promotion rules put back when the expression is typed again: each is dropped where the
    index lambda built from the expression without it is the same node. What is left reads as
    pytato writes expressions (``_in0[_0] * 2.5`` rather than ``cast(float64, _in0[_0]) * 2.5``)."""
    from . import _native

    casts = _casts(expr)
    if not casts or len(casts) > _MAX_CAST_CHECKS:
        return expr
    descriptors = dict(node.var_to_reduction_descr)

    def typed(e):
        return _native._index_lambda(to_postorder(e), node.shape, node.dtype, dict(node.bindings), descriptors)

    # the node as the expression builds it (without the node's tags, which a candidate lacks too)
    target = typed(expr)
    # casts are tried innermost first; a kept one stays at its place in the list, a dropped one
    # makes way for the next
    # a cast that is the whole expression says what the lambda is for (``astype``): it stays
    kept = 0
    while kept < len(casts):
        cast = casts[kept]
        if cast is expr:
            kept += 1
            continue
        candidate = _replace_one(expr, cast, cast.inner_expr)
        try:
            same = typed(candidate) == target
        except Exception:  # noqa: BLE001 (a candidate that does not type keeps its cast)
            same = False
        if same:
            expr = candidate
        else:
            kept += 1
        casts = _casts(expr)
    return expr


__all__ = [
    "IDX_LAMBDA_AXIS_INDEX",
    "IDX_LAMBDA_REDUCTION_AXIS_INDEX",
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
    "to_postorder",
]
