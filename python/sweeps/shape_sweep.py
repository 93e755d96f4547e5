"""The shape functions (reshape, transpose, split, pad, roll, stacks, ...) with random axes and arguments.

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/shape_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, random, warnings
import numpy as np
import pytato_rs as pt
BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0")); N = int(os.environ.get("N", "2000"))
rng = random.Random(SEED); nprng = np.random.default_rng(SEED)
DT = [np.float64, np.int32, np.bool_, np.complex64, np.uint8, np.float16, np.int64]
def shape():
    return tuple(rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])))
def ax(nd, allow_none=True):
    if allow_none and rng.random() < 0.2: return None
    return rng.randrange(-nd - 1, nd + 1) if rng.random() < 0.95 else rng.choice([nd + 3, -nd - 5])
def axes(nd):
    k = rng.randrange(0, nd + 1)
    a = [rng.randrange(-nd, nd) for _ in range(k)] if nd else []
    if rng.random() < 0.05: a.append(nd)
    return tuple(a)
def perm(nd):
    p = list(range(nd)); rng.shuffle(p)
    p = [q - nd if rng.random() < 0.3 else q for q in p]
    if rng.random() < 0.05 and p: p[0] = p[-1]
    return tuple(p)
def newshape(s):
    n = int(np.prod(s))
    divs = [d for d in range(1, n + 1) if n % d == 0] or [1]
    r = rng.random()
    if r < 0.3: return (-1,)
    if r < 0.6 and n:
        d = rng.choice(divs); return (d, -1) if rng.random() < 0.5 else (d, n // d)
    if r < 0.7: return (n, 1, -1) if n else (0, -1)
    if r < 0.8: return (0, -1) if n else (-1, 0)
    return (rng.choice(divs), rng.choice([-1, 2, -2, 5]))
CASES = {
    "reshape": lambda s: ((), {"shape": newshape(s), "order": rng.choice(["C", "F", "A"]) if rng.random() < 0.3 else "C"}),
    "transpose": lambda s: ((), {"axes": perm(len(s))} if rng.random() < 0.7 else {}),
    "moveaxis": lambda s: ((ax(len(s), False), ax(len(s), False)), {}),
    "swapaxes": lambda s: ((ax(len(s), False), ax(len(s), False)), {}),
    "squeeze": lambda s: ((), {"axis": rng.choice([None, ax(len(s)), axes(len(s))])}),
    "expand_dims": lambda s: ((rng.choice([ax(len(s) + 1, False), axes(len(s) + 1)]),), {}),
    "broadcast_to": lambda s: ((tuple(rng.choice([1, 2, 3]) for _ in range(rng.randrange(0, 2))) + tuple(rng.choice([d, d, 1, 2]) if d == 1 else d for d in s),), {}),
    "flip": lambda s: ((), {"axis": rng.choice([None, ax(len(s)), axes(len(s))])}),
    "roll": lambda s: ((rng.choice([rng.randrange(-7, 8), tuple(rng.randrange(-5, 6) for _ in range(2))]),), {"axis": rng.choice([None, ax(len(s)), axes(len(s))])}),
    "rot90": lambda s: ((), {"k": rng.randrange(-5, 6), "axes": (ax(len(s), False), ax(len(s), False))}),
    "tile": lambda s: ((rng.choice([rng.randrange(0, 3), tuple(rng.randrange(0, 3) for _ in range(rng.randrange(0, 5)))]),), {}),
    "repeat": lambda s: ((rng.choice([rng.randrange(0, 3), tuple(rng.randrange(0, 3) for _ in range(rng.choice([1, 2, 3])))]),), {"axis": ax(len(s))}),
    "diagonal": lambda s: ((), {"offset": rng.randrange(-4, 5), "axis1": ax(len(s), False), "axis2": ax(len(s), False)}),
    "triu": lambda s: ((), {"k": rng.randrange(-4, 5)}),
    "tril": lambda s: ((), {"k": rng.randrange(-4, 5)}),
    "ravel": lambda s: ((), {"order": rng.choice(["C", "F", "A", "K"])}),
    "atleast_2d": lambda s: ((), {}),
    "atleast_3d": lambda s: ((), {}),
    "split": lambda s: ((rng.choice([rng.randrange(1, 4), [rng.randrange(-4, 5) for _ in range(rng.randrange(0, 3))]]),), {"axis": rng.randrange(-len(s) - 1, len(s) + 1)}),
    "array_split": lambda s: ((rng.choice([rng.randrange(1, 5), [rng.randrange(-4, 5) for _ in range(rng.randrange(0, 3))]]),), {"axis": rng.randrange(-len(s) - 1, len(s) + 1)}),
    "pad": lambda s: ((rng.choice([rng.randrange(0, 3), (rng.randrange(0, 3), rng.randrange(0, 3)), tuple((rng.randrange(0, 3), rng.randrange(0, 3)) for _ in s)]),), {"mode": rng.choice(["constant", "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "linear_ramp", "empty"])}),
    "diag": lambda s: ((), {"k": rng.randrange(-3, 4)}),
    "trace": lambda s: ((), {"offset": rng.randrange(-3, 4), "axis1": ax(len(s), False), "axis2": ax(len(s), False)}),
    "cumulative_sum": lambda s: ((), {"axis": ax(len(s)), "include_initial": rng.random() < 0.5}),
    "sort": lambda s: ((), {"axis": ax(len(s))}),
    "argsort": lambda s: ((), {"axis": ax(len(s)), "stable": True}),
    "diff": lambda s: ((), {"n": rng.randrange(0, 4), "axis": ax(len(s), False)}),
    "nonzero": lambda s: ((), {}),
    "flatnonzero": lambda s: ((), {}),
    "argwhere": lambda s: ((), {}),
    "unique": lambda s: ((), {}),
}
JOIN = ["concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"]
def values(s, dt):
    a = nprng.standard_normal(s) * 3
    with np.errstate(all="ignore"):
        return a.astype(dt)
bad = 0
for it in range(N):
    dt = rng.choice(DT)
    if rng.random() < 0.2:
        f = rng.choice(JOIN)
        if not hasattr(np, f): continue
        base = shape()
        arrs = []
        for _ in range(rng.randrange(1, 4)):
            s = list(base)
            if s and rng.random() < 0.5:
                k = rng.randrange(len(s)); s[k] = rng.choice([0, 1, 2])
            if rng.random() < 0.1: s = s[1:]
            arrs.append(values(tuple(s), rng.choice(DT)))
        kw = {"axis": ax(len(base) + (1 if f == "stack" else 0))} if f in ("concatenate", "stack") and rng.random() < 0.8 else {}
        args_np = (arrs,); call = lambda mod, a: getattr(mod, f)(a, **kw)
        phs = [pt.make_placeholder(f"a{i}", a.shape, a.dtype) for i, a in enumerate(arrs)]
        inputs = {f"a{i}": a for i, a in enumerate(arrs)}
        desc = f"[{it}] {f}([{', '.join(f'{a.dtype}{a.shape}' for a in arrs)}], {kw})"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try: exp = call(np, arrs); err = None
            except Exception as e: exp, err = None, e
        try:
            e = call(pt, phs)
            got = pt.generate(e, BACKEND)(**inputs); gerr = None
        except Exception as e: got, gerr = None, e
    else:
        f = rng.choice(list(CASES))
        s = shape(); x = values(s, dt)
        args, kw = CASES[f](s)
        desc = f"[{it}] {f}(x:{np.dtype(dt)}{s}, {args}, {kw})"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try: exp = getattr(np, f)(x, *args, **kw); err = None
            except Exception as e: exp, err = None, e
        try:
            px = pt.make_placeholder("x", s, dt)
            e = getattr(pt, f)(px, *args, **kw)
            if isinstance(e, (list, tuple)):
                got = [pt.generate(q, BACKEND)(x=x) for q in e]
            else:
                got = pt.generate(e, BACKEND)(x=x)
            gerr = None
        except Exception as e: got, gerr = None, e
    if err is None and gerr is None:
        exps = exp if isinstance(exp, (list, tuple)) else [exp]
        gots = got if isinstance(got, (list, tuple)) else [got]
        ok = len(exps) == len(gots) and all(np.asarray(g).shape == np.asarray(x_).shape and np.asarray(g).dtype == np.asarray(x_).dtype and (np.array_equal(g, x_, equal_nan=True) or f == "pad" and kw.get("mode") == "empty" or (np.asarray(x_).dtype.kind in "fc" and np.allclose(g, x_, equal_nan=True))) for g, x_ in zip(gots, exps))
        if not ok:
            bad += 1; print(desc, "MISMATCH\n   numpy", [(np.asarray(q).dtype, np.asarray(q).shape) for q in exps], exps, "\n   ours ", [(np.asarray(q).dtype, np.asarray(q).shape) for q in gots], gots)
    elif err is None:
        bad += 1; print(desc, "WE RAISE", type(gerr).__name__, str(gerr)[:250])
    elif gerr is None:
        bad += 1; print(desc, "NUMPY RAISES", type(err).__name__, str(err)[:200])
print("done", N, "bad", bad)
