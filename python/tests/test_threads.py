"""Programs from several Python threads: results stay right, and a running program releases
the GIL so that other threads go on."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import pytato_rs as pt


def test_one_program_called_from_many_threads(backend):
    n = pt.make_size_param("n")
    x = pt.make_placeholder("x", (n,), np.float64)
    prg = pt.generate({"s": pt.sum(pt.sin(x) * x), "y": pt.roll(x, 1) * 2}, backend)

    def job(k):
        xv = np.linspace(0, k, 1000 + k)
        out = prg(x=xv)
        return k, out, xv

    with ThreadPoolExecutor(max_workers=8) as pool:
        for k, out, xv in pool.map(job, range(32)):
            np.testing.assert_allclose(out["s"], np.sum(np.sin(xv) * xv), rtol=1e-12)
            np.testing.assert_array_equal(out["y"], np.roll(xv, 1) * 2)


def test_building_and_compiling_from_many_threads():
    def job(k):
        x = pt.make_placeholder("x", (3,), np.float64)
        expr = x * k + pt.sum(x)
        return k, pt.generate(expr)(x=np.arange(3.0))

    with ThreadPoolExecutor(max_workers=4) as pool:
        for k, out in pool.map(job, range(16)):
            np.testing.assert_array_equal(out, np.arange(3.0) * k + 3.0)


def test_a_running_program_releases_the_gil():
    # With a switch interval of an hour, a thread that holds the GIL keeps it: the main thread
    # gets to run while the worker is inside the program only if the program released it.
    x = pt.make_placeholder("x", (pt.make_size_param("n"),), np.float64)
    prg = pt.generate(pt.sum(pt.sin(x) * pt.cos(x) + pt.sqrt(pt.abs(x))))
    data = np.linspace(-1, 1, 20_000_000)
    started, finished = threading.Event(), threading.Event()

    def worker():
        started.set()
        prg(x=data)
        finished.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(3600)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait()
        ran_during_the_program = not finished.is_set()
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert ran_during_the_program
