"""The DG flagship's peer: the same method written in ``jax.numpy``, one Runge-Kutta stage under
``jax.jit``, timed per step on the same meshes as ``dg time --peers PYTHON`` (see ``timing.rs``).

Reads one JSON object on stdin, written by the Rust example so that both sides use the same
reference element and time steps::

    {"velocity": [ax, ay], "rk_alpha": [...], "rk_beta": [...], "steps": N,
     "cases": [{"order": p, "k": k, "dt": dt, "nodes": [...], "diff": [[...]],
                "lift_left": [...], "lift_right": [...], "mass": [[...]]}, ...]}

and prints one JSON list on stdout, per case: ``{"order", "k", "median_ms", "error", "form"}``
with the median over the last ``N - 1`` of ``N`` steps (each waited for with ``block_until_ready``; jax
compiles in the first) and the L2 error against the exact solution after the ``N`` steps, which
the Rust side compares with its own. Float64 throughout (``jax_enable_x64``). The right-hand side
is written two ways (``form``): with einsums as ``solver.rs`` writes it, and with batched matrix
products, takes and broadcasts; the faster one's time is reported, so the peer is JAX at its best
of the two.

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

        def rhs_einsum(u):
            # As solver.rs builds it: einsums for the volume term and the lift.
            total = -(ax * jnp.einsum("ik,ekj->eij", diff, u) + ay * jnp.einsum("jk,eik->eij", diff, u))
            jump_x = -ax * (u[:, 0, :] - u[left, n, :])
            jump_y = -ay * (u[:, :, 0] - u[bottom, :, n])
            total = total + jnp.einsum("i,ej->eij", lift_left, jump_x) + jnp.einsum("j,ei->eij", lift_left, jump_y)
            return (2.0 / h) * total

        def rhs_matmul(u):
            # The same with batched matrix products, takes and broadcasts, as a JAX user may write it.
            total = -(ax * jnp.matmul(diff, u) + ay * jnp.matmul(u, diff.T))
            jump_x = -ax * (u[:, 0, :] - jnp.take(u[:, n, :], left, axis=0))
            jump_y = -ay * (u[:, :, 0] - jnp.take(u[:, :, n], bottom, axis=0))
            total = total + lift_left[None, :, None] * jump_x[:, None, :] + lift_left[None, None, :] * jump_y[:, :, None]
            return (2.0 / h) * total

        x = (ex[:, None, None] + (nodes[None, :, None] + 1) / 2) * h
        y = (ey[:, None, None] + (nodes[None, None, :] + 1) / 2) * h

        coefficients = [(jnp.float64(a), jnp.float64(b)) for a, b in zip(spec["rk_alpha"], spec["rk_beta"])]

        def exact(t):
            return np.sin(2 * np.pi * (x - ax * t)) * np.sin(2 * np.pi * (y - ay * t))

        best = None
        for rhs in (rhs_einsum, rhs_matmul):

            def stage(u, kk, alpha, beta, rhs=rhs):
                kk = alpha * kk + dt * rhs(u)
                return u + beta * kk, kk

            # Donating u and k lets XLA write the next stage's values over them, as ours does.
            stage = jax.jit(stage, donate_argnums=(0, 1))

            def step(u, kk, stage=stage):
                for alpha, beta in coefficients:
                    u, kk = stage(u, kk, alpha, beta)
                return jax.block_until_ready(u), kk

            u, kk = step(jnp.array(exact(0.0)), jnp.zeros(x.shape))
            times = []
            for _ in range(steps - 1):
                start = time.perf_counter()
                u, kk = step(u, kk)
                times.append((time.perf_counter() - start) * 1e3)
            median = sorted(times)[len(times) // 2]
            if best is None or median < best[0]:
                best = (median, np.asarray(u), rhs.__name__[4:])
        median, u, form = best
        difference = u - exact(steps * dt)
        mass = np.array(case["mass"])
        error = np.sqrt(h * h / 4 * np.einsum("eij,ik,jl,ekl->", difference, mass, mass, difference))
        out.append({"order": n, "k": k, "median_ms": median, "error": float(error), "form": form})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
