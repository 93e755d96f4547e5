"""The methods numpy's ndarray and pytato_rs's Array share, called with random arguments where numpy accepts the call.

Run: `SEED=S N=COUNT BACKEND=interp|cranelift|wgpu python python/sweeps/method_sweep.py` with pytato_rs built (see
README.md). Prints each difference from numpy and a total; see python/sweeps/README.md for the
differences that are known and why.
"""
import os, random, warnings
import numpy as np
import pytato_rs as pt
BACKEND = os.environ.get("BACKEND", "interp")
SEED = int(os.environ.get("SEED", "0")); N = int(os.environ.get("N", "3000"))
rng = random.Random(SEED); nprng = np.random.default_rng(SEED)
px0 = pt.make_placeholder("x", (2,), np.float64)
SKIP = {"__init__", "__new__", "__class__", "__getattribute__", "__setattr__", "__delattr__", "__reduce__", "__reduce_ex__", "__eq__", "__ne__", "__hash__",
        "__repr__", "__str__", "__format__", "__sizeof__", "__dir__", "__init_subclass__", "__subclasshook__", "__bool__", "__len__", "__iter__", "__array__",
        "__array_ufunc__", "__array_function__", "__array_namespace__", "__dlpack__", "__dlpack_device__", "__copy__", "__deepcopy__", "__setstate__",
        "__getstate__", "__class_getitem__", "__index__", "__int__", "__float__", "__complex__", "tolist", "tobytes", "item", "itemset", "setflags", "fill",
        "resize", "sort", "partition", "put", "setfield", "getfield", "view", "dump", "dumps", "tofile", "byteswap", "newbyteorder", "__contains__",
        "__setitem__", "__buffer__", "__array_wrap__", "__array_finalize__", "__array_prepare__", "__array_priority__", "__array_interface__", "__array_struct__",
        "to_device", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
        "__irshift__", "__imatmul__", "__lt__", "__le__", "__gt__", "__ge__"}
names = sorted(n for n in set(dir(np.ndarray)) & set(dir(px0)) if n not in SKIP and callable(getattr(np.ndarray, n, None)))
print(len(names), "methods:", " ".join(names))
DT = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
SPEC = [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.0, -1.0, 0.5, -2.5, 3.0]
def values(shape, dt):
    dt = np.dtype(dt); n = int(np.prod(shape))
    if dt.kind == "b": return (nprng.random(n) < 0.5).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt); pool = [0, 1, 2, 3, info.max, info.min] + ([-1, -3] if dt.kind == "i" else [])
        return np.array([rng.choice(pool) for _ in range(n)], dtype=dt).reshape(shape)
    one = lambda: rng.choice(SPEC) if rng.random() < 0.4 else round(nprng.standard_normal() * 3, 2)
    with np.errstate(all="ignore"):
        if dt.kind == "c": return np.array([complex(one(), one()) for _ in range(n)]).astype(dt).reshape(shape)
        return np.array([one() for _ in range(n)]).astype(dt).reshape(shape)
def arg(sh):
    r = rng.random()
    if r < 0.25 and sh: return rng.randrange(-len(sh), len(sh))
    if r < 0.4: return rng.choice([0, 1, 2, -1, 0.5, True])
    if r < 0.55: return tuple(rng.randrange(0, len(sh)) for _ in range(rng.randrange(0, 3))) if sh else ()
    if r < 0.7: return rng.choice([np.float32, np.int64, np.complex128, np.bool_, np.uint8, "float64"])
    return values(sh, rng.choice(DT))
bad = 0; tried = 0
for it in range(N):
    m = rng.choice(names)
    sh = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.choice([0, 1, 2, 2, 3])))
    dt = rng.choice(DT)
    x = values(sh, dt)
    args = [arg(sh) for _ in range(rng.choice([0, 0, 1, 1, 2]))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                exp = getattr(x, m)(*args); err = None
        except Exception as e:
            exp, err = None, e
    if err is not None or exp is NotImplemented: continue
    tried += 1
    px = pt.make_placeholder("x", sh, dt)
    inputs = {"x": x}
    pargs = []
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray):
            pargs.append(pt.make_placeholder(f"a{k}", a.shape, a.dtype)); inputs[f"a{k}"] = a
        else:
            pargs.append(a)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = getattr(px, m)(*pargs)
            if isinstance(res, tuple):
                got = tuple(pt.generate(r, BACKEND)(**{k: inputs[k] for k in pt.generate(r, BACKEND).input_names}) if isinstance(r, pt.Array) else r for r in res)
            elif isinstance(res, pt.Array):
                prg = pt.generate(res, BACKEND); got = prg(**{k: inputs[k] for k in prg.input_names})
            else:
                got = res
            gerr = None
    except Exception as e:
        got, gerr = None, e
    desc = f"[{it}] x:{np.dtype(dt)}{sh}.{m}(" + ", ".join(f"{a.dtype}{a.shape}" if isinstance(a, np.ndarray) else repr(a) for a in args) + ")"
    if gerr is not None:
        bad += 1; print(desc, "WE RAISE", type(gerr).__name__, str(gerr)[:200].replace("\n", " ")); continue
    exps = exp if isinstance(exp, tuple) else (exp,)
    gots = got if isinstance(got, tuple) else (got,)
    ok = len(exps) == len(gots)
    for g, e in zip(gots, exps):
        g = np.asarray(g); e = np.asarray(e)
        if g.shape != e.shape or g.dtype != e.dtype: ok = False; break
        if not np.array_equal(g, e, equal_nan=True):
            if e.dtype.kind in "fc":
                with np.errstate(all="ignore"):
                    if np.allclose(g, e, rtol=1e-3, atol=1e-6, equal_nan=True): continue
            ok = False; break
    if not ok:
        bad += 1; print(desc, "MISMATCH\n   x", x.tolist(), "\n   numpy", repr(exp)[:300], "\n   ours ", repr(got)[:300])
print("done", N, "tried", tried, "bad", bad)
