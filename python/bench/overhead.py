"""The Python overhead: one small DAG (ten heat-equation steps and the energy, two outputs)
built, compiled and run through the Python bindings, through the Rust API directly, and through
upstream pytato's numpy-like Python target, timed the same way (medians of 200 repetitions, in
microseconds), in one run.

Run (from the repository root, with the package built in release mode)::

    cd python && maturin develop --release && cd ..
    python python/bench/overhead.py [--upstream PYTHON]

``--upstream PYTHON`` names a Python with upstream pytato installed (``pip install`` of
inducer/pytato's source); its phases are left out without it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

STEPS = 10
REPEATS = 200


def median_us(f):
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter_ns()
        f()
        times.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(times)


def build(pt, n):
    """The DAG for arrays of length n, with pytato's names (the same code builds it for both
    packages; upstream does not reduce over axes of symbolic length, so the length is fixed)."""
    u = pt.make_placeholder("x", (n,), np.float64)
    for _ in range(STEPS):
        u = u + 0.25 * (pt.roll(u, 1) - 2.0 * u + pt.roll(u, -1))
    return pt.make_dict_of_named_arrays({"u": u, "energy": pt.sum(u * u)})


def measure_bindings():
    import pytato_rs as pt

    start = time.perf_counter_ns()
    prg = pt.generate(build(pt, 16))
    results = {"backend": prg.backend, "first_compile": (time.perf_counter_ns() - start) / 1e3}
    results["build"] = median_us(lambda: build(pt, 16))
    results["compile_cached"] = median_us(lambda: pt.generate(build(pt, 16))) - results["build"]
    for n in (16, 100_000):
        prg = pt.generate(build(pt, n))
        data = np.linspace(0.0, 1.0, n)
        results[f"call_{n}"] = median_us(lambda: prg(x=data))
        out = {"u": np.empty(n), "energy": np.empty(())}
        results[f"run_into_{n}"] = median_us(lambda: prg.run_into(out, x=data))
    return results


def measure_upstream():
    import pytato as pt
    from pytato.target.python import BoundPythonProgram, NumpyLikePythonTarget
    from pytato.target.python.numpy_like import generate_numpy_like

    class NumpyTarget(NumpyLikePythonTarget):
        """numpy as the array module of upstream's numpy-like Python target."""

        numpy_like_module_name = "numpy"
        numpy_like_module_name_shorthand = "_pt_np"

        def bind_program(self, program, entrypoint, expected_arguments, bound_arguments):
            return BoundPythonProgram(target=self, program=program, entrypoint=entrypoint,
                                      expected_arguments=expected_arguments, bound_arguments=bound_arguments)

    def generate(expr):
        return generate_numpy_like(expr, target=NumpyTarget(), function_name="_pt_kernel", show_code=False,
                                   entrypoint_decorators=(), extra_preambles=())

    start = time.perf_counter_ns()
    prg = generate(build(pt, 16))
    prg(x=np.zeros(16))
    results = {"backend": "numpy (upstream pytato)", "first_compile": (time.perf_counter_ns() - start) / 1e3}
    results["build"] = median_us(lambda: build(pt, 16))
    results["compile_cached"] = median_us(lambda: generate(build(pt, 16))) - results["build"]
    for n in (16, 100_000):
        prg = generate(build(pt, n))
        data = np.linspace(0.0, 1.0, n)
        results[f"call_{n}"] = median_us(lambda: prg(x=data))
    return results


PHASES = [
    ("build", "build the DAG (n = 16)"),
    ("compile_cached", "generate it again (a cache hit; upstream: code generation)"),
    ("call_16", "call, n = 16 (fresh outputs)"),
    ("run_into_16", "run_into, n = 16 (caller's outputs)"),
    ("call_100000", "call, n = 100000"),
    ("run_into_100000", "run_into, n = 100000"),
    ("first_compile", "first generate (the JIT compiles; once)"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", help="a Python with upstream pytato installed")
    parser.add_argument("--mode", choices=["report", "upstream"], default="report", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode == "upstream":
        print(json.dumps(measure_upstream()))
        return

    rust = json.loads(subprocess.run(
        ["cargo", "run", "--release", "--quiet", "-p", "pytato-python", "--example", "overhead"],
        check=True, capture_output=True, text=True).stdout)
    python = measure_bindings()
    upstream = None
    if args.upstream:
        upstream = json.loads(subprocess.run([args.upstream, __file__, "--mode", "upstream"], check=True,
                                             capture_output=True, text=True).stdout)
    print(f"backend: {python['backend']} (Rust API: {rust['backend']}); medians of {REPEATS} runs, microseconds")
    header = f"{'phase':60} {'Rust':>10} {'Python':>10} {'overhead':>10} {'ratio':>7}"
    if upstream:
        header += f" {'upstream':>10} {'upstream/Python':>16}"
    print(header)
    for key, label in PHASES:
        r, p = rust.get(key), python.get(key)
        row = f"{label:60} {r:10.1f} {p:10.1f} {p - r:10.1f} {p / r:7.2f}"
        if upstream:
            u = upstream.get(key)
            row += f" {u:10.1f} {u / p:16.2f}" if u is not None else f" {'-':>10} {'-':>16}"
        print(row)


if __name__ == "__main__":
    sys.exit(main())
