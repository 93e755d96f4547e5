"""pytato's distributed API over mpi4py: tests/mpi/distributed_run.py under ``mpiexec`` on 2
and 3 ranks, on every linked backend that can start. Skipped (with the reason) where mpi4py or
``mpiexec`` is missing, unless ``PYTATO_REQUIRE_MPI=1`` (CI) makes that a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _why_no_mpi():
    if shutil.which("mpiexec") is None:
        return "mpiexec is not installed (Debian: apt-get install openmpi-bin libopenmpi-dev)"
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (cargo xtask python installs it where MPI is)"
    return None


WHY_NO_MPI = _why_no_mpi()
if WHY_NO_MPI and os.environ.get("PYTATO_REQUIRE_MPI") == "1":
    raise RuntimeError(f"PYTATO_REQUIRE_MPI=1 but {WHY_NO_MPI}")


@pytest.mark.skipif(WHY_NO_MPI is not None, reason=str(WHY_NO_MPI))
@pytest.mark.parametrize("ranks", [2, 3])
def test_distributed_runs_over_mpi4py(backend, ranks):
    script = Path(__file__).parent / "mpi" / "distributed_run.py"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(
        ["mpiexec", "-n", str(ranks), "--oversubscribe", sys.executable, str(script), backend],
        env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # The ranks' lines may interleave.
    assert all(f"rank {r}: ok" in done.stdout for r in range(ranks)), done.stdout
