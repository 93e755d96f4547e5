#!/usr/bin/env python3
"""Records numpy's result shape and dtype (or the exception it raises) for the frontend functions.

Each output line is a JSON object:
  {"op": NAME, "args": [ARG, ...], "shape": [...], "dtype": "float64"}   numpy's result
  {"op": NAME, "args": [ARG, ...], "error": "TypeError"}                  numpy raised

An ARG is {"array": SHAPE, "dtype": D} (an input array; SHAPE entries are ints or the symbolic
lengths "n" and "m"), {"scalar": {"int"|"float"|"bool": v}} / {"scalar": {"complex": [re, im]}}
(a Python scalar), {"arrays": [ARRAY, ...]} (a list of arrays), or a plain JSON value (axes,
shapes, spec strings, index items). numpy sees n = 7 and m = 11; the Rust test keeps them
symbolic and evaluates the shape it gets with the same values.

Run through `cargo xtask golden`; the Rust test reads the file without Python.
"""
import json
import os
import warnings

import numpy as np

warnings.simplefilter("ignore")
SIZES = {"n": 7, "m": 11}
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
rows = []


def concrete(shape):
    return tuple(SIZES.get(d, d) if isinstance(d, str) else d for d in shape)


def arr(shape, dtype):
    return {"array": list(shape), "dtype": dtype}


def scalar(v):
    if isinstance(v, bool):
        return {"scalar": {"bool": v}}
    if isinstance(v, int):
        return {"scalar": {"int": v}}
    if isinstance(v, float):
        return {"scalar": {"float": v}}
    return {"scalar": {"complex": [v.real, v.imag]}}


def to_numpy(a):
    if isinstance(a, dict) and "array" in a:
        return np.zeros(concrete(a["array"]), dtype=a["dtype"])
    if isinstance(a, dict) and "arrays" in a:
        return [to_numpy(x) for x in a["arrays"]]
    if isinstance(a, dict) and "scalar" in a:
        (kind, v), = a["scalar"].items()
        return {"int": int, "float": float, "bool": bool}.get(kind, lambda c: complex(*c))(v)
    return a


def record(op, fn, *args):
    row = {"op": op, "args": list(args)}
    try:
        result = np.asarray(fn(*[to_numpy(a) for a in args]))
        row["shape"] = list(result.shape)
        row["dtype"] = result.dtype.name
    except Exception as e:  # numpy's verdict is the expected value
        row["error"] = type(e).__name__
    rows.append(row)


# --- Elementwise binary -------------------------------------------------------------------------
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "power": np.power,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "maximum": np.maximum, "minimum": np.minimum, "arctan2": np.arctan2,
}
MIXED = [("int8", "uint8"), ("float16", "int16"), ("float16", "complex64"), ("uint8", "float16"), ("int64", "uint64"), ("int32", "float32"), ("uint16", "float32"),
         ("float32", "complex128"), ("bool", "int16"), ("uint32", "int8"), ("float64", "complex64")]
SHAPES = [((3,), (3,)), ((2, 1), (3,)), (("n", 4), (4,)), ((1, "n"), ("m", 1)), ((), (2, 3))]
for name, fn in BINARY.items():
    for i, d in enumerate(DTYPES):
        sa, sb = SHAPES[i % len(SHAPES)]
        record(name, fn, arr(sa, d), arr(sb, d))
    for a, b in MIXED:
        record(name, fn, arr((2, 3), a), arr((3,), b))
    for d in ["bool", "uint8", "int32", "float32", "complex64"]:
        for v in [2, 0.5, 1j, True]:
            record(name, fn, arr(("n",), d), scalar(v))
        record(name, fn, scalar(3), arr((2,), d))
record("add", np.add, arr((2,), "uint8"), scalar(300))
record("add", np.add, arr((2,), "int8"), scalar(-129))
record("less", np.less, arr((2,), "uint8"), scalar(300))
record("equal", np.equal, arr((2,), "uint64"), scalar(-1))
record("add", np.add, arr((2, 3), "float64"), arr((4,), "float64"))
record("add", np.add, arr(("n",), "float64"), arr(("m",), "float64"))

