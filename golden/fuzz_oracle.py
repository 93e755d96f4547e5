#!/usr/bin/env python3
"""numpy's answers for the differential fuzzer (`cargo xtask fuzz`).

Reads one JSON request per line on stdin: {"inputs": {name: array}, "sizes": {name: int},
"stmts": [[name, expr], ...], "outputs": [[output, name], ...]}, where arrays are
{"dtype", "shape", "values"} as in the golden files. Runs the statements with numpy and writes
one line: {"outputs": {output: array}}, or {"error": kind} where kind is "IndexOutOfBounds" for
numpy's IndexError (what the library reports for an index out of range) and
"numpy:<exception>: <message>" for anything numpy refuses.
"""
import json
import re
import sys
import warnings

import numpy as np

from at import At
from encoding import encode

warnings.simplefilter("ignore")


def dec_float(v):
    return float(v) if isinstance(v, str) else v


def decode(a):
    dtype = np.dtype(a["dtype"])
    if dtype.kind == "c":
        vals = [complex(dec_float(re), dec_float(im)) for re, im in a["values"]]
    elif dtype.kind == "f":
        vals = [dec_float(v) for v in a["values"]]
    else:
        vals = a["values"]
    return np.array(vals, dtype=dtype).reshape(a["shape"])


# numpy hands float and complex products to BLAS, which is not IEEE with NaN and infinities (it
# skips zero terms, so 0 * inf gives 0). The library's products are IEEE, so numpy's are computed
# with einsum's own loops instead (`optimize=False` never calls BLAS).
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def nb_dot(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim == 1:
        sa = LETTERS[: a.ndim - 1] + "z"
        return np.einsum(f"{sa},z->{sa[:-1]}", a, b, optimize=False)
    sa = LETTERS[: a.ndim - 1] + "z"
    sb = LETTERS[a.ndim - 1 : a.ndim - 1 + b.ndim - 2] + "zy"
    return np.einsum(f"{sa},{sb}->{sa[:-1]}{sb[:-2]}y", a, b, optimize=False)


def nb_matmul(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 1 and b.ndim == 1:
        return np.einsum("i,i->", a, b, optimize=False)
    if a.ndim == 1:
        return np.einsum("k,...kj->...j", a, b, optimize=False)
    if b.ndim == 1:
        return np.einsum("...ik,k->...i", a, b, optimize=False)
    return np.einsum("...ik,...kj->...ij", a, b, optimize=False)


def nb_vdot(a, b):
    return np.einsum("i,i->", np.conj(np.ravel(a)), np.ravel(b), optimize=False)


def nb_tensordot(a, b, axes=2):
    a, b = np.asarray(a), np.asarray(b)
    n = axes
    sa = LETTERS[: a.ndim]
    sb = sa[a.ndim - n :] + LETTERS[a.ndim : a.ndim + b.ndim - n]
    return np.einsum(f"{sa},{sb}->{sa[: a.ndim - n]}{sb[n:]}", a, b, optimize=False)


def only_for_inexact(fast, original):
    """`fast` where the product is float or complex (where numpy calls BLAS), else numpy's own."""

    def product(a, b, *args, **kwargs):
        if np.result_type(a, b).kind in "fc":
            return np.asarray(fast(a, b, *args, **kwargs)).astype(np.result_type(a, b))
        return original(a, b, *args, **kwargs)

    return product


def round_scalar_loop(a, decimals=0):
    """`np.round`, whose integer results go through float64 and back: numpy's uint32 cast of
    values past 2^32 depends on the loop it takes (see `answer`); the library follows the scalar
    loop, the int64 conversion."""
    a = np.asarray(a)
    if a.dtype == np.uint32 and decimals < 0:
        f = 10.0 ** -decimals
        return (np.rint(a.astype(np.float64) / f) * f).astype(np.int64).astype(np.uint32)
    return np.round(a, decimals)


def power_in_double(a, b):
    """`np.power`, with complex64 results computed in complex128 and rounded once, as the library
    computes complex64 functions (README, "Semantics at the edges"): numpy's single-precision
    `cpowf` reduces huge angles inexactly and overflows where the rounded result is finite."""
    result = np.power(a, b)
    if np.asarray(result).dtype != np.complex64:
        return result
    # A Python scalar is weak: numpy rounds it to complex64 first (0.1 is 0.1f), then computes.
    wide = [np.asarray(v).astype(np.complex64).astype(np.complex128) for v in (a, b)]
    return np.asarray(np.power(*wide)).astype(np.complex64)


def half_in_single(fn):
    """`fn`, with float16 results computed from float32 operands and rounded once: the library
    sums float16 in float32 (README, "float16"), which numpy does along a contiguous axis but not
    along a strided one or in einsum's outer loops, where it rounds to float16 at every step."""

    def wrapped(*args, **kwargs):
        result = fn(*args, **kwargs)
        if np.asarray(result).dtype != np.float16:
            return result
        wide = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a for a in args]
        return np.asarray(fn(*wide, **kwargs)).astype(np.float16)

    return wrapped


PRODUCTS = {
    "round": round_scalar_loop,
    "power": power_in_double,
    "dot": half_in_single(only_for_inexact(nb_dot, np.dot)),
    "matmul": half_in_single(only_for_inexact(nb_matmul, np.matmul)),
    "vdot": half_in_single(only_for_inexact(nb_vdot, np.vdot)),
    "tensordot": half_in_single(only_for_inexact(nb_tensordot, np.tensordot)),
    "sum": half_in_single(np.sum),
    "prod": half_in_single(np.prod),
    "einsum": half_in_single(np.einsum),
}


class NoBlas:
    """`np` with the products above."""

    def __getattr__(self, name):
        return PRODUCTS.get(name, getattr(np, name))


def without_blas(expr):
    # The fuzzer writes `(a @ b)` with names as operands, and `(a ** b)` with names or literals
    # (a literal with a sign, `-1 ** x`, is `-(1 ** x)` in Python and stays as written).
    expr = re.sub(r"\((\w+) @ (\w+)\)", r"np.matmul(\1, \2)", expr)
    return re.sub(r"\(([A-Za-z_0-9][\w.]*) \*\* ([A-Za-z_0-9][\w.]*)\)", r"np.power(\1, \2)", expr)


KNOWN = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
         "complex64", "complex128"}


def answer(req):
    ns = {"np": NoBlas(), "named": lambda e: e, "at": At}
    ns.update(req["sizes"])
    ns.update({k: decode(v) for k, v in req["inputs"].items()})
    try:
        for name, expr in req["stmts"]:
            # numpy's uint32 casts of NaN and values below -2^31 depend on the loop it takes; the
            # library follows its scalar loop, which the int64 conversion gives everywhere.
            expr = without_blas(expr).replace(".astype(np.uint32)", ".astype(np.int64).astype(np.uint32)")
            ns[name] = eval(expr, ns)
            dtype = np.asarray(ns[name]).dtype
            if str(dtype) not in KNOWN:
                # longdouble and the like.
                return {"error": f"numpy:dtype: numpy computes in {dtype}, which the library does not have"}
        return {"outputs": {out: encode(ns[term]) for out, term in req["outputs"]}}
    except IndexError as e:
        return {"error": "IndexOutOfBounds", "message": str(e)}
    except Exception as e:  # numpy refuses: the caller decides what that means
        return {"error": f"numpy:{type(e).__name__}: {e}"}


for line in sys.stdin:
    if line.strip():
        sys.stdout.write(json.dumps(answer(json.loads(line)), separators=(",", ":")) + "\n")
        sys.stdout.flush()
