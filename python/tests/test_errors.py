"""Library errors as Python exceptions: the kind, the builtin base class, the library's
message naming the operation, shapes and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt
from pytato_rs import exceptions


def placeholder(name, shape, dtype=np.float64):
    return pt.make_placeholder(name, shape, dtype)


def test_every_kind_has_a_class_deriving_from_pytato_error():
    for name in exceptions.__all__:
        cls = getattr(exceptions, name)
        assert issubclass(cls, pt.PytatoError)
        if cls is not pt.PytatoError:
            # one class per kind, named after it; indexing refines two kinds into IndexErrors, and
            # a mismatch across ranks has pytato's class per problem
            assert cls.kind and issubclass(cls, getattr(exceptions, f"{cls.kind}Error"))
            refined = issubclass(cls, IndexError) or cls in exceptions._MISMATCHES.values()
            assert name == f"{cls.kind}Error" or refined


def test_bad_indices_are_index_errors_as_in_numpy():
    a = placeholder("a", (10, 10, 10))
    data = np.zeros((10, 10, 10))
    for key in [(0, 0, 0, 0), np.zeros(3, dtype=np.float64)]:
        with pytest.raises(IndexError) as numpy_info:
            data[key]
        ours = key if not isinstance(key, np.ndarray) else placeholder("f", key.shape)
        with pytest.raises(IndexError) as info:
            a[ours]
        assert isinstance(info.value, pt.PytatoError), numpy_info.value
    # a zero step is numpy's ValueError
    with pytest.raises(ValueError):
        data[::0]
    with pytest.raises(ValueError):
        a[::0]
    # still the library's kinds, caught as before
    with pytest.raises(pt.InvalidArgumentError):
        a[0, 0, 0, 0]
    with pytest.raises(pt.UnsupportedDTypeError):
        a[placeholder("f", (3,))]


def test_broadcast_mismatch_is_a_value_error_naming_the_shapes():
    with pytest.raises(ValueError) as info:
        placeholder("a", (3,)) + placeholder("b", (4,))
    assert isinstance(info.value, pt.BroadcastMismatchError)
    assert info.value.kind == "BroadcastMismatch"
    assert "add" in str(info.value) and "(3,)" in str(info.value) and "(4,)" in str(info.value)


def test_axis_out_of_range_is_an_index_error():
    with pytest.raises(IndexError) as info:
        pt.sum(placeholder("a", (2, 3)), axis=2)
    assert isinstance(info.value, pt.AxisOutOfRangeError)
    assert "axis 2" in str(info.value)


def test_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError) as info:
        pt.bitwise_and(placeholder("a", (2,)), placeholder("b", (2,)))
    assert isinstance(info.value, pt.PytatoError)
    assert "float64" in str(info.value)


def test_missing_and_unknown_inputs_name_the_inputs():
    x = placeholder("x", (2,))
    prg = pt.generate(x * 2)
    with pytest.raises(pt.MissingInputError, match='"x"'):
        prg()
    with pytest.raises(pt.UnknownInputError, match='"y"'):
        prg(x=np.zeros(2), y=np.zeros(2))
    # Python raises TypeError for an unexpected keyword, pytato ValueError: it is both.
    for builtin in (TypeError, ValueError):
        with pytest.raises(builtin, match='"y"'):
            prg(x=np.zeros(2), y=np.zeros(2))
    # A data wrapper is no input, named or not.
    from pytato_rs.tags import PrefixNamed

    wrapped = pt.make_data_wrapper(np.ones(3), tags=frozenset({PrefixNamed("w")}))
    with pytest.raises(ValueError, match='"w"'):
        pt.generate(42 * wrapped)(w=np.zeros(3))


def test_wrong_input_shape_and_dtype():
    x = placeholder("x", (2, 3))
    prg = pt.generate(x + 1)
    with pytest.raises(pt.InputShapeError) as info:
        prg(x=np.zeros((3, 2)))
    assert "(2, 3)" in str(info.value) and "[3, 2]" in str(info.value)
    with pytest.raises(pt.InputDTypeError) as info:
        prg(x=np.zeros((2, 3), np.float32))
    assert "float32" in str(info.value) and "float64" in str(info.value)


def test_out_of_bounds_index_array_is_an_error_at_run_time(backend):
    x = placeholder("x", (5,))
    i = pt.make_placeholder("i", (2,), np.int64)
    prg = pt.generate(x[i], backend)
    np.testing.assert_array_equal(prg(x=np.arange(5.0), i=np.array([4, -5])), [4.0, 0.0])
    with pytest.raises(pt.IndexOutOfBoundsError) as info:
        prg(x=np.arange(5.0), i=np.array([1, 5]))
    assert isinstance(info.value, IndexError)


def test_integer_division_by_zero_gives_numpy_s_zero(backend):
    a = pt.make_placeholder("a", (3,), np.int32)
    b = pt.make_placeholder("b", (3,), np.int32)
    prg = pt.generate(pt.make_dict_of_named_arrays({"q": a // b, "r": a % b}), backend)
    av, bv = np.array([7, -7, 5], np.int32), np.array([0, 2, 0], np.int32)
    out = prg(a=av, b=bv)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(out["q"], av // bv)
        np.testing.assert_array_equal(out["r"], av % bv)


def test_reserved_and_duplicate_names():
    # Iname shapes are reserved; the `_pt_` prefixes are the seed's convention, which users may use.
    for name in ("_0", "_12", "_r3"):
        with pytest.raises(pt.ReservedNameError):
            placeholder(name, (2,))
    with pytest.raises(pt.DuplicateNameError):
        pt.generate(placeholder("x", (2,)) + placeholder("x", (3,))[:2])


def test_structural_equality_as_an_output_is_a_type_error():
    # `x == y` compares the expressions (pytato's structural equality): a Python bool, which as an
    # output would be a constant where an elementwise comparison was meant.
    x, y = placeholder("x", (3,)), placeholder("y", (3,))
    assert (x == x) is True and (x == y) is False
    for outputs in ({"eq": x == y}, {"ok": 2 * x, "eq": x == x}):
        with pytest.raises(TypeError, match=r"output .eq. is a Python bool.*pytato_rs.equal"):
            pt.make_dict_of_named_arrays(outputs)
        with pytest.raises(TypeError, match="Python bool"):
            pt.generate(outputs)
    # The elementwise comparison, and numpy data as an output, are fine.
    got = pt.generate({"eq": pt.equal(x, y), "c": np.arange(2)})(x=np.array([1.0, 2, 3]), y=np.array([1.0, 0, 3]))
    np.testing.assert_array_equal(got["eq"], [True, False, True])
    np.testing.assert_array_equal(got["c"], [0, 1])


def test_bad_python_arguments_are_type_errors_not_crashes():
    x = placeholder("x", (2,))
    with pytest.raises(TypeError, match="dtype"):
        pt.make_placeholder("y", (2,), "float128")
    with pytest.raises(TypeError, match="shape"):
        pt.make_placeholder("y", (2.5,), np.float64)
    with pytest.raises(TypeError):
        x + "a string"
    with pytest.raises(TypeError, match="lazy"):
        np.asarray(x)
    with pytest.raises(ValueError, match="truth value"):
        bool(x)
    with pytest.raises(TypeError, match="not supported"):
        pt.generate(x)(x=np.array(["a", "b"]))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        pt.generate(x).run_into([0.0, 0.0], x=np.zeros(2))


def test_output_array_of_the_wrong_dtype_is_an_error_before_anything_runs():
    x = placeholder("x", (2,))
    prg = pt.generate(x * 2)
    out = np.full(2, 7, np.float32)
    with pytest.raises(pt.OutputArrayError):
        prg.run_into(out, x=np.ones(2))
    np.testing.assert_array_equal(out, [7, 7])


def test_unknown_backend():
    with pytest.raises(pt.UnknownBackendError, match="nope"):
        pt.generate(placeholder("x", (1,)), backend="nope")


def test_sizes_too_large_to_address():
    with pytest.raises(pt.InvalidForSizesError, match="too large"):
        pt.generate(pt.zeros((2**62, 2**62)))()
    with pytest.raises(ValueError, match="beyond the range of int64"):  # numpy's ValueError
        pt.make_placeholder("x", (2**63,))
    with pytest.raises(pt.NegativeLengthError, match="-1"):
        pt.make_placeholder("x", (-1,))


def test_an_array_both_input_and_output_of_a_run_is_refused():
    x = placeholder("x", (3,))
    prg = pt.generate(pt.roll(x, 1))
    a = np.arange(3.0)
    with pytest.raises(ValueError, match="both an input and an output"):
        prg.run_into(a, x=a)
    np.testing.assert_array_equal(a, [0, 1, 2])
    # The same array as two inputs is fine.
    y = placeholder("y", (3,))
    np.testing.assert_array_equal(pt.generate(x + y)(x=a, y=a), 2 * a)



def test_arrays_over_the_same_memory_through_other_bases_are_refused(backend):
    # Two numpy.frombuffer arrays of one buffer have bases numpy's borrow flags do not relate:
    # the Cranelift backend wrote in place and read what it had overwritten.
    x = placeholder("x", (8,))
    prg = pt.generate(pt.roll(x, 1) + x, backend=backend)
    buf = bytearray(np.arange(8.0).tobytes())
    inp, out = np.frombuffer(buf), np.frombuffer(buf)
    with pytest.raises(pt.InvalidArgumentError, match='output "_pt_out" and input "x" share memory'):
        prg.run_into(out, x=inp)
    np.testing.assert_array_equal(out, np.arange(8.0))
    # Overlapping spans that share no element (interleaved views) are fine, as in numpy.
    whole = np.arange(16.0)
    evens, odds = np.frombuffer(memoryview(whole), np.float64)[::2], whole[1::2]
    prg.run_into(evens, x=odds)
    np.testing.assert_array_equal(whole[::2], np.roll(whole[1::2], 1) + whole[1::2])
    # Two outputs over the same memory.
    both = pt.make_dict_of_named_arrays({"a": x + 1, "b": x * 2})
    prg2 = pt.generate(both, backend=backend)
    buf2 = bytearray(8 * 8)
    with pytest.raises(pt.InvalidArgumentError, match='output "a" and output "b" share memory'):
        prg2.run_into({"a": np.frombuffer(buf2), "b": np.frombuffer(buf2)}, x=np.arange(8.0))

def test_arguments_out_of_their_domain():
    with pytest.raises(ValueError, match="not an identifier"):
        pt.make_placeholder("x", ("n - 1",), np.float64)
    with pytest.raises(pt.NegativeLengthError, match="linspace"):
        pt.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="names of named arrays are strings"):
        pt.make_dict_of_named_arrays({1: placeholder("x", (2,))})
    with pytest.raises(pt.InvalidArgumentError, match="step"):
        placeholder("x", (2,))[::0]
    with pytest.raises(pt.InvalidArgumentError, match="one unknown dimension"):
        pt.reshape(placeholder("x", (2, 2)), (-1, -1))



def test_outputs_and_lazy_kth_are_type_errors_naming_the_function():
    """numpy reads a ufunc's further positional arguments as outputs, which a lazy expression
    cannot write: ufuncs written in Python (``deg2rad``, ``float_power``) refuse them as the
    native ones do, with keywords too (numpy's ``resolve_dtypes`` said "a type-tuple must be
    specified of length 2"); ``partition``'s ``kth`` must be numbers (it was an AttributeError)."""
    x = placeholder("x", (3,), np.float16)
    for f in (pt.deg2rad, pt.rad2deg, pt.arctan):
        for keywords in ({}, {"dtype": np.float32}):
            with pytest.raises(TypeError, match=f"{f.__name__}\\(\\) takes 1 positional"):
                f(x, x, **keywords)
    with pytest.raises(TypeError, match="kth"):
        pt.argpartition(x, pt.zeros(1, np.int8))


def test_cross_of_vectors_of_symbolic_length_says_so():
    """It said "dimension must be 2 or 3", which a length ``n`` may well be at run time."""
    n = pt.make_size_param("n")
    with pytest.raises(NotImplementedError, match="must be known"):
        pt.cross(placeholder("a", (2, n)), placeholder("b", (2, n)))


def test_python_ints_beyond_every_dtype_as_inputs_are_overflow_errors():
    """numpy reads them as objects; the error said the dtype object is not supported."""
    m = pt.make_size_param("m")
    x = placeholder("x", (), np.int64)
    for value in (2**70, -(2**70)):
        with pytest.raises(OverflowError, match='input "m": the Python int'):
            pt.generate(pt.zeros((m,)))(m=value)
        with pytest.raises(OverflowError, match='input "x": the Python int'):
            pt.generate(x + 1)(x=value)


def test_none_as_an_input_is_a_type_error_that_says_none():
    """numpy reads None as an object array; the error said the dtype object is not supported."""
    x = placeholder("x", (3,), np.float64)
    with pytest.raises(TypeError, match='input "x": got None'):
        pt.generate(x + 1)(x=None)


def test_vander_of_symbolic_length_asks_for_n():
    """It was Python's TypeError comparing an int with a length ``n``."""
    x = placeholder("x", (pt.make_size_param("n"),))
    with pytest.raises(NotImplementedError, match="give N"):
        pt.vander(x)
    assert pt.vander(x, 3).shape[1] == 3


def test_lengths_beyond_int64_are_value_errors_that_say_so():
    """numpy's ValueError; it was Python's OverflowError "too large to convert to C long"."""
    for length in (2**63, 2**80, -(2**80)):
        with pytest.raises(ValueError, match="shape's length"):
            pt.make_placeholder("a", (length,), np.float64)
        with pytest.raises(ValueError):
            np.zeros((length,))


@pytest.mark.parametrize("dtype", [np.float64, np.bool_])
def test_broadcast_views_of_terabytes_are_refused_not_aborted(backend, dtype):
    # One element standing for 2^40 (stride 0): every entry point refuses it before a copy of
    # that size (they aborted the process, or for bool read 2^40 bytes to check them).
    big = np.broadcast_to(np.array(1, dtype), (2**40, 1))
    refused = (MemoryError, pt.UnsupportedError)
    with pytest.raises(refused):
        pt.to_device(big, backend)
    with pytest.raises(refused):
        pt.generate(pt.make_data_wrapper(big) + 1, backend)()
    x = pt.make_placeholder("x", big.shape, dtype)
    for expr in [pt.sort(x, axis=1), pt.cumsum(x, axis=1), pt.nonzero(x)[0]]:
        with pytest.raises(refused):
            pt.generate(expr, backend)(x=big)
