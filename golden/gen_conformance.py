#!/usr/bin/env python3
"""The conformance cases, and their expected values from numpy.

This file is the one place cases are defined. A case is a numpy expression (a small subset of
Python: names, numbers, strings, operators, calls of np.*, methods astype/reshape/T, indexing) over
named inputs. This script makes seeded inputs, evaluates the expression with numpy, and writes
conformance-tests/data/cases.json; the Rust suite parses the same expression into frontend calls,
runs it on every backend and compares with what numpy computed. Adding a case is one line below
(then `cargo xtask golden`).

Case fields:
  name     unique identifier
  (besides np.*, expressions may call named(e): e read back through a NamedArray node)
  expr     a string (one output) or a dict of output name -> string (several outputs)
  inputs   name -> (dtype, shape[, options]); shape entries may be symbolic ("n", "m"); options:
             "data": the input is wrapped data in the DAG (DataWrapper), not a placeholder
             "pos":  values in (0.1, 2) rather than (-2, 2)
             "int:LO:HI": integer values in [LO, HI)
             "special": the dtype's special values (NaN, +-inf, -0.0, extremes, subnormals), repeated
             a list: these values, repeated to fill the shape
  sizes    values of the symbolic lengths (bound from the input shapes at run time)
  omit     inputs that are not passed at run time (the outputs must not need them)
  run      inputs passed instead at run time (name -> spec, or None to leave it out), for errors
  error    the error kind every backend must report
  numpy_error  the exception numpy raises for the same expression on the run-time inputs ("ValueError",
           "IndexError", ...): the generator checks that numpy does raise it, so an expected error comes
           from numpy too (left out where numpy has no such error: a missing input, or a documented departure)
  numpy    output name -> the numpy expression that computes the expected value instead (where numpy's
           own result depends on how it loops, see cast_special_*)
  functions name -> (params, [body expressions]): functions the expressions may call, f(x, y); the Rust
           suite traces each call into a Function (pytato_core::function), numpy calls a Python function;
           or name -> (params, [outputs], [(target, shape, index expression)]): a user kernel
           (pytato_core::user_kernel), which numpy evaluates over index grids (run_kernel)
"""
import json
import os
import random
import re
import warnings

import numpy as np

from at import At
from encoding import encode

warnings.simplefilter("ignore")

F, D, C, Z = "float32", "float64", "complex64", "complex128"
I8, I16, I32, I64 = "int8", "int16", "int32", "int64"
U8, U16, U32, U64 = "uint8", "uint16", "uint32", "uint64"
B = "bool"
ALL = [B, I8, I16, I32, I64, U8, U16, U32, U64, F, D, C, Z]
NUMERIC = ALL[1:]
REAL = ALL[1:11]
INEXACT = [F, D, C, Z]

CASES = []


def cumsum_in_blocks(x):
    """The library's running sum of a 1-d float array (`pytato_runtime::scan`), from numpy's own
    running loops: numpy's cumsum for at most 2048 elements; else blocks of 1024 each summed by
    numpy's cumsum, the blocks' totals by this same rule, and each block's running sums added to
    the total of the blocks before it (numpy's `+`, float16 through float32)."""
    if x.shape[0] <= 2048:
        return np.cumsum(x)
    blocks = [np.cumsum(x[i:i + 1024]) for i in range(0, x.shape[0], 1024)]
    before = cumsum_in_blocks(np.array([b[-1] for b in blocks], dtype=x.dtype))
    return np.concatenate([blocks[0]] + [before[k - 1] + b for k, b in enumerate(blocks) if k > 0])


def case(name, expr, inputs=None, **kw):
    CASES.append(dict(name=name, expr=expr, inputs=inputs or {}, **kw))


# --- Elementwise arithmetic over every dtype --------------------------------------------------------
for d in NUMERIC:
    case(f"add_{d}", "x + y", {"x": (d, (3, 4)), "y": (d, (4,))})
    case(f"mul_scalar_{d}", "2 * x - x * 3", {"x": (d, (5,))})
for d in [B, I8, U16, I64, F, D, C, Z]:
    case(f"true_divide_{d}", "x / y", {"x": (d, (6,)), "y": (d, (6,), "pos" if d in INEXACT else "int:1:5")})
for d in [I8, I32, U8, U64, F, D]:
    case(f"floor_divide_{d}", "x // y", {"x": (d, (8,), "int:-20:20" if d[0] == "i" else None), "y": (d, (8,), "int:-4:5" if d[0] == "i" else None)})
    case(f"remainder_{d}", "x % y", {"x": (d, (8,), "int:-20:20" if d[0] == "i" else None), "y": (d, (8,), "int:-4:5" if d[0] == "i" else None)})
case("floor_divide_by_zero_int", "x // y", {"x": (I32, (4,), "int:-9:9"), "y": (I32, (4,), "int:0:1")})
case("remainder_by_zero_int", "x % y", {"x": (I64, (4,), "int:-9:9"), "y": (I64, (4,), "int:0:1")})
case("int_min_floor_divide_minus_one", "x // -1", {"x": (I64, (3,), "int:-9223372036854775808:-9223372036854775807")})
case("float_floor_divide_mixed_signs", "x // y", {"x": (D, (6,)), "y": (D, (6,))})
for d in [I8, I32, U8, U32, I64]:
    case(f"power_int_{d}", "x ** 3", {"x": (d, (5,), "int:0:6")})
    case(f"overflow_wraps_{d}", "x * x * x * x", {"x": (d, (5,), "int:50:120")})
case("power_float", "x ** y", {"x": (D, (5,), "pos"), "y": (D, (5,))})
case("power_float32_half", "x ** 0.5", {"x": (F, (5,), "pos")})
case("power_complex", "x ** 2", {"x": (Z, (4,))})
for d in [I16, U8, B]:
    case(f"bitwise_{d}", "(x & y) | (x ^ ~y)", {"x": (d, (6,)), "y": (d, (6,))})
case("negative_unsigned_wraps", "-x", {"x": (U8, (5,))})
case("negative_float", "-x", {"x": (D, (2, 3))})
case("bool_add_is_or", "x + y", {"x": (B, (6,)), "y": (B, (6,))})
case("bool_mul_is_and", "x * y", {"x": (B, (6,)), "y": (B, (6,))})
case("weak_scalar_keeps_uint8", "x + 200", {"x": (U8, (5,))})
case("weak_float_keeps_float32", "x * 0.1", {"x": (F, (5,))})
case("int_times_float_scalar", "x * 0.5", {"x": (I16, (5,))})
case("mixed_int_uint", "x + y", {"x": (I8, (4,)), "y": (U8, (4,))})
case("mixed_int64_uint64", "x + y", {"x": (I64, (4,), "int:0:1000"), "y": (U64, (4,))})
case("mixed_int32_float32", "x * y", {"x": (I32, (4,)), "y": (F, (4,))})
case("mixed_float_complex", "x + y", {"x": (D, (4,)), "y": (C, (4,))})

# --- Comparisons, logic, where, maximum ------------------------------------------------------------
for d in [B, I8, U32, I64, F, D, Z]:
    case(f"compare_{d}", {"lt": "x < y", "le": "x <= y", "eq": "x == y", "ne": "x != y", "gt": "x > y", "ge": "x >= y"},
         {"x": (d, (7,), "int:-2:3" if d[0] in "iu" else None), "y": (d, (7,), "int:-2:3" if d[0] in "iu" else None)})
case("compare_uint8_with_300", "x < 300", {"x": (U8, (4,))})
case("logical_ops", {"and": "np.logical_and(x, y)", "or": "np.logical_or(x, y)", "not": "np.logical_not(x)"},
     {"x": (D, (5,), "int:-1:2"), "y": (I32, (5,), "int:-1:2")})
case("where_broadcast", "np.where(c, x, y)", {"c": (B, (3, 1)), "x": (D, (4,)), "y": (I32, (3, 4))})
case("where_scalars", "np.where(x > 0, 1.0, -1)", {"x": (F, (6,))})
for d in [I8, U16, F, D, Z]:
    case(f"maximum_{d}", {"max": "np.maximum(x, y)", "min": "np.minimum(x, y)"}, {"x": (d, (6,)), "y": (d, (6,))})
case("maximum_nan_propagates", {"max": "np.maximum(x, np.log(y))", "min": "np.minimum(np.log(y), x)"}, {"x": (D, (6,)), "y": (D, (6,))})
case("isnan", "np.isnan(np.sqrt(x))", {"x": (D, (6,))})
case("isnan_int", "np.isnan(x)", {"x": (I32, (3,))})

# --- Math functions ---------------------------------------------------------------------------------
for f in ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh"]:
    case(f"{f}_float64", f"np.{f}(x)", {"x": (D, (2, 3), "pos")})
    case(f"{f}_float32", f"np.{f}(x)", {"x": (F, (4,), "pos")})
    case(f"{f}_complex128", f"np.{f}(x)", {"x": (Z, (3,))})
for f in ["arcsin", "arccos"]:
    case(f"{f}_float64", f"np.{f}(x / 2)", {"x": (D, (5,))})
    case(f"{f}_complex64", f"np.{f}(x)", {"x": (C, (3,))})
case("sqrt_int", "np.sqrt(x)", {"x": (I32, (4,), "int:0:100")})
case("sin_int16", "np.sin(x)", {"x": (I16, (4,))})
case("arctan2", "np.arctan2(x, y)", {"x": (D, (5,)), "y": (D, (5,))})
case("arctan2_float32", "np.arctan2(x, 1.0)", {"x": (F, (5,))})
for d in [F, D]:
    case(f"floor_ceil_{d}", {"f": "np.floor(x)", "c": "np.ceil(x)"}, {"x": (d, (6,))})
case("floor_int_unchanged", "np.floor(x)", {"x": (I8, (4,))})
for d in [I8, I64, F, D, C, Z]:
    case(f"abs_{d}", "np.abs(x)", {"x": (d, (5,))})
case("abs_int_min_wraps", "np.abs(x)", {"x": (I8, (2,), "int:-128:-127")})
for d in [D, C, Z]:
    case(f"complex_parts_{d}", {"re": "np.real(x)", "im": "np.imag(x)", "conj": "np.conj(x)"}, {"x": (d, (4,))})

# --- Casts ------------------------------------------------------------------------------------------
for src in [B, I8, U16, I64, F, D, Z]:
    for dst in ["bool", "int16", "uint8", "float32", "complex128"]:
        if src == Z and dst not in ("bool", "complex128"):
            continue  # numpy warns and drops the imaginary part; covered once below
        case(f"astype_{src}_to_{dst}", f"x.astype(np.{dst})", {"x": (src, (5,), "int:-100:100" if src[0] in "iu" else None)})
case("astype_complex_to_float", "x.astype(np.float64)", {"x": (Z, (3,))})
case("astype_float_to_int_truncates", "x.astype(np.int32)", {"x": (D, (6,))})

# --- Reductions -------------------------------------------------------------------------------------
for d in [B, I8, U16, I64, F, D, Z]:
    case(f"sum_{d}", {"all": "np.sum(x)", "ax0": "np.sum(x, axis=0)", "ax_neg": "np.sum(x, axis=-1, keepdims=True)"},
         {"x": (d, (3, 4, 2))})
    case(f"prod_{d}", {"all": "np.prod(x)", "ax1": "np.prod(x, axis=(0, 2))"}, {"x": (d, (3, 2, 2), "int:-3:4" if d[0] in "iu" else None)})
for d in [B, I8, U16, I64, F, D]:
    case(f"max_min_{d}", {"max": "np.max(x, axis=1)", "min": "np.min(x)", "maxk": "np.max(x, axis=0, keepdims=True)"}, {"x": (d, (3, 5))})
for d in [B, I32, D, Z]:
    case(f"all_any_{d}", {"all": "np.all(x, axis=0)", "any": "np.any(x)", "anyk": "np.any(x > 0, axis=1)"}, {"x": (d, (4, 3), "int:-1:2" if d[0] == "i" else None)})
for d in [I16, U8, F, D, C]:
    case(f"mean_{d}", {"all": "np.mean(x)", "ax": "np.mean(x, axis=(1,))"}, {"x": (d, (4, 6))})
case("sum_initial", "np.sum(x, axis=1, initial=10)", {"x": (I32, (3, 4))})
case("max_initial_empty", "np.max(x, axis=0, initial=-5.0)", {"x": (D, (0, 3))})
case("sum_empty", {"a": "np.sum(x)", "b": "np.prod(x, axis=0)"}, {"x": (D, (0, 3))})
case("max_nan_propagates", "np.max(np.log(x), axis=0)", {"x": (D, (4, 3))})
case("sum_symbolic", {"s": "np.sum(x, axis=0)", "m": "np.mean(x, axis=0)"}, {"x": (D, ("n", 3))}, sizes={"n": 7})
case("reduce_0d", "np.sum(x)", {"x": (D, ())})
case("sum_of_products", "np.sum(x * y, axis=1)", {"x": (D, (5, 6)), "y": (D, (6,))})

# --- Linear algebra ---------------------------------------------------------------------------------
case("einsum_matmul", "np.einsum('ij,jk->ik', a, b)", {"a": (D, (3, 4)), "b": (D, (4, 5))})
case("einsum_implicit", "np.einsum('ij,jk', a, b)", {"a": (F, (2, 3)), "b": (F, (3, 2))})
case("einsum_trace", "np.einsum('ii', a)", {"a": (D, (4, 4))})
case("einsum_diagonal", "np.einsum('ii->i', a)", {"a": (I32, (4, 4))})
case("einsum_transpose", "np.einsum('ij->ji', a)", {"a": (D, (2, 3))})
# One operand and nothing summed is numpy's view (-0.0 stays); products are added into zeros (+0.0).
case("einsum_signs_of_zero", {"view": "np.einsum('ij->ji', a)", "diag": "np.einsum('ii->i', a)",
                              "product": "np.einsum('ij,ij->ij', a, a)"},
     {"a": (D, (3, 3), [-0.0, 1.0, 0.0, -2.0])})
case("einsum_outer", "np.einsum('i,j->ij', a, b)", {"a": (D, (3,)), "b": (C, (2,))})
case("einsum_ellipsis", "np.einsum('...ij,...jk->...ik', a, b)", {"a": (D, (2, 1, 2, 3)), "b": (D, (4, 3, 2))})
case("einsum_three_operands", "np.einsum('ij,jk,kl->il', a, b, c)", {"a": (D, (2, 3)), "b": (D, (3, 4)), "c": (D, (4, 2))})
case("einsum_broadcast_one", "np.einsum('i,i->i', a, b)", {"a": (D, (1,)), "b": (D, (5,))})
case("einsum_dg_apply", "np.einsum('ij,ej->ei', a, u)", {"a": (D, (5, 5)), "u": (D, ("n", 5))}, sizes={"n": 6})
case("einsum_full_sum", "np.einsum('ij->', a)", {"a": (I64, (3, 3))})
case("einsum_bool", "np.einsum('ij,jk->ik', a, b)", {"a": (B, (2, 3)), "b": (B, (3, 2))})
for sa, sb, label in [((3,), (3,), "vv"), ((3,), (3, 4), "vm"), ((2, 3), (3,), "mv"), ((2, 3), (3, 4), "mm"),
                      ((2, 1, 2, 3), (3, 3, 2), "batched")]:
    case(f"matmul_{label}", "a @ b", {"a": (D, sa), "b": (F, sb)})
case("matmul_int", "np.matmul(a, b)", {"a": (I32, (2, 3)), "b": (I32, (3, 2))})
case("matmul_symbolic", "a @ b", {"a": (D, ("n", 3)), "b": (D, (3, "m"))}, sizes={"n": 4, "m": 2})
for sa, sb, label in [((3,), (3,), "vv"), ((2, 3, 4), (5, 4, 2), "nd"), ((), (3,), "scalar"), ((2, 3), (3,), "mv")]:
    case(f"dot_{label}", "np.dot(a, b)", {"a": (D, sa), "b": (D, sb)})
case("vdot_complex", "np.vdot(a, b)", {"a": (Z, (2, 3)), "b": (Z, (6,))})
case("tensordot_pairs", "np.tensordot(a, b, axes=([1, 0], [0, 1]))", {"a": (D, (3, 4, 2)), "b": (D, (4, 3, 5))})
case("tensordot_count", "np.tensordot(a, b, axes=1)", {"a": (D, (2, 3)), "b": (D, (3, 4))})
case("tensordot_outer", "np.tensordot(a, b, axes=0)", {"a": (D, (2,)), "b": (D, (3,))})

# --- Shape manipulation -----------------------------------------------------------------------------
case("reshape_c", "np.reshape(x, (3, -1))", {"x": (D, (2, 6))})
case("reshape_f", "np.reshape(x, (3, 4), order='F')", {"x": (I16, (2, 6))})
case("reshape_method", "x.reshape((6,))", {"x": (D, (2, 3))})
case("reshape_0d", "np.reshape(x, (1, 1))", {"x": (D, ())})
case("reshape_empty", "np.reshape(x, (2, 0, 3))", {"x": (D, (0, 6))})
case("reshape_symbolic", "np.reshape(x, (-1, 3))", {"x": (D, ("n", 6))}, sizes={"n": 2})
case("ravel", "np.ravel(x)", {"x": (D, (2, 3, 2))})
case("transpose", "np.transpose(x)", {"x": (D, (2, 3, 4))})
case("transpose_axes", "np.transpose(x, (1, 2, 0))", {"x": (U8, (2, 3, 4))})
case("transpose_attr", "x.T", {"x": (D, (2, 5))})
case("swapaxes", "np.swapaxes(x, 0, -1)", {"x": (D, (2, 3, 4))})
case("moveaxis", "np.moveaxis(x, [0, 1], [2, 0])", {"x": (D, (2, 3, 4))})
case("roll_axis", "np.roll(x, 2, axis=1)", {"x": (D, (3, 5))})
case("roll_negative", "np.roll(x, -7, axis=0)", {"x": (I64, (5, 2))})
case("roll_flat", "np.roll(x, 4)", {"x": (D, (3, 5))})
case("roll_symbolic", "np.roll(x, 1, axis=0)", {"x": (D, ("n",))}, sizes={"n": 6})
case("stack", "np.stack([x, y], axis=1)", {"x": (D, (3, 2)), "y": (D, (3, 2))})
case("stack_promotes", "np.stack([x, y])", {"x": (I8, (3,)), "y": (F, (3,))})
case("stack_negative_axis", "np.stack([x, y, x], axis=-1)", {"x": (D, (2, 2)), "y": (D, (2, 2))})
case("concatenate", "np.concatenate([x, y], axis=0)", {"x": (D, (2, 3)), "y": (D, (4, 3))})
case("concatenate_axis1", "np.concatenate([x, y, x], axis=-1)", {"x": (I32, (2, 1)), "y": (I32, (2, 3))})
case("concatenate_symbolic", "np.concatenate([x, y])", {"x": (D, ("n",)), "y": (D, (2,))}, sizes={"n": 3})
case("concatenate_empty", "np.concatenate([x, y])", {"x": (D, (0,)), "y": (D, (2,))})
case("broadcast_to", "np.broadcast_to(x, (2, 3, 4))", {"x": (D, (3, 1))})
case("squeeze", "np.squeeze(x)", {"x": (D, (1, 3, 1))})
case("squeeze_axis", "np.squeeze(x, axis=0)", {"x": (D, (1, 3, 1))})
case("expand_dims", "np.expand_dims(x, (0, -1))", {"x": (D, (2, 3))})
case("size1_broadcast", "x + y", {"x": (D, (1, 4, 1)), "y": (D, (3, 1, 2))})
case("scalar_0d_broadcast", "x * y", {"x": (D, ()), "y": (D, (2, 3))})
case("empty_elementwise", "x + 1", {"x": (D, (0, 3))})

