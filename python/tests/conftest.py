"""Shared setup: which backends the tests run on.

Every linked backend that can start here is tested. wgpu needs a GPU driver (Mesa's lavapipe
on a CPU-only machine): without one its tests are skipped with the reason, unless
``PYTATO_REQUIRE_WGPU=1`` (CI), which makes a missing adapter a failure.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import pytato_rs as pt


def _wgpu_unavailable() -> str | None:
    """Why wgpu cannot run here, or None."""
    if "wgpu" not in [name for name, _ in pt.backends()]:
        return "the wgpu backend is not linked into this build"
    try:
        x = pt.make_placeholder("x", (1,), np.float32)
        pt.generate(x + 1, backend="wgpu")(x=np.zeros(1, np.float32))
    except pt.PytatoError as e:
        return f"no wgpu adapter: {e}"
    return None


WGPU_UNAVAILABLE = _wgpu_unavailable()
if WGPU_UNAVAILABLE and os.environ.get("PYTATO_REQUIRE_WGPU") == "1":
    raise RuntimeError(f"PYTATO_REQUIRE_WGPU=1 but {WGPU_UNAVAILABLE}")

BACKENDS = [
    pytest.param(name, marks=pytest.mark.skipif(name == "wgpu" and WGPU_UNAVAILABLE is not None, reason=str(WGPU_UNAVAILABLE)))
    for name, _ in pt.backends()
]


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Each linked backend in turn."""
    return request.param
