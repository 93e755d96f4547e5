"""``pytato_rs.raising.index_lambda_to_high_level_op``: each frontend operation is recognized
as the operation that built it, through the casts of numpy's promotions."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt

pytest.importorskip("pymbolic")
from pytato_rs.raising import (  # noqa: E402
    BinaryOp,
    BinaryOpType,
    BroadcastOp,
    C99CallOp,
    FullOp,
    LogicalNotOp,
    ReduceOp,
    WhereOp,
    ZerosLikeOp,
    index_lambda_to_high_level_op,
)
from pytato_rs.reductions import ProductReductionOperation, SumReductionOperation  # noqa: E402


def test_operations_are_recognized():
    a = pt.make_placeholder("a", (10, 4), np.float64)
    b = pt.make_placeholder("b", (10, 4), np.float64)
    i = pt.make_placeholder("i", (10, 4), np.int32)
    hlo = index_lambda_to_high_level_op
    assert hlo(a + b) == BinaryOp(BinaryOpType.ADD, a, b)
    assert hlo(a - b) == BinaryOp(BinaryOpType.SUB, a, b)
    assert hlo(a / 42) == BinaryOp(BinaryOpType.TRUEDIV, a, 42)
    assert hlo(42 * a) == BinaryOp(BinaryOpType.MULT, 42, a)
    assert hlo(a**b) == BinaryOp(BinaryOpType.POWER, a, b)
    assert hlo(i // 3) == BinaryOp(BinaryOpType.FLOORDIV, i, 3)
    assert hlo(i % b) == BinaryOp(BinaryOpType.MOD, i, b)  # through the cast of i to float64
    assert hlo(i ^ i) == BinaryOp(BinaryOpType.BITWISE_XOR, i, i)
    assert hlo(pt.less_equal(a, b)) == BinaryOp(BinaryOpType.LESS_EQUAL, a, b)
    assert hlo(pt.zeros(6)) == FullOp(0)
    assert hlo(pt.sum(b, axis=1)) == ReduceOp(SumReductionOperation(), b, {1: "_r0"})
    assert hlo(pt.prod(a)) == ReduceOp(ProductReductionOperation(), a, {0: "_r0", 1: "_r1"})
    assert hlo(pt.arctan2(b, a)) == C99CallOp("atan2", (b, a))
    assert hlo(pt.broadcast_to(a, (100, 10, 4))) == BroadcastOp(a)
    assert hlo(pt.zeros_like(a)) == ZerosLikeOp("zeros", a)
    assert hlo(pt.ones_like(a)) == ZerosLikeOp("ones", a)
    cond = a > 0
    assert hlo(pt.where(cond, a, b)) == WhereOp(cond, a, b)
    assert hlo(pt.logical_not(cond)) == LogicalNotOp(cond)
    nan_times = hlo(np.nan * a)
    assert nan_times.binary_op == BinaryOpType.MULT and np.isnan(nan_times.x1) and nan_times.x2 is a


def test_other_expressions_are_reported():
    a = pt.make_placeholder("a", (10, 4), np.float64)
    with pytest.raises(pt.diagnostic.UnknownIndexLambdaExpr):
        index_lambda_to_high_level_op(pt.to_index_lambda(a.T))  # a transposed read
    with pytest.raises(pt.diagnostic.UnknownIndexLambdaExpr):
        index_lambda_to_high_level_op(pt.to_index_lambda(a[::2]))