# --- Creation ---------------------------------------------------------------------------------------
case("zeros", "np.zeros((2, 3)) + x", {"x": (D, (3,))})
case("ones_int8", "np.ones((4,), dtype=np.int8) + x", {"x": (I8, (4,))})
case("full", "np.full((2, 2), 7) * x", {"x": (I64, (2,))})
case("full_float32", "np.full((3,), 2.5, dtype=np.float32)", {})
case("eye", "np.eye(3, 4, k=1)", {})
case("eye_negative_k", "np.eye(4, k=-2, dtype=np.int32)", {})
case("arange_int", "np.arange(0, 10, 3)", {})
case("arange_negative_step", "np.arange(5, -5, -2)", {})
case("arange_float", "np.arange(0.0, 1.0, 0.125)", {})
case("linspace", "np.linspace(0.0, 1.0, 7)", {})
case("linspace_no_endpoint", "np.linspace(-1.0, 1.0, 5, endpoint=False)", {})
case("zeros_like", "np.zeros_like(x) + y", {"x": (D, (3,)), "y": (D, (3,))})
case("ones_like_dtype", "np.ones_like(x, dtype=np.float32)", {"x": (I32, (2, 2))})
case("full_like", "np.full_like(x, 3)", {"x": (U16, (3,))})
case("zeros_like_ignores_nan", "np.zeros_like(np.log(x))", {"x": (D, (4,))})
case("pad", "np.pad(x, ((1, 0), (2, 2)))", {"x": (D, (2, 3))})
case("pad_value", "np.pad(x, ((1, 2),), constant_values=9)", {"x": (I32, (3,))})
case("pad_symbolic", "np.pad(x, ((2, 1),))", {"x": (D, ("n",))}, sizes={"n": 4})

# --- Indexing ---------------------------------------------------------------------------------------
IDX = {"x": (D, (5, 6, 7))}
case("index_int", "x[1, 2, 3]", IDX)
case("index_negative_int", "x[-1, -2]", IDX)
case("index_slices", "x[1:4, ::2, 5:]", IDX)
case("index_negative_step", "x[::-1, 5:0:-2, -1:-8:-3]", IDX)
case("index_newaxis_ellipsis", "x[..., None, 0]", IDX)
case("index_newaxis_front", "x[None, 1:3]", IDX)
case("index_empty_slice", "x[3:1]", IDX)
case("index_symbolic", "y[1:] - y[:-1]", {"y": (D, ("n",))}, sizes={"n": 8})
case("index_symbolic_negative", "y[-2, ::-1]", {"y": (D, ("n", 3))}, sizes={"n": 4})
case("index_array_contiguous", "x[:, i, j]", {"x": (D, (5, 6, 7)), "i": (I64, (2, 3), "int:-6:6"), "j": (I32, (3,), "int:0:7")})
case("index_array_noncontiguous", "x[i, :, j]", {"x": (D, (5, 6, 7)), "i": (I64, (2, 3), "int:-5:5"), "j": (I32, (3,), "int:0:7")})
case("index_array_with_int", "x[0, :, j]", {"x": (D, (5, 6, 7)), "j": (I16, (4,), "int:0:7")})
case("index_array_int_adjacent", "x[:, 1, j]", {"x": (D, (5, 6, 7)), "j": (U8, (4,), "int:0:7")})
case("index_array_newaxis_between", "x[i, None, j]", {"x": (D, (5, 6, 7)), "i": (I64, (3,), "int:0:5"), "j": (I64, (3,), "int:0:6")})
case("index_array_single", "x[i]", {"x": (I32, (5, 2)), "i": (I64, (7,), "int:-5:5")})
case("index_array_0d", "x[i]", {"x": (D, (5,)), "i": (I64, (), "int:0:5")})
case("index_array_slice_step", "x[1:5:2, j, ::-1]", {"x": (D, (5, 6, 7)), "j": (I64, (2, 1), "int:0:6")})
case("index_gather_data", "x[i]", {"x": (D, (6,)), "i": (I64, (4,), "int:0:6 data")})

# --- Inputs: data wrappers, size parameters, dict outputs, unused inputs ------------------------------
case("data_wrapper", "x * w", {"x": (D, (3,)), "w": (D, (3,), "data")})
case("size_param_value", "x * n", {"x": (D, ("n",))}, sizes={"n": 5})
case("dict_outputs", {"sum": "x + y", "prod": "x * y", "neg": "-x"}, {"x": (D, (4,)), "y": (D, (4,))})
case("dict_outputs_shared", {"a": "np.sin(x) + 1", "b": "np.sin(x) * 2"}, {"x": (D, (5,))})
case("unused_input_not_required", "np.zeros_like(x) + y", {"x": (D, (3,)), "y": (D, (3,))}, omit=["x"])
case("unused_input_accepted", "np.ones_like(x) * 2", {"x": (D, (3,))})
# named(e): e as an entry of a DictOfNamedArrays, read back through a NamedArray node.
case("named_array", "named(x + 1) * named(np.sin(x))", {"x": (D, (2, 3))})

# --- Seeded random DAGs -----------------------------------------------------------------------------
rng = random.Random(20261122)
UNARY_OPS = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.abs({})", "-{}", "({} * 0.5)", "np.exp(-np.abs({}))",
             "np.sqrt(np.abs({}))", "np.maximum({}, 0.25)"]
BINARY_OPS = ["({} + {})", "({} - {})", "({} * {})", "np.where({} > {}, 1.0, 2.0)", "np.minimum({}, {})"]
SHAPE_OPS = ["np.roll({}, 1, axis=0)", "{}[::-1]", "np.transpose({})", "np.reshape(np.transpose({}), (4, 3))",
             "np.sum({}, axis=1, keepdims=True)", "np.concatenate([{}[1:], {}[:1]])", "({} @ np.ones((3, 3)))"]
def _valid(expr, names):
    """Whether numpy accepts the expression (shapes line up) for (4, 3) inputs."""
    try:
        np.asarray(eval(expr, {"np": np, **{n: np.ones((4, 3)) for n in names}}))
        return True
    except ValueError:
        return False


for k in range(30):
    names = ["a", "b", "c"]
    terms = list(names)
    while len(terms) < 3 + rng.randint(3, 9):
        kind = rng.random()
        if kind < 0.4:
            t = rng.choice(UNARY_OPS).format(rng.choice(terms))
        elif kind < 0.8:
            t = rng.choice(BINARY_OPS).format(rng.choice(terms), rng.choice(terms))
        else:
            op = rng.choice(SHAPE_OPS)
            t = op.format(*([rng.choice(terms)] * op.count("{}")))
        if _valid(t, names):
            terms.append(t)
    expr = f"{terms[-1]} + {rng.choice(terms[3:])}"
    if not _valid(expr, names):
        expr = terms[-1]
    used = [n for n in names if re.search(rf"\b{n}\b", expr)]
    case(f"random_dag_{k:02d}", expr, {n: (D, (4, 3)) for n in used})

# --- Regressions: classes of wrong values found from outside (issue 12) ------------------------------
# Outputs named like their inputs (numpy code writes `u = step(u)`).
case("output_named_like_input", {"u": "u * 2 + 1", "v": "u"}, {"u": (D, ("n",))}, sizes={"n": 5})
case("output_named_like_data", {"w": "w + 1", "x": "w * x"}, {"w": (D, (3,), "data"), "x": (D, (3,))})
case("outputs_swap_names", {"a": "b + 0", "b": "a * 1"}, {"a": (I32, (4,)), "b": (I32, (4,))})
# A placeholder named like a size parameter has two meanings: an error everywhere.
case("error_placeholder_named_like_size", "n * 2", {"n": (D, ("n",))}, sizes={"n": 3}, error="DuplicateName")
# Rolls by shifts at the ends of int64.
case("roll_extreme_shifts", {"a": "np.roll(x, 9223372036854775807, axis=0)", "b": "np.roll(x, -9223372036854775807, axis=1)"},
     {"x": (D, (5, 3))})
case("roll_extreme_symbolic", "np.roll(x, -9223372036854775807)", {"x": (I64, ("n",))}, sizes={"n": 7})
# IEEE semantics at NaN, inf and -0.0.
for d in [F, D]:
    case(f"ieee_special_{d}", {"sub": "x - x", "mul0": "x * 0", "zero_mul": "0.0 * x", "div0": "np.divide(x, 0.0)",
                               "add0": "x + 0.0", "div_self": "x / x", "ge_self": "x >= x", "lt_self": "x < x",
                               "eq_self": "x == x", "ne_self": "x != x", "max0": "np.maximum(x, 0.0)"},
         {"x": (d, (12,), "special")})
    case(f"special_floor_divide_remainder_{d}", {"fd": "x // y", "rem": "x % y"},
         {"x": (d, (13,), [5.0, -7.5, 7.5, -7.5, 1.0, 0.0, -0.0, "nan", "inf", "-inf", 3.0, 1e30, -2.5]),
          "y": (d, (13,), ["inf", "inf", "-inf", "-inf", "nan", "inf", 2.0, 3.0, 2.0, 2.0, "-inf", 7.0, 1e-30])})
case("remainder_exact_fmod", {"rem": "x % y", "fd": "x // y"},
     {"x": (D, (4,), [1.797e308, -1.797e308, 1e300, 5e-324]), "y": (D, (4,), [-2.517, 3.1, 0.7, 3e-324])})
case("remainder_exact_fmod_float32", "x % y", {"x": (F, (3,), [3.0e38, -1.7e38, 1e30]), "y": (F, (3,), [-2.517, 3.1, 0.7])})
case("sin_cos_huge_arguments", {"sin": "np.sin(x)", "cos": "np.cos(x)", "tan": "np.tan(x)"},
     {"x": (D, (8,), [1e7, -3e9, 1e10, 1e15, 1e22, -1e300, 1.7976931348623157e308, 6.0e5])})
case("sin_cos_huge_arguments_float32", {"sin": "np.sin(x)", "cos": "np.cos(x)"},
     {"x": (F, (4,), [1e7, -3e9, 1e20, 3.0e38])})
for src in [F, D]:
    # numpy's uint32 casts of NaN and values below -2^31 depend on the loop (its 4-wide vector loop
    # gives 2^31, its scalar loop the low bits of the int64 conversion); the library follows the
    # scalar loop, which numpy computes for us through int64.
    case(f"cast_special_{src}", {t: f"x.astype(np.{t})" for t in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]},
         {"x": (src, (16,), "special")}, numpy={"uint32": "x.astype(np.int64).astype(np.uint32)"})
case("zeros_like_int_dtype", {"z": "np.zeros_like(x, dtype=np.int32)", "o": "np.ones_like(x, dtype=np.uint8)",
                              "f": "np.full_like(x, 2.5, dtype=np.int16)"}, {"x": (D, (3,))})
case("constant_operands", {"a": "np.abs(np.full((3,), 0.1))", "b": "np.full((2,), 1.5) * np.full((2,), -2.0)",
                           "c": "np.maximum(np.full((2,), 3), 2)", "d": "np.full((2,), 7).astype(np.float32) / 2"}, {})
for d in [C, Z]:
    case(f"complex_special_{d}", {f: f"np.{f}(x)" for f in ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
                                                               "tanh", "arcsin", "arccos", "arctan"]},
         {"x": (d, (20,), "special")})
    case(f"complex_division_edges_{d}", {"q": "x / y", "p": "x * y"}, {"x": (d, (20,), "special"), "y": (d, (20,), "special_shifted")})
case("complex_division_overflow", "x / 2", {"x": (Z, (2,), [complex(1e308, 1e308), complex(-3.375, 2.5)])})
case("complex_divide_by_zero", "x / y", {"x": (Z, (2,), [complex(-3.375, 2.5), complex(1, 1)]), "y": (Z, (2,), [0j, complex(-0.0, 0.0)])})
case("complex_branch_cuts", {"asin": "np.arcsin(x)", "acos": "np.arccos(x)", "atan": "np.arctan(y)", "sqrt": "np.sqrt(x)",
                             "log": "np.log(x)"},
     {"x": (Z, (4,), [complex(3, 0.0), complex(3, -0.0), complex(-3, 0.0), complex(-3, -0.0)]),
      "y": (Z, (4,), [complex(0.0, 3), complex(-0.0, 3), complex(0.0, -3), complex(-0.0, -3)])})
case("complex_exp_log_edges", {"exp": "np.exp(x)", "log": "np.log(y)"},
     {"x": (Z, (3,), [complex(1000, 0), complex(710, 1), complex(-1000, 2)]),
      "y": (Z, (3,), [complex(5e-324, 5e-324), complex(1e-310, -2e-310), complex(1.0, 1e-10)])})
case("complex_cosh_large_imaginary", {"cosh": "np.cosh(x)", "sinh": "np.sinh(x)"}, {"x": (Z, (2,), [complex(1, 1e300), complex(-2, 1e22)])})
case("complex64_tan_near_pole", "np.tan(x)", {"x": (C, (3,), [complex(11, 0), complex(11, 1e-3), complex(-1.5707964, 0)])})
case("einsum_complex_infinite", {"one": "np.einsum('i->i', x)", "sum": "np.einsum('i->', x)"},
     {"x": (Z, (2,), [complex(np.inf, 0), complex(1, np.inf)])})
case("arctan2_signed_zeros", "np.arctan2(x, y)", {"x": (F, (4,), [0.0, -0.0, 0.0, -0.0]), "y": (F, (4,), [0.0, 0.0, -0.0, -0.0])})
case("arctan2_signed_zeros_float64", "np.arctan2(x, y)", {"x": (D, (4,), [0.0, -0.0, 0.0, -0.0]), "y": (D, (4,), [0.0, 0.0, -0.0, -0.0])})
case("floor_divide_nan", {"fd": "np.floor_divide(x, 3.0)", "rem": "np.remainder(x, 1.0)"}, {"x": (D, (3,), ["nan", "inf", -0.0])})
# numpy's complex log10 is log(z) * log10(e): dividing by ln 10 gives 299.99999999999994 here.
case("complex_log10_powers_of_ten", "np.log10(x + 0j).astype(np.uint16)", {"x": (D, (3,), [1e300, 1e100, 1000.0])})
# (-inf) ** y is 0 or inf (C99), not the NaN of a finite negative base.
case("power_negative_infinite_base", "x ** y",
     {"x": (D, (5,), ["-inf", "-inf", "-inf", "-inf", -2.0]), "y": (D, (5,), [-0.5, 0.5, -3.0, 3.0, 0.5])})
# Exact powers: one rounding, as numpy's pow (exp(y log x) made floor(1 / 0.1) 9 on wgpu).
case("power_exact_small_exponents", {"inv": "np.floor(np.power(x, -1))", "sq": "np.power(x, 2)", "one": "np.power(x, 1)"},
     {"x": (D, (4,), [0.1, 0.3, 0.7, -0.2])})
# The sign of a zero imaginary part picks the branch of what follows: sin(2+0j) is sin 2 - 0j.
case("complex_sin_real_axis_branch", "np.sin(x + 0j) ** np.sin(x + 0j)", {"x": (D, (3,), [2.0, 4.0, 5.0])})
# numpy's einsum adds products into a zeroed output: -0.0 products come out +0.0, even unsummed.
case("einsum_elementwise_negative_zero", "x / np.einsum('i,i->i', x, x > x)", {"x": (D, (3,), [0.5, -2.0, -0.0])})
# Long float32 sums: numpy's pairwise summation is off by 1e-7 here, a sequential one by 1%.
case("sum_float32_long", {"s": "np.sum(np.full((1000000,), 0.1, dtype=np.float32))",
                          "m": "np.mean(np.full((1000, 1000), 0.1, dtype=np.float32), axis=1)"}, {})
case("sum_float64_long", "np.sum(np.full((2000000,), 0.1))", {})
# Reductions used inside broadcasts: computed once (they were recomputed per element).
case("reduction_in_broadcast", {"norm": "x / np.sum(x)", "mv": "m @ np.sum(x, axis=0)", "c": "x - np.mean(x, axis=0)"},
     {"x": (D, (50, 4)), "m": (D, (3, 4))})
# Index arrays are checked against their axis even when no element is read.
case("error_index_into_empty", "np.full((n,), 7.0)[i]", {"i": (I64, (2,), "int:0:1")}, sizes={"n": 0}, run={"n": (I64, (), [0])},
     error="IndexOutOfBounds")
case("error_index_untaken_branch", "np.where(c, x[i], 0.0)", {"c": (B, (3,), [False]), "x": (D, (4,)), "i": (I64, (3,), "int:0:4")},
     run={"i": (I64, (3,), "int:4:9")}, error="IndexOutOfBounds")
case("error_index_through_roll", "np.roll(x, 1)[i]", {"x": (D, (5,)), "i": (I64, (2,), "int:0:5")},
     run={"i": (I64, (2,), "int:5:9")}, error="IndexOutOfBounds")
case("index_negative_wraps_through_fused", "(x * 2)[i] + 1", {"x": (D, (5,)), "i": (I64, (6,), "int:-5:5")})

