"""Random einsum specs against numpy: diagonals, ellipses, implicit outputs, empty and size-1 axes, mixed dtypes.

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/einsum_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, random, warnings
import numpy as np
import pytato_rs as pt
BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0")); N = int(os.environ.get("N", "1000"))
rng = random.Random(SEED); nprng = np.random.default_rng(SEED)
LETTERS = "ijkl"
DT = [np.float64, np.float32, np.int32, np.int64, np.bool_, np.complex128, np.uint8, np.float16]
bad = 0
for it in range(N):
    nops = rng.choice([1, 1, 2, 2, 2, 3])
    sizes = {c: rng.choice([0, 1, 2, 3]) for c in LETTERS}
    ops, specs = [], []
    use_ell = rng.random() < 0.2
    ell_shape = tuple(rng.choice([1, 2]) for _ in range(rng.choice([0, 1, 2])))
    for _ in range(nops):
        k = rng.choice([0, 1, 2, 2, 3])
        s = "".join(rng.choice(LETTERS) for _ in range(k))
        shape = [sizes[c] for c in s]
        if rng.random() < 0.1 and s:
            shape[rng.randrange(len(s))] = 1  # broadcastable 1 (numpy allows? only with ...)
        if use_ell and rng.random() < 0.7:
            e = ell_shape[rng.randrange(0, len(ell_shape) + 1):] if ell_shape else ()
            if rng.random() < 0.5:
                s = "..." + s; shape = list(e) + shape
            else:
                s = s + "..."; shape = shape + list(e)
        dt = rng.choice(DT)
        a = (nprng.standard_normal(shape) * 3)
        if rng.random() < 0.1 and a.size: a.flat[0] = rng.choice([np.nan, np.inf, -0.0])
        with np.errstate(all="ignore"):
            a = a.astype(dt)
        ops.append(a); specs.append(s)
    subs = ",".join(specs)
    if rng.random() < 0.6:
        inputs_letters = sorted(set("".join(specs).replace(".", "")))
        out = [c for c in inputs_letters if rng.random() < 0.5]
        rng.shuffle(out)
        outs = "".join(out)
        if use_ell and rng.random() < 0.7: outs = "..." + outs if rng.random() < 0.5 else outs + "..."
        subs += "->" + outs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                exp = np.einsum(subs, *ops); err = None
        except Exception as e:
            exp, err = None, e
    try:
        phs = [pt.make_placeholder(f"a{i}", a.shape, a.dtype) for i, a in enumerate(ops)]
        got = pt.generate(pt.einsum(subs, *phs), BACKEND)(**{f"a{i}": a for i, a in enumerate(ops)}); gerr = None
    except Exception as e:
        got, gerr = None, e
    desc = f"[{it}] einsum({subs!r}, " + ", ".join(f"{a.dtype}{a.shape}" for a in ops) + ")"
    if err is None and gerr is None:
        got = np.asarray(got); exp = np.asarray(exp)
        if got.shape != exp.shape or got.dtype != exp.dtype:
            bad += 1; print(desc, "SHAPE/DTYPE", got.dtype, got.shape, exp.dtype, exp.shape); continue
        if exp.dtype.kind in "fc":
            tol = 1e-2 if exp.dtype.itemsize <= 4 and exp.dtype.kind == "f" or exp.dtype == np.complex64 else 1e-9
            ok = np.allclose(got, exp, rtol=tol, atol=tol, equal_nan=True) or np.array_equal(got, exp, equal_nan=True)
            if not ok:
                # nan vs inf from summation order of infinities is allowed if numpy has nan/inf too
                m = ~np.isclose(got, exp, rtol=tol, atol=tol, equal_nan=True)
                if np.all(~np.isfinite(got[m]) & ~np.isfinite(exp[m])): ok = True
        else:
            ok = np.array_equal(got, exp)
        if not ok:
            bad += 1; print(desc, "VALUES\n  ", [a.tolist() for a in ops], "\n   numpy", exp.tolist(), "\n   ours ", got.tolist())
    elif err is None:
        bad += 1; print(desc, "WE RAISE", type(gerr).__name__, str(gerr)[:250])
    elif gerr is None:
        bad += 1; print(desc, "NUMPY RAISES", type(err).__name__, str(err)[:200], "ours", np.asarray(got).shape)
print("done", N, "bad", bad)
