"""grudge's weak-form advection operator, time-stepped on an array context: the same run on
numpy (arraycontext's eager NumpyArrayContext) and on pytato_rs (PytatoRsArrayContext, lazy:
each right-hand side is one compiled program), comparing the errors against the exact
solution and the time each takes.

Needs grudge, meshmode, modepy and arraycontext installed (from their repositories; PyPI's
releases are years old) and loopy 2025.1::

    python python/examples/grudge_advection.py [--order 3] [--npoints 12] [--final-time 0.5]
        [--backend cranelift] [--contexts numpy,pytato_rs]

u_t + c . grad u = 0 on [-1/2, 1/2]², u(x, 0) = sin(3 x . c / |c|) with inflow boundary values
from the exact solution u(x, t) = sin(3 (x . c / |c| - |c| t)), central fluxes, grudge's
low-storage RK4 with the step grudge estimates, as grudge's examples/advection/weak.py sets it up.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def run(actx, order, npoints, final_time):
    """The L2 and max errors at ``final_time``, the number of steps and the seconds they took."""
    from grudge import op
    from grudge.discretization import make_discretization_collection
    from grudge.models.advection import WeakAdvectionOperator
    from grudge.shortcuts import lsrk4_step
    from meshmode.mesh import BTAG_ALL
    from meshmode.mesh.generation import generate_box_mesh

    velocity = np.array([0.5, 0.5])
    speed = np.linalg.norm(velocity)
    mesh = generate_box_mesh([np.linspace(-0.5, 0.5, npoints)] * 2, order=order)
    dcoll = make_discretization_collection(actx, mesh, order=order)

    def exact(x, t):
        return actx.np.sin(3 * (np.dot(velocity, x) / speed - speed * t))

    boundary_nodes = actx.thaw(dcoll.nodes(dd=BTAG_ALL))
    operator = WeakAdvectionOperator(
        dcoll, velocity, inflow_u=lambda t: exact(boundary_nodes, t), flux_type="central")

    nodes = actx.thaw(dcoll.nodes())
    u = actx.freeze(exact(nodes, 0.0))
    dt = float(actx.to_numpy(operator.estimate_rk4_timestep(actx, dcoll, fields=actx.thaw(u))))
    nsteps = int(np.ceil(final_time / dt))
    dt = final_time / nsteps

    def rk4_step(u, t):
        return lsrk4_step(u, t, dt, operator.operator)

    step = actx.compile(rk4_step)
    start = time.perf_counter()
    for k in range(nsteps):
        u = actx.freeze(step(actx.thaw(u), k * dt))
    seconds = time.perf_counter() - start

    error = actx.thaw(u) - exact(nodes, final_time)
    l2 = float(actx.to_numpy(op.norm(dcoll, error, 2)))
    linf = float(actx.to_numpy(op.norm(dcoll, error, np.inf)))
    return l2, linf, nsteps, seconds


def make_context(name, backend):
    if name == "numpy":
        from arraycontext import NumpyArrayContext
        return NumpyArrayContext()
    if name == "pytato_rs":
        from pytato_rs.arraycontext import PytatoRsArrayContext
        return PytatoRsArrayContext(backend=backend)
    raise ValueError(f"unknown context {name!r} (numpy, pytato_rs)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--order", type=int, default=3)
    parser.add_argument("--npoints", type=int, default=12)
    parser.add_argument("--final-time", type=float, default=0.5)
    parser.add_argument("--backend", default=None)
    parser.add_argument("--contexts", default="numpy,pytato_rs")
    args = parser.parse_args()
    print(f"weak advection, order {args.order}, {args.npoints}² points, t = {args.final_time}")
    print(f"{'context':>10} {'L2 error':>22} {'max error':>22} {'steps':>6} {'s/step':>10}")
    for name in args.contexts.split(","):
        actx = make_context(name, args.backend)
        l2, linf, nsteps, seconds = run(actx, args.order, args.npoints, args.final_time)
        print(f"{name:>10} {l2:22.15e} {linf:22.15e} {nsteps:6d} {seconds / nsteps:10.2e}")


if __name__ == "__main__":
    main()