# --- Errors: every backend must report the same kind ----------------------------------------------------
case("error_missing_input", "x + y", {"x": (D, (3,)), "y": (D, (3,))}, run={"y": None}, error="MissingInput")
case("error_unknown_input", "x + 1", {"x": (D, (3,))}, run={"zz": (D, (3,))}, error="UnknownInput")
case("error_wrong_dtype", "x + 1", {"x": (D, (3,))}, run={"x": (F, (3,))}, error="InputDType")
case("error_wrong_ndim", "x + 1", {"x": (D, (3,))}, run={"x": (D, (3, 1))}, error="InputShape")
case("error_wrong_length", "x + 1", {"x": (D, (3,))}, run={"x": (D, (4,))}, error="InputShape")
case("error_size_conflict", "x + y", {"x": (D, ("n",)), "y": (D, ("n",))}, sizes={"n": 3}, run={"y": (D, (4,))}, error="InputShape")
case("error_size_unbound", "x * m", {"x": (D, (3,))}, sizes={"m": 2}, run={"m": None}, error="SizeBinding")
case("error_index_out_of_bounds", "x[i]", {"x": (D, (5,)), "i": (I64, (3,), "int:0:5")}, run={"i": (I64, (3,), "int:5:9")}, error="IndexOutOfBounds")
case("error_index_negative_out_of_bounds", "x[:, i]", {"x": (D, (2, 4)), "i": (I64, (2,), "int:0:4")}, run={"i": (I64, (2,), "int:-9:-5")}, error="IndexOutOfBounds")
case("error_slice_too_long_for_size", "y[3:]", {"y": (D, ("n",))}, sizes={"n": 5}, run={"y": (D, (2,))}, error="InvalidForSizes")


# ----------------------------------------------------------------------------------------------------
SPECIAL_FLOATS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5, 2.5, 1e30, -1e30, 3e9, -3e9, 300.7, -0.7,
                  1e-40, 65535.9]
SPECIAL_FLOAT64 = SPECIAL_FLOATS + [1.7976931348623157e308, -5e-324, 1e-310, 2.0**63, -2.0**63 - 4096.0, 2.0**64]


def special_values(dtype, shifted=False):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [info.min, info.max, 0, 1, -1 if dt.kind == "i" else 2, info.min + 1, info.max - 1]
    elif dt.kind == "b":
        vals = [True, False]
    elif dt.kind == "f":
        vals = SPECIAL_FLOAT64 if dt.itemsize == 8 else SPECIAL_FLOATS
    else:
        parts = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e30 if dt.itemsize == 8 else 1e20, 1e-30]
        vals = [complex(a, b) for a in parts for b in parts]
        rng = random.Random(7)
        rng.shuffle(vals)
    if shifted:
        vals = vals[3:] + vals[:3]
    return vals


def make_data(rng_np, dtype, shape, opts):
    shape = tuple(shape)
    if isinstance(opts, list):
        values = np.array([float(v) if isinstance(v, str) else v for v in opts], dtype=dtype)
        return np.resize(values, shape)
    if opts in ("special", "special_shifted"):
        values = np.array(special_values(dtype, opts == "special_shifted"), dtype=dtype)
        return np.resize(values, shape)
    opts = opts or ""
    ints = [o for o in opts.split() if o.startswith("int:")]
    if ints:
        lo, hi = (int(v) for v in ints[0].split(":")[1:])
        info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
        if info is not None:
            lo, hi = max(lo, int(info.min)), min(hi, int(info.max) + 1)
        return rng_np.integers(lo, hi, size=shape, dtype=np.int64 if dtype != "uint64" else np.uint64).astype(dtype)
    if dtype == "bool":
        return rng_np.random(shape) < 0.5
    if dtype.startswith("int") or dtype.startswith("uint"):
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -50), min(int(info.max), 50)
        return rng_np.integers(lo, hi + 1, size=shape).astype(dtype)
    lo, hi = (0.1, 2.0) if "pos" in opts else (-2.0, 2.0)
    if dtype.startswith("complex"):
        return (rng_np.uniform(lo, hi, shape) + 1j * rng_np.uniform(lo, hi, shape)).astype(dtype)
    return rng_np.uniform(lo, hi, shape).astype(dtype)


def concrete(shape, sizes):
    return tuple(sizes[d] if isinstance(d, str) else d for d in shape)


# --- Partial replacement: at(x)[items].set(v) is x with x[items] = v (JAX's spelling) ---------------------
case("set_rows", "at(x)[1:3, :].set(v)", {"x": (D, (5, 7)), "v": (D, (7,))})
case("set_every_other_column_scalar", "at(x)[:, ::2].set(0.5)", {"x": (D, (4, 7))})
case("set_negative_step", "at(x)[4::-2, 1].set(v)", {"x": (D, (6, 3)), "v": (D, (3,))})
case("set_negative_step_to_start", "at(x)[::-3].set(v)", {"x": (I64, (8,)), "v": (I64, (3,))})
case("set_float_into_int_truncates", "at(x)[2].set(y)", {"x": (I32, (4, 3)), "y": (D, (3,), "int:-50:50")})
case("set_new_axis_and_ellipsis", "at(x)[..., None, 1:4].set(v)", {"x": (F, (2, 3, 6)), "v": (F, (1, 3))})
case("set_symbolic_slice", "at(x)[1:-1].set(y)", {"x": (D, ("n",)), "y": (D, (1,))}, sizes={"n": 6})
case("set_empty_region", "at(x)[3:1].set(7.0)", {"x": (D, (5,))})
case("set_whole_array", "at(x)[...].set(v)", {"x": (Z, (3, 2)), "v": (Z, (2,))})
case("set_bool", "at(x)[::3].set(True)", {"x": (B, (7,))})
case("set_uint8_scalar", "at(x)[1:, -1].set(255)", {"x": (U8, (3, 4))})
case("set_chained", "at(at(x)[0].set(1.0))[:, 0].set(2.0)", {"x": (D, (3, 3))})
case("set_then_reduce", "np.sum(at(x)[1:3].set(v), axis=0)", {"x": (D, (5, 4)), "v": (D, (2, 4))})
case("set_output_named_like_input", {"x": "at(x)[0].set(y)", "y": "y * 2"}, {"x": (D, (3, 2)), "y": (D, (2,))})
case("set_value_from_itself", "at(x)[1:].set(x[:-1])", {"x": (D, (6,))})
case("set_value_with_leading_unit_axis", "at(x)[0].set(v)", {"x": (D, (3, 4)), "v": (D, (1, 4))})
case("set_mask_scalar", "at(x)[x > 0].set(0.0)", {"x": (D, (4, 5))})
case("set_mask_rows", "at(x)[m].set(v)", {"x": (D, (4, 3)), "m": (B, (4,)), "v": (D, (3,))})
case("set_mask_then_slice", "at(x)[m, :].set(7)", {"x": (I16, (3, 2)), "m": (B, (3,))})
case("set_mask_all_false", "at(x)[x > 10.0].set(-1.0)", {"x": (D, (5,))})
case("set_mask_symbolic", "at(x)[x > 0.25].set(-1.0)", {"x": (D, ("n", 3))}, sizes={"n": 4})
case("set_mask_float32_from_float64", "at(x)[m].set(v)", {"x": (F, (3, 2)), "m": (B, (3, 2)), "v": (D, ())})
# Found by the fuzzer: full_like kept +0.0 for -0.0; a constant cast to int8 in 32-bit indices.
case("full_like_negative_zero", "3 / np.full_like(x, -0.0)", {"x": (D, (2, 3))})
case("constant_cast_to_int8_symbolic", "np.full((n,), 255).astype(np.int8) + x", {"x": (I8, ("n",))}, sizes={"n": 5})

# --- Data-dependent lengths: boolean masks, nonzero and friends (counts) ----------------------------
case("mask_1d", "x[x > 0]", {"x": (D, (9,))})
case("mask_2d_whole", "x[x > 0]", {"x": (D, (4, 5))})
case("mask_rows", "x[m]", {"x": (D, (5, 3)), "m": (B, (5,))})
case("mask_columns", "x[:, m]", {"x": (I32, (3, 5)), "m": (B, (5,))})
case("mask_then_slice", "x[m, 1:]", {"x": (D, (5, 4)), "m": (B, (5,))})
case("mask_middle_axis", "x[:, m, :]", {"x": (F, (2, 4, 3)), "m": (B, (4,))})
case("mask_2d_over_3d", "x[m]", {"x": (D, (3, 4, 2)), "m": (B, (3, 4))})
case("mask_2d_trailing", "x[..., m]", {"x": (D, (2, 3, 4)), "m": (B, (3, 4))})
case("mask_with_int_array", "x[m, i]", {"x": (D, (5, 4)), "m": (B, (5,)), "i": (I64, (1,), "int:-4:4")})
case("mask_with_int", "x[m, 2]", {"x": (U16, (5, 4)), "m": (B, (5,))})
case("mask_noncontiguous_with_int", "x[m, :, -1]", {"x": (D, (4, 3, 2)), "m": (B, (4,))})
case("mask_all_false", "x[x > 10.0]", {"x": (D, (6,))})
case("mask_all_true", "x[x > -10.0]", {"x": (D, (2, 3))})
case("mask_empty_input", "x[x > 0]", {"x": (D, (0, 3))})
case("mask_symbolic", "x[x > 0]", {"x": (D, ("n", 3))}, sizes={"n": 5})
case("mask_symbolic_rows", "x[x[:, 0] > 0]", {"x": (D, ("n", 3))}, sizes={"n": 6})
case("mask_chained", "x[x > 0][x[x > 0] < 1.0]", {"x": (D, (12,))})
case("mask_count_named", "x[count_named(x > 0, 'mycount')] * 2", {"x": (D, (3, 4))})
case("mask_sum_of_empty_selection", {"s": "np.sum(x[x > 10.0])", "p": "np.prod(x[x > 10.0])"}, {"x": (D, (5,))})
case("mask_reductions", {"s": "np.sum(x[x > 0])", "m": "np.max(x[m], initial=-1.0)", "n": "np.mean(x[x < 0])"},
     {"x": (D, (4, 5)), "m": (B, (4, 5))})
case("mask_reduction_in_broadcast", "x - np.mean(x[x > 0])", {"x": (D, (3, 4))})
case("mask_arithmetic", "x[m] * 2 + x[m] ** 2", {"x": (D, (7,)), "m": (B, (7,))})
case("mask_einsum", "np.einsum('ij,j->i', x[m], v)", {"x": (D, (5, 3)), "m": (B, (5,)), "v": (D, (3,))})
case("mask_concatenate", "np.concatenate([x[x > 0], y])", {"x": (D, (6,)), "y": (D, (2,))})
case("mask_special_values", {"nan": "x[np.isnan(x)]", "zero": "x[x == 0]", "big": "x[np.abs(x) > 1e300]"},
     {"x": (D, (24,), "special")})
case("mask_int_extremes", "x[x < 0]", {"x": (I64, (9,), "special")})
for d in ALL:
    op = "!=" if d in (C, Z) else ">"
    case(f"mask_compare_{d}", f"x[x {op} y]", {"x": (d, (7,), "int:-2:3" if d[0] in "iu" else None),
                                                "y": (d, (7,), "int:-2:3" if d[0] in "iu" else None)})
case("nonzero_1d", "np.nonzero(x)[0]", {"x": (I32, (8,), "int:-1:2")})
case("nonzero_2d", {"r": "np.nonzero(x)[0]", "c": "np.nonzero(x)[1]"}, {"x": (I8, (4, 5), "int:-1:2")})
case("nonzero_as_index", "x[np.nonzero(x > 0)]", {"x": (D, (3, 4))})
case("nonzero_symbolic", "np.nonzero(x)[0]", {"x": (I64, ("n",), "int:-1:2")}, sizes={"n": 7})
case("flatnonzero", "np.flatnonzero(x)", {"x": (U8, (3, 4), "int:0:2")})
case("flatnonzero_empty", "np.flatnonzero(x)", {"x": (D, (0,))})
case("argwhere", "np.argwhere(x)", {"x": (B, (3, 4))})
case("argwhere_complex", "np.argwhere(x)", {"x": (Z, (5,), "special")})
case("count_nonzero", {"all": "np.count_nonzero(x)", "ax0": "np.count_nonzero(x, axis=0)",
                       "ax1": "np.count_nonzero(x, axis=1)"}, {"x": (I16, (4, 5), "int:-1:2")})
case("extract", "np.extract(x > 0, y)", {"x": (D, (3, 4)), "y": (I32, (3, 4))})
case("extract_shorter_condition", "np.extract(c, y)", {"c": (B, (5,)), "y": (D, (2, 4))})
case("compress_axis", "np.compress(c, x, axis=1)", {"x": (D, (3, 5)), "c": (B, (5,))})
case("compress_short_condition", "np.compress(c, x, axis=0)", {"x": (D, (5, 2)), "c": (B, (3,))})
case("compress_flat", "np.compress(c, x)", {"x": (D, (2, 3)), "c": (B, (4,))})
case("error_mask_wrong_shape", "x[m]", {"x": (D, (5,)), "m": (B, (4,))}, error="ShapeMismatch")
# numpy checks a mask axis by axis, and an axis of length 0 matches any length.
case("mask_with_an_empty_axis", {"a": "x[m]", "b": "x[:, e]"}, {"x": (D, (2, 3)), "m": (B, (2, 0)), "e": (B, (0,))})
case("error_compress_beyond_the_axis", "np.compress(c, x, axis=0)", {"x": (D, (3,)), "c": (B, (5,), [False, False, False, False, True])},
     error="IndexOutOfBounds")

# --- Scatters: at(x)[index arrays].set(v) and at(x)[...].add(v) (np.add.at) --------------------------
# uint64 against signed integers: numpy 2 compares exactly (float64, their promotion, rounds).
case("uint64_against_int64_compared_exactly", {"eq": "u == s", "lt": "s < u", "ge": "u >= s", "ne8": "u != b",
                                               "gt8": "b > u"},
     {"u": (U64, (6,), [2**53 + 1, 2**63, 2**64 - 1, 0, 2**63 - 1, 5]),
      "s": (I64, (6,), [2**53, -1, 2**63 - 1, 0, 2**63 - 1, -2**63]), "b": (I8, (6,), [-128, 1, -1, 0, 127, 5])})
case("scatter_set", "at(x)[i].set(v)", {"x": (D, (6,)), "i": (I64, (4,), "int:-6:6"), "v": (D, (4,))})
# A value of a fixed length assigned through a mask, whose count the data decides: it fits when it runs.
case("scatter_through_a_mask_a_value_of_its_count", {"set": "at(x)[m].set(v)", "add": "at(x)[:, c].add(w)"},
     {"x": (D, (4, 3)), "m": (B, (4,), [True, False, False, True]), "v": (D, (2, 3)), "c": (B, (3,), [False, True, True]),
      "w": (D, (2,))})
case("scatter_set_repeated_last_wins", "at(x)[i].set(v)", {"x": (D, (5,)), "i": (I64, (6,), [1, 3, 1, -4, 0, 1]), "v": (D, (6,))})
case("scatter_set_rows_scalar", "at(x)[i].set(0)", {"x": (I32, (5, 3)), "i": (I64, (3,), "int:0:5")})
case("scatter_set_two_arrays", "at(x)[i, j].set(v)", {"x": (D, (4, 5)), "i": (I64, (3,), "int:0:4"), "j": (I32, (3,), "int:-5:5"), "v": (D, (3,))})
case("scatter_set_with_slice", "at(x)[:, j].set(v)", {"x": (D, (3, 5)), "j": (I64, (2,), "int:0:5"), "v": (D, (2,))})
case("scatter_set_noncontiguous", "at(x)[i, :, j].set(0.5)", {"x": (F, (3, 4, 5)), "i": (I64, (2,), "int:0:3"), "j": (I64, (2,), "int:0:5")})
case("scatter_set_per_masked_position", "at(x)[x > 0].set(x[x > 0] * 2)", {"x": (D, (3, 4))})
case("scatter_set_mask_values_by_mask", "at(x)[m].set(v[m])", {"x": (D, (6,)), "m": (B, (6,)), "v": (D, (6,))})
case("scatter_set_casts", "at(x)[i].set(v)", {"x": (I16, (5,)), "i": (I64, (3,), "int:0:5"), "v": (D, (3,), "int:-40:40")})
case("scatter_set_symbolic", "at(x)[i].set(v)", {"x": (D, ("n",)), "i": (I64, (3,), "int:0:4"), "v": (D, (3,))}, sizes={"n": 4})
case("scatter_set_then_reduce", "np.sum(at(x)[i].set(0.0), axis=0)", {"x": (D, (4, 3)), "i": (I64, (2,), "int:0:4")})
case("scatter_output_named_like_input", {"x": "at(x)[i].add(1.0)", "i": "i * 2"}, {"x": (D, (4,)), "i": (I64, (5,), "int:0:4")})
case("add_at", "at(x)[i].add(v)", {"x": (D, (5,)), "i": (I64, (8,), "int:-5:5"), "v": (D, (8,))})
case("add_at_histogram", "at(np.zeros((4,), dtype=np.int64))[i].add(1)", {"i": (I64, (20,), "int:0:4")})
case("add_at_int8_wraps", "at(x)[i].add(v)", {"x": (I8, (3,)), "i": (I64, (4,), [0, 0, 0, 1]), "v": (I8, (4,), "int:100:127")})
case("add_at_float_into_int", "at(x)[i].add(-0.5)", {"x": (I64, (3,), [1, 1, 1]), "i": (I64, (3,), [0, 0, 2])})
case("add_at_float64_into_float32", "at(x)[i].add(v)", {"x": (F, (3,)), "i": (I64, (6,), "int:0:3"), "v": (D, (6,))})
case("add_at_bool", "at(x)[i].add(True)", {"x": (B, (4,), [False, True]), "i": (I64, (2,), [0, 0])})
case("add_at_basic_slice", "at(x)[1:3].add(v)", {"x": (D, (5,)), "v": (D, (2,))})
case("add_at_rows_and_slice", "at(x)[i, 1:].add(v)", {"x": (D, (4, 3)), "i": (I64, (5,), "int:0:4"), "v": (D, (5, 2))})
case("add_at_complex", "at(x)[i].add(v)", {"x": (Z, (3,)), "i": (I64, (4,), "int:0:3"), "v": (Z, (4,))})
case("add_at_mask", "at(x)[x > 0].add(1)", {"x": (I32, (3, 3))})
case("error_scatter_index_out_of_bounds", "at(x)[i].set(1.0)", {"x": (D, (5,)), "i": (I64, (3,), "int:0:5")},
     run={"i": (I64, (3,), "int:5:9")}, error="IndexOutOfBounds")