# --- Elementwise unary --------------------------------------------------------------------------
UNARY = {
    "negative": np.negative, "invert": np.invert, "logical_not": np.logical_not, "abs": np.abs,
    "real": np.real, "imag": np.imag, "conj": np.conj, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin,
    "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "floor": np.floor, "ceil": np.ceil, "isnan": np.isnan,
}
for name, fn in UNARY.items():
    for d in DTYPES:
        record(name, fn, arr(("n", 2), d))
for d in DTYPES:
    for to in ["bool", "int8", "uint64", "float16", "float32", "complex128"]:
        record("astype", lambda a, t: a.astype(t), arr((3,), d), to)

# --- where ----------------------------------------------------------------------------------------
record("where", np.where, arr((3,), "bool"), arr((3,), "int8"), arr((3,), "float32"))
record("where", np.where, arr((2, 1), "float64"), arr((3,), "int64"), scalar(0.5))
record("where", np.where, arr(("n", 1), "bool"), scalar(1), scalar(2))
record("where", np.where, arr((3,), "bool"), arr((3,), "uint8"), scalar(7))
record("where", np.where, arr((3,), "bool"), arr((2,), "uint8"), scalar(7))

# --- Reductions -----------------------------------------------------------------------------------
REDUCTIONS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "all": np.all,
              "any": np.any, "mean": np.mean}
RED_DTYPES = ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64", "complex64"]
AXES = [None, 0, -1, [0, 2], [1]]
for name, fn in REDUCTIONS.items():
    for d in RED_DTYPES:
        if name in ("max", "min") and d.startswith("complex"):
            continue  # documented: complex max/min reductions are not supported
        for ax in AXES:
            record(name, lambda a, ax, k, i, fn=fn: fn(a, axis=None if ax is None else tuple(ax) if isinstance(ax, list) else ax, keepdims=k), arr((2, "n", 4), d), ax, False, None)
        record(name, lambda a, ax, k, i, fn=fn: fn(a, axis=ax, keepdims=k), arr((2, "n", 4), d), 1, True, None)
    record(name, lambda a, ax, k, i, fn=fn: fn(a, axis=ax, keepdims=k), arr((2, 3), "float64"), 2, False, None)
    record(name, lambda a, ax, k, i, fn=fn: fn(a, axis=tuple(ax), keepdims=k), arr((2, 3), "float64"), [0, 0], False, None)
for name in ["sum", "prod", "max", "min"]:
    fn = REDUCTIONS[name]
    record(name, lambda a, ax, k, i, fn=fn: fn(a, axis=ax, keepdims=k, initial=to_numpy(i)), arr((0, 3), "int16"), 0, False, scalar(5))
record("max", lambda a, ax, k, i: np.max(a, axis=ax, keepdims=k), arr((0, 3), "float64"), 0, False, None)
record("min", lambda a, ax, k, i: np.min(a, axis=ax, keepdims=k), arr((0, 3), "float64"), 1, False, None)

