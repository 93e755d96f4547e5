"""The 1-D heat equation on a periodic grid, advanced many steps with one compiled program.

The Python version of ``pytato/examples/heat.rs``: the update
``u <- u + nu * (roll(u, 1) - 2u + roll(u, -1))`` is built once as a lazy DAG (ten steps fused
into one program), compiled once on the default backend, and run repeatedly, feeding each
result back in: ``run_into`` reads one of two numpy buffers and writes the other, so the loop
allocates nothing. The grid length is a size parameter, so the same program runs any grid.

The check: ``sin(2 pi x)`` is an eigenvector of the discrete Laplacian, so after ``S`` steps
the exact discrete solution is ``lambda^S sin(2 pi x)`` with
``lambda = 1 - 4 nu sin^2(pi / N)``.

Run: ``python python/examples/heat.py [points] [runs]`` (``PYTATO_BACKEND`` picks a backend).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import pytato_rs as pt

NU = 0.25
STEPS_PER_RUN = 10


def build_step():
    """STEPS_PER_RUN explicit Euler steps of the periodic heat equation, as one DAG."""
    n = pt.make_size_param("n")
    u = pt.make_placeholder("u", (n,), np.float64)
    for _ in range(STEPS_PER_RUN):
        laplacian = pt.roll(u, 1) - 2.0 * u + pt.roll(u, -1)
        u = u + NU * laplacian
    return u


def solve(n_points: int, runs: int, backend: str | None = None):
    """Runs the heat equation; returns (state, exact solution, timings)."""
    start = time.perf_counter()
    step = build_step()
    build_time = time.perf_counter() - start

    start = time.perf_counter()
    prg = pt.generate(step, backend)
    compile_time = time.perf_counter() - start

    x = np.arange(n_points) / n_points
    state = np.sin(2 * np.pi * x)
    nxt = np.empty_like(state)
    start = time.perf_counter()
    for _ in range(runs):
        prg.run_into(nxt, u=state)
        state, nxt = nxt, state
    run_time = time.perf_counter() - start

    steps = runs * STEPS_PER_RUN
    lam = 1 - 4 * NU * np.sin(np.pi / n_points) ** 2
    exact = lam**steps * np.sin(2 * np.pi * x)
    timings = {"build": build_time, "compile": compile_time, "run": run_time, "backend": prg.backend}
    return state, exact, timings


def main(argv: list[str]) -> int:
    n_points = int(argv[1]) if len(argv) > 1 else 512
    runs = int(argv[2]) if len(argv) > 2 else 200
    state, exact, t = solve(n_points, runs)
    steps = runs * STEPS_PER_RUN
    max_error = float(np.max(np.abs(state - exact)))
    print(f"1-D periodic heat equation, nu = {NU}, {n_points} points, {steps} steps on backend {t['backend']!r}")
    print(f"  DAG built in {t['build'] * 1e3:.2f} ms, compiled in {t['compile'] * 1e3:.2f} ms")
    print(f"  amplitude after {steps} steps: {np.max(np.abs(state)):.12f}")
    print(f"  exact (lambda^steps):          {np.max(np.abs(exact)):.12f}")
    print(f"  max |u - exact| over the grid: {max_error:.3e}")
    print(f"  run {t['run'] * 1e3:.2f} ms ({t['run'] / steps * 1e6:.2f} us per step)")
    if max_error > 1e-9:
        print("error: the result does not match the exact discrete solution", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
