"""``pyopencl.tools``'s pytest hook: one "device", the pytato_rs backend."""

from __future__ import annotations

import pyopencl as cl


def pytest_generate_tests_for_pyopencl(metafunc):
    for name in ("ctx_factory", "ctx_getter"):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, [cl.create_some_context], ids=["pytato_rs"])
