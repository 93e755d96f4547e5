"""Random bit patterns through the exactly rounded operations, on every backend, against numpy.

Floats of each width as random bits (every class: subnormals, NaN, infinities, signed zeros,
with a third of them small subnormals), integers of each dtype over their whole range (the
extremes and 0, 1, -1 first), alone and in mixed signed/unsigned pairs. Every operation here has
one correct result, so each backend must give numpy's bits; the script prints each operation
where one does not. Sums and scans of floats are left out (the library's summation order is not
numpy's, see ARCHITECTURE.md), and so are functions numpy rounds its own way (`cbrt`).

    SEED=0 target/python-venv/bin/python python/sweeps/pattern_sweep.py
"""

from __future__ import annotations

import os
import warnings

import numpy as np

import pytato_rs as pt
from bits import same

warnings.simplefilter("ignore")
rng = np.random.default_rng(int(os.environ.get("SEED", "0")))
BACKENDS = ["interp", "cranelift", "wgpu"]
N = 4096

FLOAT_OPS = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "sqrt": lambda m, a, b: m.sqrt(a), "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b), "fmax": lambda m, a, b: m.fmax(a, b),
    "floor": lambda m, a, b: m.floor(a), "ceil": lambda m, a, b: m.ceil(a), "rint": lambda m, a, b: m.rint(a),
    "trunc": lambda m, a, b: m.trunc(a), "abs": lambda m, a, b: m.abs(a), "negative": lambda m, a, b: -a,
    "copysign": lambda m, a, b: m.copysign(a, b), "nextafter": lambda m, a, b: m.nextafter(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b), "remainder": lambda m, a, b: m.remainder(a, b),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b), "less": lambda m, a, b: a < b,
    "equal": lambda m, a, b: m.equal(a, b), "isfinite": lambda m, a, b: m.isfinite(a),
    "signbit": lambda m, a, b: m.signbit(a), "spacing": lambda m, a, b: m.spacing(a),
    "square": lambda m, a, b: m.square(a), "reciprocal": lambda m, a, b: m.reciprocal(a),
    "ldexp": lambda m, a, b: m.ldexp(a, 3), "frexp": lambda m, a, b: m.frexp(a)[0],
    "frexp_exponent": lambda m, a, b: m.frexp(a)[1], "modf": lambda m, a, b: m.modf(a)[0],
    "hypot": lambda m, a, b: m.hypot(a, b), "sign": lambda m, a, b: m.sign(a),
    "to float16": lambda m, a, b: a.astype(np.float16), "to float32": lambda m, a, b: a.astype(np.float32),
    "to float64": lambda m, a, b: a.astype(np.float64),
    "to int8": lambda m, a, b: m.where(m.abs(a) < 100, a, 0).astype(np.int8),
    "to int64": lambda m, a, b: m.where(m.abs(a) < 1e15, a, 0).astype(np.int64),
    "max": lambda m, a, b: m.max(a), "sort": lambda m, a, b: m.sort(a), "argmin": lambda m, a, b: m.argmin(a),
}

INT_OPS = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "floor_divide": lambda m, a, b: m.floor_divide(a, b), "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b), "bitwise_and": lambda m, a, b: m.bitwise_and(a, b),
    "bitwise_xor": lambda m, a, b: m.bitwise_xor(a, b), "invert": lambda m, a, b: m.invert(a),
    "left_shift": lambda m, a, b: m.left_shift(a, m.remainder(b, 70).astype(a.dtype)),
    "right_shift": lambda m, a, b: m.right_shift(a, m.remainder(b, 70).astype(a.dtype)),
    "negative": lambda m, a, b: m.negative(a), "abs": lambda m, a, b: m.abs(a), "sign": lambda m, a, b: m.sign(a),
    "less": lambda m, a, b: m.less(a, b), "maximum": lambda m, a, b: m.maximum(a, b),
    "gcd": lambda m, a, b: m.gcd(a, b), "lcm": lambda m, a, b: m.lcm(a, b),
    "power": lambda m, a, b: m.power(a, m.remainder(b, 9).astype(a.dtype)),
    "true_divide": lambda m, a, b: m.true_divide(a, b), "square": lambda m, a, b: m.square(a),
    "to float16": lambda m, a, b: a.astype(np.float16), "to float32": lambda m, a, b: a.astype(np.float32),
    "to float64": lambda m, a, b: a.astype(np.float64), "sum": lambda m, a, b: m.sum(a),
    "prod": lambda m, a, b: m.prod(a), "cumsum": lambda m, a, b: m.cumsum(a), "sort": lambda m, a, b: m.sort(a),
    "argmax": lambda m, a, b: m.argmax(a),
}


def float_patterns(dtype, unsigned):
    """Random bits of every class, a third of them replaced by small subnormals of both signs."""
    a = rng.integers(0, np.iinfo(unsigned).max, N, dtype=unsigned, endpoint=True).view(dtype).copy()
    tiny = rng.integers(0, N, N // 3)
    small = rng.integers(1, 1 << 10, tiny.size).astype(unsigned).view(dtype)
    a[tiny] = small * np.where(rng.random(tiny.size) < 0.5, -1, 1).astype(dtype)
    return a


def int_patterns(dtype):
    """The whole range, the extremes, 0, 1 and -1 (or 2) first."""
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    a[:5] = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2]
    return a


def check(label, ops, a, b):
    """Each operation of `ops` on every backend against numpy; prints what differs."""
    pa = pt.make_placeholder("a", a.shape, a.dtype)
    pb = pt.make_placeholder("b", b.shape, b.dtype)
    bad = 0
    for name, f in ops.items():
        with np.errstate(all="ignore"):
            try:
                want = f(np, a, b)
            except Exception:  # noqa: BLE001 (numpy refuses: nothing to compare)
                continue
        expr = f(pt, pa, pb)
        for backend in BACKENDS:
            prog = pt.generate(expr, backend)
            try:
                got = prog(a=a, b=b)
            except pt.exceptions.UnknownInputError:  # `b` unused
                got = prog(a=a)
            except Exception as e:  # noqa: BLE001 (reported)
                bad += 1
                print(f"{label} {name} {backend}: WE RAISE {e!r:.200}")
                continue
            if not same(got, want):
                bad += 1
                g, w = np.asarray(got).ravel(), np.asarray(want).ravel()
                where = [i for i in range(min(g.size, w.size)) if not same(g[i:i + 1], w[i:i + 1])][:3]
                print(f"{label} {name} {backend}: at {where} a={a.ravel()[where]} b={b.ravel()[where]} "
                      f"ours {g[where]} ({g.dtype}) numpy {w[where]} ({w.dtype})")
    return bad


bad = 0
for dtype, unsigned in [(np.float16, np.uint16), (np.float32, np.uint32), (np.float64, np.uint64)]:
    a = float_patterns(dtype, unsigned)
    bad += check(np.dtype(dtype).name, FLOAT_OPS, a, np.roll(a, 17))
ints = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
pairs = [(d, d) for d in ints] + [(np.int8, np.uint8), (np.int32, np.uint32), (np.int64, np.uint64),
                                  (np.uint8, np.int64), (np.int16, np.uint32)]
for da, db in pairs:
    a, b = int_patterns(da), int_patterns(db)
    b[:25] = np.tile(b[:5], 5)
    a[:25] = np.repeat(a[:5], 5)
    bad += check(f"{np.dtype(da).name},{np.dtype(db).name}", INT_OPS, a, b)
print("differences:", bad)
