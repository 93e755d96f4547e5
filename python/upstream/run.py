"""Runs upstream pytato's test suite against ``pytato_rs`` and prints the counts per file.

    target/python-venv/bin/python python/upstream/run.py PYTATO_CHECKOUT [FILE ...]

``PYTATO_CHECKOUT`` is a checkout of ``inducer/pytato`` (its ``test/`` is used as it is, never
copied here). The shim (``shim/``) maps only the loopy/pyopencl plumbing: ``import pytato`` is
``pytato_rs``, ``generate_loopy(e)(queue, **kw)`` is ``generate(e)(**kw)``, pyopencl's arrays are
``EvaluatedArray``s. Tests that inspect loopy kernels, loopy targets or upstream internals are out
of scope; ``out_of_scope.txt`` lists them with the reason, and the report counts them apart, as it
does the tests of ``differences.txt``, which check behaviour kept different on purpose (numpy's
semantics, or a design of this library).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = ["test_codegen.py", "test_pytato.py", "test_linalg.py", "test_apps.py", "test_distributed.py", "test_jax.py"]


def listed(name: str) -> dict[str, str]:
    """``file::test`` (without parameters) -> the reason, from one of the lists beside this file."""
    reasons = {}
    for line in (HERE / name).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            test, _, reason = line.partition(" ")
            reasons[test] = reason.strip()
    return reasons


def run_file(test_dir: Path, name: str, extra: list[str]) -> list[tuple[str, str, str]]:
    """(test id, outcome, message) of every test case of one file."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "report.xml"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE / "shim"), str(test_dir), env.get("PYTHONPATH", "")])
        if os.geteuid() == 0:
            # upstream's distributed tests start mpiexec themselves; Open MPI refuses root without these
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", name, *extra]
        subprocess.run(cmd, cwd=test_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not xml.exists():
            return [(name, "error", "pytest wrote no report (the file does not import?)")]
        cases = []
        for case in ET.parse(xml).iter("testcase"):
            test_id = f"{name}::{case.get('name')}"
            outcome, message = "passed", ""
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome, message = "failed", (child.get("message") or "").splitlines()[0][:160] if child.get("message") else ""
                elif child.tag == "skipped":
                    kind = child.get("type", "")
                    outcome = "xfailed" if "xfail" in kind else "skipped"
                    message = (child.get("message") or "")[:160]
            cases.append((test_id, outcome, message))
        return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a checkout of inducer/pytato")
    parser.add_argument("files", nargs="*", default=FILES)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failure with its message")
    parser.add_argument("--pytest-args", default="", help="extra arguments for pytest (e.g. '-k name')")
    args = parser.parse_intermixed_args()
    test_dir = (args.checkout / "test").resolve()
    scope, differences = listed("out_of_scope.txt"), listed("differences.txt")
    rows = []
    for name in args.files:
        cases = run_file(test_dir, name, args.pytest_args.split())
        counts = {"passed": 0, "failed": 0, "out of scope": 0, "difference": 0, "skipped": 0, "xfailed": 0}
        for test_id, outcome, message in cases:
            base = test_id.split("[")[0]
            if outcome == "failed" and base in scope:
                counts["out of scope"] += 1
                continue
            if outcome == "failed" and base in differences:
                counts["difference"] += 1
                continue
            counts[outcome] += 1
            if outcome == "failed" and args.verbose:
                print(f"FAILED {test_id}: {message}")
        rows.append((name, counts))
    print()
    print("| file | passed | failed (in scope) | out of scope | deliberate difference | skipped / xfailed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, c in rows:
        print(
            f"| `{name}` | {c['passed']} | {c['failed']} | {c['out of scope']} | {c['difference']} "
            f"| {c['skipped']} / {c['xfailed']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
