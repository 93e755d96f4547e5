"""Every function numpy and pytato_rs share, called with random arrays (and, at random, numpy's keywords) where numpy accepts the call; SYM=1 gives the placeholders symbolic lengths.

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/generic_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, random, warnings, inspect
import numpy as np
import pytato_rs as pt
BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0")); N = int(os.environ.get("N", "3000"))
ONLY = os.environ.get("ONLY")
rng = random.Random(SEED); nprng = np.random.default_rng(SEED)
SKIP = {"generate", "einsum", "reshape", "save", "load", "array", "asarray", "frombuffer", "fromfunction", "vectorize", "iterable", "isscalar",
        "ndim", "shape", "size", "result_type", "can_cast", "promote_types", "dtype", "finfo", "iinfo", "broadcast_shapes", "printoptions", "set_printoptions",
        "get_printoptions", "seterr", "geterr", "errstate", "may_share_memory", "shares_memory", "copyto", "put", "place", "putmask", "fill_diagonal",
        "random", "empty", "empty_like", "ravel_multi_index", "unravel_index", "ix_", "indices", "mgrid", "ogrid", "meshgrid", "busday_count", "is_busday",
        "datetime_as_string", "require", "astype", "isdtype", "issubdtype", "info", "show_config", "test", "apply_along_axis", "apply_over_axes", "piecewise",
        "frompyfunc", "nditer", "ndenumerate", "ndindex", "real_if_close", "trim_zeros", "histogram_bin_edges", "histogramdd", "histogram2d", "lookfor",
        "format_float_positional", "format_float_scientific", "array2string", "array_repr", "array_str", "base_repr", "binary_repr", "typename", "mintypecode",
        "common_type", "from_dlpack", "fromiter", "fromstring", "fromfile", "loadtxt", "savetxt", "genfromtxt", "empty_like", "unique_all", "unique_inverse", "unique_counts"}
names = sorted(n for n in dir(pt) if not n.startswith("_") and callable(getattr(pt, n, None)) and callable(getattr(np, n, None)) and n not in SKIP
               and not isinstance(getattr(np, n), type))
if ONLY: names = [n for n in names if n in ONLY.split(",")]
DT = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
SPEC = [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.0, -1.0, 0.5, -2.5, 3.0, 1e300, 1e-300, 100.0]
def values(shape, dt):
    dt = np.dtype(dt); n = int(np.prod(shape))
    if dt.kind == "b": return (nprng.random(n) < 0.5).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt); pool = [0, 1, 2, 3, 5, info.max, info.min] + ([-1, -3] if dt.kind == "i" else [])
        return np.array([rng.choice(pool) if rng.random() < 0.3 else rng.randrange(max(info.min, -9), min(info.max, 9)) for _ in range(n)], dtype=dt).reshape(shape)
    one = lambda: rng.choice(SPEC) if rng.random() < 0.3 else round(nprng.standard_normal() * 3, 2)
    with np.errstate(all="ignore"):
        if dt.kind == "c": return np.array([complex(one(), one()) for _ in range(n)]).astype(dt).reshape(shape)
        return np.array([one() for _ in range(n)]).astype(dt).reshape(shape)
def shape():
    return tuple(rng.choice([0, 1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])))
def compare(g, e):
    if isinstance(e, tuple) or isinstance(e, list):
        if not isinstance(g, (tuple, list)) or len(g) != len(e): return "structure"
        for a, b in zip(g, e):
            w = compare(a, b)
            if w: return w
        return None
    if isinstance(e, (bool, int, float, complex)) and not isinstance(e, np.generic):
        if isinstance(g, (pt.Array,)): return "lazy vs python scalar"
    g = np.asarray(g); e = np.asarray(e)
    if g.shape != e.shape: return f"shape {g.shape} vs {e.shape}"
    if g.dtype != e.dtype: return f"dtype {g.dtype} vs {e.dtype}"
    if np.array_equal(g, e, equal_nan=True) if e.dtype.kind not in "OSUV" else (g == e).all(): return None
    if e.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            tol = 1e-3 if e.dtype.itemsize <= 4 or e.dtype == np.complex64 else 1e-9
            if np.allclose(g, e, rtol=tol, atol=tol, equal_nan=True): return None
            m = ~np.isclose(g, e, rtol=tol, atol=tol, equal_nan=True)
            if np.all(~np.isfinite(e[m]) | (np.abs(e[m]) > 1e200)): return "values (infinite/huge only)"
    return "values"
def evaluate(res, inputs):
    if isinstance(res, (tuple, list)): return type(res)(evaluate(r, inputs) for r in res)
    if isinstance(res, pt.Array):
        prg = pt.generate(res, BACKEND); return prg(**{k: inputs[k] for k in prg.input_names})
    return res
bad = 0; tried = 0
for it in range(N):
    f = rng.choice(names)
    nargs = rng.choice([1, 1, 2, 2, 3])
    sh = shape()
    arrs = []
    for k in range(nargs):
        s = sh if rng.random() < 0.7 else shape()
        arrs.append(values(s, rng.choice(DT)))
    kw = {}
    try:
        params = inspect.signature(getattr(np, f)).parameters
    except (TypeError, ValueError):
        params = {}
    CHOICES = {"axis": lambda: rng.randrange(-len(sh), len(sh)) if sh else None, "keepdims": lambda: True, "ddof": lambda: rng.choice([0, 1, 2]),
               "n": lambda: rng.choice([0, 1, 2]), "k": lambda: rng.choice([-1, 0, 1, 2]), "decimals": lambda: rng.choice([-1, 0, 1, 3]),
               "side": lambda: rng.choice(["left", "right"]), "right": lambda: True, "invert": lambda: True, "assume_unique": lambda: True,
               "return_index": lambda: True, "return_inverse": lambda: True, "return_counts": lambda: True, "equal_nan": lambda: rng.choice([True, False]),
               "offset": lambda: rng.choice([-1, 0, 1]), "rtol": lambda: 0.1, "atol": lambda: 0.5, "prepend": lambda: 0, "append": lambda: 1.5,
               "nan": lambda: 7.0, "posinf": lambda: 1.0, "neginf": lambda: -1.0, "deg": lambda: True, "period": lambda: 4.0, "discont": lambda: 1.0,
               "initial": lambda: 2, "dtype": lambda: rng.choice([np.float64, np.int64, np.float32, np.complex128]), "stable": lambda: True,
               "descending": lambda: True, "include_initial": lambda: True, "minlength": lambda: 4, "method": lambda: rng.choice(["linear", "lower", "nearest", "midpoint"]),
               "weights": lambda: values(sh, np.float64), "q": lambda: rng.choice([0.0, 0.3, 1.0, 50.0]), "bins": lambda: rng.choice([1, 3, [0, 1, 2]]),
               "range": lambda: (-1.0, 2.0), "density": lambda: True, "mode": lambda: rng.choice(["clip", "wrap", "valid", "same", "full"]),
               "order": lambda: "F", "shift": lambda: 1, "reps": lambda: 2, "repeats": lambda: 2, "indices_or_sections": lambda: 1, "copy": lambda: True}
    for name in params:
        if name in CHOICES and rng.random() < 0.25:
            v = CHOICES[name]()
            if v is not None:
                kw[name] = v
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                exp = getattr(np, f)(*arrs, **kw); err = None
        except Exception as e:
            exp, err = None, e
    if err is not None:
        continue  # only compare where numpy accepts the call
    tried += 1
    SYM = os.environ.get("SYM") == "1"
    def symshape(a):
        if not SYM: return a.shape
        return tuple(pt.make_size_param(f"n{d}_{a.ndim - j}") if rng.random() < 0.6 else d for j, d in enumerate(a.shape))
    phs = [pt.make_placeholder(f"a{k}", symshape(a), a.dtype) for k, a in enumerate(arrs)]
    inputs = {f"a{k}": a for k, a in enumerate(arrs)}
    for a in arrs:
        for j, d in enumerate(a.shape):
            inputs[f"n{d}_{a.ndim - j}"] = d
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = getattr(pt, f)(*phs, **kw)
            got = evaluate(res, inputs); gerr = None
    except Exception as e:
        got, gerr = None, e
    desc = f"[{it}] np.{f}(" + ", ".join(f"{a.dtype}{a.shape}" for a in arrs) + (f", {kw}" if kw else "") + ")"
    if gerr is not None:
        bad += 1; print(desc, "WE RAISE", type(gerr).__name__, str(gerr)[:200].replace("\n", " "))
        continue
    why = compare(got, exp)
    if why:
        bad += 1; print(desc, "MISMATCH", why, "\n   inputs", [a.tolist() for a in arrs], "\n   numpy", repr(exp)[:300], "\n   ours ", repr(got)[:300])
print("done", N, "tried", tried, "bad", bad)
