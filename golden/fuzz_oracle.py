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
import sys
import warnings

import numpy as np

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


def enc_float(v):
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def encode(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype.kind == "b":
        values = [bool(v) for v in flat]
    elif a.dtype.kind in "iu":
        values = [int(v) for v in flat]
    elif a.dtype.kind == "f":
        values = [enc_float(v) for v in flat]
    elif a.dtype.kind == "c":
        values = [[enc_float(v.real), enc_float(v.imag)] for v in flat]
    else:
        raise TypeError(f"numpy gives dtype {a.dtype}")
    return {"dtype": a.dtype.name, "shape": list(a.shape), "values": values}


KNOWN = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
         "complex64", "complex128"}


def answer(req):
    ns = {"np": np, "named": lambda e: e}
    ns.update(req["sizes"])
    ns.update({k: decode(v) for k, v in req["inputs"].items()})
    try:
        for name, expr in req["stmts"]:
            # numpy's uint32 casts of NaN and values below -2^31 depend on the loop it takes; the
            # library follows its scalar loop, which the int64 conversion gives everywhere.
            ns[name] = eval(expr.replace(".astype(np.uint32)", ".astype(np.int64).astype(np.uint32)"), ns)
            dtype = np.asarray(ns[name]).dtype
            if str(dtype) not in KNOWN:
                # float16 (numpy's result for math on bool and 8-bit integers) and the like.
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
