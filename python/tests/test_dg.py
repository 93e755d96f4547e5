"""The DG flagship written in Python (``python/examples/dg.py``), checked against theory: the
observed order of the L2 error approaches p + 1 (Hesthaven and Warburton, 2008)."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dg.py"
MARGIN = 0.35  # on the pair of meshes 8^2 -> 16^2; the example's finer meshes get within 0.2


def load_example():
    spec = importlib.util.spec_from_file_location("dg_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def observed_order(dg, order, backend, t_final=0.25):
    solver = dg.Solver(order, backend)
    errors = [solver.run(dg.Mesh(k), t_final)[0] for k in (8, 16)]
    return dg.observed_orders(errors)[0], errors


@pytest.mark.parametrize("order", [1, 2, 3])
def test_dg_converges_at_order_p_plus_one(order):
    dg = load_example()
    observed, errors = observed_order(dg, order, None)
    assert errors[1] < errors[0] < 0.05
    assert observed > order + 1 - MARGIN, f"order {order}: observed {observed:.3f}"


def test_dg_on_each_backend(backend):
    dg = load_example()
    observed, _ = observed_order(dg, 1, backend, t_final=0.1)
    assert observed > 2 - MARGIN, f"observed {observed:.3f} on {backend}"


def test_reference_element_is_exact_for_polynomials():
    dg = load_example()
    ref = dg.Reference(4)
    x = ref.nodes
    # D differentiates polynomials of degree <= 4 exactly; M integrates their products exactly.
    np.testing.assert_allclose(ref.diff @ x**4, 4 * x**3, atol=1e-12)
    np.testing.assert_allclose(np.ones(5) @ ref.mass @ x**2, 2 / 3, atol=1e-13)
    assert x[0] == -1 and x[-1] == 1 and np.all(np.diff(x) > 0)