case("error_add_at_negative_out_of_bounds", "at(x)[i].add(1.0)", {"x": (D, (5,)), "i": (I64, (3,), "int:0:5")},
     run={"i": (I64, (3,), "int:-9:-5")}, error="IndexOutOfBounds")

# --- Functions and calls: f(...) calls a function traced from its body (Rust), a Python function (numpy)
F1 = {"f": (["a"], ["np.sin(a) * 2 + a"])}
F2 = {"f": (["a", "b"], ["a * b", "a - b"])}
case("call_one_result", "f(x) + 1", {"x": (D, (2, 3))}, functions=F1)
case("call_two_results", {"p": "f(x, y)[0]", "d": "f(x, y)[1]"}, {"x": (D, (4,)), "y": (D, (4,))}, functions=F2)
case("call_two_sites", "f(x) * f(y)", {"x": (D, (5,)), "y": (D, (5,))}, functions=F1)
case("call_nested", "g(x)", {"x": (D, (3,))}, functions={**F1, "g": (["a"], ["f(f(a)) * 3"])})
case("call_with_reduction", "f(x) - f(x * 2)", {"x": (D, (3, 4))}, functions={"f": (["a"], ["np.sum(a, axis=0)"])})
case("call_with_mask", "np.sum(f(x))", {"x": (D, (7,))}, functions={"f": (["a"], ["a[a > 0]"])})
case("call_with_scatter", "f(x, i)", {"x": (D, (5,)), "i": (I64, (6,), "int:-5:5")},
     functions={"f": (["a", "j"], ["at(a)[j].add(1.0)"])})
case("call_symbolic", "f(x, x)[0] + 2", {"x": (D, ("n", 3))}, sizes={"n": 4}, functions=F2)
case("call_int", "f(x)", {"x": (I32, (6,), "int:-20:20")}, functions={"f": (["a"], ["a // 3 + a % 3"])})
case("call_broadcast_inside", "f(x, y)", {"x": (F, (3, 1)), "y": (F, (4,))}, functions={"f": (["a", "b"], ["a + b"])})
case("error_call_index_out_of_bounds", "f(x, i)", {"x": (D, (5,)), "i": (I64, (2,), "int:0:5")},
     functions={"f": (["a", "j"], ["a[j]"])}, run={"i": (I64, (2,), "int:5:9")}, error="IndexOutOfBounds")


# --- User kernels: k(...) runs statements written in the kernel IR's expression language (Rust:
# pytato_core::user_kernel; numpy: run_kernel over index grids) -------------------------------------
case("kernel_elementwise", "k(x, y)", {"x": (D, (3, 4)), "y": (D, (3, 4))},
     functions={"k": (["a", "b"], ["t"], [("t", (3, 4), "a[_0, _1] * b[_0, _1] + 1.0")])})
case("kernel_matvec_symbolic", "k(m, v)", {"m": (D, ("n", "n")), "v": (D, ("n",))}, sizes={"n": 5},
     functions={"k": (["a", "x"], ["y"], [("y", ("n",), "sum(_r0, n, a[_0, _r0] * x[_r0])")])})
case("kernel_element_operator", {"du": "k(d, u)[0]", "flux": "k(d, u)[1] * 2"},
     {"d": (D, ("n", "n")), "u": (D, ("E", "n"))}, sizes={"E": 4, "n": 3},
     functions={"k": (["dm", "uu"], ["du", "flux"], [
         ("du", ("E", "n"), "sum(_r0, n, dm[_1, _r0] * uu[_0, _r0])"),
         ("flux", ("E",), "du[_0, n - 1] - du[(_0 + 1) % E, 0]")])})
case("kernel_float32_literals", "k(x)", {"x": (F, (6,))},
     functions={"k": (["a"], ["y"], [("y", (6,), "a[_0] * 2 + 0.5")])})
case("kernel_int_wraparound", "k(x)", {"x": (I32, ("n",), "int:-50:50")}, sizes={"n": 7},
     functions={"k": (["a"], ["y"], [("y", ("n",), "a[_0] // 3 + a[(_0 + 2) % n] % 4")])})
case("kernel_where_and_max", "k(x, m)", {"x": (D, ("n",)), "m": (D, ("n", "c"))}, sizes={"n": 5, "c": 3},
     functions={"k": (["a", "b"], ["y"], [("y", ("n",), "where(a[_0] > 0.0, amax(_r0, c, b[_0, _r0]), -a[_0])")])})
case("kernel_in_a_dag", "k(x * 2) + np.sum(k(x))", {"x": (D, ("n",))}, sizes={"n": 6},
     functions={"k": (["a"], ["y"], [("y", ("n",), "a[(_0 + 1) % n] - a[_0]")])})
case("kernel_two_sites", "k(x) * k(y)", {"x": (D, (5,)), "y": (D, (5,))},
     functions={"k": (["a"], ["y"], [("t", (5,), "sin(a[_0])"), ("y", (5,), "t[_0] * t[4 - _0]")])})
case("kernel_empty", "k(x)", {"x": (D, ("n",))}, sizes={"n": 0},
     functions={"k": (["a"], ["y"], [("y", ("n",), "a[_0] * 2.0")])})
case("kernel_size_one_reduction", "k(m)", {"m": (D, ("n", 1))}, sizes={"n": 3},
     functions={"k": (["a"], ["y"], [("y", ("n",), "sum(_r0, 1, a[_0, _r0]) + sum(_r1, 0, a[_0, _r1])")])})
case("error_kernel_reads_out_of_range", "k(x)", {"x": (D, ("n",))}, sizes={"n": 4},
     functions={"k": (["a"], ["y"], [("y", ("n",), "a[_0 + 1]")])}, error="IndexOutOfBounds")


# --- More Array API element-wise functions (isfinite, isinf, logical_xor, square, positive, trunc, sign)
for d in ALL:
    outs = {"finite": "np.isfinite(x)", "inf": "np.isinf(x)", "xor": "np.logical_xor(x, y)", "sq": "np.square(x)"}
    if d != B:
        outs["pos"] = "np.positive(x)"
    if d not in (B, C, Z):
        outs["sign"] = "np.sign(x)"
    if d not in (C, Z):
        outs["trunc"] = "np.trunc(x)"
    case(f"array_api_elementwise_{d}", outs,
         {"x": (d, (16,), "special" if d in INEXACT else None), "y": (d, (16,), "special" if d in INEXACT else None)})
case("error_positive_bool", "np.positive(x)", {"x": (B, (3,))}, error="UnsupportedDType")
case("error_sign_bool", "np.sign(x)", {"x": (B, (3,))}, error="UnsupportedDType")
case("error_trunc_complex", "np.trunc(x)", {"x": (Z, (3,))}, error="UnsupportedDType")
# flip, matrix_transpose, clip (bounds absent, crossed, NaN, weak scalars, arrays, symbolic lengths).
case("flip_axes", {"all": "np.flip(x)", "last": "np.flip(x, axis=-1)", "two": "np.flip(x, axis=(0, 2))"},
     {"x": (I32, (2, 3, 4))})
case("flip_symbolic_and_empty", {"f": "np.flip(x, axis=0)", "e": "np.flip(y)"},
     {"x": (D, ("n", 2)), "y": (F, (0, 3))}, sizes={"n": 5})
case("error_flip_repeated_axis", "np.flip(x, axis=(1, -1))", {"x": (D, (2, 3))}, error="InvalidArgument")
case("matrix_transpose", {"t": "np.matrix_transpose(x)", "m": "np.matrix_transpose(y)"},
     {"x": (Z, (2, 3, 4)), "y": (B, (3, 2))})
for d in [I8, U16, I64, F, D]:
    case(f"clip_{d}", {"both": "np.clip(x, 1, 5)", "low": "np.clip(x, min=2)", "high": "np.clip(x, max=3)",
                       "crossed": "np.clip(x, 4, 2)", "arrays": "np.clip(x, y, z)"},
         {"x": (d, (10,), "int:0:9" if d[0] in "iu" else None), "y": (d, (10,), "int:0:4" if d[0] in "iu" else None),
          "z": (d, (10,), "int:4:9" if d[0] in "iu" else None)})
case("clip_promotes_all_three", "np.clip(x, y, z)", {"x": (I8, (6,)), "y": (U16, (6,), "int:0:3"), "z": (F, (6,))})
case("clip_special", {"c": "np.clip(x, -1.0, 1.0)", "nan_bound": "np.clip(x, np.nan, 1.0)"},
     {"x": (D, (12,), "special")})
# Ties decide the sign of zero: numpy's loop keeps x where both bounds are constant, else the bound.
for d in [F, D]:
    case(f"clip_zero_ties_{d}", {"scalars": "np.clip(x, 0.0, 1.0)", "signed": "np.clip(x, -1.0, -0.0)",
                                 "arrays": "np.clip(x, y, 1.0)"},
         {"x": (d, (8,), [-0.0, 0.0, 0.5, -0.0]), "y": (d, (8,), [0.0, -0.0])})
# vecdot (conjugates its first argument, keeps the product's dtype), diff (bools by !=), repeat.
for d in [I8, I64, F, D, Z]:
    case(f"vecdot_{d}", {"last": "np.vecdot(a, b)", "first": "np.vecdot(a, c, axis=0)"},
         {"a": (d, (4, 3)), "b": (d, (3,)), "c": (d, (4, 1))})
for d in [B, U8, I32, D, C]:
    case(f"diff_{d}", {"one": "np.diff(x)", "two": "np.diff(x, n=2, axis=0)", "zero": "np.diff(x, n=0)",
                       "past": "np.diff(x, n=7, axis=0)"}, {"x": (d, (6, 4))})
case("diff_symbolic_and_special", {"s": "np.diff(x)", "e": "np.diff(y, axis=0)"},
     {"x": (D, (12,), "special"), "y": (F, ("n", 2))}, sizes={"n": 1})
case("repeat", {"flat": "np.repeat(x, 2)", "ax0": "np.repeat(x, 3, axis=0)", "ax1": "np.repeat(x, 2, axis=-1)",
                "none": "np.repeat(x, 0, axis=1)", "sym": "np.repeat(y, 2, axis=0)"},
     {"x": (I16, (2, 3)), "y": (D, ("n",))}, sizes={"n": 4})

# --- Array API element-wise functions with code of their own on every backend (numpy 2 semantics) ---
HYPERBOLIC = ["arcsinh", "arccosh", "arctanh", "expm1", "log1p", "log2", "rint"]
for d in INEXACT:
    outs = {f: f"np.{f}(x)" for f in HYPERBOLIC}
    outs["acosh_domain"] = "np.arccosh(y + 1)"
    outs["atanh_domain"] = "np.arctanh(y * 0.4)"
    outs["tiny"] = "np.expm1(y * 1e-9) + np.log1p(y * 1e-9)"
    case(f"array_api_math_{d}", outs, {"x": (d, (3, 4)), "y": (d, (4,), "pos")})
    case(f"array_api_math_special_{d}", {f: f"np.{f}(x)" for f in HYPERBOLIC},
         {"x": (d, (81,) if d in (C, Z) else (22,), "special")})
for d in [F, D]:
    outs = {"hypot": "np.hypot(x, y)", "logaddexp": "np.logaddexp(x, y)", "copysign": "np.copysign(x, y)",
            "nextafter": "np.nextafter(x, y)", "signbit": "np.signbit(x)", "round": "np.round(x)"}
    case(f"array_api_binary_math_{d}", outs, {"x": (d, (3, 4)), "y": (d, (4,))})
    case(f"array_api_binary_math_special_{d}", outs, {"x": (d, (22,), "special"), "y": (d, (22,), "special_shifted")})
    case(f"nextafter_edges_{d}", {"self": "np.nextafter(x, x)", "zero": "np.nextafter(x, 0.0)",
                                  "down": "np.nextafter(x * 0, -1.0)", "up": "np.nextafter(-(x * 0), 1.0)",
                                  "away": "np.nextafter(x, np.inf)", "moved": "np.nextafter(x, 0.0) != x",
                                  "step": "np.nextafter(x, np.inf) - x"}, {"x": (d, (22,), "special")})
    case(f"round_halfway_{d}", {"round": "np.round(x)", "rint": "np.rint(x)", "half": "np.round(x * 0.5)"},
         {"x": (d, (12,), [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 4503599627370495.5, 1e300,
                           "-0.0", "inf", "nan"])})
case("hypot_logaddexp_int_promotion", {"h": "np.hypot(x, y)", "l": "np.logaddexp(y, 2)", "c": "np.copysign(3, y)"},
     {"x": (I8, (5,)), "y": (U16, (5,))})
case("signbit_ints_bools", {"i": "np.signbit(x)", "u": "np.signbit(y)", "b": "np.signbit(z)"},
     {"x": (I8, (6,), "special"), "y": (U16, (6,)), "z": (B, (6,))})
case("round_keeps_int_dtype", {"r": "np.round(x)", "rint": "np.rint(x)"}, {"x": (I32, (5,))})
case("round_complex", {"r": "np.round(x * 4)", "rint": "np.rint(x * 4)"}, {"x": (Z, (8,))})
for d in [B, I8, U8, I32, I64, U64, F, D, Z]:
    case(f"reciprocal_{d}", {"r": "np.reciprocal(x)", "n": "np.negative(x)" if d != B else "np.logical_not(x)"},
         {"x": (d, (8,), "int:-3:4" if d[0] in "iu" else ("pos" if d in INEXACT else None))})
case("reciprocal_special", "np.reciprocal(x)", {"x": (D, (22,), "special")})
for d in [I8, I16, I32, I64, U8, U16, U32, U64]:
    bits = np.dtype(d).itemsize * 8
    case(f"shifts_{d}", {"l": "np.left_shift(x, s)", "r": "np.right_shift(x, s)", "l1": "np.left_shift(x, 1)",
                         "r1": "np.right_shift(x, 1)"},
         {"x": (d, (7, 1), "special"), "s": (d, (bits + 6,), f"int:{-3 if d[0] == 'i' else 0}:{bits + 6}")})
case("shifts_bool_and_mixed", {"b": "np.left_shift(x, y)", "m": "np.right_shift(z, w)", "k": "np.left_shift(z, 3)"},
     {"x": (B, (4,)), "y": (B, (4,)), "z": (I16, (4,)), "w": (U8, (4,), "int:0:20")})
case("error_shift_float", "np.left_shift(x, 1)", {"x": (D, (3,))}, error="UnsupportedDType")
case("error_hypot_complex", "np.hypot(x, x)", {"x": (Z, (3,))}, error="UnsupportedDType")
case("error_signbit_complex", "np.signbit(x)", {"x": (C, (3,))}, error="UnsupportedDType")
case("array_api_constants", {"e": "x * np.e", "pi": "x + np.pi", "inf": "np.minimum(x, np.inf)", "nan": "np.maximum(x, np.nan)"},
     {"x": (D, (4,))})

# --- Statistics: var/std (ddof, correction), dtype= of sum/prod/mean, argmax/argmin (ties, NaN) ----
for d in [B, I16, U32, F, D, C, Z]:
    case(f"var_std_{d}", {"var": "np.var(x)", "std0": "np.std(x, axis=0)", "var1": "np.var(x, axis=1, ddof=1)",
                          "keep": "np.std(x, axis=(0, 2), keepdims=True, correction=1.5)"}, {"x": (d, (4, 3, 5))})
case("var_special_small_and_empty", {"nan": "np.var(x)", "inf": "np.std(x[1:3])", "ddof_big": "np.var(y, ddof=5)",
                                     "single": "np.var(y[:1], ddof=1)", "empty": "np.var(z, axis=0)",
                                     "sym": "np.std(w, axis=0, ddof=1)"},
     {"x": (D, (22,), "special"), "y": (F, (4,)), "z": (D, (0, 3)), "w": (D, ("n", 2))}, sizes={"n": 5})
case("reduction_dtype_argument", {"sum8": "np.sum(x, dtype=np.int8)", "prodf": "np.prod(x, axis=0, dtype=np.float32)",
                                  "mean32": "np.mean(x, dtype=np.float32)", "sumc": "np.sum(y, dtype=np.complex128)",
                                  "var32": "np.var(x, axis=1, dtype=np.float32)"},
     {"x": (I32, (3, 50), "int:0:100"), "y": (F, (6,))})
for d in [B, I8, U64, F, D]:
    case(f"argmax_argmin_{d}", {"flat": "np.argmax(x)", "ax0": "np.argmax(x, axis=0)", "min1": "np.argmin(x, axis=-1)",
                                "keep": "np.argmin(x, axis=1, keepdims=True)", "flatkeep": "np.argmax(x, keepdims=True)"},
         {"x": (d, (4, 6), "int:0:3" if d[0] in "iu" else None)})
case("argmax_argmin_nan_ties_zeros", {"max": "np.argmax(x)", "min": "np.argmin(x)", "zmax": "np.argmax(z)",
                                      "zmin": "np.argmin(z)", "inf": "np.argmin(x[4:])", "sym": "np.argmax(w, axis=0)"},
     {"x": (D, (8,), [1.0, "nan", 3.0, "nan", "-inf", "inf", 3.0, -1.0]), "z": (F, (4,), [0.0, "-0.0", 0.0, "-0.0"]),
      "w": (I32, ("n", 3))}, sizes={"n": 4})
case("error_argmax_empty", "np.argmax(x)", {"x": (D, (0,))}, error="InvalidArgument")
case("error_argmin_empty_axis", "np.argmin(x, axis=1)", {"x": (D, (3, 0))}, error="InvalidArgument")

# --- Manipulation and creation: take, take_along_axis, tile, broadcast_arrays, unstack, meshgrid,
# tril/triu, empty, asarray, roll over several axes --------------------------------------------------
case("take", {"ax1": "np.take(x, i, axis=1)", "flat": "np.take(x, i)", "neg": "np.take(x, j, axis=0)",
              "scalar_index": "np.take(x, k, axis=-1)"},
     {"x": (D, (3, 5)), "i": (I64, (2, 2), "int:0:5"), "j": (I32, (4,), "int:-3:3"), "k": (I16, (), "int:-5:5")})
case("error_take_out_of_range", "np.take(x, i, axis=0)", {"x": (D, (3, 2)), "i": (I64, (2,), "int:3:5")},
     error="IndexOutOfBounds")
