"""The conformance cases (``conformance-tests/data/cases.json``, expected values from numpy)
through the Python API.

Each case's expression is numpy code (``np.sum(x, axis=0)``, ``x[i] * 2``); here it is
evaluated with ``np`` bound to ``pytato_rs`` (and ``at(x)`` as ``x.at``), compiled, run on the case's inputs and compared
with numpy's values, dtype and shape as the Rust suite compares them. A case is left out only
for a reason listed in ``EXCLUDED`` (a feature the Python API does not bind, or pytato's own
semantics where it differs from numpy's on purpose); a test checks that the share run stays
above most of the suite.
"""

from __future__ import annotations

import ast
import json
import pathlib
import re

import numpy as np
import pytest

import pytato_rs as pt

CASES_PATH = pathlib.Path(__file__).resolve().parents[2] / "conformance-tests" / "data" / "cases.json"
CASES = json.loads(CASES_PATH.read_text())["cases"]

# (pattern over the expression or case name, why the case does not run through Python)
EXCLUDED = [
    (r"^kernels$", "user kernels (statements in the kernel IR's language) are not bound in Python yet"),
    (r"\b(count_)?named\(", "named(...) and count_named(...) are helpers of the Rust suite's expression language"),
]

# (rtol, atol) by dtype, as the Rust suite (conformance-tests/src/tolerance.rs).
TOLERANCE = {
    "float16": (2e-3, 1e-5),
    "float32": (2e-5, 1e-6),
    "complex64": (2e-5, 1e-6),
    "float64": (1e-10, 1e-13),
    "complex128": (1e-10, 1e-13),
}


class ElementwiseComparisons(ast.NodeTransformer):
    """Rewrites ``a == b`` and ``a != b`` as ``np.equal(a, b)`` and ``np.not_equal(a, b)``: in
    the suite's numpy code they compare elements, on pytato's arrays they compare structure."""

    def visit_Compare(self, node):
        self.generic_visit(node)
        functions = {ast.Eq: "equal", ast.NotEq: "not_equal"}
        if len(node.ops) == 1 and type(node.ops[0]) in functions:
            function = ast.Attribute(ast.Name("np", ast.Load()), functions[type(node.ops[0])], ast.Load())
            return ast.copy_location(ast.Call(function, [node.left, node.comparators[0]], []), node)
        return node


def evaluate(expr: str, namespace):
    """The suite's numpy expression, evaluated with the Python API."""
    tree = ast.fix_missing_locations(ElementwiseComparisons().visit(ast.parse(expr, mode="eval")))
    return eval(compile(tree, "<case>", "eval"), namespace)


def exclusion(case) -> str | None:
    if any("kernel" in f for f in case.get("functions", {}).values()):
        return EXCLUDED[0][1]
    for pattern, why in EXCLUDED[1:]:
        if any(re.search(pattern, e) for e in case["expr"].values()):
            return why
    return None


def decode(value) -> np.ndarray:
    """A JSON array of the golden file as numpy data."""
    def scalar(x):
        if isinstance(x, list):
            return complex(scalar(x[0]), scalar(x[1]))
        if isinstance(x, str):
            return float(x)  # "nan", "inf", "-inf"
        return x

    values = [scalar(x) for x in value["values"]]
    dtype = np.dtype(value["dtype"])
    if dtype.kind in "iub":
        return np.array(values, dtype=dtype).reshape(value["shape"])
    return np.array(values, dtype=np.complex128 if dtype.kind == "c" else np.float64).astype(dtype).reshape(value["shape"])


def traced(spec, namespace):
    """A function of the case (parameters and one expression per result), called through
    ``pt.trace_call``: traced once per call site's shapes into one function definition."""

    def body(*params):
        scope = dict(namespace, **dict(zip(spec["params"], params)))
        results = [evaluate(expr, scope) for expr in spec["body"]]
        return results[0] if len(results) == 1 else tuple(results)

    return lambda *args: pt.trace_call(body, *args)


# The name of the result of a program of one array (not a dictionary).
SINGLE = "_pt_out"


def build(case):
    """The case's inputs as expressions, and its outputs."""
    namespace = {"np": pt, "at": lambda x: x.at}
    for name in case["sizes"]:
        namespace[name] = pt.make_size_param(name)
    for name, spec in case.get("functions", {}).items():
        namespace[name] = traced(spec, namespace)
    for name, spec in case["inputs"].items():
        if spec["kind"] == "data":
            namespace[name] = pt.make_data_wrapper(decode(spec["data"]), name=name)
        else:
            namespace[name] = pt.make_placeholder(name, tuple(spec["shape"]), np.dtype(spec["dtype"]))
    outputs = {out: evaluate(expr, namespace) for out, expr in case["expr"].items()}
    if list(outputs) == [SINGLE]:
        return outputs[SINGLE]
    return pt.make_dict_of_named_arrays(outputs)


def run_inputs(case):
    inputs = {
        name: decode(spec["data"])
        for name, spec in case["inputs"].items()
        if spec["kind"] == "placeholder" and name not in case["omit"]
    }
    for name, value in case.get("run", {}).items():
        if value is None:
            inputs.pop(name, None)
        else:
            inputs[name] = decode(value)
    return inputs


def check_close(name, got, expected):
    assert got.dtype == expected.dtype, f"output {name}: dtype {got.dtype} instead of {expected.dtype}"
    assert got.shape == expected.shape, f"output {name}: shape {got.shape} instead of {expected.shape}"
    tolerance = TOLERANCE.get(expected.dtype.name)
    if tolerance is None:
        np.testing.assert_array_equal(got, expected, err_msg=f"output {name}")
    else:
        rtol, atol = tolerance
        parts = [(got.real, expected.real), (got.imag, expected.imag)] if expected.dtype.kind == "c" else [(got, expected)]
        for g, e in parts:
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=f"output {name}")


def run_case(case, backend):
    if case.get("error"):
        with pytest.raises(pt.PytatoError) as info:
            pt.generate(build(case), backend)(**run_inputs(case))
        assert info.value.kind == case["error"], f"expected a {case['error']} error, got {info.value.kind}: {info.value}"
        return
    got = pt.generate(build(case), backend)(**run_inputs(case))
    if not isinstance(got, dict):
        got = {SINGLE: got}
    for name, expected in case["expected"].items():
        check_close(name, got[name], decode(expected))


RUNNABLE = [c for c in CASES if exclusion(c) is None]


@pytest.mark.parametrize("case", RUNNABLE, ids=[c["name"] for c in RUNNABLE])
def test_case_on_default_backend(case):
    run_case(case, None)


# Every tenth case on each backend: the bindings pass the same things to every backend.
SAMPLE = RUNNABLE[::10]


@pytest.mark.parametrize("case", SAMPLE, ids=[c["name"] for c in SAMPLE])
def test_case_on_each_backend(case, backend):
    run_case(case, backend)


def test_most_cases_run_through_python():
    excluded = {}
    for case in CASES:
        why = exclusion(case)
        if why:
            excluded.setdefault(why, []).append(case["name"])
    print(f"{len(RUNNABLE)} of {len(CASES)} conformance cases run through Python; left out:")
    for why, names in excluded.items():
        print(f"  {len(names)}: {why}")
    assert len(RUNNABLE) >= 0.9 * len(CASES)
