"""The differential fuzzer's random programs (`fuzz case SEED`), built through the Python API
and checked against numpy, with the fuzzer's own oracle (`golden/fuzz_oracle.py`, its
adjustments for BLAS and numpy's loops included), and against themselves after the Python-side
transforms (CopyMapper, map_and_copy, pickling, deduplicate, materialize_with_mpms,
unify_axes_tags). The Rust fuzzer builds the same programs with the Rust frontend: this sweep
covers the Python bindings, the functions written in Python and the Python transforms.

    cargo build --release -p pytato-conformance    # the fuzz binary that writes the cases
    SEED=97100000 N=500 BACKEND=cranelift target/python-venv/bin/python python/sweeps/program_sweep.py

Prints each difference and a tally. `==` and `!=` in the cases are numpy's elementwise
comparisons, which are `equal` and `not_equal` here (pytato's `==` compares expressions).
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

import pytato_rs as pt
from bits import same
from pytato_rs.transform import CopyMapper, map_and_copy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "golden"))
import fuzz_oracle as oracle  # noqa: E402

warnings.simplefilter("ignore")
SEED = int(os.environ.get("SEED", "0"))
N = int(os.environ.get("N", "200"))
BACKEND = os.environ.get("BACKEND", "interp")
FUZZ = ROOT / "target" / "release" / "fuzz"
rng = np.random.default_rng(SEED)
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e308, -1.5, 2.0, 0.5]


class Elementwise(ast.NodeTransformer):
    """`a == b` and `a != b` as `np.equal(a, b)` and `np.not_equal(a, b)`."""

    def visit_Compare(self, node):  # noqa: N802 (ast's method names)
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            name = "equal" if isinstance(node.ops[0], ast.Eq) else "not_equal"
            return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load()),
                            [node.left, node.comparators[0]], [])
        return node


def values(shape, dt):
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -20), min(info.max, 20), n, endpoint=True).astype(dt)
        extremes = rng.random(n) < 0.2
        a[extremes] = rng.choice(np.array([0, 1, info.max, info.min, 2, 3], dtype=dt), extremes.sum())
        return a.reshape(shape)
    a = rng.standard_normal(n) * 3
    special = rng.random(n) < 0.25
    a[special] = rng.choice(SPECIAL, special.sum())
    if dt.kind == "c":
        a = a + 1j * rng.standard_normal(n)
    with np.errstate(all="ignore"):
        return a.astype(dt).reshape(shape)


def close(got, exp):
    """Equal to rounding (transcendental functions, summation orders)."""
    got, exp = np.asarray(got), np.asarray(exp)
    if got.dtype != exp.dtype or got.shape != exp.shape:
        return False
    if exp.dtype.kind not in "fc":
        return same(got, exp)
    rtol = {2: 1e-2, 4: 1e-5, 8: 1e-5 if exp.dtype.kind == "c" else 1e-11, 16: 1e-11}[exp.dtype.itemsize]
    with np.errstate(all="ignore"):
        return bool(np.all(np.isclose(got, exp, rtol=rtol, atol=0, equal_nan=True) | (got == exp)))


TRANSFORMS = {
    "CopyMapper": lambda d: CopyMapper()(d),
    "map_and_copy": lambda d: map_and_copy(d, lambda n: n),
    "pickle": lambda d: pickle.loads(pickle.dumps(d)),
    "deduplicate": lambda d: pt.transform.deduplicate(d),
    "materialize_with_mpms": lambda d: pt.transform.materialize_with_mpms(d),
    "unify_axes_tags": lambda d: pt.unify_axes_tags(d),
}
tally = dict.fromkeys(["built", "runs", "equal", "to rounding", "mismatch", "we raise", "numpy raises",
                       "transform differs", "skipped"], 0)


def used_statements(case):
    """The statements the outputs use: numpy evaluates every statement, and would raise for
    one (an empty minimum, say) that the lazy program never computes."""
    needed = {term for _, term in case["outputs"]}
    used = []
    for name, expr in reversed(case["stmts"]):
        if name in needed:
            used.append([name, expr])
            needed |= {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}
    return used[::-1]


def build(case):
    ns = {"np": pt, "named": lambda e: e, "m": pt.make_size_param("m"), "n": pt.make_size_param("n")}
    wrapped = {}
    for i in case["inputs"]:
        if i["data"]:
            wrapped[i["name"]] = values(tuple(i["shape"]), i["dtype"])
            ns[i["name"]] = pt.make_data_wrapper(wrapped[i["name"]])
        else:
            ns[i["name"]] = pt.make_placeholder(i["name"], tuple(i["shape"]), i["dtype"])
    for name, expr in case["stmts"]:
        tree = ast.fix_missing_locations(Elementwise().visit(ast.parse(expr, mode="eval")))
        ns[name] = eval(compile(tree, "<statement>", "eval"), ns)  # noqa: S307 (the fuzzer's own cases)
    outputs = {out: ns[term] if isinstance(ns[term], pt.Array) else pt.asarray(ns[term]) for out, term in case["outputs"]}
    return pt.make_dict_of_named_arrays(outputs), wrapped


for seed in range(SEED, SEED + N):
    case = json.loads(subprocess.run([str(FUZZ), "case", str(seed)], capture_output=True, text=True, check=True).stdout)
    symbolic_data = any(i["data"] and any(isinstance(d, str) for d in i["shape"]) for i in case["inputs"])
    if symbolic_data or any("at(" in e for _, e in case["stmts"]):
        tally["skipped"] += 1
        continue
    try:
        dag, wrapped = build(case)
        program = pt.generate(dag, BACKEND)
    except Exception as e:  # noqa: BLE001 (reported, not raised)
        tally["we raise"] += 1
        print(seed, "BUILD", type(e).__name__, str(e)[:200])
        continue
    tally["built"] += 1
    for sizes in case["runs"]:
        inputs = {i["name"]: values(tuple(sizes[d] if isinstance(d, str) else d for d in i["shape"]), i["dtype"])
                  for i in case["inputs"] if not i["data"]}
        request = {"inputs": {k: oracle.encode(v) for k, v in {**inputs, **wrapped}.items()}, "sizes": sizes,
                   "stmts": used_statements(case), "outputs": case["outputs"]}
        expected = oracle.answer(json.loads(json.dumps(request)))
        given = {**inputs, **{k: np.int64(v) for k, v in sizes.items()}}
        given = {k: v for k, v in given.items() if k in program.input_names}
        try:
            got, error = program(**given), None
        except Exception as e:  # noqa: BLE001
            got, error = None, e
        tally["runs"] += 1
        if "error" in expected:
            if error is None:
                tally["numpy raises"] += 1
                print(seed, sizes, "NUMPY RAISES", expected["error"][:200])
            continue
        if error is not None:
            tally["we raise"] += 1
            print(seed, sizes, "WE RAISE", type(error).__name__, str(error)[:200])
            continue
        for out, encoded in expected["outputs"].items():
            exp = oracle.decode(encoded)
            if same(got[out], exp):
                tally["equal"] += 1
            elif close(got[out], exp):
                tally["to rounding"] += 1
            else:
                tally["mismatch"] += 1
                print(seed, sizes, out, "MISMATCH", case["stmts"], "\n   ours ", repr(got[out]), "\n   numpy", repr(exp))
        for name, transform in TRANSFORMS.items():
            try:
                moved = pt.generate(transform(dag), BACKEND)(**given)
                differs = [out for out in got if not same(moved[out], got[out])]
            except Exception as e:  # noqa: BLE001
                differs = [f"{type(e).__name__}: {str(e)[:200]}"]
            if differs:
                tally["transform differs"] += 1
                print(seed, sizes, "TRANSFORM", name, differs)
print(tally)