case("error_take_float_indices", "np.take(x, i)", {"x": (D, (3,)), "i": (D, (2,))}, error="UnsupportedDType")
case("take_along_axis", {"a1": "np.take_along_axis(x, i, axis=1)", "a0": "np.take_along_axis(x, j, axis=0)",
                         "bc": "np.take_along_axis(x, k, axis=1)",
                         "argmax": "np.take_along_axis(x, np.argmax(x, axis=1, keepdims=True), axis=1)"},
     {"x": (F, (3, 5)), "i": (I64, (3, 4), "int:-5:5"), "j": (I64, (2, 5), "int:0:3"), "k": (I64, (1, 2), "int:0:5")})
case("tile", {"one": "np.tile(x, 2)", "two": "np.tile(x, (2, 3))", "more": "np.tile(x, (2, 1, 2))",
              "zero": "np.tile(x, (0, 2))", "sym": "np.tile(y, 3)"}, {"x": (I16, (2, 3)), "y": (D, ("n",))}, sizes={"n": 4})
case("broadcast_arrays", {"a": "np.broadcast_arrays(x, y, z)[0]", "b": "np.broadcast_arrays(x, y, z)[1]",
                          "c": "np.broadcast_arrays(x, y, z)[2]"}, {"x": (D, (3, 1)), "y": (I8, (4,)), "z": (B, ())})
case("unstack", {"a": "np.unstack(x)[1]", "b": "np.unstack(x, axis=-1)[2]"}, {"x": (Z, (2, 3))})
case("meshgrid", {"xy0": "np.meshgrid(x, y)[0]", "xy1": "np.meshgrid(x, y)[1]",
                  "ij1": "np.meshgrid(x, y, z, indexing='ij')[1]", "xy3": "np.meshgrid(x, y, z)[2]",
                  "single": "np.meshgrid(x)[0]"}, {"x": (D, (3,)), "y": (I32, (4,)), "z": (F, (2,))})
for d in [B, I32, D, Z]:
    case(f"tril_triu_{d}", {"l": "np.tril(x)", "u": "np.triu(x)", "lk": "np.tril(x, k=-1)", "uk": "np.triu(x, 2)",
                            "batch": "np.triu(y, k=-1)"}, {"x": (d, (4, 5)), "y": (d, (2, 3, 3))})
case("tril_symbolic", "np.tril(x, 1)", {"x": (D, ("n", "m"))}, sizes={"n": 3, "m": 5})
case("tril_triu_of_a_vector", {"l": "np.tril(x, -1)", "u": "np.triu(x)"}, {"x": (I64, (4,))})
case("empty_and_asarray", {"e": "np.ones_like(np.empty((2, 3), dtype=np.int32))", "el": "np.full_like(np.empty_like(x), 7)",
                           "a": "np.asarray(x)", "ad": "np.asarray(x, dtype=np.float32)"}, {"x": (I16, (4,))})
case("roll_axes", {"two": "np.roll(x, (1, -2), axis=(0, 1))", "same": "np.roll(x, (1, 2), axis=(1, 1))",
                   "bc": "np.roll(x, 1, axis=(0, 1))"}, {"x": (I32, (3, 4))})

# --- Data type functions, used as numpy code uses them: to pick dtypes, bounds and branches -------
case("array_api_dtype_functions", {
    "result_type": "x.astype(np.result_type(x, y))",
    "result_type_dtypes": "y.astype(np.result_type(np.int8, np.uint16, np.float32))",
    "can_cast": "np.where(np.can_cast(x.dtype, np.float64), x, -x)",
    "cannot_cast": "np.where(np.can_cast(np.uint64, x.dtype), x, -x)",
    "finfo": "np.minimum(y, np.finfo(np.float32).max) + np.finfo(y.dtype).eps",
    "finfo_small": "np.full_like(y, np.finfo(np.complex128).smallest_normal)",
    "iinfo": "np.full_like(x, np.iinfo(x.dtype).max) - np.iinfo(np.int8).min",
    "isdtype": "np.where(np.isdtype(x.dtype, 'integral'), x, 0) + np.isdtype(y.dtype, 'complex floating')"},
    {"x": (I16, (4,)), "y": (F, (4,))})

# --- searchsorted (NaN last, sides, sorter), complex sign, pad modes, split, diff prepend/append ----
for d in [I8, U32, F, D]:
    case(f"searchsorted_{d}", {"left": "np.searchsorted(a, v)", "right": "np.searchsorted(a, v, side='right')",
                               "sorter": "np.searchsorted(b, v, sorter=s)"},
         {"a": (d, (7,), [-3, -1, -1, 0, 2, 2, 5]), "b": (d, (5,), [5, 2, 0, -3, 2]), "s": (I64, (5,), [3, 2, 1, 4, 0]),
          "v": (d, (3, 4), [-4, -3, -1, 0, 1, 2, 5, 6, 2, -1, 3, 7])} if d != U32 else
         {"a": (d, (7,), [1, 3, 3, 4, 6, 6, 9]), "b": (d, (5,), [9, 6, 4, 1, 6]), "s": (I64, (5,), [3, 2, 1, 4, 0]),
          "v": (d, (3, 4), [0, 1, 3, 4, 5, 6, 9, 10, 6, 3, 7, 11])})
case("searchsorted_nan_inf_empty", {"left": "np.searchsorted(a, v)", "right": "np.searchsorted(a, v, side='right')",
                                    "empty": "np.searchsorted(e, v)", "mixed": "np.searchsorted(a, w)"},
     {"a": (D, (6,), ["-inf", -1.0, "-0.0", 0.0, "inf", "nan"]), "v": (D, (6,), ["nan", "inf", 0.0, "-0.0", -2.0, "-inf"]),
      "e": (D, (0,)), "w": (I32, (3,), [-1, 0, 5])})
for d in [C, Z]:
    case(f"searchsorted_complex_{d}", {"left": "np.searchsorted(np.sort(a), v)",
                                      "right": "np.searchsorted(np.sort(a), v, side='right')"},
         {"a": (d, (45,), "special"), "v": (d, (60,), "special_shifted")})
for d in [C, Z]:
    case(f"sign_complex_{d}", "np.sign(x)", {"x": (d, (81,), "special")})
for mode in ["edge", "reflect", "symmetric", "wrap"]:
    case(f"pad_{mode}", {"wide": f"np.pad(x, ((2, 5),), mode='{mode}')", "two": f"np.pad(y, ((1, 2), (3, 0)), mode='{mode}')",
                         "one": f"np.pad(z, ((2, 3),), mode='{mode}')", "sym": f"np.pad(w, ((1, 1),), mode='{mode}')"},
         {"x": (I32, (3,)), "y": (D, (2, 3)), "z": (F, (1,)), "w": (D, ("n",))}, sizes={"n": 4})
case("error_pad_edge_empty", "np.pad(x, ((1, 1),), mode='edge')", {"x": (D, (0,))}, error="InvalidArgument")
case("split", {"sec": "np.split(x, 3)[1]", "idx": "np.split(x, (1, 4), axis=1)[1]", "empty": "np.split(x, (4, 2), axis=1)[1]",
               "last": "np.split(x, (1, 4), axis=1)[2]"}, {"x": (I16, (6, 5))})
case("error_split_unequal", "np.split(x, 4)[0]", {"x": (D, (6,))}, error="InvalidArgument")
case("diff_prepend_append", {"pre": "np.diff(x, prepend=0)", "app": "np.diff(x, axis=0, append=y)",
                             "both": "np.diff(x, n=2, prepend=1.5, append=z)"},
     {"x": (I32, (3, 4)), "y": (I8, (2, 4)), "z": (D, ())})

# --- Scans: cumulative_sum/prod (axis, dtype=, include_initial), numpy's cumsum/cumprod ------------
for d in [B, I8, U16, I64, F, D, Z]:
    case(f"cumulative_{d}", {"sum1": "np.cumulative_sum(x, axis=1)", "sum0": "np.cumulative_sum(x, axis=0, include_initial=True)",
                             "prod": "np.cumulative_prod(x, axis=-1)", "flat": "np.cumsum(x)", "prod0": "np.cumprod(x, axis=0)"},
         {"x": (d, (5, 37), "int:-3:4" if d[0] in "iu" else None)})
case("cumulative_special_and_small", {"nan": "np.cumulative_sum(x)", "inf_prod": "np.cumulative_prod(x)",
                                      "one": "np.cumulative_sum(y, include_initial=True)", "empty": "np.cumulative_sum(e, axis=0)",
                                      "empty_initial": "np.cumulative_prod(e, axis=0, include_initial=True)",
                                      "dtype": "np.cumulative_sum(w, dtype=np.int8)", "wrap": "np.cumulative_prod(w, dtype=np.int16)"},
     {"x": (D, (22,), "special"), "y": (F, (1,)), "e": (I32, (0, 3)), "w": (I64, (70,), "int:1:9")})
case("error_cumulative_sum_needs_axis", "np.cumulative_sum(x)", {"x": (D, (2, 3))}, error="InvalidArgument")

# --- Sorting: sort/argsort (stable, NaN last, descending, axis=None), the unique_* set functions ---
# numpy has no `descending`: the oracle is the Array API's definition, a stable sort of the reversed
# axis reversed back (equal elements keep their order, NaN first).
for d in ALL:
    case(f"sort_{d}", {"last": "np.sort(x, stable=True)", "first": "np.sort(x, axis=0, stable=True)",
                       "flat": "np.sort(x, axis=None, stable=True)", "arg": "np.argsort(x, stable=True)",
                       "arg0": "np.argsort(x, axis=0, stable=True)", "desc": "np.sort(x, descending=True)",
                       "argdesc": "np.argsort(x, axis=0, descending=True)"},
         {"x": (d, (5, 6), "int:-3:4" if d != B else None)},
         numpy={"desc": "np.flip(np.sort(np.flip(x, -1), -1, stable=True), -1)",
                "argdesc": "4 - np.flip(np.argsort(np.flip(x, 0), axis=0, stable=True), 0)"})
for d in [F, D, C, Z]:
    n = 81 if d in [C, Z] else len(SPECIAL_FLOAT64 if d == D else SPECIAL_FLOATS)
    case(f"sort_special_{d}", {"values": "np.sort(x, stable=True)", "order": "np.argsort(x, stable=True)",
                               "desc": "np.argsort(x, descending=True)", "desc_values": "np.sort(x, descending=True)"},
         {"x": (d, (n,), "special")},
         numpy={"desc": f"{n - 1} - np.flip(np.argsort(np.flip(x), stable=True))",
                "desc_values": "np.flip(np.sort(np.flip(x), stable=True))"})
case("sort_signed_zeros_ties", {"order": "np.argsort(x, stable=True)", "desc": "np.argsort(x, descending=True)",
                                "big": "np.argsort(y, stable=True)"},
     {"x": (D, (7,), ["0.0", "-0.0", "nan", "0.0", "-0.0", "nan", "-0.0"]), "y": (I8, (3000,), "int:-2:2")},
     numpy={"desc": "6 - np.flip(np.argsort(np.flip(x), stable=True))"})
case("sort_sizes", {"empty": "np.sort(e)", "empty0": "np.argsort(e, axis=0)", "one": "np.argsort(o)",
                    "scalar": "np.sort(s, axis=None)", "sym": "np.argsort(v, stable=True)",
                    "sym_sorted": "np.sort(v, stable=True)[n - 1]", "mid": "np.argsort(m, axis=1, stable=True)"},
     {"e": (F, (3, 0)), "o": (I32, (1,)), "s": (D, ()), "v": (D, ("n",), "int:0:3"), "m": (U8, (2, 3, 4), "int:0:3")},
     sizes={"n": 9})
case("sort_feeds_arithmetic", {"median": "np.sort(x, axis=0, stable=True)[2] * 2 - np.min(x, axis=0)",
                                "rank": "np.argsort(np.argsort(x, stable=True), stable=True)",
                                "x": "np.take_along_axis(x, np.argsort(x, stable=True), axis=1)"},
     {"x": (D, (5, 4))})
for d in [I8, I64, U64, B]:
    exprs = {"sorted": "np.sort(x, stable=True)", "order": "np.argsort(x, stable=True)",
             "desc": "np.argsort(x, descending=True)", "unique": "np.unique_values(x)", "counts": "np.unique_counts(x)[1]",
             "running": "np.cumsum(x)", "where": "np.searchsorted(np.sort(x), x)"}
    oracle = dict(desc="13 - np.flip(np.argsort(np.flip(x), stable=True))",
                  unique="np.unique(x, equal_nan=False)", counts="np.unique(x, equal_nan=False, return_counts=True)[1]")
    case(f"sort_extremes_{d}", exprs, {"x": (d, (14,), "special")}, numpy=oracle)
case("error_sort_axis", "np.sort(x, axis=2)", {"x": (D, (2, 3))}, error="AxisOutOfRange")
# numpy 2.4's unique_values/unique_counts may list values unsorted (a hash table; the Array API leaves
# the order unspecified): the oracle is `np.unique` (sorted, NaNs distinct with equal_nan=False).
def unique_oracle(exprs):
    forms = {"unique_values({})": "np.unique({}, equal_nan=False)",
             "unique_counts({})[1]": "np.unique({}, equal_nan=False, return_counts=True)[1]",
             "unique_inverse({})[1]": "np.unique({0}, equal_nan=False, return_inverse=True)[1].reshape(np.shape({0}))",
             "unique_all({})[1]": "np.unique({}, equal_nan=False, return_index=True)[1]",
             "unique_all({})[3]": "np.unique({}, equal_nan=False, return_counts=True)[1]"}
    oracle = {}
    for name, e in exprs.items():
        for form, replacement in forms.items():
            for var in "xzeosvw":
                e = e.replace("np." + form.format(var), replacement.format(var))
        oracle[name] = e
    return oracle


for d in [B, I8, U64, I64, F, D, Z]:
    exprs = {"values": "np.unique_values(x)", "counts": "np.unique_counts(x)[1]", "inverse": "np.unique_inverse(x)[1]",
             "first": "np.unique_all(x)[1]", "all_counts": "np.unique_all(x)[3]"}
    case(f"unique_{d}", exprs, {"x": (d, (4, 5), "int:-3:4" if d != B else None)}, numpy=unique_oracle(exprs))
exprs = {"values": "np.unique_values(x)", "counts": "np.unique_counts(x)[1]", "inverse": "np.unique_inverse(x)[1]",
         "first": "np.unique_all(x)[1]", "cvalues": "np.unique_values(z)", "ccounts": "np.unique_counts(z)[1]",
         "cinverse": "np.unique_inverse(z)[1]"}
case("unique_special_values", exprs,
     {"x": (D, (12,), ["nan", "1.0", "-0.0", "inf", "nan", "0.0", "1.0", "-inf", "-0.0", "inf", "2.5", "nan"]),
      "z": (Z, (40,), "special")}, numpy=unique_oracle(exprs))
exprs = {"empty": "np.unique_values(e)", "empty_counts": "np.unique_counts(e)[1]", "empty_inverse": "np.unique_inverse(e)[1]",
         "one": "np.unique_all(o)[3]", "scalar": "np.unique_inverse(s)[1]", "sym": "np.unique_counts(v)[1]",
         "sum": "np.sum(np.unique_values(v)) + np.unique_counts(w)[1]"}
case("unique_sizes", exprs,
     {"e": (I32, (0, 3)), "o": (F, (1,)), "s": (I16, ()), "v": (I64, ("n",), "int:0:4"), "w": (U8, (6,), [7, 7, 7, 7, 7, 7])},
     sizes={"n": 11}, numpy=unique_oracle(exprs))
exprs = {"inverse": "np.unique_inverse(v)[1]", "first": "np.unique_all(v)[1]", "scan": "np.cumulative_sum(v, axis=1, include_initial=True)",
         "prod": "np.cumulative_prod(w)"}
case("unique_inverse_and_scans_symbolic", exprs, {"v": (I32, ("n", 3), "int:0:3"), "w": (D, ("m",))}, sizes={"n": 5, "m": 40},
     numpy=unique_oracle(exprs))

# --- Complex max/min/argmax/argmin: numpy's order (real part, then imaginary; first NaN wins) ------
TIES = [complex(1, 2), complex(1, -3), complex(-2, 5), complex(1, 2), complex(0, 0), complex(-2, 7), complex(-0.0, 0),
        complex(1, -3), complex(-2, 7), complex(3, -1), complex(0, -0.0), complex(3, -1)]
for d in [C, Z]:
    case(f"complex_extrema_{d}", {"max": "np.max(x)", "min0": "np.min(x, axis=0)", "max1": "np.max(x, axis=1, keepdims=True)",
                                  "argmax0": "np.argmax(x, axis=0)", "argmin": "np.argmin(x)", "argmax1": "np.argmax(x, axis=-1, keepdims=True)",
                                  "max02": "np.max(y, axis=(0, 2))", "min_all": "np.min(y)"},
         {"x": (d, (4, 6), TIES), "y": (d, (2, 3, 2), TIES[::-1])})
    case(f"complex_extrema_nan_{d}", {"max": "np.max(x)", "min": "np.min(x)", "argmax0": "np.argmax(x, axis=0)",
                                      "argmin1": "np.argmin(x, axis=1)", "max1": "np.max(x, axis=1)", "min0": "np.min(x, axis=0)"},
         {"x": (d, (9, 9), "special")})
case("complex_extrema_initial", {"max": "np.max(x, initial=0)", "min1": "np.min(y, axis=1, initial=1+1j)",
                                  "max_empty": "np.max(e, axis=0, initial=2.5)", "min_keep": "np.min(y, axis=0, keepdims=True, initial=-1)"},
     {"x": (Z, (3,)), "y": (Z, (3, 4), "special"), "e": (Z, (0, 2))})
case("error_complex_max_empty", "np.max(x, axis=0)", {"x": (Z, (0, 2))}, error="InvalidArgument")

# --- The Array API's spellings, which numpy 2 has too --------------------------------------------
case("array_api_spellings", {"trig": "np.acos(x) + np.asin(x) + np.atan(x) + np.atan2(x, y)",
                             "hyp": "np.asinh(y) + np.acosh(y + 2) + np.atanh(x * 0.5)",
                             "bits": "np.bitwise_left_shift(i, 2) ^ np.bitwise_right_shift(i, 1) ^ np.bitwise_invert(i)",
                             "pow": "np.pow(y, 3)", "concat": "np.concat((x, y), axis=0)",
                             "perm": "np.permute_dims(z, (2, 0, 1))"},
     {"x": (D, (5,), [-0.9, -0.5, 0.0, 0.3, 0.99]), "y": (D, (5,)), "i": (I32, (5,)), "z": (F, (2, 3, 4))})

