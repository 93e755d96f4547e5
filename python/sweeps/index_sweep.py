"""Random indexing: integers, slices (bounds beyond int64 too), None, ..., index arrays and masks; SYM=1 gives symbolic lengths.

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/index_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, sys, random, traceback, warnings
import numpy as np
import pytato_rs as pt

BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0"))
N = int(os.environ.get("N", "2000"))
SYM = os.environ.get("SYM", "0") == "1"
rng = random.Random(SEED)
nprng = np.random.default_rng(SEED)

def rand_shape():
    nd = rng.choice([0, 1, 1, 2, 2, 3, 4])
    return tuple(rng.choice([0, 1, 1, 2, 3, 4, 5]) for _ in range(nd))

def rand_int(n):
    if rng.random() < 0.05:
        return rng.choice([n, -n - 1, 2**63 - 1, -2**63, 10**30 if rng.random() < 0.2 else n + 3])
    if n == 0:
        return rng.choice([0, -1])
    return rng.randrange(-n, n)

def rand_slice(n):
    def b():
        r = rng.random()
        if r < 0.3: return None
        if r < 0.9: return rng.randrange(-n - 2, n + 3)
        return rng.choice([2**63 - 1, -2**63, 10**20])
    step = rng.choice([None, None, 1, 2, 3, -1, -2, -3] + ([0] if rng.random() < 0.03 else []))
    return slice(b(), b(), step)

def rand_int_array(n):
    shp = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.choice([0, 1, 1, 2])))
    lo, hi = (-n, n) if n else (0, 1)
    a = nprng.integers(lo, max(hi, lo + 1), size=shp)
    if n == 0 and a.size and rng.random() < 0.7:
        a = a[:0] if a.ndim else a
    if rng.random() < 0.05 and a.size:
        a.flat[0] = n + rng.choice([0, 5])
    dt = rng.choice([np.int64, np.int32, np.uint8, np.int8, np.uint64, np.intp])
    try:
        return a.astype(dt, casting="safe") if dt not in (np.uint8, np.uint64) or (a >= 0).all() else a
    except TypeError:
        return a

def rand_index(shape):
    items = []
    dims = list(shape)
    k = 0
    count = rng.choice([0, 1, 1, 2, 2, 3, 4])
    used_ellipsis = False
    while len(items) < count:
        r = rng.random()
        n = dims[k] if k < len(dims) else 1
        if r < 0.25:
            items.append(rand_int(n)); k += 1
        elif r < 0.55:
            items.append(rand_slice(n)); k += 1
        elif r < 0.65:
            items.append(None)
        elif r < 0.72 and not used_ellipsis:
            items.append(Ellipsis); used_ellipsis = True
            k = max(k, len(dims) - (count - len(items)))
        elif r < 0.9:
            items.append(rand_int_array(n)); k += 1
        else:
            # boolean mask over the next one or two axes
            m = rng.choice([1, 2])
            mshape = tuple(dims[k:k + m]) if k + m <= len(dims) else (n,)
            if rng.random() < 0.05:
                mshape = tuple(s + 1 for s in mshape)
            items.append(nprng.random(mshape) < 0.5); k += len(mshape)
    if rng.random() < 0.15 and len(items) == 1:
        return items[0]
    return tuple(items)

def values(shape, dtype):
    a = nprng.standard_normal(shape) * 10
    return a.astype(dtype)

def same(a, b):
    a = np.asarray(a); b = np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(a, b, equal_nan=True)

bad = 0
for it in range(N):
    shape = rand_shape()
    dtype = rng.choice([np.float64, np.int32, np.bool_, np.complex64, np.uint8])
    x = values(shape, dtype)
    idx = rand_index(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exp = x[idx]
            exp_err = None
        except Exception as e:
            exp, exp_err = None, e
    if SYM and shape:
        sshape = tuple(pt.make_size_param(f"n{i}") if rng.random() < 0.5 else s for i, s in enumerate(shape))
    else:
        sshape = shape
    try:
        px = pt.make_placeholder("x", sshape, dtype)
        e = px[idx]
        got = pt.generate(e, BACKEND)(x=x, **({f"n{i}": s for i, s in enumerate(shape) if not isinstance(sshape[i], int)} if SYM and shape else {}))
        got_err = None
    except Exception as ee:
        got, got_err = None, ee
    if exp_err is None and got_err is None:
        if not same(got, exp):
            bad += 1
            print(f"[{it}] MISMATCH shape={shape} dtype={np.dtype(dtype)} idx={idx!r}\n   numpy {exp.dtype}{exp.shape} {exp!r}\n   ours  {np.asarray(got).dtype}{np.asarray(got).shape} {got!r}")
    elif exp_err is None:
        bad += 1
        print(f"[{it}] WE RAISE shape={shape} dtype={np.dtype(dtype)} idx={idx!r} sym={SYM}\n   numpy {exp.shape}\n   ours  {type(got_err).__name__}: {str(got_err)[:300]}")
    elif got_err is None:
        bad += 1
        print(f"[{it}] NUMPY RAISES shape={shape} idx={idx!r}\n   numpy {type(exp_err).__name__}: {exp_err}\n   ours {np.asarray(got).shape}")
    else:
        if type(exp_err) is not type(got_err) and not isinstance(got_err, type(exp_err)):
            print(f"[{it}] ERRTYPE shape={shape} idx={idx!r}: numpy {type(exp_err).__name__}: {exp_err} | ours {type(got_err).__name__}: {str(got_err)[:200]}")
print("done", N, "bad", bad)
