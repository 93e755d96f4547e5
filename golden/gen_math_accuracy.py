#!/usr/bin/env python3
"""Correctly rounded float64 values of the transcendental functions, from mpmath at 160 bits.

Writes conformance-tests/tests/data/math_accuracy.json: for each function, arguments from fixed
pseudo-random draws over its domain (moderate, huge, tiny and near-singular ranges) and the
correctly rounded result of each. The test `conformance-tests/tests/math_accuracy.rs` measures
every backend's distance from them in units in the last place. numpy is no oracle here: its own
SIMD functions are a unit off in places, and differently on each processor.

Values are written with float.hex(), exactly. Needs mpmath (pip install mpmath); without it the
committed file stays as it is.
"""
import json
import math
import os
import random
import sys

try:
    import mpmath
except ImportError:
    print("gen_math_accuracy.py: mpmath is not installed (pip install mpmath); "
          "conformance-tests/tests/data/math_accuracy.json is left as it is")
    sys.exit(0)

mpmath.mp.prec = 160
rng = random.Random(20261130)
N = 200


def uniform(lo, hi):
    return [rng.uniform(lo, hi) for _ in range(N)]


def decades(lo, hi, sign=1.0):
    return [sign * 10.0 ** rng.uniform(lo, hi) for _ in range(N)]


def cbrt(x):
    return mpmath.sign(x) * mpmath.cbrt(abs(x))


FUNCTIONS = {
    "exp": (mpmath.exp, uniform(-745.0, 709.7) + uniform(-1.0, 1.0) + decades(-20, -8) + decades(-20, -8, -1.0)),
    "expm1": (mpmath.expm1, uniform(-2.0, 2.0) + uniform(-40.0, 709.0) + decades(-20, 0) + decades(-20, 0, -1.0)),
    "exp2": (lambda x: mpmath.power(2, x), uniform(-1074.0, 1023.0) + uniform(-1.0, 1.0)),
    "log": (mpmath.log, decades(-307, 308) + uniform(0.5, 2.0) + decades(-323, -308)),
    "log1p": (mpmath.log1p, uniform(-0.99, 3.0) + decades(-20, 300) + decades(-20, -0.005, -1.0)),
    "log2": (lambda x: mpmath.log(x, 2), decades(-300, 300) + uniform(0.5, 2.0)),
    "log10": (mpmath.log10, decades(-300, 300) + uniform(0.5, 2.0)),
    "sin": (mpmath.sin, uniform(-10.0, 10.0) + uniform(-1e5, 1e5)),
    "cos": (mpmath.cos, uniform(-10.0, 10.0) + uniform(-1e5, 1e5)),
    "tan": (mpmath.tan, uniform(-1.5, 1.5) + uniform(-100.0, 100.0)),
    "arcsin": (mpmath.asin, uniform(-1.0, 1.0)),
    "arccos": (mpmath.acos, uniform(-1.0, 1.0)),
    "arctan": (mpmath.atan, uniform(-10.0, 10.0) + decades(-10, 20)),
    "sinh": (mpmath.sinh, uniform(-5.0, 5.0) + uniform(-700.0, 700.0)),
    "cosh": (mpmath.cosh, uniform(-5.0, 5.0) + uniform(-700.0, 700.0)),
    "tanh": (mpmath.tanh, uniform(-3.0, 3.0) + uniform(-25.0, 25.0)),
    "arcsinh": (mpmath.asinh, uniform(-10.0, 10.0) + decades(-10, 300) + decades(-10, 300, -1.0)),
    "arccosh": (mpmath.acosh, uniform(1.0, 10.0) + decades(0, 300)),
    "arctanh": (mpmath.atanh, uniform(-0.999, 0.999)),
    "cbrt": (cbrt, uniform(-100.0, 100.0) + decades(-300, 300) + decades(-300, 300, -1.0)),
}

out = {"mpmath": mpmath.__version__, "precision_bits": mpmath.mp.prec, "functions": {}}
for name, (f, args) in FUNCTIONS.items():
    pairs = []
    for x in args:
        y = float(f(mpmath.mpf(x)))
        if math.isfinite(y):
            pairs.append([x.hex(), y.hex()])
    out["functions"][name] = pairs

path = os.path.join("conformance-tests", "tests", "data", "math_accuracy.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
print(f"wrote {path}: {sum(len(p) for p in out['functions'].values())} values")