# --- round(decimals): numpy's rint(x * 10**d) / 10**d, integers through float64 ----------------------
case("round_decimals", {"two": "np.round(x, 2)", "neg": "np.round(x, decimals=-2)", "f32": "np.round(y, 3)",
                        "ints": "np.round(i, -1)", "ints_pos": "np.round(i, 2)", "complex": "np.round(z, 1)",
                        "huge": "np.round(x, 310)", "big": "np.round(x, 12)", "overflow": "np.round(w, 10)"},
     {"x": (D, (8,), [2.675, 1.005, -0.125, 0.285, 1234.5678, -1250.0, 1350.0, "nan"]), "y": (F, (5,), [2.675, -0.0625, 1.5, 3.14159, "inf"]),
      "i": (I8, (6,), [15, 25, -35, 127, -128, 4]), "z": (Z, (3,), [1.25, 2.35, -0.05]), "w": (D, (2,), [1e300, -1e300])})

# --- float16: stored as float16, computed in float32 and rounded after each operation (numpy's loops) ---------
H = "float16"
case("float16_add_broadcast", "x + y", {"x": (H, (3, 4)), "y": (H, (4,))})
case("float16_arith_chain", {"a": "2 * x - x * 3", "b": "x * 0.1 + 1", "c": "(x - y) * (x + y)", "d": "-x"},
     {"x": (H, (6,)), "y": (H, (6,))})
case("float16_divide_power", {"q": "x / y", "p": "x ** y", "fd": "x // y", "rem": "x % y"},
     {"x": (H, (8,), "pos"), "y": (H, (8,), "pos")})
case("float16_math", {f: f"np.{f}(x)" for f in ["sqrt", "exp", "log", "log10", "log2", "log1p", "expm1", "sin", "cos",
                                                 "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "floor", "ceil",
                                                 "rint", "trunc", "abs", "sign", "square", "reciprocal"]},
     {"x": (H, (2, 5), "pos")})
case("float16_math_of_small_ints", {"i8": "np.sqrt(x)", "u8": "np.exp(y / 64)", "b": "np.cos(z)", "half": "x / 2",
                                   "mixed": "np.arctan2(x, y)", "hyp": "np.hypot(y, 3)"},
     {"x": (I8, (5,), "int:0:120"), "y": (U8, (5,)), "z": (B, (5,))})
case("float16_promotion", {"i16": "x + w", "f32": "x * v", "c64": "x + u", "u8": "x - y", "weak_int": "x + 3"},
     {"x": (H, (4,)), "w": (I16, (4,)), "v": (F, (4,)), "u": (C, (4,)), "y": (U8, (4,))})
case("float16_overflow_and_underflow", {"big": "x * 300", "tiny": "x / 60000", "sq": "x * x", "exp": "np.exp(x)"},
     {"x": (H, (6,), [1.0, 250.0, -300.0, 65504.0, 1e-4, -2.0])})
case("float16_ieee_special", {"sub": "x - x", "mul0": "x * 0", "div0": "np.divide(x, 0.0)", "ge_self": "x >= x",
                              "ne_self": "x != x", "max0": "np.maximum(x, 0.0)", "min0": "np.minimum(0.0, x)",
                              "isnan": "np.isnan(x)", "isinf": "np.isinf(x)", "isfinite": "np.isfinite(x)",
                              "signbit": "np.signbit(x)", "copysign": "np.copysign(1.0, x)", "neg": "-x"},
     {"x": (H, (16,), "special")})
case("float16_special_floor_divide_remainder", {"fd": "x // y", "rem": "x % y"},
     {"x": (H, (13,), [5.0, -7.5, 7.5, -7.5, 1.0, 0.0, -0.0, "nan", "inf", "-inf", 3.0, 60000.0, -2.5]),
      "y": (H, (13,), ["inf", "inf", "-inf", "-inf", "nan", "inf", 2.0, 3.0, 2.0, 2.0, "-inf", 7.0, 1e-3])})
# Rounding to float16: once, from the source (float64 directly: 1 + 2^-11 + 2^-40 is not 1.0), ties to
# even, past 65520 to infinity, below 2^-25 to a signed zero.
case("float16_rounding_from_float64", "x.astype(np.float16)",
     {"x": (D, (14,), [1 + 2**-11 + 2**-40, 1 + 2**-11, 1 + 3 * 2**-11, 65519.99, 65520.0, -65520.0, 2**-25,
                       2**-25 * 1.000001, -1e-300, 6.1e-5, 5.96e-8, "nan", "-inf", 1e300])})
case("float16_rounding_from_float32", "x.astype(np.float16)",
     {"x": (F, (9,), [1 + 2**-11, 1 + 3 * 2**-11, 65519.0, 65520.0, 2**-25, 3e-8, -1e-30, "nan", 2049.0])})
case("float16_from_integers", {"i64": "x.astype(np.float16)", "u64": "y.astype(np.float16)", "b": "z.astype(np.float16)",
                               "i8": "w.astype(np.float16)"},
     {"x": (I64, (7,), [65519, 65520, 2049, 2051, -70000, 9223372036854775807, -9223372036854775808]),
      "y": (U64, (3,), [18446744073709551615, 4097, 0]), "z": (B, (2,)), "w": (I8, (4,), "int:-128:128")})
case("float16_cast_special", {t: f"x.astype(np.{t})" for t in ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                                                "uint64", "bool", "float32", "float64", "complex64"]},
     {"x": (H, (16,), "special")})
case("float16_from_complex", "x.astype(np.float16)", {"x": (Z, (4,))})
case("float16_reductions", {"sum": "np.sum(x)", "sum0": "np.sum(x, axis=0)", "prod": "np.prod(x, axis=1)",
                            "max": "np.max(x, axis=0)", "min": "np.min(x)", "mean": "np.mean(x, axis=1)",
                            "var": "np.var(x)", "std": "np.std(x, axis=0)", "argmax": "np.argmax(x)",
                            "argmin": "np.argmin(x, axis=1)", "sum32": "np.sum(x, dtype=np.float32)"},
     {"x": (H, (4, 5))},
     # numpy sums a float16 axis whose elements are not adjacent by adding each row into the float16
     # result (rounding at each step); the library accumulates every float16 sum in float32 and
     # rounds once, as numpy does along the contiguous axis.
     numpy={"sum0": "np.sum(x.astype(np.float32), axis=0).astype(np.float16)"})
# numpy sums float16 in float32 and rounds once (10000, not the 2048 where float16 steps stall); a mean
# of 60000s is 60000 (the float32 total does not overflow); cumsum steps in float16, where numpy's
# running loop stalls at 2048, but the library scans rows longer than 2048 in blocks of 1024
# (pytato_runtime::scan), whose running sums and totals stay exact here: 3000.
case("float16_long_sums", {"sum": "np.sum(np.ones((10000,), dtype=np.float16))",
                           "mean": "np.mean(np.full((4,), 60000.0, dtype=np.float16))",
                           "sum_overflows": "np.sum(np.full((4,), 60000.0, dtype=np.float16))",
                           "cumsum_last": "np.cumsum(np.ones((3000,), dtype=np.float16))[-1]",
                           "cumsum_long": "np.cumsum(np.arange(0.0, 5000.0, 1.0) * 0.1)"}, {},
     numpy={"cumsum_last": "cumsum_in_blocks(np.ones((3000,), dtype=np.float16))[-1]",
            "cumsum_long": "cumsum_in_blocks(np.arange(0.0, 5000.0, 1.0) * 0.1)"})
case("float16_scans", {"cumsum": "np.cumsum(x, axis=1)", "cumprod": "np.cumprod(x)"}, {"x": (H, (3, 4))})
case("float16_contractions", {"mm": "x @ y", "ein": "np.einsum('ij,jk->ik', x, y)", "dot": "np.dot(y[:, 0], y[:, 1])",
                              "tensordot": "np.tensordot(x, y, axes=1)"},
     {"x": (H, (3, 4)), "y": (H, (4, 2))},
     # numpy's matmul, dot and tensordot of float16 multiply and sum in float32 and round once, as
     # the library does for every contraction; numpy's einsum adds each float32 product into its
     # float16 output, rounding at every term, when the iteration order it picks for the operands'
     # layouts puts the summed axis outside the inner loop (here: 94% of random 3x4 @ 4x2 products
     # differ from the once-rounded value, under cancellation by many float16 steps).
     numpy={"ein": "np.matmul(x, y)"})
case("float16_sort_and_sets", {"sort": "np.sort(x)", "argsort": "np.argsort(x, stable=True)",
                               "unique": "np.unique(x, equal_nan=False)", "searchsorted": "np.searchsorted(np.sort(x), y)",
                               "nonzero": "np.flatnonzero(x)"},
     {"x": (H, (16,), "special"), "y": (H, (5,))})
case("float16_moves", {"where": "np.where(c, x, y)", "concat": "np.concatenate([x, y])", "roll": "np.roll(x, 2)",
                       "pad": "np.pad(x, ((1, 2),), mode='reflect')", "flip": "np.flip(y)", "stack": "np.stack([x, y])",
                       "take": "np.take(x, i)", "clip": "np.clip(x, -0.5, 0.5)",
                       "round": "np.round(x, 2)", "full": "np.full((2,), 0.1, dtype=np.float16)"},
     {"c": (B, (6,)), "x": (H, (6,)), "y": (H, (6,)), "i": (I64, (3,), "int:-6:6")})
# nextafter steps float16's own values (numpy's npy_half_nextafter): x where x == y (0.0 toward -0.0
# stays 0.0), the smallest subnormal from zero, the largest finite value from infinity, powers of two
# and subnormals, overflow to infinity; int8 operands compute in float16.
# (The comparisons and the step are exact checks: the float16 tolerance is wider than one step.)
case("float16_nextafter", {"h": "np.nextafter(x, y)", "i8": "np.nextafter(i, j)", "moved": "np.nextafter(x, y) != x",
                           "up": "np.nextafter(x, y) > x", "step": "np.nextafter(x, y) - x",
                           "i8_step": "np.nextafter(i, j) - i"},
     {"x": (H, (20,), [0.0, -0.0, 1.0, 1.0, 65504.0, "inf", "-inf", 2**-14, 2**-14, -1.0, -1.0, 6e-8, "nan", 1.0,
                       0.0, 2.0, -2.0, 1000.0, -0.0, -65504.0]),
      "y": (H, (20,), [-0.0, 0.0, 2.0, 0.0, "inf", 0.0, 0.0, 0.0, 1.0, -2.0, 0.0, -1.0, 1.0, "nan", -1.0, 0.0, 0.0,
                       "-inf", 3.0, "-inf"]),
      "i": (I8, (4,), [3, -3, 0, 127]), "j": (I8, (4,), [4, -4, -1, 0])})
case("float16_reductions_in_broadcasts", {"centred": "x - np.mean(x, axis=0)", "share": "x / np.sum(x, axis=1, keepdims=True)",
                                         "max": "np.max(y)", "argmax": "np.argmax(y)", "min": "np.min(np.reshape(y, (4, 4)), axis=0)",
                                         "empty": "np.sum(x[:0], axis=0)", "one": "np.prod(z, axis=0) * z",
                                         "any": "np.any(y > 1.0)", "count": "np.count_nonzero(y)"},
     {"x": (H, (3, 4), "pos"), "y": (H, (16,), "special"), "z": (H, (1, 3))})
case("float16_symbolic", {"s": "np.sum(x * x)", "m": "x[1:] - x[:-1]"}, {"x": (H, ("n",))}, sizes={"n": 9})

# --- Silent wrong values found from outside (issue 32) and their siblings -----------------------------
# Reductions without identity over an axis that is empty only at run time: numpy raises ValueError.
case("error_argmax_empty_at_run_time", "np.argmax(x)", {"x": (D, ("n",))}, sizes={"n": 0}, error="InvalidForSizes",
     numpy_error="ValueError")
case("error_argmin_axis_empty_at_run_time", "np.argmin(x, axis=1)", {"x": (I32, (3, "n"))}, sizes={"n": 0},
     error="InvalidForSizes", numpy_error="ValueError")
case("error_argmax_of_nothing_selected", "np.argmax(x[x > 5])", {"x": (D, (6,))}, error="InvalidForSizes",
     numpy_error="ValueError")
case("error_argmax_complex_empty_at_run_time", "np.argmax(z)", {"z": (Z, ("n",))}, sizes={"n": 0},
     error="InvalidForSizes", numpy_error="ValueError")
for d in [D, F, I32, U8, B]:
    case(f"error_max_empty_at_run_time_{d}", "np.max(x)", {"x": (d, ("n",))}, sizes={"n": 0}, error="InvalidForSizes",
         numpy_error="ValueError")
case("error_min_axis_empty_at_run_time", "np.min(x, axis=0)", {"x": (I64, ("n", 3))}, sizes={"n": 0},
     error="InvalidForSizes", numpy_error="ValueError")
case("error_min_of_nothing_selected", "np.min(x[x > 5]) + 1.0", {"x": (F, (4,))}, error="InvalidForSizes",
     numpy_error="ValueError")
case("error_complex_max_empty_at_run_time", "np.max(z, axis=0)", {"z": (C, ("n", 2))}, sizes={"n": 0},
     error="InvalidForSizes", numpy_error="ValueError")
case("error_max_inside_a_broadcast_empty_at_run_time", "x - np.max(x, axis=1, keepdims=True)", {"x": (D, (2, "n"))},
     sizes={"n": 0}, error="InvalidForSizes", numpy_error="ValueError")
# ... and what stays defined: the empty axis is not reduced, `initial` is given, one element.
case("max_over_a_full_axis_of_an_empty_array", {"max": "np.max(x, axis=0)", "argmax": "np.argmax(x, axis=0)"},
     {"x": (D, (3, "n"))}, sizes={"n": 0})
case("max_of_nothing_with_initial", {"max": "np.max(x, initial=-1.0)", "min": "np.min(x[x > 5], initial=7.0)"},
     {"x": (D, ("n",))}, sizes={"n": 0})
case("argmax_of_one_selected", {"arg": "np.argmax(x[x > 1.5])", "max": "np.max(x[x > 1.5])"},
     {"x": (D, (5,), [0.0, 2.0, 1.0, -3.0, 0.5])})

# Writes at integer indices beyond the run-time length: numpy raises IndexError, as for reads.
case("error_set_index_beyond_run_time_length", "at(x)[4].set(9.0)", {"x": (D, ("n",))}, sizes={"n": 3},
     error="IndexOutOfBounds", numpy_error="IndexError")
case("error_set_index_negative_beyond_run_time_length", "at(x)[-5].set(9.0)", {"x": (D, ("n",))}, sizes={"n": 3},
     error="IndexOutOfBounds", numpy_error="IndexError")
case("error_set_index_into_nothing_selected", "at(x[x > 5])[0].set(1.0)", {"x": (D, (6,))},
     error="IndexOutOfBounds", numpy_error="IndexError")
case("error_set_index_second_axis_beyond_run_time_length", "at(x)[:, 2].set(0.0)", {"x": (I16, (2, "n"))},
     sizes={"n": 2}, error="IndexOutOfBounds", numpy_error="IndexError")
case("error_add_at_beyond_run_time_length", "at(x)[3].add(1.0)", {"x": (D, ("n",))}, sizes={"n": 3},
     error="IndexOutOfBounds", numpy_error="IndexError")
case("error_scatter_beyond_run_time_length", "at(x)[i].set(1.0)", {"x": (D, ("n",)), "i": (I64, (2,), [1, 3])},
     sizes={"n": 3}, error="IndexOutOfBounds", numpy_error="IndexError")
case("error_read_beyond_run_time_length", "x[3] + 1.0", {"x": (D, ("n",))}, sizes={"n": 3},
     error="IndexOutOfBounds", numpy_error="IndexError")
# A slice with explicit bounds past the run-time length: numpy clips it; slices of symbolic axes are
# decided when the DAG is built, so a write is refused as a read is (a documented departure).
case("error_set_slice_beyond_run_time_length", "at(x)[1:5].set(0.0)", {"x": (D, ("n",))}, sizes={"n": 3},
     error="InvalidForSizes")
case("set_index_inside_run_time_length", {"last": "at(x)[-1].set(9.0)", "second": "at(x)[1].set(9.0)",
                                         "selected": "at(x[x > 0])[0].set(7.0)"},
     {"x": (D, ("n",), [1.0, -2.0, 3.0])}, sizes={"n": 3})

# Python scalars written into arrays convert as numpy's __setitem__ converts them.
case("error_set_complex_scalar_into_float", "at(x)[0].set(1+2j)", {"x": (D, (3,))}, error="UnsupportedDType",
     numpy_error="TypeError")
case("error_set_complex_scalar_through_a_mask", "at(x)[x > 0].set(2j)", {"x": (F, (4,))}, error="UnsupportedDType",
     numpy_error="TypeError")
case("error_set_complex_scalar_through_an_index_array", "at(x)[i].set(2j)", {"x": (D, (4,)), "i": (I64, (2,), [0, 2])},
     error="UnsupportedDType", numpy_error="TypeError")
case("error_set_complex_scalar_into_int_slice", "at(x)[1:].set(1j)", {"x": (I32, (3,))}, error="UnsupportedDType",
     numpy_error="TypeError")
case("error_set_nan_into_int", "at(x)[0].set(np.nan)", {"x": (I64, (3,))}, error="InvalidArgument",
     numpy_error="ValueError")
case("error_set_inf_into_int", "at(x)[0:2].set(np.inf)", {"x": (I32, (3,))}, error="ScalarOutOfRange",
     numpy_error="OverflowError")
case("error_set_float_beyond_uint8", "at(x)[0].set(300.5)", {"x": (U8, (3,))}, error="ScalarOutOfRange",
     numpy_error="OverflowError")
case("error_set_negative_float_into_uint8", "at(x)[0].set(-2.5)", {"x": (U8, (3,))}, error="ScalarOutOfRange",
     numpy_error="OverflowError")
case("error_max_initial_nan_int", "np.max(x, initial=np.nan)", {"x": (I64, (3,))}, error="InvalidArgument",
     numpy_error="ValueError")
case("error_sum_initial_complex_float", "np.sum(x, initial=1j)", {"x": (D, (3,))}, error="UnsupportedDType",
     numpy_error="TypeError")
case("error_pad_nan_into_int", "np.pad(x, ((1, 1),), constant_values=np.nan)", {"x": (I64, (3,))}, error="InvalidArgument",
     numpy_error="ValueError")
