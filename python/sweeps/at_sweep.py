"""Random sweep of `x.at[key].set(v)` and `x.at[key].add(v)` against numpy's `y[key] = v` and
`np.add.at(y, key, v)`: integers, slices, `None`, `...`, index arrays with repeated and
negative entries, masks, values of every broadcastable shape and of other dtypes (cast as
numpy's assignment casts them). Prints every difference (see README.md)."""

from __future__ import annotations

import os
import random
import warnings

import numpy as np

import pytato_rs as pt
from bits import same

SEED = int(os.environ.get("SEED", "0"))
N = int(os.environ.get("N", "1000"))
BACKEND = os.environ.get("BACKEND", "interp")
rng = random.Random(SEED)
nprng = np.random.default_rng(SEED)
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.int8, np.bool_, np.complex128, np.float16]
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1.5, -2.5]


def values(shape, dt):
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "b":
        return nprng.random(n).reshape(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return nprng.integers(max(info.min, -50), min(info.max, 50), n, endpoint=True).astype(dt).reshape(shape)
    a = np.array([rng.choice(SPECIAL) if rng.random() < 0.3 else nprng.standard_normal() * 4 for _ in range(n)])
    if dt.kind == "c":
        with np.errstate(all="ignore"):
            a = a + 1j * np.array([rng.choice(SPECIAL) if rng.random() < 0.3 else nprng.standard_normal() for _ in range(n)])
    with np.errstate(all="ignore"):
        return a.astype(dt).reshape(shape)


def index_item(length):
    r = rng.random()
    if r < 0.25 and length:
        return rng.randrange(-length, length)
    if r < 0.5:
        lo, hi = rng.choice([None, -length - 1, -1, 0, 1, length]), rng.choice([None, -1, 0, 2, length + 2])
        return slice(lo, hi, rng.choice([None, 1, 2, -1, -2]))
    if r < 0.75 and length:
        k = rng.choice([0, 1, 2, 3, 5])
        return np.array([rng.randrange(-length, length) for _ in range(k)], dtype=rng.choice([np.int64, np.int32, np.int8]))
    if r < 0.85:
        return nprng.random(length) < 0.5
    return slice(None)


def key_for(shape):
    items = [index_item(n) for n in shape[: rng.randrange(0, len(shape) + 1)]]
    if rng.random() < 0.15:
        items.insert(rng.randrange(0, len(items) + 1), None)
    if rng.random() < 0.15 and len(items) < len(shape):
        items.insert(rng.randrange(0, len(items) + 1), Ellipsis)
    if rng.random() < 0.1 and shape:
        return nprng.random(shape) < 0.5  # a whole mask
    return tuple(items)


bad = tried = compared = 0
for it in range(N):
    dt = rng.choice(DTYPES)
    shape = tuple(rng.choice([0, 1, 2, 3, 4]) for _ in range(rng.choice([1, 1, 2, 2, 3])))
    x = values(shape, dt)
    key = key_for(shape)
    op = rng.choice(["set", "add"])
    try:
        target_shape = x[key].shape
    except Exception:
        continue
    vshape = target_shape[rng.randrange(0, len(target_shape) + 1):] if target_shape else ()
    if rng.random() < 0.2:
        vshape = tuple(1 if rng.random() < 0.5 else n for n in vshape)
    vdt = dt if rng.random() < 0.7 else rng.choice(DTYPES)
    v = values(vshape, vdt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with np.errstate(all="ignore"):
                exp = x.copy()
                if op == "set":
                    exp[key] = v
                else:
                    np.add.at(exp, key, v)
            exp_err = None
        except Exception as e:
            exp, exp_err = None, e
    try:
        px, pv = pt.make_placeholder("x", shape, dt), pt.make_placeholder("v", vshape, vdt)
        e = getattr(px.at[key], op)(pv)
        got = pt.generate(e, BACKEND)(x=x, v=v)
        got_err = None
    except Exception as ee:
        got, got_err = None, ee
    tried += 1
    desc = f"[{it}] x:{np.dtype(dt)}{shape}.at[{key!r}].{op}(v:{np.dtype(vdt)}{vshape})"
    if exp_err is None and got_err is None:
        compared += 1
        if not same(np.asarray(got), exp):
            bad += 1
            print(f"{desc} MISMATCH\n   x={x.tolist()} v={v.tolist()}\n   numpy {exp!r}\n   ours  {got!r}")
    elif exp_err is None:
        bad += 1
        print(f"{desc} WE RAISE {type(got_err).__name__} {str(got_err)[:200]}")
    elif got_err is None:
        bad += 1
        print(f"{desc} NUMPY RAISES {type(exp_err).__name__}: {str(exp_err)[:150]}")
print(f"done {N} tried {tried} compared {compared} bad {bad}")
