"""The DG flagship in Python: nodal discontinuous Galerkin for 2-D linear advection, checked
against theory, written as a pytato user writes it.

The Python version of ``pytato/examples/dg`` (see its ``solver.rs`` for the method): on a periodic
mesh of k x k squares with tensor-product Gauss-Lobatto-Legendre nodes, the right-hand side is one
DAG (element-local einsums with the differentiation matrix, neighbour faces gathered with index
arrays, upwind flux, lift, axis tags for the element and DOF axes), inside one stage of a
five-stage fourth-order low-storage Runge-Kutta scheme, compiled once per order (the number of
elements is a size parameter) and run on meshes of 8^2 squares and finer. The L2 error against
the exact solution and the observed order ``log2(e_h / e_{h/2})``, which approaches ``p + 1``
(Hesthaven and Warburton, 2008), are printed.

Run: ``python python/examples/dg.py [MESHES] [T_FINAL]`` (default 3 meshes, t = 0.25;
``PYTATO_BACKEND`` picks a backend). Exits with an error if an order falls short of ``p + 1 - 0.3``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

import pytato_rs as pt
from pytato_rs.tags import Tag

VELOCITY = (1.0, 0.5)
# The faces of an element, by the input that holds each one's neighbours, and a . n on them.
NEIGHBOURS = ["left", "right", "bottom", "top"]
A_DOT_N = [-VELOCITY[0], VELOCITY[0], -VELOCITY[1], VELOCITY[1]]
# Carpenter and Kennedy's five-stage fourth-order low-storage Runge-Kutta coefficients.
RK_ALPHA = [0.0, -567301805773 / 1357537059087, -2404267990393 / 2016746695238,
            -3550918686646 / 2091501179385, -1275806237668 / 842570457699]
RK_BETA = [1432997174477 / 9575080441755, 5161836677717 / 13612068292357, 1720146321549 / 2090206949498,
           3134564353537 / 4481467310338, 2277821191437 / 14882151754819]
MARGIN = 0.3


@dataclass(frozen=True)
class ElementAxis(Tag):
    """The element axis of a DG array."""


@dataclass(frozen=True)
class DofAxis(Tag):
    """A degree-of-freedom axis of a DG array."""


def legendre(n, x):
    """Legendre polynomials P_0..P_n and their derivatives at x."""
    p, dp = np.ones(n + 1), np.zeros(n + 1)
    if n >= 1:
        p[1], dp[1] = x, 1.0
    for k in range(1, n):
        p[k + 1] = ((2 * k + 1) * x * p[k] - k * p[k - 1]) / (k + 1)
        dp[k + 1] = dp[k - 1] + (2 * k + 1) * p[k]
    return p, dp


class Reference:
    """The 1-D reference element [-1, 1] of order n: GLL nodes, differentiation, mass, lift."""

    def __init__(self, order):
        n = self.order = order
        nodes = -np.cos(np.pi * np.arange(n + 1) / n)
        for i in range(1, n):  # the roots of P_{n+1} - P_{n-1}, by Newton's method
            for _ in range(100):
                p, _ = legendre(n, nodes[i])
                step = (nodes[i] * p[n] - p[n - 1]) / ((n + 1) * p[n])
                nodes[i] -= step
                if abs(step) < 1e-16:
                    break
        self.nodes = nodes
        scale = np.sqrt((2 * np.arange(n + 1) + 1) / 2)
        v = np.array([scale * legendre(n, x)[0] for x in nodes])
        vr = np.array([scale * legendre(n, x)[1] for x in nodes])
        self.diff = vr @ np.linalg.inv(v)
        mass_inv = v @ v.T
        self.mass = np.linalg.inv(mass_inv)
        self.lifts = [mass_inv[:, 0].copy(), mass_inv[:, n].copy()]

    @property
    def np(self):
        return self.order + 1


class Mesh:
    """A periodic mesh of k x k squares of side 1/k; element e = ex + k ey."""

    def __init__(self, k):
        self.k, self.h, self.elements = k, 1.0 / k, k * k

    def neighbours(self):
        """The neighbour across each face, in NEIGHBOURS order."""
        e = np.arange(self.elements)
        ex, ey = e % self.k, e // self.k
        at = lambda x, y: (x % self.k) + self.k * (y % self.k)  # noqa: E731
        return [at(ex - 1, ey), at(ex + 1, ey), at(ex, ey - 1), at(ex, ey + 1)]

    def interpolate(self, reference, f):
        e = np.arange(self.elements)
        ex, ey = (e % self.k)[:, None, None], (e // self.k)[:, None, None]
        x = (ex + (reference.nodes[None, :, None] + 1) / 2) * self.h
        y = (ey + (reference.nodes[None, None, :] + 1) / 2) * self.h
        return f(x, y) + 0 * x * y

    def l2_norm(self, reference, u):
        m = reference.mass
        return np.sqrt(self.h * self.h / 4 * np.einsum("eij,ik,jl,ekl->", u, m, m, u))


def exact(t):
    return lambda x, y: np.sin(2 * np.pi * (x - VELOCITY[0] * t)) * np.sin(2 * np.pi * (y - VELOCITY[1] * t))


def rhs(reference, u):
    """du/dt as a DAG in u (shape (e, np, np)) and the neighbours of the inflow faces."""
    n = reference.order
    diff = pt.make_data_wrapper(reference.diff)
    lifts = [pt.make_data_wrapper(lift) for lift in reference.lifts]
    two_over_h = 2.0 / pt.make_placeholder("h", (), np.float64)
    total = -(VELOCITY[0] * pt.einsum("ik,ekj->eij", diff, u) + VELOCITY[1] * pt.einsum("jk,eik->eij", diff, u))
    faces = {"minus": [u[:, 0, :], u[:, n, :], u[:, :, 0], u[:, :, n]],
             "plus": [u[:, n, :], u[:, 0, :], u[:, :, n], u[:, :, 0]]}
    for side, name in enumerate(NEIGHBOURS):
        if A_DOT_N[side] >= 0:  # the flow leaves: the upwind flux difference is zero
            continue
        neighbours = pt.make_placeholder(name, (u.shape[0],), np.int64).with_tagged_axis(0, ElementAxis())
        jump = A_DOT_N[side] * (faces["minus"][side] - pt.take(faces["plus"][side], neighbours, axis=0))
        total = total + pt.einsum("i,ej->eij" if side < 2 else "j,ei->eij", lifts[side % 2], jump)
    total = two_over_h * total
    return total.with_tagged_axis(0, ElementAxis()).with_tagged_axis(1, DofAxis()).with_tagged_axis(2, DofAxis())


def stage(reference):
    """One Runge-Kutta stage: k <- alpha k + dt rhs(u), u <- u + beta k, named like the inputs."""
    shape = (pt.make_size_param("e"), reference.np, reference.np)
    u = pt.make_placeholder("u", shape, np.float64).with_tagged_axis(0, ElementAxis())
    k = pt.make_placeholder("k", shape, np.float64).with_tagged_axis(0, ElementAxis())
    alpha, beta, dt = (pt.make_placeholder(name, (), np.float64) for name in ("alpha", "beta", "dt"))
    k_next = alpha * k + dt * rhs(reference, u)
    return pt.make_dict_of_named_arrays({"u": u + beta * k_next, "k": k_next})


class Solver:
    """The stage program of one order, compiled once for every mesh."""

    def __init__(self, order, backend=None):
        self.reference = Reference(order)
        start = time.perf_counter()
        self.program = pt.generate(pt.unify_axes_tags(stage(self.reference)), backend)
        self.compile_time = time.perf_counter() - start

    def run(self, mesh, t_final, cfl=0.5):
        """Advects the exact solution to t_final; returns (L2 error, steps, DOFs, run time)."""
        ref = self.reference
        steps = max(1, int(np.ceil(t_final / (cfl * mesh.h / (ref.np**2 * sum(map(abs, VELOCITY)))))))
        dt = t_final / steps
        neighbours = {name: nb for name, nb, a in zip(NEIGHBOURS, mesh.neighbours(), A_DOT_N) if a < 0}
        u = mesh.interpolate(ref, exact(0.0))
        k = np.zeros_like(u)
        u_next, k_next = np.empty_like(u), np.empty_like(k)
        start = time.perf_counter()
        for _ in range(steps):
            for alpha, beta in zip(RK_ALPHA, RK_BETA):
                self.program.run_into({"u": u_next, "k": k_next}, u=u, k=k, h=mesh.h, dt=dt, alpha=alpha,
                                      beta=beta, **neighbours)
                u, u_next, k, k_next = u_next, u, k_next, k
        run_time = time.perf_counter() - start
        error = mesh.l2_norm(ref, u - mesh.interpolate(ref, exact(t_final)))
        return error, steps, u.size, run_time


def observed_orders(errors):
    return [float(np.log2(a / b)) for a, b in zip(errors, errors[1:])]


def main(argv):
    meshes = max(2, int(argv[1]) if len(argv) > 1 else 3)
    t_final = float(argv[2]) if len(argv) > 2 else 0.25
    print(f"DG for u_t + a.grad u = 0, a = {VELOCITY}, periodic [0,1]^2, to t = {t_final}; "
          f"backend {pt.default_backend_name()!r}")
    print(f"{'order':>5} {'mesh':>7} {'DOFs':>8} {'steps':>6} {'time/step':>10} {'DOFs/s':>10} {'L2 error':>10} {'order':>6}")
    failures = []
    for order in range(1, 5):
        solver = Solver(order)
        print(f"p = {order}: stage program compiled in {solver.compile_time * 1e3:.1f} ms")
        errors = []
        for level in range(meshes):
            mesh = Mesh(8 << level)
            error, steps, dofs, run_time = solver.run(mesh, t_final)
            errors.append(error)
            observed = observed_orders(errors)
            print(f"{order:>5} {mesh.k:>3}x{mesh.k:<3} {dofs:>8} {steps:>6} {run_time / steps * 1e3:>8.2f}ms "
                  f"{dofs * steps / run_time:>10.3e} {error:>10.3e} {observed[-1] if observed else '-':>6.5}")
        if observed_orders(errors)[-1] < order + 1 - MARGIN:
            failures.append(f"order {order}: observed {observed_orders(errors)[-1]:.2f}")
    if failures:
        print("error: convergence below theory: " + "; ".join(failures), file=sys.stderr)
        return 1
    print(f"observed orders approach p + 1 for every order (margin {MARGIN})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