# --- Linear algebra -------------------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(("n", 3), "float64"), ((3, 5), "float64")]),
    ("ij,jk", [((2, 3), "float32"), ((3, 5), "float64")]),
    ("ii->i", [((4, 4), "float64")]),
    ("ii", [((4, 4), "int32")]),
    ("ij->ji", [(("n", "m"), "float64")]),
    ("ij->", [((2, 3), "complex64")]),
    ("i,i->i", [((1,), "float64"), ((3,), "float64")]),
    ("i,j->ij", [(("n",), "float64"), (("m",), "float64")]),
    ("...ij,...jk->...ik", [((7, 1, 2, 3), "float64"), ((5, 3, 4), "float64")]),
    ("...i,...i", [((2, 3), "float64"), ((3,), "float64")]),
    ("i...->...", [((2, 3, 4), "float64")]),
    ("ij,jk,kl->il", [((2, 3), "float64"), ((3, 4), "float64"), ((4, 5), "float64")]),
    ("ba,ac", [((2, 3), "float64"), ((3, 4), "float64")]),
    ("ij,ej->ei", [((20, 20), "float64"), (("n", 20), "float64")]),
    ("Ab,bA", [((2, 3), "float64"), ((3, 2), "float64")]),
    ("ij,jk->ik", [((2, 3), "float64"), ((4, 5), "float64")]),
    ("ij,jk->iz", [((2, 3), "float64"), ((3, 5), "float64")]),
    ("ij->ii", [((2, 2), "float64")]),
    ("ijk->ij", [((2, 2), "float64")]),
    ("ij,jk->ik", [((2, 3), "float64")]),
    ("i->i", [((3,), "bool")]),
    # A label repeated in one operand needs equal lengths (no broadcast of a 1 there).
    ("ii->i", [((1, 3), "float64")]),
    ("jlj,->lj", [((0, 2, 1), "bool"), ((), "float32")]),
    # Axes an ellipsis stands for must reach an explicit output through its '...'.
    ("...i->i", [((2, 3), "float64")]),
    ("...,...j,kl->", [((), "bool"), ((1, 2), "float32"), ((2, 3), "uint8")]),
    ("i...->i", [((3,), "float64")]),
]
for spec, ops in EINSUM:
    record("einsum", lambda s, arrays: np.einsum(s, *arrays), spec, {"arrays": [arr(s, d) for s, d in ops]})
MATMUL = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((7, 1, 2, 3), (5, 3, 4)),
          ((2, 3), (4, 5)), ((), (3,)), ((1, 2, 3), (3, 3, 2)), (("n", 3), (3, "m")), ((2, 2, 3), (4, 3, 5))]
for sa, sb in MATMUL:
    record("matmul", np.matmul, arr(sa, "float64"), arr(sb, "float32"))
DOT = [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 6)), ((), (3, 2)),
       ((3,), (3, 2)), ((2, 3), (2, 3)), (("n", 4), (4, "m"))]
for sa, sb in DOT:
    record("dot", np.dot, arr(sa, "int32"), arr(sb, "float64"))
for sa, sb, d in [((2, 3), (6,), "complex64"), ((3,), (3,), "int8"), ((2,), (3,), "float64")]:
    record("vdot", np.vdot, arr(sa, d), arr(sb, d))
TENSORDOT = [((3, 4, 5), (4, 3, 2), [[1, 0], [0, 1]]), ((3, 4), (4, 5), 1), ((2, 3), (2, 3), 0),
             ((2, 3), (3, 2), 2), ((3, 4), (5, 4), [[1], [1]]), ((3, 4), (5, 4), [[1], [0]])]
for sa, sb, axes in TENSORDOT:
    record("tensordot", lambda a, b, ax: np.tensordot(a, b, axes=ax), arr(sa, "float64"), arr(sb, "float64"), axes)

# --- Shape manipulation ---------------------------------------------------------------------------
for shape, new, order in [((2, 6), [3, 4], "C"), ((2, 6), [3, -1], "F"), ((2, 6), [5, -1], "C"),
                          (("n", 6), [-1, 3], "C"), ((), [1, 1], "C"), ((0, 4), [2, -1, 0], "C"),
                          ((0, 4), [-1], "C"), ((2, 6), [-1, -1], "C"), ((2, 3), [6], "F"), ((2, 3), [7], "C")]:
    record("reshape", lambda a, s, o: np.reshape(a, s, order=o), arr(shape, "float64"), new, order)
for shape, axes in [((2, 3, 4), None), ((2, 3, 4), [1, -1, 0]), ((2, 3), [0, 0]), ((2, 3), [0]), (("n", 3), None)]:
    record("transpose", lambda a, ax: np.transpose(a, ax), arr(shape, "int8"), axes)
for i, j in [(0, 2), (0, -1), (1, 3)]:
    record("swapaxes", np.swapaxes, arr((2, 3, 4), "float32"), i, j)
for src, dst in [([0], [-1]), ([0, 1], [2, 0]), ([0], [3]), ([0, 0], [1, 2])]:
    record("moveaxis", np.moveaxis, arr((2, 3, 4), "float32"), src, dst)
