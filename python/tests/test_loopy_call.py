"""call_loopy: loopy kernels translated into the DAG's nodes, on every backend. Expected
values are numpy's (loops written here, or numpy's own functions)."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt
from pytato_rs.exceptions import UnsupportedError
from pytato_rs.loopy import call_loopy

lp = pytest.importorskip("loopy", reason="call_loopy's tests need loopy (pip install loopy)")


def kernel(domains, instructions, args=("...",), name="knl"):
    return lp.make_kernel(domains, instructions, list(args), name=name,
                          lang_version=(2018, 2))


def run(outputs, backend=None):
    return pt.generate(outputs, backend=backend)()


RNG = np.random.default_rng(7)


def test_gather_with_a_reduction_a_condition_and_indirect_subscripts(backend):
    # meshmode's resampling: element iel of the result is the matrix times the source element
    # from_el[iel], where it is present.
    knl = kernel(
        ["{[iel]: 0 <= iel < nelements}", "{[idof]: 0 <= idof < ntgt}",
         "{[jdof]: 0 <= jdof < nsrc}"],
        """
        result[iel, idof] = (sum(jdof, mat[idof, jdof] * ary[from_el[iel], jdof])
                             if present[iel] else 0)
        """,
        [lp.GlobalArg("ary", None, shape="nelements_src, nsrc"),
         lp.ValueArg("nelements_src", np.int32), "..."])
    ary, mat = RNG.random((9, 4)), RNG.random((3, 4))
    from_el = np.array([8, -1, 0, 4, 4, -1], dtype=np.int32)
    present = from_el >= 0
    result = call_loopy(knl, {"ary": ary, "mat": mat, "from_el": from_el, "present": present})
    expected = np.zeros((6, 3))
    for iel in range(6):
        if present[iel]:
            expected[iel] = mat @ ary[from_el[iel]]
    np.testing.assert_allclose(run(result, backend)["result"], expected, rtol=1e-14)


def test_nested_indirect_picks(backend):
    knl = kernel(
        ["{[iel]: 0 <= iel < nelements}", "{[idof]: 0 <= idof < ndofs}"],
        "result[iel, idof] = ary[from_el[iel], picks[pick_index[iel], idof]]",
        [lp.GlobalArg("ary", None, shape="nel_src, ndofs_src"),
         lp.GlobalArg("picks", None, shape="npicks, ndofs"), "..."])
    ary = RNG.random((5, 6))
    from_el = np.array([4, 0, 2, 2])
    picks = np.array([[0, 5, 1], [3, 3, 2]])
    pick_index = np.array([1, 0, 0, 1])
    result = call_loopy(knl, {"ary": ary, "from_el": from_el, "picks": picks,
                              "pick_index": pick_index})
    expected = np.array([[ary[from_el[e], picks[pick_index[e], i]] for i in range(3)]
                         for e in range(4)])
    np.testing.assert_array_equal(run(result, backend)["result"], expected)


def test_initialize_then_scatter_with_affine_indices(backend):
    # meshmode's full resampling matrix: zeros, then blocks written at affine offsets of
    # indirect element numbers.
    knl = kernel(
        ["{[i0]: 0 <= i0 < ntgt_all}", "{[j0]: 0 <= j0 < nsrc_all}",
         "{[iel]: 0 <= iel < nelements}", "{[idof]: 0 <= idof < ntgt}",
         "{[jdof]: 0 <= jdof < nsrc}"],
        """
        result[i0, j0] = 0 {id=init}
        ... gbarrier {id=barrier, dep=init}
        result[base + to_el[iel]*ntgt + idof, from_el[iel]*nsrc + jdof] = mat[idof, jdof] \
            {dep=barrier}
        """,
        [lp.GlobalArg("result", np.float64, shape="ntgt_all, nsrc_all"),
         lp.ValueArg("base, ntgt_all, nsrc_all", np.int32), "..."])
    mat = RNG.random((2, 3))
    to_el, from_el = np.array([2, 0, 1]), np.array([1, 1, 0])
    result = call_loopy(knl, {"mat": mat, "to_el": to_el, "from_el": from_el, "base": 1,
                              "ntgt_all": 8, "nsrc_all": 6})
    expected = np.zeros((8, 6))
    for e in range(3):
        for i in range(2):
            for j in range(3):
                expected[1 + to_el[e] * 2 + i, from_el[e] * 3 + j] = mat[i, j]
    got = run(result, backend)["result"]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


def test_accumulating_scatter_adds_repeated_indices(backend):
    # meshmode's projection: result[to_el[iel], i] += ..., with elements that share a target.
    knl = kernel(
        ["{[e0]: 0 <= e0 < ntgt_el}", "{[i0]: 0 <= i0 < n}", "{[iel]: 0 <= iel < nelements}",
         "{[i]: 0 <= i < n}", "{[q]: 0 <= q < nq}"],
        """
        result[e0, i0] = 0 {id=init}
        ... gbarrier {id=barrier, dep=init}
        result[to_el[iel], i] = result[to_el[iel], i] + sum(q, ary[iel, q] * basis[i, q]) \
            {dep=barrier}
        """,
        [lp.GlobalArg("result", None, shape="ntgt_el, n", is_input=False),
         lp.ValueArg("ntgt_el", np.int32), "..."])
    ary, basis = RNG.random((5, 4)), RNG.random((3, 4))
    to_el = np.array([0, 2, 0, 0, 1])
    result = call_loopy(knl, {"ary": ary, "basis": basis, "to_el": to_el, "ntgt_el": 4})
    expected = np.zeros((4, 3))
    np.add.at(expected, to_el, ary @ basis.T)
    np.testing.assert_allclose(run(result, backend)["result"], expected, rtol=1e-14)


def test_temporaries_several_outputs_and_bounds_that_do_not_start_at_zero():
    knl = kernel(
        ["{[i]: 0 <= i < n}", "{[k]: 2 <= k < n}"],
        """
        <> t[i] = 2 * a[i]  {id=t}
        doubled[i] = t[i]  {dep=t}
        tail[k - 2] = t[k] + a[k]  {dep=t}
        """,
        [lp.GlobalArg("tail", np.float32, shape="n - 2"), "..."])
    a = RNG.random(6).astype(np.float32)
    outputs = run(call_loopy(knl, {"a": a}))
    np.testing.assert_array_equal(outputs["doubled"], 2 * a)
    np.testing.assert_array_equal(outputs["tail"], (2 * a + a)[2:])
    assert outputs["tail"].dtype == np.float32


def test_lazy_inputs_of_several_shapes():
    knl = kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = x[i, j] * y[j]")
    for shape in [(3, 4), (1, 7), (0, 2)]:
        x = pt.make_placeholder("x", shape, np.float64)
        y = pt.make_placeholder("y", shape[1:], np.float64)
        program = pt.generate(call_loopy(knl, {"x": x, "y": y})["out"])
        xs, ys = RNG.random(shape), RNG.random(shape[1])
        np.testing.assert_array_equal(program(x=xs, y=ys), xs * ys)
    # A symbolic shape gives loops of symbolic length: one program for every n.
    symbolic = pt.make_placeholder("x", ("n", 2), np.float64)
    program = pt.generate(call_loopy(knl, {"x": symbolic, "y": np.array([2.0, -0.0])})["out"])
    for n in [3, 1, 0]:
        xs = RNG.random((n, 2))
        np.testing.assert_array_equal(program(x=xs), xs * np.array([2.0, -0.0]))


def test_kernels_on_arrays_of_symbolic_shape(backend):
    m, n = pt.make_size_param("M"), pt.make_size_param("N")
    x = pt.make_placeholder("x", (m, n), np.float64)
    knl = kernel("{[i, j]: 0 <= i < m and 0 <= j < n}", "Z[i] = 7*sum(j, Y[i, j])")
    given = call_loopy(knl, {"Y": 3 * x, "m": m, "n": n})["Z"]  # sizes given as size parameters
    inferred = call_loopy(knl, {"Y": 3 * x})["Z"]  # sizes read from Y's symbolic shape
    assert str(given.shape[0]) == "M" and given.shape == inferred.shape
    program = pt.generate({"given": 2 * given, "inferred": inferred}, backend)
    for shape in [(10, 4), (1, 3), (0, 2), (3, 0)]:
        xs = RNG.standard_normal(shape)
        got = program(x=xs)
        want = np.array([2 * (7 * sum(3 * v for v in row)) for row in xs]).reshape(shape[0])
        np.testing.assert_allclose(got["given"], want, rtol=1e-13)
        np.testing.assert_allclose(got["inferred"], want / 2, rtol=1e-13)


def test_symbolic_lengths_solved_for_the_kernels_parameters(backend):
    # Several unknowns at once: A of shape (2n + 3m + 2, 6n + 4m + 3) called on one of shape
    # (4 n1 + 6 n2 + 2, 12 n1 + 8 n2 + 3) has n = 2 n1 and m = 2 n2.
    knl = kernel(["{[i, j]: 0 <= i < 2*n + 3*m + 2 and 0 <= j < 6*n + 4*m + 3}",
                  "{[ii, jj]: 0 <= ii < m and 0 <= jj < n}"],
                 """
                 <> total = sum([i, j], A[i, j])
                 out[ii, jj] = total * (ii + jj)
                 """)
    n1, n2 = pt.make_size_param("n1"), pt.make_size_param("n2")
    a = pt.make_placeholder("a", (4 * n1 + 6 * n2 + 2, 12 * n1 + 8 * n2 + 3), np.float64)
    out = call_loopy(knl, {"A": a})["out"]
    assert [str(d) for d in out.shape] == ["2*n2", "2*n1"]
    # One unknown: x declared of length n - 1 on an array of length N is n = N + 1; the kernel
    # reads n in its expression.
    shifted = kernel("{[i]: 0 <= i < n - 1}", "y[i] = x[i] * n", args=("x: shape=n-1", "..."))
    big_n = pt.make_size_param("N")
    y = call_loopy(shifted, {"x": pt.make_placeholder("x", (big_n,), np.int64)})["y"]
    program = pt.generate({"out": out, "y": y}, backend)
    for v1, v2, length in [(3, 4, 5), (1, 0, 0), (0, 2, 1)]:
        a_np = RNG.random((4 * v1 + 6 * v2 + 2, 12 * v1 + 8 * v2 + 3))
        x_np = np.arange(length, dtype=np.int64) - 2
        got = program(a=a_np, x=x_np, n1=np.int64(v1), n2=np.int64(v2))
        ii, jj = np.meshgrid(np.arange(2 * v2), np.arange(2 * v1), indexing="ij")
        np.testing.assert_allclose(got["out"], a_np.sum() * (ii + jj), rtol=1e-12)
        np.testing.assert_array_equal(got["y"], x_np * (length + 1))
    # A length no integer affine value solves (n of 2n on N) is an error naming it.
    doubled = kernel("{[i]: 0 <= i < 2*n}", "y[i] = x[i]", args=("x: shape=2*n", "..."))
    with pytest.raises(ValueError, match="size parameter"):
        call_loopy(doubled, {"x": pt.make_placeholder("x", (big_n,), np.float64)})


def test_lazy_value_arguments(backend):
    x = pt.make_placeholder("x", (), np.float64)
    knl = lp.make_kernel("{:}", "y = 2*x", lang_version=(2018, 2))
    y = call_loopy(knl, {"x": 3 * x})["y"]
    for value in [0.5, -0.0, np.inf]:
        got = pt.generate(y, backend)(x=np.array(value))
        np.testing.assert_array_equal(got, 6 * value)
        assert np.signbit(got) == np.signbit(6 * value)
    # A lazy array where the kernel needs a length: its loops cannot be built.
    sized = kernel("{[i]: 0 <= i < n}", "out[i] = i")
    with pytest.raises(ValueError, match="size parameter"):
        call_loopy(sized, {"n": 2 * x})
    with pytest.raises(TypeError, match="value argument 'n'"):
        call_loopy(sized, {"n": pt.make_placeholder("v", (2,), np.int64)})


def test_size_parameters_that_lengths_state_together():
    # loopy declares A of shape (2n + 3m + 2, 6n + 4m + 3): 20 × 37 is n = 3, m = 4.
    knl = kernel(["{[i, j]: 0 <= i < 2*n + 3*m + 2 and 0 <= j < 6*n + 4*m + 3}",
                  "{[ii, jj]: 0 <= ii < m and 0 <= jj < n}"],
                 """
                 <> total = sum([i, j], A[i, j])
                 out[ii, jj] = total * (ii + jj)
                 """)
    a = RNG.random((20, 37))
    out = run(call_loopy(knl, {"A": a}))["out"]
    ii, jj = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    np.testing.assert_allclose(out, a.sum() * (ii + jj), rtol=1e-13)
    with pytest.raises(ValueError, match="size parameter"):
        call_loopy(knl, {"A": RNG.random((20, 38))})


def test_the_same_kernel_on_data_of_other_shapes():
    knl = kernel("{[i]: 0 <= i < n}", "out[i] = abs(x[i]) + 1")
    for n in [1, 5]:
        x = RNG.standard_normal(n)
        np.testing.assert_array_equal(run(call_loopy(knl, {"x": x}))["out"], np.abs(x) + 1)


def test_argument_errors_name_the_kernel_and_the_argument():
    knl = kernel("{[i]: 0 <= i < n}", "out[i] = x[i] + y[i]", name="add_them")
    with pytest.raises(TypeError, match=r"add_them.*'z'"):
        call_loopy(knl, {"x": np.zeros(3), "y": np.zeros(3), "z": np.zeros(3)})
    with pytest.raises(ValueError, match=r"add_them.*'y' of shape \(4,\)"):
        call_loopy(knl, {"x": np.zeros(3), "y": np.zeros(4)})
    with pytest.raises(TypeError, match=r"add_them.*'y' not given"):
        call_loopy(knl, {"x": np.zeros(3)})
    fill = kernel("{[i]: 0 <= i < n}", "out[i] = 1", name="fill",
                  args=[lp.GlobalArg("out", np.float64, shape="n"), "..."])
    with pytest.raises(ValueError, match=r"size parameter.*n"):
        call_loopy(fill, {})
    np.testing.assert_array_equal(run(call_loopy(fill, {"n": 4}))["out"], np.ones(4))


def test_predicates_and_value_arguments_of_any_type():
    knl = kernel(
        "{[i]: 0 <= i < n}",
        """
        out[i] = alpha * x[i]  {id=scale}
        if x[i] < 0
            out[i] = shift  {id=fix, dep=scale}
        end
        """,
        [lp.ValueArg("alpha", np.float64), lp.ValueArg("shift"), "..."])
    x = np.array([1.5, -2.0, 0.25, -0.0, -1e-300])
    outputs = run(call_loopy(knl, {"x": x, "alpha": 0.5, "shift": 7}))
    expected = np.where(x < 0, 7.0, 0.5 * x)
    np.testing.assert_array_equal(outputs["out"], expected)
    assert np.signbit(outputs["out"][3]), "-0.0 is not < 0: it keeps 0.5 * -0.0"
    with pytest.raises(TypeError, match=r"'x' of dtype float32, declared float64"):
        declared = kernel("{[i]: 0 <= i < n}", "out[i] = x[i]",
                          [lp.GlobalArg("x", np.float64, shape="n"), "..."])
        call_loopy(declared, {"x": np.zeros(2, np.float32)})


def test_affine_domains_mask_the_bounding_box(backend):
    # Row sums of the lower triangle, a strictly upper triangle written, and a product over a
    # band that depends on the row: each against loops written here.
    knl = kernel(
        ["{[i, j]: 0 <= i < n and 0 <= j <= i}", "{[k, l]: 0 <= k < n and k < l < n}",
         "{[p]: 0 <= p < n}", "{[q]: 0 <= q < n and p <= q <= p + 1}"],
        """
        lower[i] = sum(j, a[i, j])
        upper[k, l] = a[k, l] * 2
        band[p] = product(q, a[p, q])
        """,
        [lp.GlobalArg("a", np.float64, shape="n, n"),
         lp.GlobalArg("upper", np.float64, shape="n, n"), "..."], name="triangles")
    a = RNG.random((4, 4)) + 0.5
    outputs = run(call_loopy(knl, {"a": a}), backend)
    np.testing.assert_allclose(outputs["lower"], [a[i, :i + 1].sum() for i in range(4)],
                               rtol=1e-15)
    np.testing.assert_array_equal(outputs["upper"], np.triu(a, 1) * 2)
    np.testing.assert_allclose(outputs["band"], [np.prod(a[p, p:p + 2]) for p in range(4)],
                               rtol=1e-15)
    # Rows of -0.0 sum as numpy sums them.
    negative_zeros = run(call_loopy(knl, {"a": np.full((3, 3), -0.0)}), backend)["lower"]
    expected = [np.sum(np.full(i + 1, -0.0)) for i in range(3)]
    np.testing.assert_array_equal(np.signbit(negative_zeros), np.signbit(expected))
    # A domain whose bound is another domain's loop index (loopy's dependent domains).
    prefix = kernel(["{[i]: 0 <= i < n}", "{[j]: 0 <= j < i}"], "out[i] = sum(j, x[j])",
                    name="exclusive_prefix_sums")
    x = RNG.random(5)
    got = run(call_loopy(prefix, {"x": x}), backend)["out"]
    # loopy declares x of length n - 1 (j < i < n): five elements make n = 6.
    np.testing.assert_allclose(got, [x[:i].sum() for i in range(6)], rtol=1e-15)
    # Integer sums stay integers, extremes wrapping as numpy's do.
    ints = np.array([np.iinfo(np.int64).max, 1, -5, 7, 0])
    integer_sums = call_loopy(prefix, {"x": ints})["out"]
    assert integer_sums.dtype == np.int64
    with np.errstate(over="ignore"):
        expected = [np.sum(ints[:i]) for i in range(6)]
    np.testing.assert_array_equal(run(integer_sums, backend), expected)


def test_reads_under_a_failing_condition_stay_in_bounds(backend):
    # Where the predicate or the domain excludes a point, what its expression would read (an
    # element number of 99, x[i + j] past the end) is never read.
    knl = kernel(
        ["{[e]: 0 <= e < nel}", "{[i, j]: 0 <= i < n and 0 <= j < n - i}", "{[k]: 2 <= k < n}"],
        """
        picked[e] = 0  {id=zero}
        if present[e]
            picked[e] = x[from_el[e]]  {dep=zero}
        end
        sums[i] = sum(j, x[i + j])
        shifted[k] = x[k - 2]
        """,
        [lp.GlobalArg("x", np.float64, shape="n"),
         lp.GlobalArg("shifted", np.float64, shape="n"), "..."])
    x = RNG.random(5)
    from_el = np.array([4, 99, 0])
    present = np.array([True, False, True])
    outputs = run(call_loopy(knl, {"x": x, "from_el": from_el, "present": present}), backend)
    np.testing.assert_array_equal(outputs["picked"], [x[4], 0, x[0]])
    np.testing.assert_allclose(outputs["sums"], [x[i:].sum() for i in range(5)], rtol=1e-15)
    np.testing.assert_array_equal(outputs["shifted"], np.concatenate([[0, 0], x[:3]]))


def test_a_predicated_accumulating_scatter_adds_only_where_the_predicate_holds(backend):
    knl = kernel(
        ["{[e0]: 0 <= e0 < m}", "{[i]: 0 <= i < n}"],
        """
        out[e0] = start[e0]  {id=init}
        if keep[i]
            out[idx[i]] = out[idx[i]] + x[i]  {dep=init}
        end
        """,
        [lp.GlobalArg("out", np.float64, shape="m"), "..."])
    # Dropped points: an index of 99, a NaN, a 5.0; element 0 holds -0.0, which dropped
    # points must not turn into 0.0.
    start = np.array([-0.0, 1.0, -0.0])
    x = np.array([1.0, 2.0, 4.0, 8.0, np.nan, 5.0])
    idx = np.array([1, 1, 2, 1, 99, 0])
    keep = np.array([True, True, False, True, False, False])
    expected = start.copy()
    np.add.at(expected, idx[keep], x[keep])
    got = run(call_loopy(knl, {"start": start, "x": x, "idx": idx, "keep": keep}), backend)["out"]
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_constructs_outside_the_subset_are_unsupported():
    strided = kernel("{[i]: 0 <= i < n and exists k: i = 2k}", "out[i] = a[i]", name="evens",
                     args=[lp.GlobalArg("out", np.float64, shape="n"),
                           lp.GlobalArg("a", np.float64, shape="n"), "..."])
    with pytest.raises(UnsupportedError, match=r"evens.*strides"):
        call_loopy(strided, {"a": np.ones(4)})
    maximum = kernel("{[i, j]: 0 <= i < n and 0 <= j <= i}", "out[i] = max(j, a[i, j])",
                     name="lower_max", args=[lp.GlobalArg("a", np.float64, shape="n, n"), "..."])
    with pytest.raises(UnsupportedError, match=r"lower_max.*max reduction.*not a box"):
        call_loopy(maximum, {"a": np.ones((3, 3))})
    scattered = kernel("{[i, j]: 0 <= i < n and 0 <= j <= i}", "out[idx[i], j] = a[i, j]",
                       name="scatter_lower",
                       args=[lp.GlobalArg("a", np.float64, shape="n, n"),
                             lp.GlobalArg("out", np.float64, shape="n, n"), "..."])
    with pytest.raises(UnsupportedError, match=r"scatter_lower.*scattered write"):
        call_loopy(scattered, {"a": np.ones((3, 3)), "idx": np.arange(3)})
    predicated_set = kernel(["{[e0]: 0 <= e0 < m}", "{[i]: 0 <= i < n}"],
                            """
                            out[e0] = 0  {id=zero}
                            if keep[i]
                                out[idx[i]] = x[i]  {dep=zero}
                            end
                            """, name="pick_some",
                            args=[lp.GlobalArg("out", np.float64, shape="m"), "..."])
    with pytest.raises(UnsupportedError, match=r"pick_some.*under predicates"):
        call_loopy(predicated_set, {"x": np.ones(2), "idx": np.zeros(2, np.int64),
                                    "keep": np.ones(2, bool), "m": 1})
    c_code = kernel("{[i]: 0 <= i < n}",
                    [lp.CInstruction("i", "out[i] = 1;", assignees="out[i]")],
                    name="in_c",
                    args=[lp.GlobalArg("out", np.float64, shape="n"), lp.ValueArg("n", np.int32)])
    with pytest.raises(UnsupportedError, match=r"in_c.*CInstruction"):
        call_loopy(c_code, {"n": 3})
