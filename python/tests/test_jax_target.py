"""``pytato_rs.generate_jax``: DAGs written as jax.numpy code (pytato's JAX target), checked
against numpy on the values outsiders use: NaN, ±inf, -0.0, subnormals, integer extremes, empty
and size-1 axes, reductions inside broadcasts, gathers, host steps, colliding names, deep chains.

JAX is optional: without it these tests are skipped (CI installs it)."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

# No subnormals: XLA flushes them to zero on every device, a freedom of JAX's that generated
# code cannot take back (the module's doc says so).
EDGE_FLOATS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 2.2250738585072014e-308, -1e-300, 1e308, -1.5, 2.25, 3.0, -7.0])


def run(expr, jit, **inputs):
    result = pt.generate_jax(expr, jit=jit)(**inputs)
    if isinstance(result, dict):
        return {name: np.asarray(value) for name, value in result.items()}
    return np.asarray(result)


def assert_same(actual, expected):
    """Equal values, dtype and shape; NaN where numpy has NaN, and the sign of each zero."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))


@pytest.mark.parametrize("jit", [False, True])
def test_elementwise_edge_values_match_numpy(jit):
    x_in = EDGE_FLOATS.reshape(3, 4)
    y_in = EDGE_FLOATS[::-1].reshape(3, 4).copy()
    x = pt.make_placeholder("x", (3, 4), np.float64)
    y = pt.make_placeholder("y", (3, 4), np.float64)
    outputs = {
        "sum": x + y,
        "max": pt.maximum(x, y),
        "where": pt.where(x > y, x, -y),
        "neg": -x,
        "abs": abs(x),
        "floor": pt.floor(x),
        "isnan": pt.isnan(x),
        "copysign": pt.copysign(x, y),
        "ge": x >= y,
    }
    with np.errstate(all="ignore"):
        expected = {
            "sum": x_in + y_in,
            "max": np.maximum(x_in, y_in),
            "where": np.where(x_in > y_in, x_in, -y_in),
            "neg": -x_in,
            "abs": np.abs(x_in),
            "floor": np.floor(x_in),
            "isnan": np.isnan(x_in),
            "copysign": np.copysign(x_in, y_in),
            "ge": x_in >= y_in,
        }
    got = run(pt.make_dict_of_named_arrays(outputs), jit, x=x_in, y=y_in)
    for name in outputs:
        assert_same(got[name], expected[name])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_integer_extremes_keep_numpys_dtypes_and_wrap(dtype):
    info = np.iinfo(dtype)
    x_in = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    x = pt.make_placeholder("x", x_in.shape, dtype)
    outputs = {
        "wrap": x + x,
        "weak": x * 3,
        "mixed": x + np.float32(0.5),
        "sum": pt.sum(x),
        "max": pt.max(x),
        "bits": x ^ (x >> 1),
    }
    expected = {
        "wrap": x_in + x_in,
        "weak": x_in * 3,
        "mixed": x_in + np.float32(0.5),
        "sum": np.sum(x_in),
        "max": np.max(x_in),
        "bits": x_in ^ (x_in >> 1),
    }
    got = run(pt.make_dict_of_named_arrays(outputs), True, x=x_in)
    for name in outputs:
        assert_same(got[name], expected[name])


def test_float32_stays_float32_under_numpys_promotion():
    x_in = np.array([1.5, -2.25, 1.2e-38, np.nan], dtype=np.float32)
    x = pt.make_placeholder("x", (4,), np.float32)
    got = run(x * 2.5 + np.float32(1), True, x=x_in)
    assert_same(got, x_in * 2.5 + np.float32(1))


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (1, 1), (1, 7), (6, 1), (5, 7)])
def test_reductions_and_broadcasts_on_empty_and_size_one_axes(shape):
    rng = np.random.default_rng(7)
    x_in = rng.standard_normal(shape)
    x = pt.make_placeholder("x", shape, np.float64)
    outputs = {
        "centered": x - pt.sum(x, axis=0),
        "row_means": pt.sum(x, axis=1) / max(shape[1], 1),
        "prod": pt.prod(x, axis=0),
        "all": pt.all(x > 0, axis=1),
        "any": pt.any(x > 0),
        "transposed": x.T * pt.sum(x, axis=1),
    }
    if shape[0]:
        outputs["max0"] = pt.max(x, axis=0)
    got = run(pt.make_dict_of_named_arrays(outputs), True, x=x_in)
    expected = {
        "centered": x_in - x_in.sum(axis=0),
        "row_means": x_in.sum(axis=1) / max(shape[1], 1),
        "prod": x_in.prod(axis=0),
        "all": np.all(x_in > 0, axis=1),
        "any": np.any(x_in > 0),
        "transposed": x_in.T * x_in.sum(axis=1),
    }
    if shape[0]:
        expected["max0"] = x_in.max(axis=0)
    for name in outputs:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-13, atol=1e-13)
        assert got[name].dtype == np.asarray(expected[name]).dtype
        assert got[name].shape == np.asarray(expected[name]).shape


