#!/usr/bin/env python3
"""numpy's scalar results at the edges, for pytato-core's `math` module.

Writes pytato-runtime/tests/data/math.json: float-to-integer casts of special values, float floor
division and remainder, and complex arithmetic and functions on a grid of special values (signed
zeros, infinities, NaN, huge, tiny and subnormal parts, points on the branch cuts). The test
`pytato-runtime/tests/math.rs` checks `pytato_runtime::math` against it.
"""
import itertools
import json
import os
import warnings

import numpy as np

warnings.simplefilter("ignore")
inf, nan = float("inf"), float("nan")


def enc(v):
    v = float(v)
    if v != v:
        return "nan"
    if v in (inf, -inf):
        return "inf" if v > 0 else "-inf"
    return v


def encc(z):
    z = complex(z)
    return [enc(z.real), enc(z.imag)]


out = {"numpy": np.__version__}

CAST_VALUES = [nan, inf, -inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 127.9, 128.0, -129.0, 255.5, 256.0, 300.7,
               -300.7, 32767.5, 65535.9, 65536.0, 2.0**31 - 1, 2.0**31 - 0.5, 2.0**31, -2.0**31, -2.0**31 - 1,
               3e9, -3e9, 2.0**32, 2.0**32 + 3, 2.0**53, 2.0**63 - 1024, 2.0**63, -2.0**63, -2.0**63 - 2048,
               1e19, 2.0**64, 2.0**64 - 2048, 1e20, -1e20, 1e300, -1e300, 5e-324]
casts = []
for src in ["float64", "float32"]:
    vals = np.array(CAST_VALUES, dtype=src)
    for dst in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        # One element at a time: numpy's scalar loop (its vector loop differs for uint32).
        casts.append({"src": src, "dst": dst, "x": [enc(v) for v in vals],
                      "y": [int(np.array([v]).astype(dst)[0]) for v in vals]})
out["casts"] = casts

DIV_VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, -7.5, 5.0, 1e-300, 1.797e308, -2.517, 3.0, inf, -inf, nan, 1e16, 0.1]
pairs = list(itertools.product(DIV_VALUES, repeat=2))
out["divmod"] = [{"a": enc(a), "b": enc(b), "floor_divide": enc(np.floor_divide(a, b)),
                  "remainder": enc(np.remainder(a, b))} for a, b in pairs]

PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, -3.0, 1e-310, 5e-324, 1e-200, 1e200, 1e308, -1e308, 710.0,
         -745.5, 1e22, inf, -inf, nan, 1.0 - 2.0**-30, 2.0**-30]
grid = [complex(a, b) for a in PARTS for b in PARTS]
# And ordinary values over many magnitudes, both signs.
rng = np.random.default_rng(20261122)
mags = 10.0 ** rng.uniform(-6, 6, size=(300, 2))
grid += [complex(a, b) for a, b in mags * rng.choice([-1.0, 1.0], size=(300, 2))]
funcs = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan"]
out["complex_unary"] = {f: [[encc(z), encc(getattr(np, f)(np.complex128(z)))] for z in grid] for f in funcs}
SMALL = [0.0, -0.0, 1.0, -2.5, 3.0, 1e300, -1e-300, inf, -inf, nan]
cgrid = [complex(a, b) for a in SMALL for b in SMALL]
out["complex_div"] = [[encc(a), encc(b), encc(np.complex128(a) / np.complex128(b))] for a in cgrid[::3] for b in cgrid]
EXPONENTS = [complex(0, 0), complex(1, 0), complex(2, 0), complex(3, 0), complex(-1, 0), complex(5, 0),
             complex(-7, 0), complex(0.5, 0), complex(2, 1), complex(-0.5, 0.25), complex(150, 0),
             # Infinite exponents: glibc's cpow, exp(b log a) with C's complex product (Annex G).
             complex(-inf, 0), complex(inf, 0), complex(-inf, 1), complex(0.5, inf)]
BASES = [complex(0, 0), complex(1, 2), complex(-1.5, 0.5), complex(0, -3), complex(1e-3, 1e3), complex(-2, 0),
         complex(inf, 0), complex(nan, 0), complex(0.5, -0.5)]
out["complex_pow"] = [[encc(a), encc(b), encc(np.complex128(a) ** np.complex128(b))] for a in BASES for b in EXPONENTS]
# Every edge base to an infinite or NaN power (where signed zeros and NaN signs come from glibc).
out["complex_pow"] += [[encc(a), encc(b), encc(np.complex128(a) ** np.complex128(b))]
                       for a in cgrid for b in [complex(-inf, 0), complex(inf, 0), complex(2.5, -inf), complex(nan, 0)]]

path = os.path.join(os.path.dirname(__file__), "..", "pytato-runtime", "tests", "data", "math.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
print(f"wrote {os.path.normpath(path)} with numpy {np.__version__}")