case("scalars_written_as_numpy_converts_them",
     {"trunc": "at(x)[0].set(2.7)", "neg": "at(x)[1:].set(-2.5)", "bool": "at(b)[0].set(2.5)",
      "bool_complex": "at(b)[1].set(1j)", "complex": "at(z)[0].set(1+2j)", "inf_f32": "at(f)[0].set(1e300)",
      "int_into_float": "at(f)[1].set(3)", "sum_initial": "np.sum(x, initial=2.5)",
      "max_initial": "np.max(x, initial=2.9)"},
     {"x": (I64, (3,), [5, -6, 7]), "b": (B, (2,), [False, False]), "z": (Z, (2,)), "f": (F, (2,))})

# Boolean scalars as indices (numpy: a mask over a new axis of length 1) and masks broadcast with
# index arrays (numpy broadcasts the mask's positions with them when it runs).
case("boolean_scalar_indices", {"t": "x[True]", "f": "x[False]", "int_t": "x[1, True]", "end": "x[..., True]",
                                "mid": "x[:, True]", "tt": "x[True, True]", "with_array": "x[True, i]",
                                "set": "at(x)[True].set(5.0)", "set_f": "at(x)[False].set(5.0)",
                                "add": "at(x)[True, 1].add(1.0)"},
     {"x": (D, (3, 4)), "i": (I64, (2,), [0, 2])})
case("boolean_0d_masks", {"t": "x[t]", "f": "x[f]", "t_int": "x[t, 2]", "with_array": "x[t, i]",
                          "set": "at(x)[t].set(-1.0)", "set_f": "at(x)[f].set(-1.0)"},
     {"x": (F, (3, 4)), "t": (B, (), [True]), "f": (B, (), [False]), "i": (I64, (2,), [1, 2])})
case("mask_with_index_array", {"pair": "x[m, i]", "one_selected": "x[k, i]", "column": "x[m, j]",
                               "trailing": "x[r, m2]", "set": "at(x)[m, i].set(0.0)", "add": "at(x)[m, i].add(1.0)"},
     {"x": (D, (3, 4)), "m": (B, (3,), [True, False, True]), "k": (B, (3,), [False, True, False]),
      "m2": (B, (4,), [False, True, True, False]), "i": (I64, (2,), [1, 3]), "j": (I64, (1,), [2]),
      "r": (I64, (2,), [0, 2])})
case("error_mask_with_index_array_mismatch", "x[m, i]", {"x": (D, (3, 4)), "m": (B, (3,), [True, True, True]),
                                                         "i": (I64, (2,), [1, 3])},
     error="BroadcastMismatch", numpy_error="IndexError")
case("error_false_with_index_array", "x[False, i]", {"x": (D, (3, 4)), "i": (I64, (2,), [0, 2])},
     error="BroadcastMismatch", numpy_error="IndexError")

# --- Hostile input (issue 39): values numpy refuses when the program runs ----------------------------
# Integers to negative integer powers: numpy raises ValueError, for every element, used or not.
for d in [I8, I32, I64]:
    case(f"error_power_negative_exponent_{d}", "x ** y", {"x": (d, (4,), "int:1:5"), "y": (d, (4,), [2, 0, -1, 3])},
         error="InvalidArgument", numpy_error="ValueError")
case("error_power_negative_exponent_in_an_untaken_branch", "np.where(c, 0, x ** y)",
     {"c": (B, (3,), [True, True, True]), "x": (I16, (3,), "int:1:5"), "y": (I16, (3,), [1, -2, 0])},
     error="InvalidArgument", numpy_error="ValueError")
case("error_power_negative_literal_exponent", "x ** -1", {"x": (I32, (3,), "int:1:5")}, error="InvalidArgument",
     numpy_error="ValueError")
case("power_integer_exponents_not_negative", {"pow": "x ** y", "rpow": "2 ** y", "unsigned": "u ** v",
                                              "float": "f ** y"},
     {"x": (I64, (5,), "int:-3:4"), "y": (I64, (5,), [0, 1, 2, 3, 62]), "u": (U8, (3,), "int:0:4"),
      "v": (U8, (3,), [0, 1, 7]), "f": (D, (5,))})
# A uint64 index array converts to intp as numpy converts it: 2**64 - 1 wraps to -1, the last
# element (numpy 2 does this; a uint64 scalar beyond int64 is an OverflowError), and 2**63 is out
# of range.
case("uint64_indices_as_numpy_reads_them", {"read": "x[i]", "write": "at(x)[i].set(-1.0)", "add": "at(x)[i].add(1.0)",
                                             "take": "np.take(x, i)"},
     {"x": (D, (4,)), "i": (U64, (3,), [3, 0, 18446744073709551615])})
case("error_uint64_index_2_63", "x[i]", {"x": (D, (4,)), "i": (U64, (2,), [1, 9223372036854775808])},
     error="IndexOutOfBounds", numpy_error="IndexError")
case("error_uint64_index_2_63_added", "at(x)[:, i].add(1.0)",
     {"x": (D, (2, 4)), "i": (U64, (1,), [9223372036854775808])}, error="IndexOutOfBounds", numpy_error="IndexError")


# --- What GPU drivers may do their own way (issue 33) ---------------------------------------------
# A real GPU flushes float32 subnormals, returns either zero from max(-0.0, 0.0), turns float16
# NaN into inf on conversion and contracts a*b+c into one rounding; numpy does none of these.
for d in [H, F, D]:
    case(f"driver_signed_zeros_nan_{d}", {"max": "np.maximum(x, y)", "min": "np.minimum(x, y)", "abs": "np.abs(x)",
                                          "neg": "-x", "sign": "np.sign(x)", "gt": "x > y", "le": "x <= y",
                                          "ne0": "x != 0", "bool": "x.astype(np.bool)", "where": "np.where(x, y, -y)"},
         {"x": (d, (22,) if d == D else (16,), "special"), "y": (d, (22,) if d == D else (16,), "special_shifted")})
    case(f"driver_arithmetic_special_{d}", {"add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y",
                                            "sqrt": "np.sqrt(x)", "fma": "x * y + x", "half": "x * 0.5",
                                            "square": "x * x - y * y"},
         {"x": (d, (22,) if d == D else (16,), "special"), "y": (d, (22,) if d == D else (16,), "special_shifted")})
case("driver_subnormal_mask_float32", {"kept": "x[x != 0]", "count": "np.count_nonzero(x)", "pos": "x[x > 0]",
                                       "nonzero": "np.flatnonzero(x)"},
     {"x": (F, (8,), [1e-40, -1e-45, 0.0, -0.0, 1.17549435e-38, 1e-39, 2.0, "nan"])})
case("driver_subnormal_complex64", {"prod": "x * y", "sum": "x + y", "abs": "np.abs(x)", "ne": "x != 0"},
     {"x": (C, (4,), [complex(1e-40, 1e-40), complex(-1e-45, 0), complex(0, 3e-39), complex(1, -1e-40)]),
      "y": (C, (4,), [complex(1, 0), complex(0.5, 0.5), complex(-1, 2), complex(1e-40, 1)])})

# Products multiply in order, as numpy does: one that overflows before it underflows stays inf
# (grouped in blocks it would be inf * 0, NaN), and the sign of a complex zero follows the chain.
case("prod_overflow_then_underflow", {"f64": "np.prod(np.concatenate([x, y]))", "c128": "np.prod(z)"},
     {"x": (D, (129,), [1e300]), "y": (D, (129,), [1e-300]), "z": (Z, (301,), [-0.0])})

# numpy rounds complex numbers part by part (an infinite part stays infinite; scaling the complex
# number would make NaNs), and its complex reciprocal is Smith's formula, not 1 / z: 1 / (x + 0j)
# has imaginary part -0.0, and a subnormal imaginary part gives 0 - inf j, not a NaN real part.
SUBNORMAL_COMPLEX = {C: [1e-45j, -1e-45j, 1e-40 + 0j, complex(1e-40, 1e-40), 1 + 0j, complex(0, -1e-42), 3e38 + 0j],
                     Z: [5e-324j, -5e-324j, 1e-310 + 0j, complex(1e-310, 1e-310), 1 + 0j, complex(0, -1e-320), 1.7e308 + 0j]}
for d in [C, Z]:
    case(f"round_decimals_complex_{d}", {"m2": "np.round(x, -2)", "p1": "np.round(x, 1)", "p3": "np.round(x, 3)",
                                         "zero": "np.round(x)"}, {"x": (d, (81,), "special")})
    case(f"reciprocal_complex_{d}", {"special": "np.reciprocal(x)", "tiny": "np.reciprocal(y)"},
         {"x": (d, (81,), "special"), "y": (d, (7,), SUBNORMAL_COMPLEX[d])})
case("round_bool_is_rint", "np.round(b)", {"b": (B, (5,))})
case("vecdot_bool", {"v": "np.vecdot(a, b)", "w": "np.vecdot(a, c)"}, {"a": (B, (3, 4)), "b": (B, (3, 4)), "c": (B, (4,))})
case("count_nonzero_keepdims", {"rows": "np.count_nonzero(x, axis=1, keepdims=True)",
                                "all": "np.count_nonzero(x, axis=None, keepdims=True)"},
     {"x": (D, (3, 4), ["nan", 0.0, "-0.0", 1.0, 5e-324, "inf"])})
case("concatenate_flattened", "np.concatenate([x, y], axis=None)", {"x": (I32, (2, 3)), "y": (I32, (4,))})
for d in [D, Z]:
    every = "np.unique(x, return_index=True, return_inverse=True, return_counts=True)"
    case(f"unique_equal_nan_{d}", {"values": "np.unique(x)", "index": every + "[1]", "inverse": every + "[2]",
                                   "counts": every + "[3]", "apart": "np.unique(x, equal_nan=False, return_counts=True)[1]"},
         {"x": (d, (9, 9), "special")},
         # numpy's unique without return_* finds values with a hash table: of complex values with
         # a NaN part it keeps the first it meets, as the library does (with return_* it sorts and
         # keeps the first in sorted order); of float zeros it may keep either sign, where the
         # library keeps the first (numpy's return_index).
         **({"numpy": {"values": "np.ravel(x)[np.unique(x, return_index=True)[1]]"}} if d == D else {}))
case("diagonal_and_trace", {"main": "np.diagonal(x)", "above": "np.diagonal(x, 2)", "below": "np.diagonal(x, -1, 2, 0)",
                            "beyond": "np.diagonal(x, 9)", "tr": "np.trace(x, 1)", "tr_planes": "np.trace(x, -1, 1, 2)",
                            "tr_int": "np.trace(i)", "tr_float": "np.trace(i, dtype=np.float64)", "sym": "np.diagonal(y)"},
     {"x": (D, (3, 4, 5), "special"), "i": (I8, (4, 4), "special"), "y": (F, ("n", "n"))}, sizes={"n": 3})
case("linspace_numpy_steps", {"complex": "np.linspace(1j, -2 + 3j, 6)", "int": "np.linspace(-3, 7.5, 9, dtype=np.int32)",
                              "tiny": "np.linspace(0.0, 5e-324, 5)", "one_inf": "np.linspace(0.0, np.inf, 1)",
                              "float32": "np.linspace(0, 1, 7, endpoint=False, dtype=np.float32)",
                              "equal": "np.linspace(2.0, 2.0, 4)", "huge": "np.linspace(1e308, -1e308, 5)"}, {})
# numpy's float32/float64 power loops take sqrt, x * x and 1 / x for one scalar exponent of 0.5, 2
# and -1 ((-0.0) ** 0.5 is -0.0, (-inf) ** 0.5 NaN); an exponent array takes pow.
case("power_by_one_scalar_as_numpys_loop", {"half": "np.power(x, 0.5)", "sq": "np.power(x, 2.0)", "rec": "np.power(x, -1)",
                                            "half32": "np.power(f, 0.5)", "sq32": "np.power(f, 2)",
                                            "rec32": "np.power(f, -1.0)", "int_half": "np.power(i, 0.5)",
                                            "arr": "np.power(x, h)", "three": "np.power(x, 3.0)"},
     {"x": (D, (24,), "special"), "f": (F, (24,), "special"), "i": (I8, (12,), "special"),
      "h": (D, (24,), [0.5])})
# Python integers an integer dtype cannot hold: comparisons are exact, division is in float64.
case("python_integers_beyond_the_dtype", {"lt": "u < 300", "ge": "i >= -129", "gt": "300 > i", "eq": "u == 256",
                                          "ne": "i != 200", "div": "i / 255", "rdiv": "-300 / u",
                                          "bool": "b < 2"},
     {"u": (U8, (12,), "special"), "i": (I8, (12,), "special"), "b": ("bool", (4,))})
# Functions numpy defines by bits. fmax/fmin of float32/float64 zeros take the second operand's
# sign in numpy's SIMD body and the first's in its tail: the inputs here have no tie of zeros.
case("fmax_fmin_spacing_modf", {"fmax": "np.fmax(x, y)", "fmin": "np.fmin(y, x)", "fmax16": "np.fmax(h, g)",
                                "fmin_c": "np.fmin(z, w)", "fmax_i": "np.fmax(i, 3)", "sp": "np.spacing(x)",
                                "sp32": "np.spacing(f)", "sp16": "np.spacing(h)", "sp_i": "np.spacing(i)",
                                "frac": "np.modf(x)[0]", "whole": "np.modf(x)[1]", "frac16": "np.modf(h)[0]"},
     {"x": (D, (24,), "special"), "y": (D, (24,), [1.5, "nan", -2.0, "inf", 3.0, "-inf"]),
      "f": (F, (24,), "special"), "h": (H, (24,), "special"), "g": (H, (24,), "special_shifted"),
      "z": (Z, (12,), "special"), "w": (Z, (12,), "special_shifted"), "i": (I8, (12,), "special")})
case("fmod_of_every_kind", {"f64": "np.fmod(x, y)", "f32": "np.fmod(f, g)", "f16": "np.fmod(h, k)", "i8": "np.fmod(i, j)",
                            "u8": "np.fmod(u, 3)", "mixed": "np.fmod(i, 2.5)", "by_zero": "np.fmod(j, 0)", "b": "np.fmod(b, c)"},
     {"x": (D, (24,), "special"), "y": (D, (24,), "special_shifted"), "f": (F, (24,), "special"),
      "g": (F, (24,), "special_shifted"), "h": (H, (24,), "special"), "k": (H, (24,), "special_shifted"),
      "i": (I8, (12,), "special"), "j": (I8, (12,), "special_shifted"), "u": (U8, (12,), "special"),
      "b": ("bool", (6,)), "c": ("bool", (6,))})
case("cbrt_exp2_logaddexp2", {"cbrt": "np.cbrt(x)", "cbrt32": "np.cbrt(f)", "cbrt_i": "np.cbrt(i)", "exp2": "np.exp2(x)",
                              "exp2_16": "np.exp2(h)", "exp2_c": "np.exp2(z)", "lae2": "np.logaddexp2(x, y)",
                              "lae2_32": "np.logaddexp2(f, 1.5)", "lae2_16": "np.logaddexp2(h, h)"},
     {"x": (D, (24,), "special"), "y": (D, (24,), "special_shifted"), "f": (F, (24,), "special"),
      "h": (H, (24,), "special"), "i": (I16, (12,), "special"),
      "z": (Z, (8,), [0.5, -3.0, 1.25, 0.0, -1.5, 2.0, 7.0, -0.25])})
KERNEL_FUNCS = {"sin": np.sin, "cos": np.cos, "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh,
                "floor": np.floor, "maximum": np.maximum, "minimum": np.minimum, "where": np.where}


# --- Added after the cases above (inputs are seeded by a case's position: appended here, the
# cases above keep theirs) ---------------------------------------------------------------------------
# gcd and lcm: every integer dtype at its extremes (numpy's results for the smallest signed value,
# whose magnitude the dtype cannot hold), wrapping multiples, and Euclid's longest runs
# (consecutive Fibonacci numbers, both orders) at the top of 32 and 64 bits.
_FIB = [1, 1]
while _FIB[-1] < 2**64:
    _FIB.append(_FIB[-1] + _FIB[-2])
for d in [I8, I16, I32, I64, U8, U16, U32, U64]:
    case(f"gcd_lcm_{d}", {"gcd": "np.gcd(x, y)", "lcm": "np.lcm(x, y)", "gcd_r": "np.gcd(a, b)", "lcm_r": "np.lcm(a, b)",
                         "gcd_s": "np.gcd(a, 6)", "lcm_s": "np.lcm(6, b)"},
         {"x": (d, (49,), [v for v in special_values(d) for _ in special_values(d)]),
          "y": (d, (49,), special_values(d) * 7),
          "a": (d, (30,), "int:-60:61"), "b": (d, (30,), "int:-60:61")})
for d, bits in [(U32, 32), (I64, 63), (U64, 64)]:
    top = [f for f in _FIB if f < 2**bits][-2:]
    case(f"gcd_lcm_fibonacci_{d}", {"gcd": "np.gcd(x, y)", "lcm": "np.lcm(x, y)"},
         {"x": (d, (4,), [top[1], top[0], top[1], 0]), "y": (d, (4,), [top[0], top[1], top[1], top[0]])})
case("gcd_lcm_promoted", {"mixed": "np.gcd(i, u)", "bool_int": "np.lcm(b, i)", "wide": "np.lcm(j, u)"},
     {"i": (I8, (6,), "special"), "u": (U8, (6,), "special"), "b": (B, (6,)), "j": (I32, (6,), "special")})
# ldexp and frexp: every float dtype at its special values (subnormals, the largest finite
# value, ±0, ±inf, NaN) against exponents that reach overflow, the subnormal range (rounded
# once), and beyond (saturated); integer mantissas read as numpy's loops read them.
_EXPONENTS = [0, 1, -1, 3, -20, 40, -1074, -1075, -1023, 1023, 1024, -149, 128, -24, 2**40, -2**40, 2**62, -2**63]
for d in [H, F, D]:
    n_special = len(special_values(d))
    case(f"ldexp_frexp_{d}", {"ldexp": "np.ldexp(x, n)", "ldexp_s": "np.ldexp(x, -3)", "m": "np.frexp(x)[0]",
                              "e": "np.frexp(x)[1]", "m_r": "np.frexp(r)[0]", "e_r": "np.frexp(r)[1]",
                              "ldexp_m_e": "np.ldexp(np.frexp(r)[0], np.frexp(r)[1])"},
         {"x": (d, (n_special * len(_EXPONENTS),), [v for v in special_values(d) for _ in _EXPONENTS]),
          "n": (I64, (n_special * len(_EXPONENTS),), _EXPONENTS * n_special), "r": (d, (40,))})
