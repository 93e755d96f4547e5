"""pytato's ``pytato.raising``: what an index lambda computes, as a high-level operation.

:func:`index_lambda_to_high_level_op` reads an :class:`~pytato_rs.array.IndexLambda`'s
expression (see :mod:`pytato_rs.scalar_expr`) and says which array operation it is: a constant
(:class:`FullOp`), a binary operation of two arrays or numbers (:class:`BinaryOp`), a function
call (:class:`C99CallOp`), a selection (:class:`WhereOp`), a broadcast, a logical not, a
reduction (:class:`ReduceOp`), or ``zeros_like``/``ones_like``. The library's expressions spell
numpy's promotions as explicit casts; they are looked through, as pytato looks through its own.
An expression of another form raises :class:`~pytato_rs.diagnostic.UnknownIndexLambdaExpr`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto, unique

import numpy as np

from . import scalar_expr
from .array import IndexLambda
from .diagnostic import UnknownIndexLambdaExpr


class HighLevelOp:
    """Base class of the operations an index lambda can be."""


@dataclass(frozen=True)
class FullOp(HighLevelOp):
    """Every element is ``fill_value``."""

    fill_value: object


@unique
class BinaryOpType(Enum):
    """The operator of a :class:`BinaryOp`."""

    ADD = auto()
    SUB = auto()
    MULT = auto()
    LOGICAL_OR = auto()
    LOGICAL_AND = auto()
    BITWISE_OR = auto()
    BITWISE_AND = auto()
    BITWISE_XOR = auto()
    TRUEDIV = auto()
    FLOORDIV = auto()
    POWER = auto()
    MOD = auto()
    LESS = auto()
    LESS_EQUAL = auto()
    GREATER = auto()
    GREATER_EQUAL = auto()
    EQUAL = auto()
    NOT_EQUAL = auto()


@dataclass(frozen=True)
class BinaryOp(HighLevelOp):
    """``x1 <binary_op> x2``, each an array or a number."""

    binary_op: BinaryOpType
    x1: object
    x2: object


@dataclass(frozen=True)
class ZerosLikeOp(HighLevelOp):
    """``function`` (``"zeros"`` or ``"ones"``) of the shape of ``x``, keeping ``x`` in the DAG
    (``zeros_like``, ``ones_like``)."""

    function: str
    x: object


@dataclass(frozen=True)
class C99CallOp(HighLevelOp):
    """The function ``function`` (C99's name: ``sin``, ``atan2``, ...) of ``args``."""

    function: str
    args: tuple


@dataclass(frozen=True)
class WhereOp(HighLevelOp):
    """``then`` where ``condition``, else ``else_``."""

    condition: object
    then: object
    else_: object


@dataclass(frozen=True)
class BroadcastOp(HighLevelOp):
    """``x`` broadcast to the lambda's shape."""

    x: object


@dataclass(frozen=True)
class LogicalNotOp(HighLevelOp):
    """``not x``, elementwise."""

    x: object


@dataclass(frozen=True)
class ReduceOp(HighLevelOp):
    """``op`` over the axes of ``x`` in ``axes`` (axis of ``x`` to the reduction iname that runs
    over it)."""

    op: object
    x: object
    axes: dict


# numpy's names of the library's functions, in C99's spelling where it differs
_C99 = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "arcsinh": "asinh",
        "arccosh": "acosh", "arctanh": "atanh"}

_BINARY = {
    "Quotient": BinaryOpType.TRUEDIV,
    "FloorDiv": BinaryOpType.FLOORDIV,
    "Remainder": BinaryOpType.MOD,
    "Power": BinaryOpType.POWER,
    "LogicalAnd": BinaryOpType.LOGICAL_AND,
    "LogicalOr": BinaryOpType.LOGICAL_OR,
    "BitwiseAnd": BinaryOpType.BITWISE_AND,
    "BitwiseOr": BinaryOpType.BITWISE_OR,
    "BitwiseXor": BinaryOpType.BITWISE_XOR,
}

_COMPARISONS = {
    "<": BinaryOpType.LESS,
    "<=": BinaryOpType.LESS_EQUAL,
    ">": BinaryOpType.GREATER,
    ">=": BinaryOpType.GREATER_EQUAL,
    "==": BinaryOpType.EQUAL,
    "!=": BinaryOpType.NOT_EQUAL,
}


def _uncast(expr):
    while isinstance(expr, scalar_expr.TypeCast):
        expr = expr.inner_expr
    return expr


def _is_number(expr):
    return isinstance(expr, (bool, int, float, complex, np.generic))