for shift, axis in [(1, 0), (-7, 1), (5, None), (1, 2)]:
    record("roll", lambda a, s, ax: np.roll(a, s, axis=ax), arr((3, "n"), "float64"), shift, axis)
for shapes, axis in [([(3,), (3,)], 0), ([(3,), (3,)], -1), ([(2, 3), (2, 3), (2, 3)], 1), ([(3,), (4,)], 0), ([(3,), (3,)], 2)]:
    record("stack", lambda arrays, ax: np.stack(arrays, axis=ax), {"arrays": [arr(s, "int16") for s in shapes]}, axis)
record("stack", lambda arrays, ax: np.stack(arrays, axis=ax), {"arrays": [arr((3,), "int8"), arr((3,), "float32")]}, 0)
for shapes, axis in [([("n", 2), (1, 2)], 0), ([(2, 3), (2, 4)], -1), ([(2, 3), (3, 3)], 1), ([(), ()], 0), ([(2,), (2, 1)], 0)]:
    record("concatenate", lambda arrays, ax: np.concatenate(arrays, axis=ax), {"arrays": [arr(s, "float64") for s in shapes]}, axis)
record("concatenate", lambda arrays, ax: np.concatenate(arrays, axis=ax), {"arrays": [arr((2,), "uint8"), arr((3,), "int8")]}, 0)
for shape, target in [((3, 1), [2, 3, 4]), ((3, 1), [4, 4]), ((3,), [3]), ((1,), [0]), (("n", 1), ["n", 5]), ((2, 3), [3])]:
    record("broadcast_to", lambda a, t: np.broadcast_to(a, concrete(t)), arr(shape, "float64"), target)
for axis in [None, 0, [0, 2], 1, -1]:
    record("squeeze", lambda a, ax: np.squeeze(a, axis=tuple(ax) if isinstance(ax, list) else ax), arr((1, 3, 1), "float64"), axis)
for axes in [[0], [-1], [0, -1], [1, 1], [4], [0, 2, 3]]:
    record("expand_dims", lambda a, ax: np.expand_dims(a, tuple(ax)), arr((3, 4), "float64"), axes)
for shape in [(2, 3), (), (0, 5), ("n", 2)]:
    record("ravel", np.ravel, arr(shape, "uint32"))
for shape, count, axis in [((2, 3), 2, 1), ((2, 3), 0, None), ((), 3, 0), ((), 2, -1), ((), 2, 1), ((3,), 2, None),
                          (("n", 2), 3, 0), ((2, 3), -1, 0), ((2, 3), 2, 2)]:
    record("repeat", lambda a, c, ax: np.repeat(a, c, axis=ax), arr(shape, "int16"), count, axis)
for shape, n, axis in [((5, 3), 1, 0), ((5, 3), 2, -1), ((5, 3), 0, 0), ((), 0, -1), ((), 1, -1), ((5, 3), 0, 7),
                       ((5, 3), 6, 0), ((3,), 1, 1), (("n", 2), 2, 0)]:
    record("diff", lambda a, k, ax: np.diff(a, k, axis=ax), arr(shape, "bool" if n == 2 else "uint8"), n, axis)

# --- Creation -------------------------------------------------------------------------------------
for shape, d in [([2, 3], "float64"), (["n", 3], "int8"), ([], "complex64"), ([0], "bool")]:
    record("zeros", lambda s, dt: np.zeros(concrete(s), dt), shape, d)
    record("ones", lambda s, dt: np.ones(concrete(s), dt), shape, d)
for value, d in [(7, None), (2.5, None), (1j, None), (True, None), (7, "float32"), (300, "uint8")]:
    record("full", lambda s, v, dt: np.full(concrete(s), to_numpy(v), dt), [2, "n"], scalar(value), d)
for n, m, k, d in [(3, None, 0, "float64"), (3, 4, 1, "int32"), (2, 5, -1, "bool")]:
    record("eye", lambda n, m, k, dt: np.eye(n, m, k, dt), n, m, k, d)