def test_max_over_an_empty_range_with_initial_is_numpys():
    x = pt.make_placeholder("x", (0, 3), np.float64)
    got = run(pt.max(x, axis=0, initial=-2.0), False, x=np.zeros((0, 3)))
    assert_same(got, np.max(np.zeros((0, 3)), axis=0, initial=-2.0))


def test_stencils_gathers_and_indexing_match_numpy():
    rng = np.random.default_rng(3)
    u_in = rng.standard_normal((9, 11))
    idx_in = np.array([[0, 8, -1], [3, 3, 2]])
    u = pt.make_placeholder("u", u_in.shape, np.float64)
    idx = pt.make_placeholder("idx", idx_in.shape, np.int64)
    outputs = {
        "stencil": u[1:-1, 2:] - u[1:-1, :-2] + u[2:, 1:-1] - u[:-2, 1:-1],
        "reversed": u[::-2, 3],
        "gather": u[idx, 2:5],
        "noncontiguous": u[idx, ::-1][:, :, 1],
        "rolled": pt.roll(u, 3, axis=1),
        "stacked": pt.stack([u, 2 * u], axis=1),
        "concatenated": pt.concatenate([u, u[:2]], axis=0),
        "reshaped": pt.reshape(u, (11, 9), order="F"),
        "diagonal": pt.einsum("ii->i", u[:9, :9]),
        "contracted": pt.einsum("ij,kj->ik", u, u),
    }
    expected = {
        "stencil": u_in[1:-1, 2:] - u_in[1:-1, :-2] + u_in[2:, 1:-1] - u_in[:-2, 1:-1],
        "reversed": u_in[::-2, 3],
        "gather": u_in[idx_in, 2:5],
        "noncontiguous": u_in[idx_in, ::-1][:, :, 1],
        "rolled": np.roll(u_in, 3, axis=1),
        "stacked": np.stack([u_in, 2 * u_in], axis=1),
        "concatenated": np.concatenate([u_in, u_in[:2]], axis=0),
        "reshaped": np.reshape(u_in, (11, 9), order="F"),
        "diagonal": np.einsum("ii->i", u_in[:9, :9]),
        "contracted": np.einsum("ij,kj->ik", u_in, u_in),
    }
    for jit in (False, True):
        got = run(pt.make_dict_of_named_arrays(outputs), jit, u=u_in, idx=idx_in)
        for name in outputs:
            if name == "contracted":
                np.testing.assert_allclose(got[name], expected[name], rtol=1e-13)
            else:
                assert_same(got[name], expected[name])


def test_host_steps_match_numpy():
    x_in = np.array([3.0, -0.0, 0.0, np.nan, 1.0, 0.0, -0.0, np.nan, -1.0])
    v_in = np.array([np.nan, 0.0, -0.0, 1.0, 5.0, -5.0])
    x = pt.make_placeholder("x", x_in.shape, np.float64)
    v = pt.make_placeholder("v", v_in.shape, np.float64)
    s = pt.sort(x)
    outputs = {
        "sort": s,
        "argsort": pt.argsort(x),
        "cumsum": pt.cumsum(x[4:]),
        "cumprod": pt.cumprod(x[:3] + 2),
        "left": pt.searchsorted(s, v),
        "right": pt.searchsorted(s, v, side="right"),
    }
    expected = {
        # Stable, as the library sorts: numpy's default kind orders equal values (0.0 and -0.0
        # here) as its SIMD sort for the processor does (on AVX2, 0, -0, 0, 0 for -0, 0, 0, -0).
        "sort": np.sort(x_in, kind="stable"),
        "argsort": np.argsort(x_in, kind="stable"),
        "cumsum": np.cumsum(x_in[4:]),
        "cumprod": np.cumprod(x_in[:3] + 2),
        "left": np.searchsorted(np.sort(x_in), v_in),
        "right": np.searchsorted(np.sort(x_in), v_in, side="right"),
    }
    got = run(pt.make_dict_of_named_arrays(outputs), True, x=x_in, v=v_in)
    for name in outputs:
        assert_same(got[name], expected[name])


