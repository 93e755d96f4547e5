"""The README's heat example, written in Python, against the exact discrete solution."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "heat.py"


def load_example():
    spec = importlib.util.spec_from_file_location("heat_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_heat_matches_the_exact_discrete_solution(backend):
    heat = load_example()
    state, exact, timings = heat.solve(64, 20, backend)
    assert timings["backend"] == backend
    # 200 steps: the amplitude has decayed measurably, and the result is the exact one.
    assert np.max(np.abs(exact)) < 0.99
    np.testing.assert_allclose(state, exact, rtol=0, atol=1e-12)


def test_heat_example_main_succeeds(capsys):
    heat = load_example()
    assert heat.main(["heat.py", "128", "5"]) == 0
    out = capsys.readouterr().out
    assert "128 points, 50 steps" in out
    assert "max |u - exact|" in out


def test_one_program_runs_any_grid():
    """The grid length is a size parameter: one program, several lengths, each exact."""
    import pytato_rs as pt

    heat = load_example()
    prg = pt.generate(heat.build_step())
    for n_points in (1, 2, 7, 300):
        x = np.arange(n_points) / n_points
        u = np.sin(2 * np.pi * x)
        expected = u.copy()
        for _ in range(heat.STEPS_PER_RUN):
            expected = expected + heat.NU * (np.roll(expected, 1) - 2 * expected + np.roll(expected, -1))
        np.testing.assert_allclose(prg(u=u), expected, rtol=0, atol=1e-14)