for start, stop, step, d in [(0, 10, 3, None), (0.0, 1.0, 0.25, None), (5, 0, -2, None), (0, 5, 1, "float32"),
                             (3, 3, 1, None), (0, 10, 0, None), (1, 2.5, 0.5, None)]:
    record("arange", lambda a, b, c, dt: np.arange(to_numpy(a), to_numpy(b), to_numpy(c), dt), scalar(start), scalar(stop), scalar(step), d)
for num, endpoint in [(5, True), (5, False), (1, True), (0, True)]:
    record("linspace", lambda n, e: np.linspace(0.0, 1.0, n, endpoint=e), num, endpoint)
for d in ["float32", "int16", "bool", "complex128"]:
    for like, fn in [("zeros_like", np.zeros_like), ("ones_like", np.ones_like)]:
        record(like, lambda a, dt, fn=fn: fn(a, dtype=dt), arr(("n", 2), d), None)
        record(like, lambda a, dt, fn=fn: fn(a, dtype=dt), arr(("n", 2), d), "float64")
    record("full_like", lambda a, v, dt: np.full_like(a, to_numpy(v), dtype=dt), arr((2, 3), d), scalar(3), None)
for shape, widths in [((2, 3), [[1, 0], [2, 2]]), (("n",), [[3, 1]]), ((2, 3), [[1, 1]]), ((), [])]:
    record("pad", lambda a, w: np.pad(a, w if w else 0), arr(shape, "float64"), widths)

# --- Indexing -------------------------------------------------------------------------------------
def index_items(items):
    out = []
    for it in items:
        if it == "newaxis":
            out.append(None)
        elif it == "ellipsis":
            out.append(Ellipsis)
        elif isinstance(it, int):
            out.append(it)
        elif "slice" in it:
            out.append(slice(*it["slice"]))
        else:
            out.append(np.zeros(concrete(it["array"]), it["dtype"]))
    return tuple(out)


def sl(start=None, stop=None, step=None):
    return {"slice": [start, stop, step]}


I2 = arr((2, 3), "int64")
J = arr((3,), "int32")
INDEX = [
    [1], [-1], [5], [-6], [1, sl(None, None, 2), -1], [sl(5, 0, -2)], ["ellipsis", 0], [0, "ellipsis"],
    ["newaxis"], [sl(), "newaxis", sl()], ["ellipsis", "newaxis"], [sl(None, None, -1)], [sl(-2, None)],
    [sl(10, 20)], [sl(3, 1)], [sl(None, None, 0)], [0, 0, 0, 0], ["ellipsis", "ellipsis"],
    [sl(), I2, J], [I2, sl(), J], [0, sl(), J], [sl(), 0, J], [I2], [I2, J], [J, "newaxis", J],
    [sl(), J, "newaxis", 0], ["newaxis", I2, sl(), J], [sl(1, 4), J, sl(None, None, -1)],
    [arr((2,), "float64")], [arr((2,), "bool")], [arr((2,), "int64"), arr((3,), "int64")],
    [arr((), "int64")], [-1, sl(None, None, 3), sl(2, None, -3)],
    # An Ellipsis between index arrays separates them, even one that stands for no axes.
    [sl(), 0, "ellipsis", J], [sl(), J, "ellipsis", I2], [arr((), "int64"), "ellipsis", sl(), J],
]
for items in INDEX:
    record("index", lambda a, it: a[index_items(it)], arr((5, 6, 7), "float64"), items)
for items in [[sl(1, None)], [-1], [sl(None, -2)], [sl(None, None, -1)], [sl(2, None), sl()]]:
    record("index", lambda a, it: a[index_items(it)], arr(("n", 4), "float64"), items)

out = os.path.join(os.path.dirname(__file__), "..", "pytato-frontend", "tests", "data", "frontend_shapes.jsonl")
with open(out, "w") as f:
    for row in rows:
        f.write(json.dumps(row) + "\n")
print(f"wrote {len(rows)} rows to {os.path.normpath(out)} with numpy {np.__version__}")
