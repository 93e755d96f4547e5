"""The peers of `cargo xtask bench --peers`: the bench workloads timed with numpy and `jax.jit`
(float64, on the CPU) in the same run as the Rust rows, so the report can show ratios against them.

Usage: python3 peers.py SIZES_JSON, where SIZES_JSON has the bench's sizes:
{"elementwise": n, "sum": n, "matmul": [n, ...], "dg_elements": e, "stencil": n, "reps": r}.

Prints one JSON list of {"workload", "backend", "median_ms"} on stdout. jax is optional: without it
only the numpy rows are printed (and a message on stderr). Each timing has one untimed warm-up
call first (jax compiles there); jax results are waited for (`block_until_ready`).
"""

import json
import sys
import time

import numpy as np


# As `workloads.rs` times its rows: at least `reps` calls, and more, up to MAX_CALLS, until they
# have taken MIN_TOTAL_S seconds.
MIN_TOTAL_S = 0.25
MAX_CALLS = 1000


def median_ms(reps, f):
    f()
    first = time.perf_counter()
    times = []
    while len(times) < reps or (len(times) < MAX_CALLS and time.perf_counter() - first < MIN_TOTAL_S):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def workloads(sizes, rng):
    """(name, function of the array module, arguments), as in `workloads.rs`."""
    n = sizes["elementwise"]
    fused = tuple(rng.standard_normal(n) for _ in range(4))
    yield "fused-elementwise", lambda xp: lambda a, b, c, d: xp.sin(a) * b + c / (d + 1.5), fused
    m = rng.standard_normal((sizes["sum"], sizes["sum"]))
    yield "sum-axis0", lambda xp: lambda m: xp.sum(m, axis=0), (m,)
    yield "sum-axis1", lambda xp: lambda m: xp.sum(m, axis=1), (m,)
    yield "sum-all", lambda xp: lambda m: xp.sum(m), (m,)
    for k in sizes["matmul"]:
        yield f"matmul-{k}", lambda xp: lambda a, b: a @ b, (rng.standard_normal((k, k)), rng.standard_normal((k, k)))
    dg = (rng.standard_normal((20, 20)), rng.standard_normal((sizes["dg_elements"], 20)))
    # einsum("ij,ej->ei", d, u), written as the product BLAS (and XLA) take it.
    yield "dg-apply", lambda xp: lambda d, u: u @ d.T, dg
    x = rng.standard_normal(n)
    yield "cumulative-sum", lambda xp: lambda x: xp.cumsum(x), (x,)
    yield "sort", lambda xp: lambda x: xp.sort(x, stable=True), (x,)
    queries = rng.standard_normal(n)
    yield "searchsorted", lambda xp: lambda s, q: xp.searchsorted(s, q), (np.sort(x), queries)
    # Boolean masks have data-dependent shapes, which jax.jit refuses: numpy rows only (see main).
    yield "select-sum", lambda xp: lambda x: xp.sum(x[x > 0]), (x,)
    which = (np.arange(n, dtype=np.uint64) * np.uint64(2654435761) % np.uint64(1000)).astype(np.int64)

    def histogram(xp):
        if xp is np:
            def f(w, bins):
                h = np.zeros(1000)
                np.add.at(h, bins, w)
                return h
            return f
        return lambda w, bins: xp.zeros(1000).at[bins].add(w)
    yield "add-at-histogram", histogram, (rng.standard_normal(n), which)
    u = rng.standard_normal((sizes["stencil"], sizes["stencil"]))
    yield "stencil", lambda xp: lambda u: u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1], (u,)


def main():
    sizes = json.loads(sys.argv[1])
    reps = sizes["reps"]
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        jnp = jax.numpy
    except Exception as e:  # no jax here: numpy rows only
        print(f"peers: jax unavailable ({e}); numpy rows only", file=sys.stderr)
        jax = None
    rows = []
    for name, make, args in workloads(sizes, np.random.default_rng(0)):
        f = make(np)
        rows.append({"workload": name, "backend": "numpy", "median_ms": median_ms(reps, lambda: f(*args))})
        if jax is not None and name != "select-sum":
            jf = jax.jit(make(jnp))
            device_args = [jax.device_put(a) for a in args]
            ms = median_ms(reps, lambda: jf(*device_args).block_until_ready())
            rows.append({"workload": name, "backend": "jax.jit", "median_ms": ms})
        print(f"peers: {name} done", file=sys.stderr)
    json.dump(rows, sys.stdout)


if __name__ == "__main__":
    main()