def test_scatters_keep_numpys_order_of_repeated_positions():
    a_in = np.arange(6.0)
    i_in = np.array([4, 1, -2, 1, 0])
    v_in = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    a = pt.make_placeholder("a", (6,), np.float64)
    i = pt.make_placeholder("i", (5,), np.int64)
    v = pt.make_placeholder("v", (5,), np.float64)
    got = run(pt.make_dict_of_named_arrays({"set": a.at[i].set(v), "add": a.at[i].add(v)}), True, a=a_in, i=i_in, v=v_in)
    expected_set = a_in.copy()
    expected_set[i_in] = v_in  # the last of repeated positions wins
    expected_add = a_in.copy()
    np.add.at(expected_add, i_in, v_in)
    assert_same(got["set"], expected_set)
    assert_same(got["add"], expected_add)


def test_data_wrappers_are_bound_and_cannot_be_passed_again():
    data = np.arange(4.0)
    x = pt.make_placeholder("x", (4,), np.float64)
    prg = pt.generate_jax(x * pt.make_data_wrapper(data, name="w"))
    assert prg.expected_arguments == frozenset({"x", "w"})
    assert_same(np.asarray(prg(x=np.ones(4), unused=1)), data)
    with pytest.raises(ValueError, match="bound"):
        prg(x=np.ones(4), w=np.ones(4))
    with pytest.raises(ValueError, match="keyword"):
        prg(np.ones(4))
    with pytest.raises(TypeError):
        prg()


def test_inputs_named_like_the_generated_codes_names():
    # a placeholder named like the module aliases and temporaries of the generated code
    # and names that are Python keywords, which cannot be parameters
    names = ["_pt_jnp", "_pt_np", "_pt_lax", "_pt_tmp", "_pt_tmp_0", "_pt_data", "_pt_kernel_x", "lambda", "None",
             "_pt_arg", "_pt_keyword_arguments"]
    inputs = {name: np.full(3, float(k + 1)) for k, name in enumerate(names)}
    arrays = [pt.make_placeholder(name, (3,), np.float64) for name in names]
    total = arrays[0]
    for a in arrays[1:]:
        total = total * 2 + a
    expected = inputs[names[0]]
    for name in names[1:]:
        expected = expected * 2 + inputs[name]
    for jit in (False, True):
        assert_same(run(total, jit, **inputs), expected)
    with pytest.raises(TypeError, match="lambda"):
        pt.generate_jax(total)(**{name: value for name, value in inputs.items() if name != "lambda"})
    with pytest.raises(ValueError, match="_pt_empty_max"):
        pt.generate_jax(pt.make_placeholder("_pt_empty_max", (2,), np.float64) + 1)


def test_calls_are_inlined():
    def f(a, b):
        return 2 * a + b

    x = pt.make_placeholder("x", (5,), np.float64)
    y = pt.make_placeholder("y", (5,), np.float64)
    call = pt.trace_call(f, x, y)
    x_in, y_in = np.arange(5.0), np.ones(5)
    assert_same(run(call * 3, True, x=x_in, y=y_in), (2 * x_in + y_in) * 3)


def test_what_has_no_fixed_shape_is_refused_by_name():
    n = pt.make_size_param("n")
    with pytest.raises(NotImplementedError, match="not a number"):
        pt.generate_jax(pt.make_placeholder("x", (n,), np.float64) * 2)
    x = pt.make_placeholder("x", (4,), np.float64)
    with pytest.raises(NotImplementedError, match="Nonzero"):
        pt.generate_jax(x[x > 0])


