"""Python's operators on every dtype pair and on Python and numpy scalars (integer extremes, NaN, infinities, -0.0, subnormals).

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/op_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, random, warnings, operator
import numpy as np
import pytato_rs as pt
BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0")); N = int(os.environ.get("N", "3000"))
rng = random.Random(SEED); nprng = np.random.default_rng(SEED)
DT = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
OPS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "lshift", "rshift", "lt", "le", "eq", "ne", "gt", "ge"]
def vals(n, dt):
    dt = np.dtype(dt)
    if dt.kind == "b": return nprng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = [0, 1, 2, 3, 7, info.max, info.min, info.max - 1] + ([-1, -2, -7, info.min + 1] if dt.kind == "i" else [])
        return np.array([rng.choice(pool) for _ in range(n)], dtype=dt)
    fin = np.finfo(dt if dt.kind == "f" else np.float32 if dt == np.complex64 else np.float64)
    pool = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -3.5, 7.0, np.nan, np.inf, -np.inf, float(fin.max), float(fin.tiny), float(fin.smallest_subnormal), -float(fin.smallest_subnormal), 1e-3, 3.0]
    if dt.kind == "c":
        return np.array([complex(rng.choice(pool), rng.choice(pool)) for _ in range(n)], dtype=dt)
    return np.array([rng.choice(pool) for _ in range(n)], dtype=dt)
def scalar():
    return rng.choice([0, 1, -1, 2, 3, 255, 256, -129, 2**31, 2**63 - 1, -2**63, 2**64 - 1, 0.5, -0.0, 1e308, float("nan"), float("inf"), 1e-320, True, False, 2j, 1 + 1j, np.float32(1.5), np.int8(-3), np.uint64(2**64 - 1)])
def same(g, e, opname):
    g = np.asarray(g); e = np.asarray(e)
    if g.shape != e.shape or g.dtype != e.dtype: return False
    if np.array_equal(g, e, equal_nan=True):
        # signs of zero
        if e.dtype.kind == "f":
            return np.array_equal(np.signbit(g[g == 0]), np.signbit(e[e == 0]))
        return True
    if opname == "pow" and e.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            return np.allclose(g, e, rtol=1e-6 if e.dtype.itemsize >= 8 and e.dtype.kind == "f" or e.dtype == np.complex128 else 1e-2, equal_nan=True) or np.all((g == e) | (np.isnan(g) & np.isnan(e)) | np.isclose(g, e, rtol=1e-5, equal_nan=True))
    return False
bad = 0
for it in range(N):
    opname = rng.choice(OPS); op = getattr(operator, opname)
    n = rng.choice([1, 3, 6])
    dta = rng.choice(DT)
    a = vals(n, dta)
    kind = rng.random()
    if kind < 0.5:
        b = vals(n, rng.choice(DT)); bdesc = f"{b.dtype}"
    else:
        b = scalar(); bdesc = repr(b)
    swap = rng.random() < 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                exp = op(b, a) if swap else op(a, b); err = None
        except Exception as e:
            exp, err = None, e
    pa = pt.make_placeholder("a", a.shape, a.dtype)
    inputs = {"a": a}
    if isinstance(b, np.ndarray):
        pb = pt.make_placeholder("b", b.shape, b.dtype); inputs["b"] = b
    else:
        pb = b
    try:
        pop = {"eq": pt.equal, "ne": pt.not_equal}.get(opname, op)
        e = pop(pb, pa) if swap else pop(pa, pb)
        got = pt.generate(e, BACKEND)(**inputs); gerr = None
    except Exception as ee:
        got, gerr = None, ee
    desc = f"[{it}] {opname}({'b, a' if swap else 'a, b'}) a={a.dtype}{a.tolist()} b={bdesc}{b.tolist() if isinstance(b, np.ndarray) else ''}"
    if err is None and gerr is None:
        if not same(got, exp, opname):
            bad += 1; print(desc, "MISMATCH\n   numpy", np.asarray(exp).dtype, np.asarray(exp).tolist(), "\n   ours ", np.asarray(got).dtype, np.asarray(got).tolist())
    elif err is None:
        bad += 1; print(desc, "WE RAISE", type(gerr).__name__, str(gerr)[:200], "| numpy", np.asarray(exp).dtype, np.asarray(exp).tolist())
    elif gerr is None:
        bad += 1; print(desc, "NUMPY RAISES", type(err).__name__, str(err)[:150])
    elif not isinstance(gerr, type(err)):
        print(desc, "ERRTYPE numpy", type(err).__name__, str(err)[:80], "| ours", type(gerr).__name__, str(gerr)[:120])
print("done", N, "bad", bad)
