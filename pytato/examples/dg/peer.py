"""The DG flagship's peer: the same method written in ``jax.numpy``, one Runge-Kutta stage under
``jax.jit``, timed per step on the same meshes as ``dg time --peers PYTHON`` (see ``timing.rs``).

Reads one JSON object on stdin, written by the Rust example so that both sides use the same
reference element and time steps::

    {"velocity": [ax, ay], "rk_alpha": [...], "rk_beta": [...], "steps": N,
     "cases": [{"order": p, "k": k, "dt": dt, "nodes": [...], "diff": [[...]],
                "lift_left": [...], "lift_right": [...], "mass": [[...]]}, ...]}

and prints one JSON list on stdout, per case: ``{"order", "k", "median_ms", "error"}`` with the
median over the last ``N - 1`` of ``N`` steps (each waited for with ``block_until_ready``; jax
compiles in the first) and the L2 error against the exact solution after the ``N`` steps, which
the Rust side compares with its own. Float64 throughout (``jax_enable_x64``).

The method, as ``solver.rs`` builds it: element-local einsums with the differentiation matrix,
neighbour faces gathered with index arrays, upwind flux on the faces the flow enters through, lift,
and Carpenter and Kennedy's low-storage stage ``k <- alpha k + dt rhs(u); u <- u + beta k``.
"""

import json
import sys
import time

import numpy as np


def main():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    spec = json.load(sys.stdin)
    ax, ay = spec["velocity"]
    steps = spec["steps"]
    out = []
    for case in spec["cases"]:
        n, k, dt = case["order"], case["k"], case["dt"]
        nodes = np.array(case["nodes"])
        diff = jnp.array(case["diff"])
        lift_left = jnp.array(case["lift_left"])
        h = 1.0 / k
        e = np.arange(k * k)
        ex, ey = e % k, e // k
        # The flow enters through the left and bottom faces (a > 0): only those have flux.
        left = jnp.array((ex - 1) % k + k * ey)
        bottom = jnp.array(ex + k * ((ey - 1) % k))

        def stage(u, kk, alpha, beta):
            du_dx = jnp.einsum("ik,ekj->eij", diff, u)
            du_dy = jnp.einsum("jk,eik->eij", diff, u)
            total = -(ax * du_dx + ay * du_dy)
            jump_x = -ax * (u[:, 0, :] - u[left, n, :])
            total = total + jnp.einsum("i,ej->eij", lift_left, jump_x)
            jump_y = -ay * (u[:, :, 0] - u[bottom, :, n])
            total = total + jnp.einsum("j,ei->eij", lift_left, jump_y)
            kk = alpha * kk + dt * ((2.0 / h) * total)
            return u + beta * kk, kk

        stage = jax.jit(stage)
        x = (ex[:, None, None] + (nodes[None, :, None] + 1) / 2) * h
        y = (ey[:, None, None] + (nodes[None, None, :] + 1) / 2) * h

        def exact(t):
            return np.sin(2 * np.pi * (x - ax * t)) * np.sin(2 * np.pi * (y - ay * t))

        u = jnp.array(exact(0.0))
        kk = jnp.zeros_like(u)
        coefficients = [(jnp.float64(a), jnp.float64(b)) for a, b in zip(spec["rk_alpha"], spec["rk_beta"])]

        def step(u, kk):
            for alpha, beta in coefficients:
                u, kk = stage(u, kk, alpha, beta)
            return jax.block_until_ready(u), kk

        u, kk = step(u, kk)
        times = []
        for _ in range(steps - 1):
            start = time.perf_counter()
            u, kk = step(u, kk)
            times.append((time.perf_counter() - start) * 1e3)
        times.sort()
        difference = np.asarray(u) - exact(steps * dt)
        mass = np.array(case["mass"])
        error = np.sqrt(h * h / 4 * np.einsum("eij,ik,jl,ekl->", difference, mass, mass, difference))
        out.append({"order": n, "k": k, "median_ms": times[len(times) // 2], "error": float(error)})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