def test_a_long_chain_generates_straight_line_code():
    # 20,000 nodes: generation walks with a stack, and the function is flat
    x = pt.make_placeholder("x", (2,), np.float64)
    y = x
    for k in range(20_000):
        y = y * 0.5 + 1.0 if k % 2 else y - 0.25
    prg = pt.generate_jax(y)
    assert max(len(line) - len(line.lstrip()) for line in prg.program.splitlines()) == 4
    expected = np.array([1.0, 2.0])
    for k in range(20_000):
        expected = expected * 0.5 + 1.0 if k % 2 else expected - 0.25
    np.testing.assert_array_equal(np.asarray(prg(x=np.array([1.0, 2.0]))), expected)


def test_complex_values_match_numpy():
    z_in = np.array([1 + 2j, -0.5 + 0j, np.inf + 1j, 3 - 4j, np.nan * 1j])
    z = pt.make_placeholder("z", (5,), np.complex128)
    outputs = {
        "conj": pt.conj(z) * z,
        "abs": abs(z[:4]),
        "parts": pt.real(z) - pt.imag(z),
        "dot": pt.einsum("i,i->", z[:4], pt.conj(z[:4])),
        "prod": pt.prod(z[:4]),
    }
    with np.errstate(all="ignore"):
        expected = {
            "conj": np.conj(z_in) * z_in,
            "abs": np.abs(z_in[:4]),
            "parts": z_in.real - z_in.imag,
            "dot": np.einsum("i,i->", z_in[:4], np.conj(z_in[:4])),
            "prod": np.prod(z_in[:4]),
        }
    got = run(pt.make_dict_of_named_arrays(outputs), True, z=z_in)
    for name in outputs:
        assert got[name].dtype == expected[name].dtype
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-15)


def test_random_dags_match_numpy():
    # the same random program built with pytato_rs and with numpy, from one seed
    unary = [
        (lambda m, a: m.sin(a)),
        (lambda m, a: m.exp(-abs(a))),
        (lambda m, a: a[::-1, :]),
        (lambda m, a: m.roll(a, 2, axis=1)),
        (lambda m, a: m.sum(a, axis=0) + a),
        (lambda m, a: m.max(a, axis=1).reshape(-1, 1) * a),
        (lambda m, a: m.where(a > 0, a, 2 * a)),
        (lambda m, a: m.transpose(m.transpose(a) - 1)),
        (lambda m, a: m.cumsum(a, axis=1) if m is np else pt.cumsum(a, axis=1)),
    ]
    binary = [
        (lambda m, a, b: a + b),
        (lambda m, a, b: a * b - a),
        (lambda m, a, b: m.einsum("ij,kj->ik", a, b)[:, :5]),
        (lambda m, a, b: m.maximum(a, b) / (1 + b * b)),
        (lambda m, a, b: m.concatenate([a[:2], b[2:]], axis=0)),
    ]
    for seed in range(12):
        rng = np.random.default_rng(seed)
        inputs = {f"x{k}": rng.standard_normal((5, 5)) for k in range(3)}
        pt_values = [pt.make_placeholder(name, (5, 5), np.float64) for name in inputs]
        np_values = list(inputs.values())
        for _ in range(10):
            if rng.random() < 0.5:
                f = unary[rng.integers(len(unary))]
                k = rng.integers(len(pt_values))
                pt_values.append(f(pt, pt_values[k]))
                np_values.append(f(np, np_values[k]))
            else:
                f = binary[rng.integers(len(binary))]
                k, j = rng.integers(len(pt_values), size=2)
                pt_values.append(f(pt, pt_values[k], pt_values[j]))
                np_values.append(f(np, np_values[k], np_values[j]))
        got = run(pt_values[-1], bool(seed % 2), **inputs)
        np.testing.assert_allclose(got, np_values[-1], rtol=1e-12, atol=1e-12, err_msg=f"seed {seed}")


def test_jax_arrays_wrapped_as_data_are_given_back_and_computed_with():
    # arraycontext's JAX context thaws JAX arrays into data wrappers and freezes through .data
    values = jax.numpy.arange(5.0)
    wrapper = pt.make_data_wrapper(values)
    assert wrapper.data is values
    got = run(pt.sin(wrapper) * 2, True)
    np.testing.assert_allclose(got, np.sin(np.arange(5.0)) * 2, rtol=1e-15)
