"""Reductions and scans with random axes and keywords (keepdims, dtype, initial, where, ddof) on special values.

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/red_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, random, warnings
import numpy as np
import pytato_rs as pt

BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0")); N = int(os.environ.get("N", "1500"))
rng = random.Random(SEED); nprng = np.random.default_rng(SEED)
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
FUNCS = ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax", "argmin", "cumsum", "cumprod",
         "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "ptp", "median", "nanmedian", "count_nonzero",
         "average", "nanargmax", "nanargmin", "nancumsum", "nancumprod"]
KW = {"sum": "dkiw", "prod": "dkiw", "max": "kiw", "min": "kiw", "mean": "dkw", "var": "dkwo", "std": "dkwo", "any": "kw", "all": "kw",
      "argmax": "k", "argmin": "k", "cumsum": "d", "cumprod": "d", "nansum": "dkiw", "nanprod": "dkiw", "nanmax": "ki", "nanmin": "ki",
      "nanmean": "dkw", "nanvar": "dkwo", "nanstd": "dkwo", "ptp": "k", "median": "k", "nanmedian": "k", "count_nonzero": "k",
      "average": "k", "nanargmax": "k", "nanargmin": "k", "nancumsum": "d", "nancumprod": "d"}
SPECIAL_F = [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, -5e-324, 1e-310, 1.0, -1.0, 1e308, -1e308, 0.5]
def values(shape, dt):
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "b": a = nprng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        pool = [0, 1, -1 if dt.kind == "i" else 2, info.max, info.min, 3, 7]
        a = np.array([rng.choice(pool) if rng.random() < 0.3 else rng.randrange(max(info.min, -50), min(info.max, 50)) for _ in range(n)], dtype=dt)
    else:
        def one():
            return rng.choice(SPECIAL_F) if rng.random() < 0.3 else nprng.standard_normal() * 4
        if dt.kind == "c":
            a = np.array([complex(one(), one()) for _ in range(n)], dtype=dt)
        else:
            with np.errstate(all="ignore"):
                a = np.array([one() for _ in range(n)]).astype(dt)
    return a.reshape(shape)

def rand_axis(nd):
    r = rng.random()
    if r < 0.3: return None
    if r < 0.75: return rng.randrange(-nd - 1, nd + 1) if nd else rng.choice([0, -1, None])
    k = rng.randrange(0, nd + 1)
    ax = [rng.randrange(-nd, nd) for _ in range(k)] if nd else []
    if rng.random() < 0.05 and ax: ax.append(ax[0])
    return tuple(ax)

def close(got, exp, func, x):
    got = np.asarray(got); exp = np.asarray(exp)
    if got.shape != exp.shape: return f"shape {got.shape} vs {exp.shape}"
    if got.dtype != exp.dtype: return f"dtype {got.dtype} vs {exp.dtype}"
    if np.array_equal(got, exp, equal_nan=True):
        return None
    if exp.dtype.kind in "fc":
        # order of summation differs: tolerance from the magnitudes involved
        eps = np.finfo(exp.dtype).eps
        with np.errstate(all="ignore"):
            scale = np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)).astype(float)
            scale = np.nan_to_num(scale, posinf=0).sum() + 1
            bothnan = np.isnan(got) & np.isnan(exp)
            same_inf = (got == exp)
            ok = bothnan | same_inf | (np.abs(got.astype(np.complex128) - exp.astype(np.complex128)) <= 64 * eps * scale * max(1, x.size))
        if func in ("prod", "nanprod", "cumprod", "nancumprod", "var", "std", "nanvar", "nanstd"):
            ok = ok | np.isclose(got, exp, rtol=1e-2 if exp.dtype.itemsize <= 4 else 1e-9)
        if np.all(ok): return None
    return "values"

bad = 0
for it in range(N):
    func = rng.choice(FUNCS)
    dt = rng.choice(DTYPES)
    shape = tuple(rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 1, 2, 2, 3])))
    x = values(shape, dt)
    kw = {}
    if func not in ("median", "nanmedian") or True:
        ax = rand_axis(len(shape))
        if ax is not None or rng.random() < 0.5:
            kw["axis"] = ax
    if func in ("argmax", "argmin", "nanargmax", "nanargmin", "cumsum", "cumprod", "nancumsum", "nancumprod") and isinstance(kw.get("axis"), tuple):
        kw["axis"] = kw["axis"][0] if kw["axis"] else None
    allowed = KW[func]
    if "k" in allowed and rng.random() < 0.3: kw["keepdims"] = True
    if "d" in allowed and rng.random() < 0.2: kw["dtype"] = rng.choice([np.float64, np.int64, np.float32, np.complex128, np.uint8, np.bool_])
    if "i" in allowed and rng.random() < 0.2: kw["initial"] = rng.choice([0, 1, -3, 2.5, 100, np.nan])
    if "w" in allowed and rng.random() < 0.2:
        wshape = shape[rng.randrange(0, len(shape) + 1):] if shape else ()
        kw["where"] = nprng.random(wshape) < 0.6
    if "o" in allowed and rng.random() < 0.3: kw["ddof"] = rng.choice([0, 1, 2, 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                exp = getattr(np, func)(x, **kw); exp_err = None
        except Exception as e:
            exp, exp_err = None, e
    px = pt.make_placeholder("x", shape, dt)
    try:
        e = getattr(pt, func)(px, **{k: (v if k != "where" else v) for k, v in kw.items()})
        got = pt.generate(e, BACKEND)(x=x); got_err = None
    except Exception as ee:
        got, got_err = None, ee
    desc = f"[{it}] np.{func}(x:{np.dtype(dt)}{shape}, {kw})"
    if exp_err is None and got_err is None:
        why = close(got, exp, func, x)
        if why:
            bad += 1
            print(f"{desc} MISMATCH {why}\n   x={x.tolist()}\n   numpy {np.asarray(exp).dtype} {exp!r}\n   ours  {np.asarray(got).dtype} {got!r}")
    elif exp_err is None:
        bad += 1
        print(f"{desc} WE RAISE {type(got_err).__name__}: {str(got_err)[:250]}\n   numpy {np.asarray(exp).dtype}{np.shape(exp)}")
    elif got_err is None:
        bad += 1
        print(f"{desc} NUMPY RAISES {type(exp_err).__name__}: {exp_err}\n   ours {np.asarray(got).dtype}{np.shape(got)}")
    elif not isinstance(got_err, type(exp_err)) and not (isinstance(exp_err, (np.exceptions.AxisError,)) and isinstance(got_err, (IndexError, ValueError))):
        print(f"{desc} ERRTYPE numpy {type(exp_err).__name__}: {str(exp_err)[:100]} | ours {type(got_err).__name__}: {str(got_err)[:150]}")
print("done", N, "bad", bad)