class _Reader:
    """Reads the operands of one index lambda's expression."""

    def __init__(self, lam):
        import pymbolic.primitives as prim

        self.prim = prim
        self.lam = lam
        self.ndim = len(lam.shape)

    def read(self, expr):
        """``(array, broadcast)`` for a read of a binding at the output index (``broadcast``
        where the binding has fewer or stretched axes), else ``None``."""
        prim = self.prim
        expr = _uncast(expr)
        if isinstance(expr, prim.Variable) and expr.name in self.lam.bindings:
            array = self.lam.bindings[expr.name]
            return (array, self.ndim > 0) if len(array.shape) == 0 else None
        if not (isinstance(expr, prim.Subscript) and isinstance(expr.aggregate, prim.Variable)):
            return None
        array = self.lam.bindings.get(expr.aggregate.name)
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        if array is None or len(index) > self.ndim:
            return None
        offset = self.ndim - len(index)
        broadcast = offset > 0
        for k, item in enumerate(index):
            if item == prim.Variable(f"_{k + offset}"):
                continue
            if item == 0 and array.shape[k] == 1:
                broadcast = True
                continue
            return None
        return array, broadcast

    def operand(self, expr):
        """An operand of a binary operation or call: a number, or an array read in place
        (broadcast reads included, as pytato's operands broadcast)."""
        expr = _uncast(expr)
        if _is_number(expr):
            return expr
        read = self.read(expr)
        if read is None:
            raise UnknownIndexLambdaExpr(f"{expr} is not an array read at the index or a number")
        return read[0]


def index_lambda_to_high_level_op(expr):
    """The :class:`HighLevelOp` that the index lambda ``expr`` computes (see the module docs)."""
    if not isinstance(expr, IndexLambda):
        raise TypeError(f"an IndexLambda was expected, not a {expr.node_type}")
    reader = _Reader(expr)
    prim = reader.prim
    body = _uncast(expr.expr)
    name = type(body).__name__

    if _is_number(body):
        return FullOp(body)
    zeros_like = _zeros_like(reader, body)
    if zeros_like is not None:
        return zeros_like
    if isinstance(body, prim.Sum) and len(body.children) == 2:
        first, second = body.children
        if (isinstance(second, prim.Product) and len(second.children) == 2
                and not _is_number(second.children[1]) and second.children[0] == -1):
            return BinaryOp(BinaryOpType.SUB, reader.operand(first), reader.operand(second.children[1]))
        return BinaryOp(BinaryOpType.ADD, reader.operand(first), reader.operand(second))
    if isinstance(body, prim.Product) and len(body.children) == 2:
        return BinaryOp(BinaryOpType.MULT, *(reader.operand(c) for c in body.children))
    if name in _BINARY:
        if name in ("Quotient", "FloorDiv", "Remainder"):
            operands = (body.numerator, body.denominator)
        elif name == "Power":
            operands = (body.base, body.exponent)
        else:
            if len(body.children) != 2:
                raise UnknownIndexLambdaExpr(f"{name} of {len(body.children)} operands")
            operands = body.children
        return BinaryOp(_BINARY[name], *(reader.operand(c) for c in operands))
    if isinstance(body, prim.Comparison):
        return BinaryOp(_COMPARISONS[body.operator], reader.operand(body.left), reader.operand(body.right))
    if isinstance(body, prim.If):
        return WhereOp(*(reader.operand(c) for c in (body.condition, body.then, body.else_)))
    if isinstance(body, prim.LogicalNot):
        return LogicalNotOp(reader.operand(body.child))
    if isinstance(body, prim.Call):
        function = body.function.name.rsplit(".", 1)[-1]
        return C99CallOp(_C99.get(function, function), tuple(reader.operand(p) for p in body.parameters))
    if isinstance(body, scalar_expr.Reduce):
        return _reduction(reader, body)
    read = reader.read(body)
    if read is not None and read[1]:
        return BroadcastOp(read[0])
    raise UnknownIndexLambdaExpr(f"no high-level operation computes {expr.expr}")


def _reduction(reader, body):
    prim = reader.prim
    inner = _uncast(body.inner_expr)
    if not (isinstance(inner, prim.Subscript) and isinstance(inner.aggregate, prim.Variable)):
        raise UnknownIndexLambdaExpr(f"a reduction of {inner}, not of an array read")
    array = reader.lam.bindings.get(inner.aggregate.name)
    index = inner.index if isinstance(inner.index, tuple) else (inner.index,)
    inames = set(body.bounds)
    axes, outputs = {}, []
    for axis, item in enumerate(index):
        if isinstance(item, prim.Variable) and item.name in inames:
            axes[axis] = item.name
        else:
            outputs.append(item)
    if array is None or outputs != [prim.Variable(f"_{k}") for k in range(reader.ndim)]:
        raise UnknownIndexLambdaExpr(f"a reduction of {inner}, not of an array along its axes")
    return ReduceOp(body.op, array, axes)


def _zeros_like(reader, body):
    """``v - zero(x)`` (how ``zeros_like``/``ones_like`` keep ``x``) as a :class:`ZerosLikeOp`."""
    prim = reader.prim
    if not (isinstance(body, prim.Sum) and len(body.children) == 2):
        return None
    value, negated = body.children
    if not (_is_number(value) and isinstance(negated, prim.Product) and len(negated.children) == 2):
        return None
    call = _uncast(negated.children[1])
    if not (isinstance(call, prim.Call) and call.function.name.endswith(".zero") and value in (0, 1)):
        return None
    read = reader.read(call.parameters[0])
    return None if read is None else ZerosLikeOp("zeros" if value == 0 else "ones", read[0])


__all__ = [
    "BinaryOp",
    "BinaryOpType",
    "BroadcastOp",
    "C99CallOp",
    "FullOp",
    "HighLevelOp",
    "LogicalNotOp",
    "ReduceOp",
    "WhereOp",
    "ZerosLikeOp",
    "index_lambda_to_high_level_op",
]