case("ldexp_frexp_subnormals", {"m16": "np.frexp(h)[0]", "e16": "np.frexp(h)[1]", "m32": "np.frexp(f)[0]", "e32": "np.frexp(f)[1]",
                                "down16": "np.ldexp(h, -3)", "up16": "np.ldexp(h, 20)", "down32": "np.ldexp(f, -25)",
                                "up32": "np.ldexp(f, 100)"},
     {"h": (H, (10,), [6e-8, -6e-8, 1.8e-7, 3e-5, -6.1e-5, 6.104e-5, 65504.0, 0.000123, 1.0009765625, -2049.0]),
      "f": (F, (10,), [1e-45, -3e-45, 1e-39, 1.17e-38, -1.1754942e-38, 3.4e38, 7e-46, 1.5e-45, 1.0000001, -16777217.0])})
case("ldexp_frexp_dtypes", {"i8": "np.ldexp(i, k)", "i16_by_u32": "np.ldexp(j, u)", "u64_by_bool": "np.ldexp(w, b)",
                            "weak_by_i8": "np.ldexp(3, k)", "float_by_i8": "np.ldexp(1.5, k)", "f16_by_i64": "np.ldexp(h, n)",
                            "m_i16": "np.frexp(j)[0]", "e_i16": "np.frexp(j)[1]", "m_b": "np.frexp(b)[0]"},
     {"i": (I8, (6,), "special"), "k": (I8, (6,), "int:-30:31"), "j": (I16, (6,), "special"), "u": (U32, (6,), "int:0:200"),
      "w": (U64, (6,), "special"), "b": (B, (6,)), "h": (H, (6,), "special"), "n": (I64, (6,), "special")})
# Complex functions of reals cast to complex: the zero imaginary part is a constant the GPU
# compiler sees, and numpy's result carries the sign of the real part in it (cosh(-3 + 0j) has
# an imaginary part of -0.0).
case("complex_functions_of_real_casts", {f"{f}_{d}": f"np.{f}(x.astype(np.{d}))" for f in
                                          ["cosh", "sinh", "exp", "sin", "tanh", "sqrt", "arcsinh", "log"]
                                          for d in ["complex64", "complex128"]},
     {"x": (D, (12,), [-1e300, -3.88, -100.0, -0.0, 0.0, 2.5, "-inf", "inf", "nan", -1.0, 1e-310, -2147483649.0])})

# Complex products with `initial`: numpy's accumulator starts at it, so `initial * z0` keeps an
# infinite part where a product that started at 1 + 0j would be NaN (numpy's
# prod([-4-2j], initial=inf) is -inf-infj); an empty product is `initial` itself.
PRODUCT_VALUES = [complex(1e300, float("-inf")), complex(-4, -2), complex(float("inf"), 1), complex(2, float("inf")),
                  complex(-0.0, 1), complex(0.0, -0.0), complex(1e-310, 1e-310), complex(-2.5, 1),
                  complex(float("nan"), 1), complex(1e300, 1e300), complex(float("-inf"), float("-inf"))]
case("complex_prod_initial", {"inf": "np.prod(x, axis=1, initial=np.inf)", "inf64": "np.prod(y, axis=1, initial=np.inf)",
                              "c": "np.prod(x, axis=1, initial=-2.5+1j)", "negzero": "np.prod(x, axis=1, initial=-0.0)",
                              "keep": "np.prod(y, axis=-1, keepdims=True, initial=1e300)",
                              "empty": "np.prod(e, axis=1, initial=np.inf)", "whole": "np.prod(x[:2], initial=np.inf)"},
     {"x": (Z, (33, 3), PRODUCT_VALUES), "y": (C, (22, 2), PRODUCT_VALUES), "e": (Z, (2, 0))})

# Complex running products along an axis of two: numpy's accumulate runs one step, in its
# elementwise loop (fused multiply-adds, as `*`); longer axes step by the textbook formula.
# Pairs whose fused and textbook products differ: (1e300 + 1e300j)**2 is -inf+infj fused and
# nan+infj by the textbook formula.
TWO_STEPS = [complex(1e300, float("-inf")), complex(1e300, float("-inf")), complex(1e300, 1e300), complex(1e300, 1e300),
             complex(float("inf"), 1e300), complex(1e300, 1e300), complex(-4, -2), complex(2.5, 1e-310),
             complex(1e38, 1e38), complex(1e38, 1e38), complex(3e38, float("inf")), complex(3e38, 1)]
case("complex_cumprod_of_two", {"rows": "np.cumprod(x, axis=1)", "cols": "np.cumprod(x.T, axis=0)",
                                "flat": "np.cumprod(x[:1])", "three": "np.cumprod(y, axis=1)",
                                "initial": "np.cumulative_prod(x, axis=1, include_initial=True)", "c64": "np.cumprod(z, axis=-1)"},
     {"x": (Z, (6, 2), TWO_STEPS), "y": (Z, (4, 3), TWO_STEPS), "z": (C, (6, 2), TWO_STEPS)})

# complex64 to the power of integers cast to complex: the exponent's zero imaginary part is a
# constant the GPU compiler sees, and `0 * inf` in `w * log(z)` must stay NaN (numpy's
# (-2147483600 + inf j) ** uint8(255) is inf + nan j).
case("complex64_powers_of_integer_exponents", {"u8": "x[:, None] ** e[None, :]", "i16": "x[:, None] ** f[None, :]"},
     {"x": (C, (4,), [complex(-2147483600, float("inf")), complex(float("inf"), 1), complex(1, float("inf")),
                      complex(float("-inf"), -2)]),
      "e": ("uint8", (5,), [255, 200, 101, 3, 2]), "f": ("int16", (3,), [-101, 150, -3])})

# numpy's take checks its indices once per element of the axes before `axis`: where one of those
# is empty nothing is checked (indices out of range, or an empty axis, give an empty result).
case("take_after_an_empty_axis", {"arange": "np.take(x, np.arange(0, 2, 1), axis=1)", "far": "np.take(w, i, axis=2)",
                                  "from_empty": "np.take(v, i, axis=1)", "in_range": "np.take(x, i[:1], axis=1)"},
     {"x": ("int16", (0, 1), []), "w": ("float64", (2, 0, 3), []), "v": ("bool", (0, 0), []),
      "i": ("int64", (3,), [0, 5, -7])})

# Integers to negative integer powers are refused per element numpy computes: a broadcast result
# without elements computes none, whatever the exponents.
case("power_negative_exponent_broadcast_to_nothing", {"empty": "x ** y", "rows": "y ** x"},
     {"x": ("int32", (0,), []), "y": ("int32", (4, 1), [2, -1, 0, -7])})

# numpy checks index arrays' values as it walks their broadcast shape: where that is empty, none
# is checked (10 and -7 are out of range for axis 0 of x); where it is not, every one is, even
# when another axis of the result is empty.
case("index_arrays_broadcast_to_nothing", {"rows": "x[i[:, None], e]", "empty_first": "x[e[:, None], i]",
                                           "columns": "x[:, e]", "new_axis": "x[i[None, :], e[:, None]]"},
     {"x": ("float64", (5, 3)), "i": ("int64", (3,), [10, 1, -7]), "e": ("int64", (0,), [])})
case("error_index_array_beside_an_empty_axis", "w[:, i]", {"w": ("int8", (0, 4), []), "i": ("int64", (2,), [10, 1])},
     error="IndexOutOfBounds", numpy_error="IndexError")
# Index arrays of small dtypes broadcast to nothing, read and written through (subscripts are int64).
case("index_arrays_of_small_dtypes_broadcast_to_nothing",
     {"read": "x[i[:, None], e]", "add": "at(x)[i[:, None], e].add(1.5)", "set": "at(x)[e].set(2.0)"},
     {"x": ("float64", (5, 3)), "i": ("int8", (3,), [10, 1, -7]), "e": ("uint8", (0,), [])})
# A 0-d index array is an integer to numpy: checked even where the index arrays broadcast to nothing.
case("error_0d_index_array_beside_an_empty_one", "x[i[0], e]", {"x": ("float64", (5, 3)), "i": ("int64", (3,), [10, 1, -7]),
                                                            "e": ("int64", (0,), [])},
     error="IndexOutOfBounds", numpy_error="IndexError")

# numpy's take converts its indices to intp, as a bool array safely converts: positions 0 and 1.
case("take_bool_indices", {"axis": "np.take(x, b, axis=1)", "flat": "np.take(x, b[0])"},
     {"x": ("float32", (2, 3)), "b": ("bool", (2, 2), [True, False, False, True])})

# A constant negative exponent of integers: numpy refuses it per element it computes, so not
# where the result has no elements, known when the DAG is built or only when it runs.
case("power_negative_constant_of_nothing", {"literal": "x ** -1", "bools": "b ** -1"},
     {"x": ("int64", (2, 0), []), "b": ("bool", (0,), [])})
case("power_negative_constant_of_nothing_at_run_time", "y ** -1", {"y": ("int32", ("n",))}, sizes={"n": 0})
case("error_power_negative_constant_at_run_time", "y ** -1", {"y": ("int32", ("n",), "int:1:5")}, sizes={"n": 3},
     error="InvalidArgument", numpy_error="ValueError")

# Two masks built apart from equal scans are one mask: one count, no DuplicateName (scans once
# compared unequal to themselves).
case("masks_through_equal_scans_share_a_count",
     {"a": "x[np.cumsum(x > 0) > 1]", "b": "x[np.cumsum(x > 0) > 1] * 2",
      "c": "np.searchsorted(np.sort(x), x)[np.searchsorted(np.sort(x), x) > 2]"},
     {"x": (D, (15,))})

# Slice bounds at the ends of int64 lie beyond every length, symbolic ones too, and clamp.
case("slice_bounds_at_int64_ends_symbolic",
     {"to_end": "y[:9223372036854775807]", "from_end": "y[9223372036854775807:]", "from_start": "y[-9223372036854775807 - 1:]",
      "to_start": "y[:-9223372036854775807 - 1]", "down_all": "y[9223372036854775807::-1]",
      "down_none": "y[-9223372036854775807 - 1::-1]", "down_to_start": "y[:-9223372036854775807 - 1:-1]",
      "down_stop_high": "y[:9223372036854775807:-1]", "both": "y[-9223372036854775807:9223372036854775807]"},
     {"y": (D, ("n",))}, sizes={"n": 5})

# An integer index at the ends of int64 is outside every axis, symbolic ones too.
case("error_index_int64_min_symbolic", "y[-9223372036854775807 - 1]", {"y": (D, ("n",))}, sizes={"n": 5}, error="IndexOutOfRange")
case("error_index_int64_max_symbolic", "y[:, 9223372036854775807]", {"y": (D, (2, "n"))}, sizes={"n": 5}, error="IndexOutOfRange")

# numpy allows 64 axes: the index of axis 32 must not be named like WGSL's type `i32`.
case("sixty_four_axes",
     {"y": "2 * x + 1", "t": "np.transpose(x)", "m": "np.max(x, axis=-1)", "s": "np.sum(x, axis=(0, 33, 62))"},
     {"x": (D, (1,) * 30 + (2,) + (1,) * 2 + (2,) + (1,) * 28 + (3,))})


# numpy's clip loop orders complex numbers by its PyArray_CGT/CLT macros (real parts, then
# imaginary parts where the real parts are equal, without maximum's NaN tests), keeps a value
# with a NaN part, and lets the bound win ties: every triple of signed zeros, NaN parts and ones.
_CLIP_VALUES = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), complex(np.nan, 0.0),
                complex(0.0, np.nan), complex(1.0, 2.0), complex(1.0, -1.0)]
_CLIP_TRIPLES = [(a, b, c) for a in _CLIP_VALUES for b in _CLIP_VALUES for c in _CLIP_VALUES]
for d in [C, Z]:
    case(f"clip_complex_between_bounds_{d}",
         {"arrays": "np.clip(x, y, z)", "constants": "np.clip(x, -0.0 + 0j, 1 + 1j)", "low_only": "np.clip(x, min=y)",
          "high_only": "np.clip(x, max=z)", "reals": "np.clip(w, y, 0.5)"},
         {"x": (d, (512,), [t[0] for t in _CLIP_TRIPLES]), "y": (d, (512,), [t[1] for t in _CLIP_TRIPLES]),
          "z": (d, (512,), [t[2] for t in _CLIP_TRIPLES]), "w": (F, (512,), [-0.0, 0.0, 0.25, 1.0, np.nan, -1.0, 0.5, 3.0])})

# Complex max/min with `initial` over symbolic axes, which may be empty when the program runs:
# numpy gives `initial` there (the library's search for the first extremum raised "no identity").
for n in (0, 3):
    case(f"complex_extremum_initial_symbolic_length_{n}",
         {"max_rows": "np.max(y, axis=0, initial=-1)", "min_all": "np.min(y, initial=2j)",
          "max_kept": "np.max(y, axis=(0, 1), keepdims=True, initial=-0.0)",
          "min_last": "np.min(w, axis=-1, initial=np.nan)"},
         {"y": (Z, ("n", 2), "special"), "w": (C, (2, "n"), "special")}, sizes={"n": n})

def run_kernel(params, outputs, statements, args, sizes):
    """A user kernel's statements with numpy: each target's indices `_k` (and the reduction indices
    `_rN` of `sum(_rN, N, body)` / `amax(...)`) are broadcast index grids, so that `x[_0, (_1 + 1) % n]`
    gathers like the loops would; a reduction sums (or maxes) its index's grid axis."""
    env = dict(KERNEL_FUNCS, **sizes, **dict(zip(params, args)))
    for target, shape, expr in statements:
        shape = tuple(concrete(shape, sizes))
        d = len(shape)
        reductions = re.findall(r"(?:sum|amax)\((_r\d+),\s*(\w+)", expr)
        total = d + len(reductions)
        grids, axes = {}, {}
        for k, n in enumerate(shape):
            grids[f"_{k}"] = np.arange(n).reshape([n if j == k else 1 for j in range(total)])
        for j, (iname, bound) in enumerate(reductions):
            n = int(bound) if bound.isdigit() else sizes[bound]
            grids[iname] = np.arange(n).reshape([n if a == d + j else 1 for a in range(total)])
            axes[iname] = (d + j, n)

        def reduce(op):
            def f(iname, _bound, body):
                axis, n = axes[iname]
                body = np.asarray(body)
                full = list(np.broadcast_shapes(body.shape, (1,) * total))
                full[axis] = n
                return op(np.broadcast_to(body, full), axis=axis, keepdims=True)
            return f

        # The reductions get their index by name, not its grid.
        quoted = re.sub(r"(sum|amax)\((_r\d+)", r'\1("\2"', expr)
        value = np.asarray(eval(quoted, dict(env, **grids, sum=reduce(np.sum), amax=reduce(np.max))))
        env[target] = np.broadcast_to(value, shape + (1,) * len(reductions)).reshape(shape).copy()
    results = [env[o] for o in outputs]
    return results[0] if len(results) == 1 else tuple(results)


def build(c, index):
    rng_np = np.random.default_rng(1000 + index)
    sizes = c.get("sizes", {})
    out = {"name": c["name"], "sizes": sizes, "inputs": {}, "omit": c.get("omit", [])}
    namespace = {"np": np, "named": lambda e: e, "at": At, "count_named": lambda m, name: m,
                 "cumsum_in_blocks": cumsum_in_blocks}
    for name, spec in c["inputs"].items():
        dtype, shape = spec[0], spec[1]
        opts = spec[2] if len(spec) > 2 else None
        data = make_data(rng_np, dtype, concrete(shape, sizes), opts)
        kind = "data" if isinstance(opts, str) and "data" in opts.split() else "placeholder"
        out["inputs"][name] = {"kind": kind, "dtype": dtype, "shape": list(shape), "data": encode(data)}
        namespace[name] = data
    for s, v in sizes.items():
        namespace[s] = v
    # Functions: name -> (params, [body expressions]); a body sees its parameters, np and the
    # other functions (the Rust suite traces each call into a Function).
    functions = c.get("functions", {})
    if functions:
        out["functions"] = {}
        for n, (p, b, *kernel) in functions.items():
            out["functions"][n] = {"params": p, "body": b}
            if kernel:
                out["functions"][n]["kernel"] = [[t, list(shape), e] for t, shape, e in kernel[0]]
        scope = {"np": np, "at": At, "named": lambda e: e}

        def make(params, body):
            def f(*args):
                ns = dict(scope, **dict(zip(params, args)))
                results = [eval(e, ns) for e in body]
                return results[0] if len(results) == 1 else tuple(results)
            return f

        def make_kernel(params, outputs, statements):
            return lambda *args: run_kernel(params, outputs, statements, args, sizes)

        for n, (p, b, *kernel) in functions.items():
            scope[n] = make_kernel(p, b, kernel[0]) if kernel else make(p, b)
            namespace[n] = scope[n]
    exprs = c["expr"] if isinstance(c["expr"], dict) else {"_pt_out": c["expr"]}
    out["expr"] = exprs
    if "error" in c:
        out["error"] = c["error"]
        run = {}
        for name, spec in c.get("run", {}).items():
            if spec is None:
                run[name] = None
            else:
                data = make_data(rng_np, spec[0], spec[1], spec[2] if len(spec) > 2 else None)
                run[name] = encode(data)
                namespace[name] = data
        out["run"] = run
        if "numpy_error" in c:
            expected = getattr(__builtins__, c["numpy_error"], None) or getattr(np.exceptions, c["numpy_error"])
            for e in exprs.values():
                try:
                    eval(e, namespace)
                except expected:
                    continue
                except Exception as other:
                    raise AssertionError(f"{c['name']}: numpy raised {type(other).__name__}: {other}, not {c['numpy_error']}")
                raise AssertionError(f"{c['name']}: numpy does not raise {c['numpy_error']} for {e}")
        return out
    oracle = c.get("numpy", {})
    out["expected"] = {name: encode(eval(oracle.get(name, e), namespace)) for name, e in exprs.items()}
    return out


names = [c["name"] for c in CASES]
assert len(names) == len(set(names)), "case names must be unique"
golden = {"numpy": np.__version__, "cases": [build(c, i) for i, c in enumerate(CASES)]}
path = os.path.join(os.path.dirname(__file__), "..", "conformance-tests", "data", "cases.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(golden, f, separators=(",", ":"))
print(f"wrote {len(CASES)} cases to {os.path.normpath(path)} with numpy {np.__version__}")
