"""pytato's API on a Rust library of lazy array expressions.

Build a DAG with numpy-like functions (nothing is computed), transform it, compile it once
with :func:`generate` for a backend (``"cranelift"``: a JIT, the default; ``"interp"``: the
reference interpreter; ``"wgpu"``: WGSL compute shaders), then call the program with numpy
arrays as often as you like::

    import numpy as np
    import pytato_rs as pt

    n = pt.make_size_param("n")
    u = pt.make_placeholder("u", (n,), np.float64)
    step = u + 0.25 * (pt.roll(u, 1) - 2 * u + pt.roll(u, -1))
    prg = pt.generate(step)
    print(prg(u=np.linspace(0, 1, 8)))

pytato code ports by changing the import (``import pytato_rs as pt``): the names are pytato's
(``make_placeholder``, ``make_dict_of_named_arrays``, ``einsum``, ``amax``, ``tags``,
``transform.deduplicate``, ``unify_axes_tags``, ``get_dot_graph``, ...), with numpy's (and the
Array API's) names for the rest. pytato's node classes (``pt.Placeholder``, ``pt.IndexLambda``,
...) classify expressions with ``isinstance``, their fields have pytato's names
(``expr.bindings``, ``expr.array``, ...), and ``pytato_rs.transform`` has pytato's mappers
(``CopyMapper``, ``CombineMapper``, ``WalkMapper``, ...) to subclass. Programs borrow their numpy inputs without copying, release
the GIL while they run, and return numpy arrays (or, from ``program.evaluate(...)``,
:class:`EvaluatedArray` objects the library keeps, which go back into a DAG without a copy; on wgpu they stay on the GPU,
and :func:`to_device` copies a numpy array to a backend as one).
Loopy kernels join a DAG through :func:`pytato_rs.loopy.call_loopy`, and
:mod:`pytato_rs.arraycontext` is an :mod:`arraycontext` array context for meshmode and grudge.
Errors are :class:`PytatoError` subclasses (``pytato_rs.exceptions``) carrying the library's
messages.
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import itertools as _itertools
import math as _math
import operator as _operator

import numpy as _np

# numpy's functions of dtypes and Python objects, which take arrays of this package by their
# dtype and type as they take numpy's.
from numpy import common_type, isscalar, issubdtype, iterable, mintypecode, promote_types

from . import analysis, array, diagnostic, distributed, equality, exceptions, function, linalg, loopy, raising, reductions, scalar_expr, sparse, tags, target, transform, utils, visualization
from .target.python.jax import generate_jax
from .visualization import show_dot_graph, show_fancy_placeholder_data_flow
from .sparse import CSRMatrix, make_csr_matrix
from ._native import *  # noqa: F403
from ._pad import pad
from ._setops import intersect1d, setdiff1d, setxor1d, union1d
from ._sorting import argpartition, lexsort, partition, sort_complex
from ._index_routines import (
    diag_indices,
    diag_indices_from,
    ix_,
    ravel_multi_index,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    unravel_index,
)
from ._native import _no_out  # noqa: F401 (numpy's out=, refused by the functions below)
from ._native import (
    Array,
    BoundProgram,
    Dim,
    DictOfNamedArrays,
    backends,
    default_backend_name,
    eliminate_dead_code,
    generate,
    get_dot_graph,
    get_html_graph,
    materialize_with_mpms,
    trace_call,
    unify_axes_tags,
)
from .array import (
    AbstractResultWithNamedArrays,
    AdvancedIndexInContiguousAxes,
    AdvancedIndexInNoncontiguousAxes,
    AxisPermutation,
    BasicIndex,
    Concatenate,
    DataWrapper,
    DistributedRecv,
    DistributedSendRefHolder,
    Einsum,
    IndexBase,
    IndexLambda,
    IndexRemappingBase,
    InputArgumentBase,
    NamedArray,
    NamedCallResult,
    Placeholder,
    ReductionDescriptor,
    Reshape,
    Roll,
    SizeParam,
    Stack,
)
from .exceptions import *  # noqa: F403
from .exceptions import PytatoError
from .tags import Axis


def _install_interrupt_handler() -> None:
    """Lets Ctrl-C stop a run in progress with ``KeyboardInterrupt``: runs release the GIL, so
    Python's own handler would act only once the run is over. The library's handler calls
    Python's and then sets the runs' stop request; it goes in only where Python's handler is in
    place (``SIG_IGN``, ``SIG_DFL`` and an embedding that installs none keep their meaning).
    A stopped run may leave work on the GPU: the process waits for it before it exits."""
    import atexit
    import signal

    from . import _native

    if callable(signal.getsignal(signal.SIGINT)):
        _native._install_interrupt_handler()
    atexit.register(_native._wait_until_idle)


_install_interrupt_handler()

# numpy's scalar types, so that ``pt.float32`` names a dtype as ``np.float32`` does.
bool_ = _np.bool_
bool = _np.bool  # numpy's (and the Array API's) name, as in numpy's namespace
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
dtype = _np.dtype

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None


# numpy's dtype functions: the library's promotion and casting rules are numpy's (checked
# against numpy's tables by the Rust tests), so they answer for its arrays too.
finfo, iinfo, can_cast, isdtype = _np.finfo, _np.iinfo, _np.can_cast, _np.isdtype


def result_type(*arrays_and_dtypes):
    """numpy's ``result_type``, taking expressions (by their dtype) as well."""
    return _np.result_type(*(a.dtype if isinstance(a, Array) else a for a in arrays_and_dtypes))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):
    """numpy's ``unique`` of the flattened array (``axis=None``): the sorted distinct values and,
    as asked, the index of each one's first occurrence, each element's index into the values (in
    the input's shape) and the counts, returned as numpy returns them. With ``equal_nan`` (numpy's
    default) every value with a NaN counts as one value: for complex values, the one numpy keeps
    (the first in sorted order where it sorts, with ``return_*``; the first in the input where it
    hashes, without). ``sorted=False`` gives them sorted too, which numpy allows. Unique slices
    along an axis are not supported."""
    if axis is not None:
        raise NotImplementedError("unique along an axis (unique slices) is not supported: pass axis=None")
    from ._native import _unique, _unique_values_equal_nan

    if equal_nan and not (return_index or return_inverse or return_counts):
        return _unique_values_equal_nan(ar)  # numpy's hash table: its complex value with a NaN
    values, index, inverse, counts = _unique(ar, bool(equal_nan))
    extra = [part for part, asked in ((index, return_index), (inverse, return_inverse), (counts, return_counts))
             if asked]
    return (values, *extra) if extra else values


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy's ``linspace``, computed as numpy computes it. Bounds that are numbers (see the Rust
    ``linspace``): in float64, or complex128 where a bound is complex; numpy scalars of a narrower
    float dtype (``float32`` bounds) are computed in it, as in numpy (``float16`` ones in
    float32, rounded once). Bounds that are arrays (numpy's broadcast bounds): one row of samples
    per element of their broadcast shape, the samples along ``axis``, in numpy's result dtype of
    the bounds (an inexact one). The result in ``dtype`` (integer dtypes after rounding down).
    ``retstep`` returns ``(samples, step)``, the step a number for number bounds, an array for
    array ones. ``num`` may be a symbolic length (``x.shape[0]``): the samples are then computed
    when the program runs, numpy's bits for every length, 0 and 1 included."""
    from ._native import _linspace

    numbers = (int, float, complex, _np.number, _np.bool_)
    if isinstance(num, Dim):
        return _linspace_of_symbolic_length(start, stop, num, endpoint, retstep, dtype, axis)
    if not (isinstance(start, numbers) and isinstance(stop, numbers)):
        return _linspace_of_arrays(start, stop, num, endpoint, retstep, dtype, axis)
    if axis not in (0, -1):
        raise exceptions.AxisOutOfRangeError(f"linspace: axis {axis} is out of range for a 1-dimensional result")
    # numpy computes in its result type of the bounds: float32 scalars stay float32.
    compute = _np.result_type(start, stop, 1.0)
    samples = _linspace(start, stop, num, endpoint, compute, dtype)
    if not retstep:
        return samples
    div = num - 1 if endpoint else num
    delta = _np.subtract(stop, start, dtype=compute)  # a scalar, as numpy's
    return samples, (delta / div if div > 0 else _np.nan)


def _linspace_bounds(start, stop, dtype, axis):
    """The preparation ``linspace`` of array bounds and of a symbolic number of samples share:
    ``(start, compute, dtype, last, delta)``, numpy's inexact result dtype of the bounds
    (``compute``), the result's dtype, ``stop`` and ``stop - start`` in ``compute``; numpy's errors
    for complex samples into integers and for an axis out of range."""
    start, stop = (x if isinstance(x, (Array, int, float, complex)) else _as_array(x) for x in (start, stop))  # noqa: F405
    probes = [_np.zeros(0, x.dtype) if isinstance(x, Array) else x for x in (start, stop)]  # noqa: F405
    compute = _np.result_type(*probes, 1.0)
    dtype = compute if dtype is None else _np.dtype(dtype)
    if compute.kind == "c" and dtype.kind in "biu":
        raise exceptions.UnsupportedDTypeError(
            f"linspace: complex samples cannot be rounded down to {dtype} (numpy's floor of them fails too)")
    last = astype(_as_array(stop), compute)  # noqa: F405
    delta = subtract(last, astype(_as_array(start), compute))  # noqa: F405
    if axis not in range(-delta.ndim - 1, delta.ndim + 1):
        raise exceptions.AxisOutOfRangeError(
            f"linspace: axis {axis} is out of range for a {delta.ndim + 1}-dimensional result")
    return start, compute, dtype, last, delta


def _linspace_samples_in(samples, axis, dtype):
    """Samples along axis 0 moved to ``axis`` and put in ``dtype`` (integers after rounding
    down, as numpy's ``linspace``)."""
    samples = moveaxis(samples, 0, axis)  # noqa: F405
    if dtype.kind in "biu":
        samples = floor(samples)  # noqa: F405
    return samples if samples.dtype == dtype else astype(samples, dtype)  # noqa: F405


def _linspace_of_symbolic_length(start, stop, num, endpoint, retstep, dtype, axis):
    """``linspace`` of ``num`` samples, ``num`` a symbolic length (``x.shape[0]``): numpy's steps
    of ``_linspace_of_arrays``, with the choices numpy makes on the value of ``num`` (a divisor of
    0, the last sample set to ``stop``) made when the program runs."""
    start, compute, dtype, last, delta = _linspace_bounds(start, stop, dtype, axis)
    position = reshape(arange(num), (num,) + (1,) * delta.ndim)  # noqa: F405
    i = astype(position, compute)  # noqa: F405
    div = num - 1 if endpoint else num
    positive = greater(div, 0)  # noqa: F405
    div = astype(div, compute)  # numpy divides by a Python int, which takes the bounds' dtype  # noqa: F405
    step = divide(delta, div)  # noqa: F405
    any_step_zero = any(equal(step, 0))  # noqa: F405
    stepped = where(any_step_zero, multiply(divide(i, div), delta), multiply(i, step))  # noqa: F405
    samples = add(where(positive, stepped, multiply(i, delta)), start)  # noqa: F405
    if samples.dtype != compute:  # a wider start added: numpy's in-place sum stays in its dtype
        samples = astype(samples, compute)  # noqa: F405
    if endpoint:
        is_last = logical_and(equal(position, num - 1), greater(num, 1))  # noqa: F405
        samples = where(is_last, last, samples)  # noqa: F405
    samples = _linspace_samples_in(samples, axis, dtype)
    if not retstep:
        return samples
    return samples, where(positive, step, _np.nan)  # noqa: F405


def _linspace_of_arrays(start, stop, num, endpoint, retstep, dtype, axis):
    """``linspace`` with array bounds, numpy's steps on the broadcast bounds: ``delta = stop -
    start`` and ``step = delta / div`` in the bounds' inexact result dtype; sample ``i`` is
    ``i * step + start``, or ``i / div * delta + start`` for every element where any step is
    zero (numpy decides that once for the whole array); the last one ``stop`` with ``endpoint``."""
    num = _operator.index(num)
    if num < 0:
        raise exceptions.NegativeLengthError(f"linspace: the number of samples must be non-negative, not {num}")
    start, compute, dtype, last, delta = _linspace_bounds(start, stop, dtype, axis)
    div = num - 1 if endpoint else num
    i = reshape(arange(num, dtype=compute), (num,) + (1,) * delta.ndim)  # noqa: F405
    if div > 0:
        step = divide(delta, div)  # noqa: F405
        any_step_zero = any(equal(step, 0))  # noqa: F405
        samples = where(any_step_zero, multiply(divide(i, div), delta), multiply(i, step))  # noqa: F405
    else:
        step = _np.nan
        samples = multiply(i, delta)  # noqa: F405
    samples = add(samples, start)  # noqa: F405
    if samples.dtype != compute:  # a wider start added: numpy's in-place sum stays in its dtype
        samples = astype(samples, compute)  # noqa: F405
    if endpoint and num > 1:
        samples = concatenate([samples[:-1], expand_dims(broadcast_to(last, delta.shape), 0)])  # noqa: F405
    samples = _linspace_samples_in(samples, axis, dtype)
    return (samples, step) if retstep else samples


# {{{ numpy functions composed of the library's

def _ufunc_dtype(ufunc, *operands):
    """The dtype numpy's ``ufunc`` gives for these operands (expressions by their dtype, numbers
    as they are): numpy's own loop selection, asked on empty arrays."""
    probes = [_np.zeros(0, o.dtype) if isinstance(o, Array) else o for o in operands]  # noqa: F405
    return ufunc(*probes).dtype


def _ufunc_keywords(f):
    """numpy's ufunc keywords ``dtype=``, ``casting=`` and ``order=`` for an elementwise function
    written here, as the native ones take them: ``f`` of the operands cast to the loop numpy's
    ``resolve_dtypes`` picks (the native ``_ufunc_operands``), its result cast to the loop's
    output; ``order`` (the result's memory layout, which a lazy array has not) is checked and
    changes nothing."""
    from ._native import _check_ufunc_order

    ufunc = getattr(_np, f.__name__)

    @_functools.wraps(f)
    def with_keywords(*args, dtype=None, casting="same_kind", order="K"):
        if len(args) != ufunc.nin:  # numpy's further positional arguments are outputs
            raise TypeError(f"{f.__name__}() takes {ufunc.nin} positional arguments but {len(args)} were given")
        _check_ufunc_order(f.__name__, order)
        if dtype is None and casting == "same_kind":
            return f(*args)
        if not _builtins.any(isinstance(a, Array) for a in args):  # noqa: F405
            return ufunc(*args, dtype=dtype, casting=casting)
        from ._native import _ufunc_operands

        operands, out = _ufunc_operands(f.__name__, args, dtype, casting)
        result = f(*operands)
        return result if result.dtype == out else astype(result, out)  # noqa: F405

    return with_keywords


def _times_constant(ufunc, x, numerator, denominator):
    """``x * (numerator / denominator)`` as numpy's loops of ``deg2rad``/``rad2deg`` compute it:
    the constant divided in the loop's precision (float32 for float32 and float16, whose loop
    computes in float32 and rounds once), the product rounded to numpy's result dtype."""
    dtype = _ufunc_dtype(ufunc, x)
    compute = _np.dtype(_np.float32) if dtype == _np.float16 else dtype
    constant = compute.type(numerator) / compute.type(denominator)
    return astype(multiply(astype(x, compute), constant), dtype)  # noqa: F405


@_ufunc_keywords
def deg2rad(x):
    """numpy's ``deg2rad``: ``x * (pi / 180)``, as its loop computes it."""
    return _times_constant(_np.deg2rad, x, _math.pi, 180.0)


@_ufunc_keywords
def rad2deg(x):
    """numpy's ``rad2deg``: ``x * (180 / pi)``, as its loop computes it."""
    return _times_constant(_np.rad2deg, x, 180.0, _math.pi)


radians, degrees = deg2rad, rad2deg


@_ufunc_keywords
def bitwise_count(x):
    """numpy's ``bitwise_count``: the number of 1 bits in the absolute value of each integer
    (bools as int8), ``uint8``; numpy's ``TypeError`` for other dtypes."""
    if not isinstance(x, Array):  # noqa: F405
        return _np.bitwise_count(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"ufunc 'bitwise_count' not supported for the input types ({x.dtype}), and the inputs could "
                        "not be safely coerced to any supported types according to the casting rule ''safe''")
    bits = astype(x, _np.uint64)  # noqa: F405  (sign-extended, two's complement)
    if x.dtype.kind == "i":
        bits = where(less(x, 0), subtract(0, bits), bits)  # noqa: F405  (|x|, int64's minimum too)
    # The bits counted in pairs, then nibbles, then bytes, whose counts a multiplication adds
    # into the top byte.
    bits = bits - ((bits >> 1) & 0x5555555555555555)
    bits = (bits & 0x3333333333333333) + ((bits >> 2) & 0x3333333333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0F
    return astype((bits * 0x0101010101010101) >> 56, _np.uint8)  # noqa: F405


@_ufunc_keywords
def fabs(x):
    """numpy's ``fabs``: the absolute value in numpy's float result dtype (complex refused)."""
    return abs(astype(x, _ufunc_dtype(_np.fabs, x)))  # noqa: F405


@_ufunc_keywords
def heaviside(x1, x2):
    """numpy's ``heaviside``: 0 below zero, ``x2`` at zero, 1 above, NaN where ``x1`` is NaN."""
    dtype = _ufunc_dtype(_np.heaviside, x1, x2)
    x1 = astype(x1, dtype) if isinstance(x1, Array) else dtype.type(x1)  # noqa: F405
    zero, one = dtype.type(0), dtype.type(1)
    return where(less(x1, 0), zero, where(equal(x1, 0), x2, where(greater(x1, 0), one, x1)))  # noqa: F405


@_ufunc_keywords
def float_power(x1, x2):
    """numpy's ``float_power``: ``power`` in float64 (complex128 for complex operands)."""
    dtype = _ufunc_dtype(_np.float_power, x1, x2)
    cast = lambda v: astype(v, dtype) if isinstance(v, Array) else dtype.type(v)  # noqa: E731, F405
    return power(cast(x1), cast(x2))  # noqa: F405


def divmod(x1, x2, /, *, dtype=None, casting="same_kind", order="K"):  # noqa: A001
    """numpy's ``divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``, the same loops, with
    numpy's ufunc keywords (``dtype=`` is the dtype of both results, as of each of the two
    ufuncs)."""
    from ._native import _check_ufunc_order

    _check_ufunc_order("divmod", order)
    if not _builtins.any(isinstance(a, Array) for a in (x1, x2)):  # noqa: F405
        return _np.divmod(x1, x2, dtype=dtype, casting=casting)
    keywords = {} if dtype is None and casting == "same_kind" else {"dtype": dtype, "casting": casting}
    return floor_divide(x1, x2, **keywords), remainder(x1, x2, **keywords)  # noqa: F405


def outer(a, b):
    """numpy's ``outer``: ``a.ravel()[:, None] * b.ravel()[None, :]``."""
    return multiply(ravel(a)[:, None], ravel(b)[None, :])  # noqa: F405


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy's ``ptp``: ``max - min`` along ``axis``."""
    _no_out("ptp", out)
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))  # noqa: F405


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """numpy's ``nansum``: the sum with NaNs counted as zero (``initial`` and ``where`` as in ``sum``)."""
    _no_out("nansum", out)
    return _nan_as(a, 0, sum, axis, dtype, keepdims, initial, where)  # noqa: F405


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """numpy's ``nanprod``: the product with NaNs counted as one (``initial`` and ``where`` as in ``prod``)."""
    _no_out("nanprod", out)
    return _nan_as(a, 1, prod, axis, dtype, keepdims, initial, where)  # noqa: F405


def _nan_as(a, value, reduce, axis, dtype, keepdims, initial, where_):
    """``reduce`` of ``a`` with its NaNs replaced by ``value``."""
    a = _as_array(a)
    if a.dtype.kind in "fc":
        a = where(isnan(a), a.dtype.type(value), a)  # noqa: F405
    options = {k: v for k, v in (("initial", initial), ("where", where_)) if v is not None}
    return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, **options)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy's ``isclose``, as numpy 2 computes it: ``|a - b| <= atol + rtol * |b|`` where ``b``
    is finite, or ``a == b``; NaNs close to each other with ``equal_nan``. ``b`` is taken in
    ``result_type(b, 1.0)`` first."""
    if isinstance(b, Array):  # noqa: F405
        b = astype(b, _np.result_type(b.dtype, 1.0))  # noqa: F405
    elif isinstance(b, int):
        b = float(b)
    close = logical_and(less_equal(abs(subtract(a, b)), atol + rtol * abs(b)), isfinite(b))  # noqa: F405
    result = logical_or(close, equal(a, b))  # noqa: F405
    if equal_nan:
        result = logical_or(result, logical_and(isnan(a), isnan(b)))  # noqa: F405
    return result


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """numpy's ``average``: ``mean`` without weights; with weights, ``sum(a * w) / sum(w)`` in
    numpy's result dtype. The weights have ``a``'s shape, or, where ``axis`` is given, the
    shape of ``a`` along those axes (in ``axis``'s order), as numpy allows. ``returned`` adds the
    sum of the weights, broadcast to the average's shape. Weights that sum to zero give NaN or
    inf where numpy raises ``ZeroDivisionError`` (the sum is known only when the program runs);
    an average of no elements raises it, as numpy's (which divides the sizes, or finds a sum of
    no weights zero)."""
    a = _as_array(a)
    if axis is not None:
        _np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)  # numpy's AxisError
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)  # noqa: F405
        if _builtins.all(isinstance(n, int) for n in avg.shape) and _math.prod(avg.shape) == 0:
            # numpy divides a.size by avg.size for its scale, returned or not
            raise ZeroDivisionError("division by zero")
        scale = None
        if returned:
            count = _math.prod(a.shape) if axis is None else _math.prod(
                a.shape[k] for k in (axis if isinstance(axis, tuple) else (axis,)))
            scale = full_like(avg, count, dtype=avg.dtype)  # noqa: F405
    else:
        weights = _as_array(weights)
        if tuple(weights.shape) != tuple(a.shape):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            axes = _np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)
            if tuple(weights.shape) != tuple(a.shape[k] for k in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            # numpy's broadcast: the weights' axes in the order of a's, 1s elsewhere
            weights = permute_dims(weights, tuple(int(k) for k in _np.argsort(axes)))  # noqa: F405
            weights = reshape(weights, tuple(n if k in axes else 1 for k, n in enumerate(a.shape)))  # noqa: F405
        dtype = _np.result_type(a.dtype, weights.dtype, "f8" if a.dtype.kind in "biu" else a.dtype)
        scale = sum(weights, axis=axis, dtype=dtype, keepdims=keepdims)  # noqa: F405
        # numpy raises where a sum of weights is zero: known now where each sums no weights.
        axes = range(a.ndim) if axis is None else _np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)
        kept = [n for k, n in enumerate(a.shape) if k not in axes]
        if _builtins.any(a.shape[k] == 0 for k in axes) and 0 not in kept:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = divide(sum(multiply(astype(a, dtype), astype(weights, dtype)), axis=axis,  # noqa: F405
                         keepdims=keepdims), scale)
        if returned and tuple(scale.shape) != tuple(avg.shape):
            scale = broadcast_to(scale, tuple(avg.shape))  # noqa: F405
    return (avg, scale) if returned else avg


def _as_array(x):
    return x if isinstance(x, Array) else asarray(_np.asarray(x))  # noqa: F405


def kron(a, b):
    """numpy's ``kron``: the block of ``b`` times each element of ``a``, shapes padded with
    leading 1s to one length (0-d operands multiply)."""
    a, b = _as_array(a), _as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)  # noqa: F405
    nd = _builtins.max(a.ndim, b.ndim)
    a_shape = (1,) * (nd - a.ndim) + tuple(a.shape)
    b_shape = (1,) * (nd - b.ndim) + tuple(b.shape)
    for m, n in zip(a_shape, b_shape):
        if not (isinstance(m, int) or isinstance(n, int)):
            raise NotImplementedError(f"kron: an axis of length {m} * {n} is not an affine expression of size "
                                      "parameters: give one of the two lengths")
    # a's axes at even positions and b's at odd ones: product[i, k, j, l] = a[i, j] * b[k, l]
    a_spread = reshape(a, tuple(d for n in a_shape for d in (n, 1)))  # noqa: F405
    b_spread = reshape(b, tuple(d for n in b_shape for d in (1, n)))  # noqa: F405
    return reshape(multiply(a_spread, b_spread), tuple(m * n for m, n in zip(a_shape, b_shape)))  # noqa: F405


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy's ``cross`` of 3-vectors (and of 2-vectors, deprecated by numpy: the z component),
    with numpy's operations in its order, so that the values are numpy's bit for bit."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(_as_array(a), axisa, -1), moveaxis(_as_array(b), axisb, -1)  # noqa: F405
    na, nb = a.shape[-1], b.shape[-1]
    if not (isinstance(na, int) and isinstance(nb, int)):
        raise NotImplementedError(f"cross: the vectors' lengths ({na}, {nb}) must be known when the expression is "
                                  "built (2 or 3)")
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if na == 2 and nb == 2:
        import warnings

        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
                      "vectors instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=2)
    x = [a[..., k] for k in range(na)]
    y = [b[..., k] for k in range(nb)]

    def product_difference(i, j, k, m):  # x_i * y_j - x_k * y_m
        return subtract(multiply(x[i], y[j]), multiply(x[k], y[m]))  # noqa: F405

    if na == 2 and nb == 2:
        return product_difference(0, 1, 1, 0)
    if na == 2:  # x_2 = 0
        parts = [multiply(x[1], y[2]), negative(multiply(x[0], y[2])), product_difference(0, 1, 1, 0)]  # noqa: F405
    elif nb == 2:  # y_2 = 0
        parts = [negative(multiply(x[2], y[1])), multiply(x[2], y[0]), product_difference(0, 1, 1, 0)]  # noqa: F405
    else:
        parts = [product_difference(1, 2, 2, 1), product_difference(2, 0, 0, 2), product_difference(0, 1, 1, 0)]
    return moveaxis(stack(parts, axis=-1), -1, axisc)  # noqa: F405

# }}}


# {{{ numpy functions composed of the library's (exact: the same operations numpy's code does)

def atleast_1d(*arys):
    """numpy's ``atleast_1d``: 0-d arrays as shape ``(1,)``; one array, or a tuple of them."""
    res = tuple(reshape(a, (1,)) if a.ndim == 0 else a for a in map(_as_array, arys))  # noqa: F405
    return res[0] if len(res) == 1 else res


def atleast_2d(*arys):
    """numpy's ``atleast_2d``: 0-d as ``(1, 1)``, 1-d as ``(1, n)``."""
    res = tuple(reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)) if a.ndim < 2 else a  # noqa: F405
                for a in map(_as_array, arys))
    return res[0] if len(res) == 1 else res


def atleast_3d(*arys):
    """numpy's ``atleast_3d``: 0-d as ``(1, 1, 1)``, 1-d as ``(1, n, 1)``, 2-d as ``(m, n, 1)``."""
    def lift(a):
        shape = tuple(a.shape)
        if a.ndim == 0:
            return reshape(a, (1, 1, 1))  # noqa: F405
        if a.ndim == 1:
            return reshape(a, (1,) + shape + (1,))  # noqa: F405
        if a.ndim == 2:
            return reshape(a, shape + (1,))  # noqa: F405
        return a
    res = tuple(lift(a) for a in map(_as_array, arys))
    return res[0] if len(res) == 1 else res


def _as_arrays(tup):
    return [_as_array(a) for a in tup]


def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy's ``vstack``: concatenation along the first axis of the arrays made at least 2-d."""
    arrays = atleast_2d(*_as_arrays(tup))
    return concatenate(arrays if isinstance(arrays, tuple) else (arrays,), axis=0, dtype=dtype, casting=casting)  # noqa: F405


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """numpy's deprecated ``row_stack``: ``vstack``, with numpy's ``DeprecationWarning``."""
    import warnings

    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


def copy(a, order="K", subok=False):
    """numpy's ``copy``: an expression is immutable, so it is its own copy; numpy data is copied
    now, so that later writes to it do not reach the expression."""
    if isinstance(a, Array):  # noqa: F405
        return a
    return asarray(_np.array(a, order=order, subok=subok, copy=True))  # noqa: F405


def hstack(tup, *, dtype=None, casting="same_kind"):
    """numpy's ``hstack``: along the second axis, or the first for 1-d arrays."""
    arrays = atleast_1d(*_as_arrays(tup))
    arrays = arrays if isinstance(arrays, tuple) else (arrays,)
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis=axis, dtype=dtype, casting=casting)  # noqa: F405


def dstack(tup):
    """numpy's ``dstack``: along the third axis of the arrays made at least 3-d."""
    arrays = atleast_3d(*_as_arrays(tup))
    return concatenate(arrays if isinstance(arrays, tuple) else (arrays,), axis=2)  # noqa: F405


def column_stack(tup):
    """numpy's ``column_stack``: 1-d arrays as columns (0-d ones as 1-by-1), then ``hstack``."""
    arrays = [reshape(a, (a.shape[0] if a.ndim else 1, 1)) if a.ndim < 2 else a for a in _as_arrays(tup)]  # noqa: F405
    return concatenate(arrays, axis=1)  # noqa: F405


def array_split(ary, indices_or_sections, axis=0):
    """numpy's ``array_split``: ``n`` sections of lengths differing by at most one (the first
    ones longer), or splits at the given indices."""
    ary = _as_array(ary)
    if not _np.iterable(indices_or_sections):  # numpy's rule: what has no length is a count
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError("number sections must be larger than 0.")
        length = ary.shape[axis]
        each, extras = length // n, length % n
        sizes = [each + 1] * extras + [each] * (n - extras)
        points = list(_itertools.accumulate(sizes))[:-1]
        return split(ary, points, axis=axis)  # noqa: F405
    return split(ary, list(indices_or_sections), axis=axis)  # noqa: F405


def _split_along(ary, indices_or_sections, axis, least, name):
    ary = _as_array(ary)
    if ary.ndim < least:
        raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
    return split(ary, indices_or_sections, axis=axis)  # noqa: F405


def hsplit(ary, indices_or_sections):
    """numpy's ``hsplit``: ``split`` along the second axis (the first for 1-d arrays)."""
    ary = _as_array(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, axis=1 if ary.ndim > 1 else 0)  # noqa: F405


def vsplit(ary, indices_or_sections):
    """numpy's ``vsplit``: ``split`` along the first axis of an array of 2 or more axes."""
    return _split_along(ary, indices_or_sections, 0, 2, "vsplit")


def dsplit(ary, indices_or_sections):
    """numpy's ``dsplit``: ``split`` along the third axis of an array of 3 or more axes."""
    return _split_along(ary, indices_or_sections, 2, 3, "dsplit")


def fliplr(m):
    """numpy's ``fliplr``: the second axis reversed."""
    m = _as_array(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m):
    """numpy's ``flipud``: the first axis reversed."""
    m = _as_array(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1]


def rot90(m, k=1, axes=(0, 1)):
    """numpy's ``rot90``: ``k`` quarter turns from the first of ``axes`` toward the second."""
    m = _as_array(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = (ax % m.ndim if -m.ndim <= ax < m.ndim else ax for ax in axes)
    if a0 == a1 or not (0 <= a0 < m.ndim and 0 <= a1 < m.ndim):
        raise ValueError(f"Axes={tuple(axes)} out of range or equal for an array of dim={m.ndim}.")
    # The turns pick the result's shape, so they must be a number here (an expression's `k == 0`
    # would be structural equality, silently false).
    if isinstance(k, Array):  # noqa: F405
        raise TypeError("rot90: k (the number of quarter turns) must be an integer, not an array expression")
    k = _operator.index(k) % 4

    def reverse(a, axis):
        return a[tuple(slice(None, None, -1) if d == axis else slice(None) for d in range(a.ndim))]

    if k == 0:
        return m
    if k == 2:
        return reverse(reverse(m, a0), a1)
    order = list(range(m.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return transpose(reverse(m, a1), order)  # noqa: F405
    return reverse(transpose(m, order), a1)  # noqa: F405


def rollaxis(a, axis, start=0):
    """numpy's ``rollaxis``: ``axis`` moved to before position ``start``."""
    a = _as_array(a)
    n = a.ndim
    axis = axis + n if axis < 0 else axis
    start = start + n if start < 0 else start
    if not (0 <= axis < n):
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {n}")
    if not (0 <= start <= n):
        raise _np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return moveaxis(a, axis, start)  # noqa: F405


def identity(n, dtype=None):
    """numpy's ``identity``: ``eye(n)``."""
    return eye(n, dtype=_np.float64 if dtype is None else dtype)  # noqa: F405


def tri(N, M=None, k=0, dtype=float):  # noqa: N803
    """numpy's ``tri``: ones at and below the ``k``-th diagonal."""
    M = N if M is None else M  # noqa: N806
    rows = reshape(arange(N), (N, 1))  # noqa: F405
    cols = reshape(arange(M) - k, (1, M))  # noqa: F405  (arange(M) is symbolic where M is)
    return astype(greater_equal(rows, cols), dtype)  # noqa: F405


def diag(v, k=0):
    """numpy's ``diag``: the ``k``-th diagonal of a 2-d array, or a 2-d array with a 1-d one there."""
    v = _as_array(v)
    if v.ndim == 2:
        return diagonal(v, k)  # noqa: F405
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0]
    size = n + _builtins.abs(k)
    positions = arange(n)  # noqa: F405  (symbolic where n is)
    rows, cols = positions + _builtins.max(-k, 0), positions + _builtins.max(k, 0)
    return zeros((size, size), v.dtype).at[rows, cols].set(v)  # noqa: F405


def diagflat(v, k=0):
    """numpy's ``diagflat``: ``diag`` of the flattened input."""
    return diag(ravel(_as_array(v)), k)  # noqa: F405


def indices(dimensions, dtype=int, sparse=False):
    """numpy's ``indices``: for each axis, its index at every position of ``dimensions``."""
    dimensions = tuple(dimensions)
    grids = []
    for axis, n in enumerate(dimensions):
        shape = tuple(n if d == axis else 1 for d in range(len(dimensions)))
        index = reshape(arange(n, dtype=dtype), shape)  # noqa: F405
        grids.append(index if sparse else broadcast_to(index, dimensions))  # noqa: F405
    if sparse:
        return tuple(grids)
    return stack(grids) if grids else zeros((0,), dtype)  # noqa: F405


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """numpy's ``fromfunction``: ``function`` called with one index array per axis of
    ``shape`` (``indices(shape, dtype)``) and ``kwargs``."""
    del like  # numpy's dispatch to other array types; the library's expressions are the result
    return function(*tuple(indices(shape, dtype=dtype)), **kwargs)


def around(a, decimals=0, out=None):
    """numpy's ``around``: ``round``."""
    return round(a, decimals, out)  # noqa: F405


def fix(x):
    """numpy's ``fix``: rounded toward zero (``trunc``: ``fix(-0.5)`` is ``-0.0``)."""
    return trunc(x)  # noqa: F405


def angle(z, deg=False):
    """numpy's ``angle``: ``arctan2(imag, real)`` (0 for the imaginary part of real input), in
    degrees with ``deg``."""
    z = _as_array(z)
    a = arctan2(imag(z), real(z)) if z.dtype.kind == "c" else arctan2(0, z)  # noqa: F405
    return multiply(a, 180 / _math.pi) if deg else a  # noqa: F405


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy's ``nan_to_num``: NaN as ``nan``, infinities as ``posinf``/``neginf`` (the dtype's
    largest and smallest finite values by default), complex numbers part by part; other dtypes
    unchanged."""
    x = _as_array(x)
    if x.dtype.kind not in "fc":
        return x
    real_dtype = _np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    info = _np.finfo(real_dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf

    def fix_part(p):
        p = where(isnan(p), real_dtype.type(nan), p)  # noqa: F405
        p = where(logical_and(isinf(p), greater(p, 0)), real_dtype.type(big), p)  # noqa: F405
        return where(logical_and(isinf(p), less(p, 0)), real_dtype.type(small), p)  # noqa: F405

    if x.dtype.kind == "c":
        return _native._complex_from_parts(fix_part(real(x)), fix_part(imag(x)))  # noqa: F405
    return fix_part(x)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy's ``allclose``: ``all(isclose(...))``, a 0-d bool expression."""
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))  # noqa: F405


def array_equal(a1, a2, equal_nan=False):
    """numpy's ``array_equal``: False for different shapes, else whether every element is equal
    (NaNs equal to each other with ``equal_nan``), a 0-d bool expression."""
    a1, a2 = _as_array(a1), _as_array(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        if a1.ndim == a2.ndim and not _builtins.all(isinstance(n, int) for n in (*a1.shape, *a2.shape)):
            raise NotImplementedError(f"array_equal: whether shapes {tuple(a1.shape)} and {tuple(a2.shape)} are "
                                      "equal is known only when the program runs")
        return False
    same = equal(a1, a2)  # noqa: F405
    if equal_nan and a1.dtype.kind in "fc" and a2.dtype.kind in "fc":
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))  # noqa: F405
    return all(same)  # noqa: F405


def _nan_extremum(a, axis, keepdims, reduce, fill, initial, mask, ufunc):
    """numpy's ``fmax.reduce``/``fmin.reduce``: ``reduce`` of the values that are not NaN (NaNs
    replaced by ``fill``, which no value beats), and where a slice is all NaN, its first NaN, as
    numpy's loop keeps it (a complex one whole: ``nan+1j`` stays ``nan+1j``). With ``initial``,
    the reduction starts from it, so an all-NaN or empty slice gives ``initial``. ``mask`` is
    numpy's ``where=`` (Python's ``True``: none): the values it leaves out are passed over as
    NaNs are, and numpy needs ``initial`` with it."""
    a = _as_array(a)
    options = {} if initial is None else {"initial": initial}
    if mask is not True:
        if initial is None:
            raise ValueError(f"reduction operation '{ufunc}' does not have an identity, so to use a where mask "
                             "one has to specify 'initial'")
        mask = _bool_mask(mask)
        if a.dtype.kind not in "fc":
            return reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=mask)
        a = where(mask, a, _np.nan)  # noqa: F405
    if a.dtype.kind not in "fc":
        # numpy casts ``initial`` to the integers first: a NaN is its ValueError, as for ``max``
        return reduce(a, axis=axis, keepdims=keepdims, **options)
    nan_initial = initial is not None and _np.isnan(initial)
    if a.dtype.kind == "c":
        # Complex numbers order by real part, then imaginary part: +inf alone (inf+0j) is below
        # inf+1j, so it would win a minimum it is not part of.
        fill = complex(fill, fill)
    nans = isnan(a)  # noqa: F405
    if nan_initial:
        # fmax and fmin pass over the NaN, which stays where a slice has no number (an empty
        # one too): numpy's loop keeps its first operand of two NaNs, the initial one.
        result = reduce(where(nans, fill, a), axis=axis, keepdims=keepdims, initial=fill)  # noqa: F405
        return where(all(nans, axis=axis, keepdims=keepdims), a.dtype.type(initial), result)  # noqa: F405
    result = reduce(where(nans, fill, a), axis=axis, keepdims=keepdims, **options)  # noqa: F405
    if initial is not None:
        return result
    legacy = a.ndim == 0 and type(axis) is int and axis in (0, -1)  # numpy's 0-d rule, as in reduce
    axes = range(a.ndim) if axis is None or legacy else _np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)
    first = a[tuple((slice(0, 1) if keepdims else 0) if d in axes else slice(None) for d in range(a.ndim))]
    return where(all(nans, axis=axis, keepdims=keepdims), first, result)  # noqa: F405


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """numpy's ``nanmax``: the maximum ignoring NaN (and the values ``where`` leaves out, which
    needs ``initial``); NaN where a slice is all NaN (``initial`` there, where one is given)."""
    _no_out("nanmax", out)
    return _nan_extremum(a, axis, keepdims, max, -_np.inf, initial, where, "fmax")  # noqa: F405


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """numpy's ``nanmin``: the minimum ignoring NaN (and the values ``where`` leaves out, which
    needs ``initial``); NaN where a slice is all NaN (``initial`` there, where one is given)."""
    _no_out("nanmin", out)
    return _nan_extremum(a, axis, keepdims, min, _np.inf, initial, where, "fmin")  # noqa: F405


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """numpy's ``nanmean``: the sum of the non-NaN values (among those ``where`` selects) over
    their count (NaN where there are none)."""
    _no_out("nanmean", out)
    a = _as_array(a)
    selected = {} if where is None or where is True else {"where": _bool_mask(where)}
    if a.dtype.kind not in "fc":
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, **selected)  # noqa: F405
    if dtype is not None and _np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims, **selected)
    count = sum(logical_not(isnan(a)), axis=axis, dtype=_np.intp, keepdims=keepdims, **selected)  # noqa: F405
    # numpy divides into the sum's own array: float64's quotient, rounded to the sum's dtype
    return astype(divide(total, count), total.dtype)  # noqa: F405


def _axes_merged_last(a, axis):
    """``a`` with the axes ``axis`` names (``None``: all of them; an int or a tuple, checked as
    numpy checks them) moved to the end and merged into one, as numpy's ``median`` and
    ``quantile`` reduce them; and the shape ``keepdims`` gives their result (1 on those axes)."""
    axes = tuple(range(a.ndim)) if axis is None else _np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)
    kept = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    rest = [d for d in range(a.ndim) if d not in axes]
    if len(axes) == 1:
        return moveaxis(a, axes[0], -1), kept  # noqa: F405
    lengths = [a.shape[d] for d in axes]
    if not _builtins.all(isinstance(n, int) for n in lengths):
        raise NotImplementedError("reducing several axes at once needs their lengths when the expression is built")
    moved = permute_dims(a, tuple(rest) + axes)  # noqa: F405
    return reshape(moved, tuple(a.shape[d] for d in rest) + (_math.prod(lengths),)), kept  # noqa: F405


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy's ``median``: the middle of the sorted values along ``axis`` (an int, a tuple of
    axes or ``None`` for all; the mean of the two middle ones for an even count; NaN where a
    slice holds a NaN), float64 for integers. ``overwrite_input`` changes nothing (a lazy array
    is never overwritten)."""
    _no_out("median", out)
    a = _as_array(a)
    data, kept = _axes_merged_last(a, axis)
    n = data.shape[-1]
    if not isinstance(n, int):
        raise NotImplementedError("median needs the length of its axis when the expression is built")
    s = sort(data, axis=-1)  # noqa: F405

    def at(k):
        return s[..., k : k + 1]

    if n == 0:
        middle = mean(s, axis=-1, keepdims=True)  # noqa: F405
    elif n % 2:
        middle = mean(at(n // 2), axis=-1, keepdims=True)  # noqa: F405
    else:
        middle = mean(concatenate([at(n // 2 - 1), at(n // 2)], axis=-1), axis=-1, keepdims=True)  # noqa: F405
    if a.dtype.kind in "fc" and n > 0:
        # sorted last, a NaN is the median itself, as numpy copies it (a complex one whole)
        last = at(n - 1)
        middle = where(isnan(last), astype(last, middle.dtype), middle)  # noqa: F405
    return reshape(middle, kept) if keepdims else middle[..., 0]  # noqa: F405


def inner(a, b):
    """numpy's ``inner``: the sum over the last axes of ``a`` and ``b`` (no conjugate), shaped
    ``a.shape[:-1] + b.shape[:-1]``; a product where either is 0-d."""
    a, b = _as_array(a), _as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)  # noqa: F405
    if a.shape[-1] != b.shape[-1]:
        raise exceptions.ShapeMismatchError(
            f"inner: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})")
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))  # noqa: F405


def _not_complex(name, x):
    if x.dtype.kind == "c":
        raise TypeError(f"{name}: This operation is not supported for {x.dtype} values because it would be ambiguous.")


def isposinf(x):
    """numpy's ``isposinf``: ``+inf`` (complex values refused)."""
    x = _as_array(x)
    _not_complex("isposinf", x)
    return logical_and(isinf(x), logical_not(signbit(x)))  # noqa: F405


def isneginf(x):
    """numpy's ``isneginf``: ``-inf`` (complex values refused)."""
    x = _as_array(x)
    _not_complex("isneginf", x)
    return logical_and(isinf(x), signbit(x))  # noqa: F405


def isreal(x):
    """numpy's ``isreal``: where the imaginary part is 0 (everywhere for real input)."""
    return equal(imag(_as_array(x)), 0)  # noqa: F405


def iscomplex(x):
    """numpy's ``iscomplex``: where the imaginary part is not 0 (nowhere for real input)."""
    x = _as_array(x)
    return not_equal(imag(x), 0) if x.dtype.kind == "c" else zeros_like(x, dtype=bool)  # noqa: F405


def iscomplexobj(x):
    """numpy's ``iscomplexobj``: whether ``x``'s dtype (an array's, or numpy's for other values)
    is complex, whatever the values; a Python ``bool``, known when the DAG is built."""
    dtype = x.dtype if isinstance(x, Array) else getattr(x, "dtype", None)  # noqa: F405
    if dtype is None:
        dtype = _np.asarray(x).dtype
    return issubclass(_np.dtype(dtype).type, _np.complexfloating)


def isrealobj(x):
    """numpy's ``isrealobj``: ``not iscomplexobj(x)``."""
    return not iscomplexobj(x)


def nancumsum(a, axis=None, dtype=None):
    """numpy's ``nancumsum``: ``cumsum`` with NaNs counted as zero."""
    a = _as_array(a)
    if a.dtype.kind in "fc":
        a = where(isnan(a), 0, a)  # noqa: F405
    return cumsum(a, axis=axis, dtype=dtype)  # noqa: F405


def nancumprod(a, axis=None, dtype=None):
    """numpy's ``nancumprod``: ``cumprod`` with NaNs counted as one."""
    a = _as_array(a)
    if a.dtype.kind in "fc":
        a = where(isnan(a), 1, a)  # noqa: F405
    return cumprod(a, axis=axis, dtype=dtype)  # noqa: F405


def ediff1d(ary, to_end=None, to_begin=None):
    """numpy's ``ediff1d``: the differences of the flattened ``ary``, with ``to_begin`` before and
    ``to_end`` after (numbers or arrays, cast to ``ary``'s dtype under numpy's ``same_kind`` rule)."""
    ary = ravel(_as_array(ary))  # noqa: F405
    diff_ = subtract(ary[1:], ary[:-1])  # noqa: F405
    parts = []
    for name, extra in (("to_begin", to_begin), (None, None), ("to_end", to_end)):
        if name is None:
            parts.append(astype(diff_, ary.dtype))  # noqa: F405
            continue
        if extra is None:
            continue
        extra = extra if isinstance(extra, Array) else _np.asanyarray(extra)
        if not _np.can_cast(extra.dtype, ary.dtype, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        parts.append(astype(ravel(_as_array(extra)), ary.dtype))  # noqa: F405
    return concatenate(parts) if len(parts) > 1 else parts[0]  # noqa: F405


def trim_zeros(filt, trim="fb", axis=None):
    """numpy's ``trim_zeros``: ``filt`` without its leading (``"f"`` in ``trim``) and trailing
    (``"b"``) slices that hold only zeros, along ``axis`` (an int or a tuple), or along every
    axis (the smallest box that holds every non-zero element) when ``axis`` is None. NaN and
    ``-0.0`` count as numpy counts them (NaN is not zero, ``-0.0`` is). The lengths kept are
    counts the data decides: each trimmed axis is indexed by a mask of the positions between
    the first and the last non-zero slice, computed on ``filt`` as given."""
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    filt = _as_array(filt)
    if axis is None:
        axes = range(filt.ndim)
    else:
        axes = _np.lib.array_utils.normalize_axis_tuple(axis, filt.ndim, argname="axis")
    nonzero_ = not_equal(filt, 0) if filt.dtype != _np.bool_ else filt  # noqa: F405
    masks = []
    for k in axes:
        others = tuple(a for a in range(filt.ndim) if a != k)
        present = astype(any(nonzero_, axis=others) if others else nonzero_, _np.int64)  # noqa: F405
        keep = None
        if "f" in trim:
            keep = greater(cumulative_sum(present), 0)  # noqa: F405
        if "b" in trim:
            after = greater(flip(cumulative_sum(flip(present))), 0)  # noqa: F405
            keep = after if keep is None else logical_and(keep, after)  # noqa: F405
        masks.append((k, keep))
    for k, keep in masks:
        filt = filt[(slice(None),) * k + (keep,)]
    return filt


def piecewise(x, condlist, funclist, *args, **kw):
    """numpy's ``piecewise``: zeros of ``x``'s shape and dtype, and where each condition holds (in
    order, a later one overwriting), the value given or what the function gives of ``x``'s elements
    there (``f(x[cond], *args, **kw)``, so a function that is not elementwise sees what numpy's
    does); one function more than conditions is for where none holds. The values are cast to
    ``x``'s dtype as numpy's assignment casts them."""
    x = _as_array(x)
    if _np.isscalar(condlist) or isinstance(condlist, Array) or (  # noqa: F405
            not isinstance(condlist[0], (list, _np.ndarray, Array)) and x.ndim != 0):  # noqa: F405
        condlist = [condlist]
    if x.ndim == 0:
        # numpy indexes a 0-d array with a 0-d mask; the library's masks have an axis
        conditions = [reshape(astype(_as_array(c), _np.bool_), (1,)) for c in condlist]  # noqa: F405
        result = piecewise(reshape(x, (1,)), conditions, funclist, *args, **kw)  # noqa: F405
        return reshape(result, ())  # noqa: F405
    conditions = [broadcast_to(astype(_as_array(c), _np.bool_), x.shape) for c in condlist]  # noqa: F405
    if len(conditions) == len(funclist) - 1:
        otherwise = logical_not(any(stack(conditions), axis=0)) if conditions else full(x.shape, True)  # noqa: F405
        conditions.append(otherwise)
    elif len(conditions) != len(funclist):
        raise ValueError(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                         f"{len(conditions) + 1} functions are expected")
    y = zeros_like(x)  # noqa: F405
    for cond, func in zip(conditions, funclist, strict=True):
        y = y.at[cond].set(func(x[cond], *args, **kw) if callable(func) else func)
    return y


def i0(x):
    """numpy's ``i0``, the modified Bessel function of the first kind of order 0: numpy's two
    Chebyshev series (``|x| <= 8`` and beyond) with numpy's coefficients, in numpy's order of
    operations; integers as float64; complex values numpy's ``TypeError``."""
    from numpy.lib import _function_base_impl as numpy_impl

    x = _as_array(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = astype(x, _np.float64)  # noqa: F405
    x = absolute(x)  # noqa: F405

    def chebyshev(t, coefficients):
        b0, b1, b2 = coefficients[0], 0.0, 0.0
        for c in coefficients[1:]:
            b2, b1 = b1, b0
            b0 = t * b1 - b2 + c
        return 0.5 * (b0 - b2)

    def small(v):
        return exp(v) * chebyshev(v / 2.0 - 2, numpy_impl._i0A)  # noqa: F405

    def large(v):
        return exp(v) * chebyshev(32.0 / v - 2.0, numpy_impl._i0B) / sqrt(v)  # noqa: F405

    return piecewise(x, [x <= 8.0], [small, large])


def unwrap(p, discont=None, axis=-1, *, period=2 * _math.pi):
    """numpy's ``unwrap``: ``p`` with each jump between neighbours along ``axis`` larger than
    ``max(discont, period / 2)`` replaced by its complement modulo ``period``, as numpy computes it
    (its dtype rules for integers and ``period``; running corrections summed in the library's
    scan order)."""
    p = _as_array(p)
    dd = diff(p, axis=axis)  # noqa: F405
    if discont is None:
        discont = period / 2
    dtype = result_type(dd, period)
    if _np.issubdtype(dtype, _np.integer):
        interval_high, rem = _builtins.divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high, boundary_ambiguous = period / 2, True
    interval_low = -interval_high
    ddmod = add(mod(subtract(dd, interval_low), period), interval_low)  # noqa: F405
    if boundary_ambiguous:
        at_low = logical_and(equal(ddmod, interval_low), greater(dd, 0))  # noqa: F405
        ddmod = where(at_low, ddmod.dtype.type(interval_high), ddmod)  # noqa: F405
    ph_correct = subtract(ddmod, dd)  # noqa: F405
    ph_correct = where(less(absolute(dd), discont), ph_correct.dtype.type(0), ph_correct)  # noqa: F405
    axis = _np.lib.array_utils.normalize_axis_index(axis, p.ndim)
    head = tuple(slice(0, 1) if d == axis else slice(None) for d in range(p.ndim))
    tail = tuple(slice(1, None) if d == axis else slice(None) for d in range(p.ndim))
    rest = add(p[tail], cumsum(ph_correct, axis=axis))  # noqa: F405
    return concatenate([astype(p[head], dtype), astype(rest, dtype)], axis=axis)  # noqa: F405


def array_equiv(a1, a2):
    """numpy's ``array_equiv``: ``False`` where the shapes do not broadcast together, else whether
    every broadcast pair is equal (a 0-d bool expression, as ``array_equal``).

    Only known lengths can rule a broadcast out: where symbolic ones the library cannot broadcast
    together decide it (``n`` against ``0``, which numpy broadcasts where ``n`` is 0 or 1), the
    answer is known only when the program runs, a NotImplementedError (it was ``False`` for
    every size)."""
    a1, a2 = _as_array(a1), _as_array(a2)
    for d1, d2 in zip(reversed(a1.shape), reversed(a2.shape)):
        known = isinstance(d1, int) and isinstance(d2, int)
        if known and d1 != d2 and 1 not in (d1, d2):
            return False
    try:
        broadcast_arrays(a1, a2)  # noqa: F405
    except PytatoError:
        raise NotImplementedError(f"array_equiv: whether shapes {tuple(a1.shape)} and {tuple(a2.shape)} broadcast "
                                  "together is known only when the program runs") from None
    return all(equal(a1, a2))  # noqa: F405


def broadcast_shapes(*shapes):
    """numpy's ``broadcast_shapes``, for shapes with symbolic lengths too."""
    if _builtins.all(isinstance(d, (int, _np.integer)) for s in shapes for d in (s if isinstance(s, tuple) else (s,))):
        return _np.broadcast_shapes(*shapes)
    return broadcast_arrays(*[zeros(s if isinstance(s, tuple) else (s,), _np.int8) for s in shapes])[0].shape  # noqa: F405


def _in_dtype(a, dtype):
    a = _as_array(a)
    return a if dtype is None else astype(a, dtype)  # noqa: F405


def ascontiguousarray(a, dtype=None, *, like=None):
    """numpy's ``ascontiguousarray``: a lazy array has no memory layout (its results are row-major),
    so ``a`` itself, in ``dtype`` where one is given, with at least one axis (as numpy's)."""
    a = _in_dtype(a, dtype)
    return reshape(a, (1,)) if a.ndim == 0 else a  # noqa: F405


def asfortranarray(a, dtype=None, *, like=None):
    """numpy's ``asfortranarray``: as :func:`ascontiguousarray` (no layout to change)."""
    return ascontiguousarray(a, dtype)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """numpy's ``asanyarray``: :func:`asarray` (a lazy array has no subclasses)."""
    return asarray(a, dtype, order, device=device, copy=copy)  # noqa: F405


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
                 "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
                 "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a, dtype=None, requirements=None, *, like=None):
    """numpy's ``require``: the requirements are checked as numpy checks them (known names, not
    'C' and 'F' both) and hold for every computed result, so ``a``, in ``dtype`` where one is
    given."""
    if requirements:
        # numpy iterates over the requirements, the letters of a string too
        flags = {_REQUIREMENTS[r.upper()] for r in requirements}
        if {"C", "F"} <= flags:
            raise ValueError('Cannot specify both "C" and "F" order')
    return _in_dtype(a, dtype)


def ndim(a):
    """numpy's ``ndim``."""
    return a.ndim if isinstance(a, Array) else _np.ndim(a)  # noqa: F405


def shape(a):
    """numpy's ``shape`` (lengths may be size parameters)."""
    return a.shape if isinstance(a, Array) else _np.shape(a)  # noqa: F405


def size(a, axis=None):
    """numpy's ``size``: the number of elements, or the length of ``axis`` (an int or a tuple;
    symbolic lengths multiply as size expressions)."""
    if not isinstance(a, Array):  # noqa: F405
        return _np.size(a, axis)
    if axis is None:
        return a.size
    lengths = [a.shape[k] for k in _np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)]
    return _functools.reduce(_operator.mul, lengths, 1)


def real_if_close(a, tol=100):
    """numpy's ``real_if_close`` of a real array: ``a`` itself. Of a complex array numpy's result
    dtype depends on the values (real where every imaginary part is within ``tol``), which a lazy
    array's dtype cannot: a ``TypeError`` that says so; take ``real(a)`` where the data is known
    to be real."""
    a = _as_array(a)
    if _np.issubdtype(a.dtype, _np.complexfloating):
        raise TypeError(
            "real_if_close: the dtype of its result depends on the values of a complex array "
            f"(here {a.dtype}), which a lazy array's dtype cannot; use real(a) where the imaginary "
            "parts are known to be negligible"
        )
    return a


def select(condlist, choicelist, default=0):
    """numpy's ``select``: the choice of the first true condition, ``default`` where none is, in
    the dtype of all choices and the default together (Python numbers weak, as numpy takes
    them). As numpy fills its result, the default is cast unsafely (``-1`` is 255 in uint8) and
    a Python number among the choices by numpy's 'same_kind' rule."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(choicelist) == 0:
        raise ValueError("select with an empty condition list is not possible")

    def strong(v):  # numpy's select makes anything but a Python number an array
        return v if isinstance(v, Array) or type(v) in (int, float, complex) else _np.asarray(v)  # noqa: F405

    choices, default = [strong(c) for c in choicelist], strong(default)
    try:
        dtype = _np.result_type(*[v.dtype if isinstance(v, Array) else v for v in (*choices, default)])  # noqa: F405
    except TypeError as e:
        raise TypeError(f"Choicelist and default value do not have a common dtype: {e}") from None
    for i, cond in enumerate(condlist):
        cond_dtype = cond.dtype if isinstance(cond, Array) else _np.asarray(cond).dtype  # noqa: F405
        if cond_dtype != _np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")

    def cast(v, casting):
        if isinstance(v, Array):  # noqa: F405
            return astype(v, dtype)  # noqa: F405
        v = _np.asarray(v)
        if not _np.can_cast(v.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {v.dtype!r} to {dtype!r} according to the rule {casting!r}")
        return v.astype(dtype)

    result = cast(default, "unsafe")
    for cond, choice in zip(reversed(condlist), reversed(choices)):
        result = where(cond, cast(choice, "same_kind"), result)  # noqa: F405
    return result


def choose(a, choices, out=None, mode="raise"):
    """numpy's ``choose``: ``choices[a[i]][i]`` with ``a`` and the choices broadcast together,
    in the dtype of the choices together. ``mode="wrap"`` takes ``a`` modulo the number of
    choices, ``"clip"`` clips it into range; with ``"raise"`` an entry out of range fails the
    program when it runs with numpy's ``ValueError`` (the sizes, not the values, are known while
    building)."""
    if out is not None:
        raise NotImplementedError("choose: out= is not supported (arrays are immutable)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    a = _as_array(a)
    if not _np.can_cast(a.dtype, _np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {a.dtype!r} to dtype('int64') according to the rule 'safe'")
    choices = list(choices)
    if not choices:
        raise ValueError("0-length sequence.")
    dtype = result_type(*choices)
    arrays = [astype(_as_array(c), dtype) for c in choices]  # noqa: F405
    index, *arrays = broadcast_arrays(a, *arrays)  # noqa: F405
    n = len(arrays)
    index = astype(index, _np.int64)  # noqa: F405
    if mode == "wrap":
        index = remainder(index, n)  # noqa: F405
    elif mode == "clip":
        index = clip(index, 0, n - 1)  # noqa: F405
    else:  # an entry out of range is marked -1, which the program refuses when run
        outside = logical_or(less(index, 0), greater_equal(index, n))  # noqa: F405
        from ._native import _require_non_negative

        index = _require_non_negative(where(outside, -1, index), "choice")  # noqa: F405
    return take_along_axis(stack(arrays), index[None], 0)[0]  # noqa: F405


def _check_gufunc_core(name, signature, operands, cores):
    """numpy's checks of a gufunc's operands: each has the axes of its core (``cores[k]``: the
    core's axis names, last axes first matched), and a core name has one length in all."""
    lengths = {}
    for k, (a, core) in enumerate(zip(operands, cores)):
        if a.ndim < len(core):
            raise ValueError(f"{name}: Input operand {k} does not have enough dimensions (has {a.ndim}, gufunc core "
                             f"with signature {signature} requires {len(core)})")
        for j, (axis, length) in enumerate(zip(core, a.shape[a.ndim - len(core):])):
            known = lengths.setdefault(axis, length)
            if isinstance(known, int) and isinstance(length, int) and known != length:
                raise ValueError(f"{name}: Input operand {k} has a mismatch in its core dimension {j}, with gufunc "
                                 f"signature {signature} (size {length} is different from {known})")


def matvec(x1, x2, /, *, dtype=None, casting="same_kind", order="K"):
    """numpy's ``matvec``, the gufunc ``(m,n),(n)->(m)``: the matrix-vector products
    ``x1[..., i, :] @ x2[..., :]`` over the broadcast leading axes, with numpy's ufunc keywords
    ``dtype=``, ``casting=`` and ``order=``."""
    x1, x2 = _as_array(x1), _as_array(x2)
    _check_gufunc_core("matvec", "(m,n),(n)->(m)", (x1, x2), ("mn", "n"))
    return matmul(x1, x2[..., None], dtype=dtype, casting=casting, order=order)[..., 0]  # noqa: F405


def vecmat(x1, x2, /, *, dtype=None, casting="same_kind", order="K"):
    """numpy's ``vecmat``, the gufunc ``(n),(n,m)->(m)``: the vector-matrix products
    ``conj(x1[..., :]) @ x2[..., :, j]`` over the broadcast leading axes, with numpy's ufunc
    keywords ``dtype=``, ``casting=`` and ``order=``."""
    x1, x2 = _as_array(x1), _as_array(x2)
    _check_gufunc_core("vecmat", "(n),(n,m)->(m)", (x1, x2), ("n", "nm"))
    if x1.dtype.kind == "c":
        x1 = conj(x1)  # noqa: F405
    return matmul(x1[..., None, :], x2, dtype=dtype, casting=casting, order=order)[..., 0, :]  # noqa: F405


def sinc(x):
    """numpy's ``sinc``: ``sin(y) / y`` for ``y = pi x``, with the dtype's epsilon (1e-20 for
    complex numbers) for ``y`` where it is 0, as numpy computes it."""
    y = multiply(_math.pi, _as_array(x))  # noqa: F405
    eps = _np.finfo(y.dtype).eps if y.dtype.kind == "f" else 1.0e-20
    y = where(not_equal(y, 0), y, eps)  # noqa: F405
    return divide(sin(y), y)  # noqa: F405


def polyval(p, x):
    """numpy's ``polyval``: Horner's scheme from the highest coefficient, as numpy loops."""
    p = _np.asarray(p) if not isinstance(p, Array) else p  # noqa: F405
    x = _as_array(x)
    y = zeros_like(x)  # noqa: F405
    if not isinstance(p.shape[0], int):
        raise NotImplementedError("polyval: the number of coefficients must be known when the DAG is built")
    for k in range(p.shape[0]):
        y = add(multiply(y, x), p[k])  # noqa: F405
    return y


def vander(x, N=None, increasing=False):  # noqa: N803
    """numpy's ``vander``: columns of powers computed as numpy does, by a running product (in
    the dtype ``x`` promotes to with ``int``)."""
    x = _as_array(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else _operator.index(N)  # noqa: N806
    if not isinstance(n, int):
        raise NotImplementedError(f"vander: the number of columns ({n}) must be known when the expression is built: "
                                  "give N")
    dtype = _np.promote_types(x.dtype, int)
    x = astype(x, dtype)  # noqa: F405
    ones_column = ones((x.shape[0], _builtins.min(n, 1)), dtype)  # noqa: F405
    if n > 1:
        powers = cumprod(broadcast_to(reshape(x, (x.shape[0], 1)), (x.shape[0], n - 1)), axis=1)  # noqa: F405
        columns = concatenate([ones_column, powers], axis=1)  # noqa: F405
    else:
        columns = ones_column
    return columns if increasing else columns[:, ::-1]


def resize(a, new_shape):
    """numpy's ``resize``: the flattened array repeated to fill ``new_shape``."""
    a = ravel(_as_array(a))  # noqa: F405
    new_shape = tuple(_operator.index(n) for n in (new_shape if _np.iterable(new_shape) else (new_shape,)))
    size = _math.prod(new_shape)
    if not isinstance(a.shape[0], int):
        raise NotImplementedError("resize: the size of the array must be known when the DAG is built")
    if size == 0 or a.shape[0] == 0:
        return zeros(new_shape, a.dtype)  # noqa: F405
    repeats = -(-size // a.shape[0])
    return reshape(concatenate([a] * repeats)[:size], new_shape)  # noqa: F405


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy's ``logspace``: ``base ** linspace(start, stop, num)``."""
    y = power(base, linspace(start, stop, num=num, endpoint=endpoint, axis=axis))  # noqa: F405
    return y if dtype is None else astype(y, dtype)  # noqa: F405


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """numpy's ``geomspace`` of number bounds: numpy's samples (its logarithms, signs and exact
    endpoints), as a constant. Bounds that are arrays are not taken: the samples would need
    numpy's complex-logarithm path on values known only when the program runs."""
    if isinstance(start, Array) or isinstance(stop, Array):  # noqa: F405
        raise NotImplementedError("geomspace: give the bounds as numbers")
    return asarray(_np.geomspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis))  # noqa: F405


def _window(name):
    window = getattr(_np, name)

    def constant(M, *args):  # noqa: N803 (numpy's name)
        if isinstance(M, (Array, Dim)) or _builtins.any(isinstance(a, Array) for a in args):  # noqa: F405
            raise NotImplementedError(f"{name}: give the window's length (and parameters) as numbers")
        return asarray(window(M, *args))  # noqa: F405

    constant.__name__ = constant.__qualname__ = name
    constant.__doc__ = f"numpy's ``{name}`` window of ``M`` points (numbers), as a constant: numpy's values."
    return constant


bartlett, blackman, hamming, hanning, kaiser = (_window(n) for n in ("bartlett", "blackman", "hamming", "hanning",
                                                                      "kaiser"))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """numpy's ``trapezoid``: the sum of ``d * (y[1:] + y[:-1]) / 2`` along ``axis``. As in numpy,
    ``axis`` picks ``y``'s axis for the slices, and is passed as given to ``diff`` of a
    multi-dimensional ``x`` and to the sum, whose operand may have more axes than ``y``."""
    y = _as_array(y)
    along = _np.lib.array_utils.normalize_axis_index(axis, y.ndim)
    upper = tuple(slice(1, None) if d == along else slice(None) for d in range(y.ndim))
    lower = tuple(slice(None, -1) if d == along else slice(None) for d in range(y.ndim))
    if x is None:
        d = dx
    else:
        x = _as_array(x)
        d = diff(x) if x.ndim == 1 else diff(x, axis=axis)  # noqa: F405
        if x.ndim == 1:
            d = reshape(d, tuple(d.shape[0] if k == along else 1 for k in range(y.ndim)))  # noqa: F405
    return sum(divide(multiply(d, add(y[upper], y[lower])), 2.0), axis=axis)  # noqa: F405

def _virtual_positions(alpha, beta):
    """Hyndman and Fan's continuous positions ``n q + alpha + q (1 - alpha - beta) - 1``, in
    numpy's order of operations (so that the weights round as numpy's do)."""
    return lambda n, q, xp: n * q + (alpha + q * (1 - alpha - beta)) - 1


def _discrete_positions(index, take_previous, xp):
    """The element below ``index`` where ``take_previous(fraction, index)``, else the one above,
    never below 0 (numpy's rule for its discontinuous methods)."""
    previous = xp.floor(index)
    chosen = xp.integers(xp.where(take_previous(index - previous, index), previous, previous + 1))
    return xp.where(xp.less(chosen, 0), 0, chosen)


# numpy's quantile methods: the position in the sorted values as a function of the length n and
# q, and how the fraction of a position weighs the element above it (None: the positions are
# integers, the elements themselves). ``xp`` holds floor, ceil, rint, where, equal, less (the
# library's ``==`` is structural equality, not numpy's) and integers (a cast to positions):
# numpy's where the length is known when the expression is built, the library's where it is
# the data's (nanquantile's counts of numbers).
_QUANTILE_METHODS = {
    "inverted_cdf": (lambda n, q, xp: _discrete_positions(n * q - 1, lambda g, _: xp.equal(g, 0), xp), None),
    "averaged_inverted_cdf": (lambda n, q, xp: n * q - 1, lambda g, _, xp: xp.where(xp.equal(g, 0), 0.5, 1.0)),
    "closest_observation": (lambda n, q, xp: _discrete_positions(
        n * q - 1 - 0.5, lambda g, i: xp.equal(g, 0) & xp.equal(xp.floor(i) % 2, 1), xp), None),
    "interpolated_inverted_cdf": (_virtual_positions(0, 1), lambda g, _, xp: g),
    "hazen": (_virtual_positions(0.5, 0.5), lambda g, _, xp: g),
    "weibull": (_virtual_positions(0, 0), lambda g, _, xp: g),
    "linear": (lambda n, q, xp: (n - 1) * q, lambda g, _, xp: g),
    "median_unbiased": (_virtual_positions(1 / 3.0, 1 / 3.0), lambda g, _, xp: g),
    "normal_unbiased": (_virtual_positions(3 / 8.0, 3 / 8.0), lambda g, _, xp: g),
    "lower": (lambda n, q, xp: xp.integers(xp.floor((n - 1) * q)), None),
    "higher": (lambda n, q, xp: xp.integers(xp.ceil((n - 1) * q)), None),
    "midpoint": (lambda n, q, xp: 0.5 * (xp.floor((n - 1) * q) + xp.ceil((n - 1) * q)),
                 lambda g, i, xp: xp.where(xp.equal(i % 1, 0), 0.0, 0.5)),
    "nearest": (lambda n, q, xp: xp.integers(xp.rint((n - 1) * q)), None),
}


class _HostMath:
    """numpy's functions for ``_QUANTILE_METHODS``."""
    floor, ceil, rint = staticmethod(_np.floor), staticmethod(_np.ceil), staticmethod(_np.rint)
    equal, less = staticmethod(_np.equal), staticmethod(_np.less)

    @staticmethod
    def where(condition, x, y):
        return _np.asanyarray(_np.where(condition, x, y))

    @staticmethod
    def integers(x):
        return _np.asanyarray(x).astype(_np.intp)


class _LibraryMath:
    """The library's functions for ``_QUANTILE_METHODS``."""
    floor, ceil, rint = staticmethod(floor), staticmethod(ceil), staticmethod(rint)  # noqa: F405
    where, equal, less = staticmethod(where), staticmethod(equal), staticmethod(less)  # noqa: F405

    @staticmethod
    def integers(x):
        return astype(x, _np.int64)  # noqa: F405


def _lerp(lower, upper, t, weak=False):
    """numpy's ``_lerp``: from the lower value below a weight of 0.5, from the upper one from
    0.5 on. ``t`` is a Python float (numpy's weight for a Python number q, which the data's dtype
    takes) or an array; ``weak`` takes an array of weights as numpy takes a Python float (where
    each slice has its own weight, as in ``nanquantile``), ``1 - t`` computed before."""
    difference = subtract(upper, lower)  # noqa: F405
    complement = 1 - t if isinstance(t, float) else subtract(1, t)  # noqa: F405
    weight, complement_weight = t, complement
    if weak:
        dtype = _np.result_type(lower.dtype, 1.0)
        weight, complement_weight = astype(t, dtype), astype(complement, dtype)  # noqa: F405
    interpolated = add(lower, multiply(difference, weight))  # noqa: F405
    from_above = astype(subtract(upper, multiply(difference, complement_weight)), interpolated.dtype)  # noqa: F405
    if isinstance(t, float):
        return from_above if t >= 0.5 else interpolated
    return where(greater_equal(t, 0.5), from_above, interpolated)  # noqa: F405


def _takes_elements(virtual, weight, method):
    """Whether numpy takes the elements at the positions ``virtual`` rather than interpolating:
    for the discontinuous methods, and for "linear" where ``q`` is made of integers."""
    return virtual.dtype.kind in "iu" and (weight is None or method == "linear")


def _quantile(a, q, axis, keepdims, weak_q, method):
    """numpy's ``_quantile`` for numbers ``q`` in [0, 1] and one of its ``method``s: the sorted
    values along ``axis``, taken at integer positions or interpolated as numpy's ``_lerp``, the
    NaN itself where a slice holds one. Positions and weights depend only on the axis length and ``q``: numpy computes them
    here, as its own code does."""
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    data, kept = _axes_merged_last(a, axis)
    n = data.shape[-1]
    if not isinstance(n, int):
        raise NotImplementedError("quantile needs the length of its axis when the expression is built")
    if n == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    s = moveaxis(sort(data, axis=-1), -1, 0)  # noqa: F405
    rest = tuple(s.shape[1:])

    def gather(positions):
        return reshape(take(s, _np.asarray(positions, _np.intp).ravel(), axis=0), q.shape + rest)  # noqa: F405

    positions, weight = _QUANTILE_METHODS[method]
    virtual = _np.asanyarray(positions(n, q, _HostMath))
    if _takes_elements(virtual, weight, method):
        result = gather(virtual)
    else:
        # numpy's _get_indexes and _get_gamma: at the end both positions are -1, so the weight
        # there is virtual + 1 (it weighs a zero difference, or an inf - inf that makes NaN);
        # before the start both are 0
        below = _np.asanyarray(_np.floor(virtual))
        above = _np.asanyarray(below + 1)
        at_end, at_start = virtual >= n - 1, virtual < 0
        below[at_end], above[at_end] = -1, -1
        below[at_start], above[at_start] = 0, 0
        below, above = below.astype(_np.intp), above.astype(_np.intp)
        gamma = _np.asanyarray(weight(_np.asanyarray(virtual - below), virtual, _HostMath), dtype=virtual.dtype)
        t = float(gamma) if weak_q else asarray(gamma.reshape(q.shape + (1,) * len(rest)))  # noqa: F405
        result = _lerp(gather(below % n), gather(above % n), t)
    if a.dtype.kind == "f":
        last = s[n - 1]
        result = where(isnan(last), astype(last, result.dtype), result)  # noqa: F405
    if keepdims:
        result = reshape(result, q.shape + kept)  # noqa: F405
    return result


def _checked_quantile(name, a, q, divisor, axis, method, keepdims, weights, compute=None):
    """numpy's checks of ``quantile``/``percentile`` and their NaN-ignoring kin (``q / divisor``
    in [0, 1]), then ``compute`` (``_quantile`` by default)."""
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {_QUANTILE_METHODS.keys()}")
    if weights is not None:
        raise NotImplementedError(f"{name}: weights= is not written")
    a = _as_array(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    weak_q = type(q) in (int, float)
    q = _np.asanyarray(q if divisor == 1 else _np.true_divide(q, divisor))
    if not (_np.all(q >= 0) and _np.all(q <= 1)):
        what = "Quantiles must be in the range [0, 1]" if divisor == 1 else "Percentiles must be in the range [0, 100]"
        raise ValueError(what)
    return (compute or _quantile)(a, q, axis, keepdims, weak_q, method)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """numpy's ``quantile`` with each of numpy's thirteen methods, ``q`` given as numbers
    (``weights`` are not written)."""
    _no_out("quantile", out)
    return _checked_quantile("quantile", a, q, 1, axis, method, keepdims, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """numpy's ``percentile``: ``quantile`` of ``q / 100``."""
    _no_out("percentile", out)
    return _checked_quantile("percentile", a, q, 100, axis, method, keepdims, weights)

def _sorted_numbers(a, axis):
    """For ``a`` of floats or complex numbers: the values along ``axis`` (merged as
    ``_axes_merged_last`` merges them) sorted, NaN last; how many numbers each slice holds; the shape ``keepdims`` gives."""
    data, kept = _axes_merged_last(a, axis)
    s = sort(data, axis=-1)  # noqa: F405
    count = sum(logical_not(isnan(s)), axis=-1, dtype=_np.int64)  # noqa: F405
    return s, count, kept


def _take_per_slice(s, positions):
    """``s[..., positions]`` with one position per slice (and leading axes of ``positions``
    beyond ``s``'s, numpy's q axes), clamped into the slice (the positions of all-NaN slices
    point anywhere: their results are replaced)."""
    positions = clip(positions, 0, _builtins.max(s.shape[-1] - 1, 0))  # noqa: F405
    leading = positions.ndim - (s.ndim - 1)
    spread = reshape(s, (1,) * leading + tuple(s.shape))  # noqa: F405
    return take_along_axis(spread, expand_dims(positions, -1), axis=-1)[..., 0]  # noqa: F405


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy's ``nanmedian``: the median of each slice's numbers, NaN where there are none. As in
    numpy, a slice of a 2-d or higher array reduced along fewer than 600 elements takes numpy's
    masked median (the middle two summed in the data's dtype, then halved: a middle value past
    half the largest float is inf there), otherwise ``median``'s mean of the middle two; an
    empty array gives ``nanmean``'s result. A complex value is NaN where either part is, and
    complex values sort as numpy sorts them (those with a NaN part last)."""
    _no_out("nanmedian", out)
    a = _as_array(a)
    if a.dtype.kind not in "fc":
        return median(a, axis=axis, keepdims=keepdims)
    if not _builtins.all(isinstance(n, int) for n in a.shape):
        raise NotImplementedError("nanmedian needs the shape when the expression is built")
    if _math.prod(a.shape) == 0:
        return nanmean(a, axis=axis, keepdims=keepdims)
    s, count, kept = _sorted_numbers(a, axis)
    middle_positions = stack([floor_divide(subtract(count, 1), 2), floor_divide(count, 2)])  # noqa: F405
    middle = moveaxis(_take_per_slice(s, middle_positions), 0, -1)  # noqa: F405
    if axis is None or s.ndim == 1 or s.shape[-1] >= 600:
        # numpy's median: the mean of the middle element, or of the middle pair; of a slice
        # without numbers, its last element as given (a NaN, a complex one whole)
        result = where(equal(remainder(count, 2), 1), mean(middle[..., :1], axis=-1), mean(middle, axis=-1))  # noqa: F405
        no_numbers = _axes_merged_last(a, axis)[0][..., -1]
    else:
        result = divide(sum(middle, axis=-1), a.dtype.type(2))  # noqa: F405
        no_numbers = a.dtype.type(_np.nan)
    result = where(equal(count, 0), no_numbers, result)  # noqa: F405
    return reshape(result, kept) if keepdims else result  # noqa: F405


def _nan_quantile(a, q, axis, keepdims, weak_q, method):
    """numpy's ``nanquantile`` for ``q`` in [0, 1]: ``_quantile`` of each slice's numbers, so the
    positions depend on the data (each slice's count of numbers) and the library computes them
    with numpy's operations in numpy's dtypes; NaN where a slice has no numbers."""
    if not _builtins.all(isinstance(n, int) for n in a.shape):
        raise NotImplementedError("nanquantile needs the shape when the expression is built")
    if _math.prod(a.shape) == 0:
        return nanmean(a, axis=axis, keepdims=keepdims)  # numpy's, whatever q is
    if a.dtype.kind != "f":
        return _quantile(a, q, axis, keepdims, weak_q, method)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    s, count, kept = _sorted_numbers(a, axis)
    q_spread = q.reshape(q.shape + (1,) * count.ndim)
    # numpy's n is a Python int, which takes q's dtype
    n = astype(broadcast_to(count, q.shape + tuple(count.shape)), q.dtype if q.dtype.kind == "f" else _np.int64)  # noqa: F405
    positions, weight = _QUANTILE_METHODS[method]
    virtual = positions(n, q_spread, _LibraryMath)
    if _takes_elements(virtual, weight, method):
        result = _take_per_slice(s, virtual)
    else:
        # numpy's _get_indexes: -1 (the slice's last number) at the end, 0 before the start
        below = floor(virtual)  # noqa: F405
        at_end, at_start = greater_equal(virtual, subtract(count, 1)), less(virtual, 0)  # noqa: F405
        below = _LibraryMath.integers(where(at_end, -1, where(at_start, 0, below)))  # noqa: F405
        above = _LibraryMath.integers(where(at_end, -1, where(at_start, 0, add(below, 1))))  # noqa: F405
        gamma = astype(weight(subtract(virtual, below), virtual, _LibraryMath), virtual.dtype)  # noqa: F405
        last = subtract(count, 1)  # noqa: F405
        lower = _take_per_slice(s, where(less(below, 0), last, below))  # noqa: F405
        upper = _take_per_slice(s, where(less(above, 0), last, above))  # noqa: F405
        result = _lerp(lower, upper, gamma, weak=weak_q)
    result = where(equal(count, 0), result.dtype.type(_np.nan), result)  # noqa: F405
    return reshape(result, q.shape + kept) if keepdims else result  # noqa: F405


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """numpy's ``nanquantile``: ``quantile`` of each slice's numbers, every method, NaN where a
    slice has none (``weights`` are not written)."""
    _no_out("nanquantile", out)
    return _checked_quantile("nanquantile", a, q, 1, axis, method, keepdims, weights, _nan_quantile)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """numpy's ``nanpercentile``: ``nanquantile`` of ``q / 100``."""
    _no_out("nanpercentile", out)
    return _checked_quantile("nanpercentile", a, q, 100, axis, method, keepdims, weights, _nan_quantile)


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy's ``interp`` of real values (float64, as numpy computes): ``fp[0]`` (``left``) below
    ``xp[0]``, ``fp[-1]`` (``right``) above ``xp[-1]``, ``fp[j]`` where ``x`` is ``xp[j]`` or the
    last point, else ``slope * (x - xp[j]) + fp[j]`` with numpy's fallbacks where that is NaN;
    NaN for NaN (``fp[0]`` where ``xp`` has one point, as numpy's loop for it gives). ``xp`` must be increasing, as numpy assumes; ``period`` is not written. Complex
    ``fp`` interpolates its real and imaginary parts each so (complex128, as numpy); complex ``x``
    or ``xp`` is numpy's ``TypeError``."""
    if period is not None:
        raise NotImplementedError("interp: period= is not written")
    x, xp, fp = (_as_array(v) for v in (x, xp, fp))
    for name, v in (("x", x), ("xp", xp)):
        if v.dtype.kind == "c":
            raise TypeError(f"interp: {name} may not be complex (numpy cannot cast {v.dtype} to float64 safely)")
    if fp.dtype.kind == "c":
        def part(f, v):
            return None if v is None else f(_np.complex128(v))
        re = interp(x, xp, real(fp), part(_np.real, left), part(_np.real, right))  # noqa: F405
        im = interp(x, xp, imag(fp), part(_np.imag, left), part(_np.imag, right))  # noqa: F405
        if xp.shape == (1,):
            return _native._complex_from_parts(re, im)
        # numpy's complex loop gives a NaN x the imaginary part 0 (but for one sample point)
        return _native._complex_from_parts(re, where(isnan(astype(x, _np.float64)), 0.0, im))  # noqa: F405
    x, xp, fp = (astype(v, _np.float64) for v in (x, xp, fp))  # noqa: F405
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("xp and fp must be 1-d sequences")
    n = xp.shape[0]
    if fp.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    if not isinstance(n, int):
        raise NotImplementedError("interp needs the number of sample points when the expression is built")
    if n == 0:
        raise ValueError("array of sample points is empty")
    first, last = fp[0], fp[n - 1]
    lval = first if left is None else _np.float64(left)
    rval = last if right is None else _np.float64(right)
    below, above = less(x, xp[0]), greater(x, xp[n - 1])  # noqa: F405
    if n == 1:
        # numpy's loop for one sample point only compares: a NaN x (neither below nor above
        # the point) gets fp[0], not NaN
        return where(below, lval, where(above, rval, first))  # noqa: F405
    j = subtract(searchsorted(xp, x, side="right"), 1)  # noqa: F405  (xp[j] <= x < xp[j + 1])
    k = clip(j, 0, n - 2)  # noqa: F405
    xj, xj1, yj, yj1 = take(xp, k), take(xp, add(k, 1)), take(fp, k), take(fp, add(k, 1))  # noqa: F405
    slope = divide(subtract(yj1, yj), subtract(xj1, xj))  # noqa: F405
    from_left = add(multiply(slope, subtract(x, xj)), yj)  # noqa: F405
    from_right = add(multiply(slope, subtract(x, xj1)), yj1)  # noqa: F405
    fallback = where(logical_and(isnan(from_right), equal(yj, yj1)), yj, from_right)  # noqa: F405
    between = where(isnan(from_left), fallback, from_left)  # noqa: F405
    inside = where(equal(j, n - 1), last, where(equal(xj, x), yj, between))  # noqa: F405
    return where(isnan(x), x, where(below, lval, where(above, rval, inside)))  # noqa: F405

def digitize(x, bins, right=False):
    """numpy's ``digitize``: the index of the bin each ``x`` falls in (``searchsorted`` on
    increasing bins, mirrored on decreasing ones). The bins are numbers (a numpy array or a
    sequence), so that their direction is known when the expression is built, as numpy checks it."""
    if isinstance(bins, Array):  # noqa: F405
        raise TypeError("digitize: bins must be numbers (a numpy array or a sequence), to know their direction")
    bins = _np.asarray(bins)
    if bins.ndim != 1:
        raise ValueError("bins must be a 1-dimensional array")
    if bins.dtype.kind == "c":
        raise TypeError("x may not be complex")
    increasing = bool(_np.all(bins[1:] >= bins[:-1]))
    if not increasing and not _np.all(bins[1:] <= bins[:-1]):
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    x = _as_array(x)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if increasing:
        return searchsorted(asarray(bins), x, side=side)  # noqa: F405
    return subtract(len(bins), searchsorted(asarray(bins[::-1].copy()), x, side=side))  # noqa: F405

def _bin_edges(name, dtype, bins, range):  # noqa: A002
    """numpy's bin edges of ``histogram`` for data of ``dtype``, and whether the bins are equal:
    ``bins`` equal bins over ``range``, or ``bins`` the edges themselves. numpy's checks, in
    numpy's order; estimators (string ``bins``) and a range taken from the data need the values,
    which an expression does not have when it is built."""
    if isinstance(bins, Array):  # noqa: F405
        raise TypeError(f"{name}: bins must be an int or numbers (a numpy array or a sequence), to know the "
                        "edges' order when the expression is built")
    if isinstance(bins, str):
        if bins not in ("stone", "auto", "doane", "fd", "rice", "scott", "sqrt", "sturges"):
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        raise NotImplementedError(f"{name}: the bin estimator {bins!r} needs the data's values; give the number of "
                                  "bins and range=(first, last), or the edges")
    if _np.ndim(bins) == 0:
        try:
            n = _operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is None:
            raise NotImplementedError(f"{name}: give range=(first, last) for an expression's bins")
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_np.isfinite(first) and _np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        edge_type = _np.result_type(first, last, _np.empty(0, dtype))
        if edge_type.kind in "iub":
            edge_type = _np.result_type(edge_type, float)
        return _np.linspace(first, last, n + 1, endpoint=True, dtype=edge_type), True
    if _np.ndim(bins) != 1:
        raise ValueError("`bins` must be 1d, when an array")
    edges = _np.asarray(bins)
    if _np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges, False


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """numpy's ``histogram_bin_edges`` where the edges do not depend on the data's values:
    ``bins`` equal bins over ``range``, or the edges given (a numpy array: the edges are numbers
    when the expression is built)."""
    del weights  # (numpy uses them only for estimators)
    return _bin_edges("histogram_bin_edges", _as_array(a).dtype, bins, range)[0]


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy's ``histogram`` with its bin edges given by numbers: ``bins`` equal bins over
    ``range`` (which an expression's data cannot give when it is built) or the edges themselves.
    A value falls in the bin whose edges hold it (``edges[i] <= x < edges[i + 1]``, the last bin
    closed), as numpy's corrected fast path and its search give; values outside the edges and
    NaN are not counted. ``weights`` (equal bins only) are summed in float64 per block of 65536
    values in order and accumulated in their dtype, as numpy's ``bincount`` loop. Returns the
    counts (an expression) and the edges (a numpy array)."""
    a = _as_array(a)
    edges, equal_bins = _bin_edges("histogram", a.dtype, bins, range)
    if weights is not None and not equal_bins:
        raise NotImplementedError("histogram: weights with bin edges given as an array are not written")
    first, last, n = edges[0], edges[-1], len(edges) - 1
    flat = ravel(a)  # noqa: F405
    keep = logical_and(greater_equal(flat, first), less_equal(flat, last))  # noqa: F405
    search_dtype = _np.result_type(edges.dtype, a.dtype)
    position = subtract(searchsorted(asarray(edges.astype(search_dtype)), astype(flat, search_dtype),  # noqa: F405
                                     side="right"), 1)
    position = where(logical_and(keep, less(position, n)), position, n - 1)  # noqa: F405  (the last edge)
    slot = where(keep, position, n)  # noqa: F405  (an extra slot for what is not counted)
    if weights is None:
        counts = zeros(n + 1, _np.intp).at[slot].add(1)[:n]  # noqa: F405
    else:
        weights = ravel(_as_array(weights))  # noqa: F405
        total = flat.shape[0]
        counts = None
        for start in _builtins.range(0, _builtins.max(total, 1), 65536):
            stop = _builtins.min(start + 65536, total)
            block = zeros(n + 1, _np.float64).at[slot[start:stop]].add(  # noqa: F405
                astype(weights[start:stop], _np.float64))[:n]  # noqa: F405
            block = astype(block, weights.dtype)  # noqa: F405
            counts = block if counts is None else add(counts, block)  # noqa: F405
    if density:
        widths = _np.array(_np.diff(edges), float)
        counts = divide(divide(counts, widths), sum(counts))  # noqa: F405
    return counts, edges

# }}}


# {{{ numpy functions composed of the library's (2): membership, gradients, correlations

def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy's ``isin``: whether each element of ``element`` equals one of ``test_elements``
    (compared as numpy's ``==`` compares them: NaN equals nothing, ``-0.0`` equals ``0.0``), in
    ``element``'s shape; ``invert`` negates. ``assume_unique`` and ``kind`` choose numpy's
    algorithm, not its result, and are accepted as hints."""
    del assume_unique
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    element, test = _as_array(element), ravel(_as_array(test_elements))  # noqa: F405
    pairs = equal(reshape(element, (*element.shape, 1)), test)  # noqa: F405
    found = any(pairs, axis=-1)  # noqa: F405
    return logical_not(found) if invert else found  # noqa: F405


def append(arr, values, axis=None):
    """numpy's ``append``: ``arr`` and ``values`` concatenated along ``axis``; both flattened
    first where ``axis`` is ``None``. Numbers become arrays of their default dtype (numpy's
    ``asarray``: ``append(int8_array, 1)`` is ``int64``)."""
    arr, values = _as_array(arr), _as_array(values)
    if axis is None:
        arr = arr if arr.ndim == 1 else ravel(arr)  # noqa: F405
        return concatenate([arr, ravel(values)], axis=0)  # noqa: F405
    return concatenate([arr, values], axis=axis)  # noqa: F405


def _gradient_spacing(spacing, length):
    """One axis's spacing for ``gradient``, as numpy prepares it: a number (or numpy scalar) as it
    is; coordinates (a 1-d numpy array or sequence) as their differences (integers in float64),
    or the first difference where they are all equal; coordinates that are library arrays as
    their differences (``gradient`` applies numpy's test for equal differences to them when the
    program runs)."""
    if isinstance(spacing, Array):  # noqa: F405
        if spacing.ndim == 0:
            return spacing
        if spacing.ndim != 1 or spacing.shape[0] != length:
            raise ValueError("distances must be either scalars or 1d")
        if spacing.dtype.kind == "b":
            raise TypeError("gradient: boolean coordinates (numpy differentiates them only where the data "
                            "makes them evenly spaced, and refuses to negate them otherwise)")
        if spacing.dtype.kind in "iu":
            spacing = astype(spacing, _np.float64)  # noqa: F405
        return diff(spacing)  # noqa: F405
    if _np.ndim(spacing) == 0:
        return spacing
    distances = _np.asarray(spacing)
    if distances.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if len(distances) != length:
        raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    if _np.issubdtype(distances.dtype, _np.integer):
        distances = distances.astype(_np.float64)
    steps = _np.diff(distances)
    return steps[0] if (steps == steps[0]).all() else steps


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy's ``gradient``: second-order central differences inside, first- or second-order
    (``edge_order``) one-sided differences at the ends, along every axis of ``axis`` (all by
    default; a list of arrays for several). Spacings as numpy takes them: none (1), one number
    for every axis, or one per axis, each a number or the coordinates along it (unevenly
    spaced coordinates use numpy's weights). Integers are differentiated in float64; the
    formulas' constants are computed as numpy computes them, so the values are numpy's."""
    f = _as_array(f)
    axes = tuple(range(f.ndim)) if axis is None else _np.lib.array_utils.normalize_axis_tuple(axis, f.ndim)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and _np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype.kind in "iu":
        f = astype(f, _np.float64)  # noqa: F405
    elif f.dtype.kind not in "fc" and axes:  # numpy subtracts only along an axis
        raise TypeError(f"gradient: numpy cannot subtract {f.dtype} arrays")
    otype = f.dtype

    def along(ax, part):  # f[part] along axis ax, every index of the others
        return f[tuple(part if d == ax else slice(None) for d in range(f.ndim))]

    def spread(w, ax):  # weights per position along ax (a 1-d array) shaped to broadcast there
        if _np.ndim(w) == 1:
            return reshape(_as_array(w), tuple(w.shape[0] if d == ax else 1 for d in range(f.ndim)))  # noqa: F405
        return w

    def combination(ax, terms):  # sum of weight * f[part], in f's dtype as numpy's out= stores it
        total = None
        for w, part in terms:
            term = multiply(spread(w, ax), along(ax, part))  # noqa: F405
            total = term if total is None else add(total, term)  # noqa: F405
        return astype(total, otype)  # noqa: F405

    def step(dx, k):  # the k-th coordinate difference: a numpy scalar, or a 0-d array
        return reshape(dx[k:k + 1] if k != -1 else dx[-1:], ()) if isinstance(dx, Array) else dx[k]  # noqa: F405

    def along_axis(ax, dx, uniform):  # numpy's formulas, operation for operation
        if uniform:
            interior = astype(divide(subtract(along(ax, slice(2, None)), along(ax, slice(None, -2))),  # noqa: F405
                                     2. * dx), otype)
        else:
            dx1, dx2 = dx[0:-1], dx[1:]
            a = -(dx2) / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            interior = combination(ax, [(a, slice(None, -2)), (b, slice(1, -1)), (c, slice(2, None))])
        first, second, last, before_last = slice(0, 1), slice(1, 2), slice(-1, None), slice(-2, -1)
        if edge_order == 1:
            dx_0, dx_n = (dx, dx) if uniform else (step(dx, 0), step(dx, -1))
            start = astype(divide(subtract(along(ax, second), along(ax, first)), dx_0), otype)  # noqa: F405
            end = astype(divide(subtract(along(ax, last), along(ax, before_last)), dx_n), otype)  # noqa: F405
        else:
            if uniform:
                weights_0 = (-1.5 / dx, 2. / dx, -0.5 / dx)
                weights_n = (0.5 / dx, -2. / dx, 1.5 / dx)
            else:
                dx1, dx2 = step(dx, 0), step(dx, 1)
                weights_0 = (-(2. * dx1 + dx2) / (dx1 * (dx1 + dx2)), (dx1 + dx2) / (dx1 * dx2),
                             - dx1 / (dx2 * (dx1 + dx2)))
                dx1, dx2 = step(dx, -2), step(dx, -1)
                weights_n = ((dx2) / (dx1 * (dx1 + dx2)), - (dx2 + dx1) / (dx1 * dx2),
                             (2. * dx2 + dx1) / (dx2 * (dx1 + dx2)))
            start = combination(ax, list(zip(weights_0, (first, second, slice(2, 3)))))
            end = combination(ax, list(zip(weights_n, (slice(-3, -2), before_last, last))))
        return concatenate([start, interior, end], axis=ax)  # noqa: F405

    outputs = []
    for ax, spacing in zip(axes, spacings):
        n = f.shape[ax]
        if not isinstance(n, int):
            raise exceptions.UnsupportedError("gradient: the axis length must be known when the DAG is built")
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        dx = _gradient_spacing(spacing, n)
        if isinstance(dx, Array) and dx.ndim == 1:  # noqa: F405
            # numpy takes the uniform formulas where the differences are all equal: the data
            # decides, so both are computed and the test selects one
            first_step = step(dx, 0)
            evenly = all(equal(dx, first_step))  # noqa: F405
            outputs.append(where(evenly, along_axis(ax, first_step, True), along_axis(ax, dx, False)))  # noqa: F405
        else:
            outputs.append(along_axis(ax, dx, _np.ndim(dx) == 0))
    return outputs[0] if len(axes) == 1 else tuple(outputs)


def correlate(a, v, mode="valid"):
    """numpy's ``correlate`` of two 1-d sequences: ``c[k] = sum_n a[n + k] * conj(v[n])``, for
    every shift ``k`` of ``mode`` (``"valid"``, ``"same"`` or ``"full"``, with numpy's offsets,
    including theirs where ``v`` is the longer), in the operands' result dtype. The sums are
    the library's (integers exact, floats to rounding; numpy's are BLAS dot products). The
    shifted copies of ``a`` are gathered: meant for a short ``v`` (a stencil, a filter)."""
    return _correlate(a, v, mode, conjugate=True)


def block(arrays):
    """numpy's ``block``: an array assembled from nested lists of blocks, the innermost lists
    joined along the last axis, the next ones along the axis before, ...; blocks with fewer axes
    get leading axes of length 1, as numpy's ``atleast_nd`` gives them."""
    def depth(x, where):
        if isinstance(x, tuple):
            raise TypeError(f"{where} is a tuple. Only lists can be used to arrange blocks, and np.block does "
                            "not allow implicit conversion from tuple to ndarray.")
        if not isinstance(x, list):
            return 0
        if not x:
            raise ValueError(f"List at {where} cannot be empty")
        depths = {depth(e, f"{where}[{k}]") for k, e in enumerate(x)}
        if len(depths) != 1:
            raise ValueError(f"List depths are mismatched: the elements of {where} nest {sorted(depths)} deep")
        return 1 + depths.pop()

    levels = depth(arrays, "arrays")

    def leaves(x):
        return [leaf for e in x for leaf in leaves(e)] if isinstance(x, list) else [_as_array(x)]

    ndim = _builtins.max([levels] + [leaf.ndim for leaf in leaves(arrays)])

    def assemble(x, level):
        if not isinstance(x, list):
            x = _as_array(x)
            return reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))  # noqa: F405
        return concatenate([assemble(e, level + 1) for e in x], axis=-(levels - level))  # noqa: F405

    return assemble(arrays, 0)


def _positions_along(name, arr, obj, axis):
    """For ``delete`` and ``insert``: the array (flattened where ``axis`` is None), the axis and
    its length, which must be known, as the positions ``obj`` must be numbers (an expression's
    would make a length the data decides)."""
    arr = _as_array(arr)
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0  # noqa: F405
    axis = _np.lib.array_utils.normalize_axis_index(axis, arr.ndim)
    n = arr.shape[axis]
    if not isinstance(n, int):
        raise NotImplementedError(f"{name} needs the length of its axis when the expression is built")
    if isinstance(obj, Array):  # noqa: F405
        raise TypeError(f"{name}: give the positions as numbers; an expression's would make a length the data decides")
    return arr, axis, n


def delete(arr, obj, axis=None):
    """numpy's ``delete``: ``arr`` without the elements ``obj`` names along ``axis`` (the
    flattened array where ``None``): an int, a slice, a sequence of ints (negative ones from the
    end, repeats allowed) or a boolean mask of the axis's length, given as numbers."""
    arr, axis, n = _positions_along("delete", arr, obj, axis)
    if isinstance(obj, slice):
        gone = _np.arange(n)[obj]
    else:
        given = _np.asarray(obj)
        if given.size == 0 and not isinstance(obj, _np.ndarray):
            given = given.astype(_np.intp)
        if given.dtype == bool:
            if given.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one dimensional and match the "
                                 f"axis length of {n}")
            gone = _np.flatnonzero(given)
        elif given.dtype.kind in "iu":
            if given.ndim > 1:
                raise ValueError("index array argument obj to delete must be one dimensional or scalar")
            out = given[(given < -n) | (given >= n)]
            if out.size:
                raise IndexError(f"index {int(out.flat[0])} is out of bounds for axis {axis} with size {n}")
            gone = given % n if n else given
        else:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    keep = _np.setdiff1d(_np.arange(n), _np.ravel(gone))
    return take(arr, keep.astype(_np.intp), axis=axis)  # noqa: F405

def bincount(x, weights=None, minlength=0):
    """numpy's ``bincount``: how many times each of ``0..minlength`` occurs in the 1-d ``x`` (int64),
    or the sum of the ``weights`` (float64) at its occurrences, added in the order of ``x`` as
    numpy's loop adds them. numpy's length is ``max(x) + 1`` where that exceeds ``minlength``,
    which the data decides: here ``minlength`` must be given, and a value not below it fails the
    program when it runs (a ``ValueError``), as a negative value does in numpy. An ``x`` of length
    0 known when the DAG is built gives numpy's int64 zeros whatever the weights; one that is
    empty only at run time gives float64 zeros with weights."""
    if not isinstance(x, Array) and not isinstance(weights, Array):  # noqa: F405
        return _np.bincount(x, weights, minlength)
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    x = _as_array(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    if x.dtype.kind not in "biu":  # numpy's rule for arrays (a list of floats only warns)
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to dtype('int64') according to the rule 'safe'")
    if x.shape[0] == 0:
        # numpy's shortcut for no values: int64 zeros whatever the weights (which stay inputs)
        added = 1 if weights is None else astype(ravel(_as_array(weights))[:0], _np.int64)  # noqa: F405
        return zeros(minlength, _np.int64).at[astype(x, _np.int64)].add(added)  # noqa: F405
    if minlength == 0:
        raise NotImplementedError("bincount: give minlength above every value of x: without it numpy's length is "
                                  "max(x) + 1, which the data decides")
    from ._native import _require_non_negative

    index = astype(x, _np.int64)  # noqa: F405
    index = _require_non_negative(where(less(index, 0), -1, index), "bincount_negative")  # noqa: F405
    index = _require_non_negative(where(greater_equal(index, minlength), -1, index), "bincount_length")  # noqa: F405
    if weights is None:
        return zeros(minlength, _np.int64).at[index].add(1)  # noqa: F405
    weights = _as_array(weights)
    if weights.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    if weights.dtype.kind == "c":
        raise TypeError("float() argument must be a string or a real number, not 'complex'")
    return zeros(minlength, _np.float64).at[index].add(astype(weights, _np.float64))  # noqa: F405


def insert(arr, obj, values, axis=None):
    """numpy's ``insert``: ``values`` (cast to ``arr``'s dtype, as numpy casts them) put before the
    positions ``obj`` along ``axis`` (the flattened array's without one). ``obj`` is numbers: an
    int (``values`` then fill a block whose first axis becomes ``axis``, numpy's rule), a sequence
    (one slice per position, in the order of the positions, equal positions in their order) or a
    slice; the result gathers from ``arr`` and the broadcast values, as numpy assigns them."""
    arr, axis, n = _positions_along("insert", arr, obj, axis)
    scalar = not isinstance(obj, slice) and _np.ndim(obj) == 0
    positions = _np.arange(*obj.indices(n)) if isinstance(obj, slice) else _np.asarray(obj)
    if positions.dtype == bool:
        raise TypeError("insert: obj is a boolean array, which numpy 2 does not take as positions")
    if positions.size == 0 and not isinstance(obj, _np.ndarray):
        positions = positions.astype(_np.intp)
    if positions.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if positions.ndim > 1:
        raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    out = positions[(positions < -n) | (positions > n)]
    if out.size:
        raise IndexError(f"index {int(out.flat[0])} is out of bounds for axis {axis} with size {n}")
    values = astype(_as_array(values), arr.dtype)  # noqa: F405
    if values.ndim < arr.ndim:
        values = reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)  # noqa: F405
    if positions.size == 1:
        # One position: the whole block of values goes there (its first axis moved to `axis` for
        # an int position, as numpy does so that a[:, 0] = ... acts as a[:, 0:1] = ...).
        if scalar:
            values = moveaxis(values, 0, axis)  # noqa: F405
        new = values.shape[axis]
        shape = arr.shape[:axis] + (new,) + arr.shape[axis + 1:]
        first = int(positions.flat[0])
        where_new = _np.full(new, first + n if first < 0 else first)
    else:
        new = positions.size
        shape = arr.shape[:axis] + (new,) + arr.shape[axis + 1:]
        where_new = _np.where(positions < 0, positions + n, positions).astype(_np.intp)
    # numpy's order: the values for equal (or later) positions come after those sorted before them.
    order = _np.argsort(where_new, kind="stable")
    slots = _np.empty(new, _np.intp)
    slots[order] = where_new[order] + _np.arange(new)
    source = _np.empty(n + new, _np.intp)
    taken = _np.zeros(n + new, bool)
    taken[slots] = True
    source[slots] = n + _np.arange(new)
    source[~taken] = _np.arange(n)
    while values.ndim > len(shape) and values.shape[0] == 1:  # numpy's assignment drops leading 1s
        values = values[0]
    block = broadcast_to(values, shape)  # noqa: F405
    return take(concatenate([arr, block], axis=axis), source, axis=axis)  # noqa: F405


def _correlate(a, v, mode, conjugate):
    """``correlate``, with ``v`` conjugated (numpy's ``correlate``) or not (its ``convolve``)."""
    a, v = _as_array(a), _as_array(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    n, m = a.shape[0], v.shape[0]
    if not (isinstance(n, int) and isinstance(m, int)):
        raise exceptions.UnsupportedError("correlate: the lengths must be known when the DAG is built")
    if n == 0 or m == 0:
        raise ValueError(f"{'v' if m == 0 else 'a'} cannot be empty")
    modes = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2}
    if mode not in modes:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    mode = modes[mode]
    dtype = _np.result_type(a.dtype, v.dtype)
    a, v = astype(a, dtype), astype(v, dtype)  # noqa: F405
    if dtype.kind == "c" and conjugate:
        v = conj(v)  # noqa: F405
    # Every shift of the full correlation: k = 0 puts v's last element over a's first.
    shifts = _np.arange(n + m - 1)[:, None] + _np.arange(m)[None, :] - (m - 1)
    inside = asarray((shifts >= 0) & (shifts < n))  # noqa: F405
    # numpy multiplies only the overlapping elements: both factors are 0 outside (an inf in v
    # times a padding 0 would be NaN)
    windows = where(inside, a[_np.clip(shifts, 0, n - 1)], dtype.type(0))  # noqa: F405
    factors = where(inside, broadcast_to(v, tuple(inside.shape)), dtype.type(0))  # noqa: F405
    full = einsum("kn,kn->k", windows, factors)  # noqa: F405
    # numpy's offsets into the full correlation, for the longer operand first (it swaps them).
    long, short = _builtins.max(n, m), _builtins.min(n, m)
    length, left = {0: (long - short + 1, short - 1), 1: (long, short - 1 - short // 2), 2: (n + m - 1, 0)}[mode]
    if n < m and mode != 2:
        left = n + m - 1 - left - length  # numpy scans the swapped pair, then reverses
    return full[left:left + length]


def convolve(a, v, mode="full"):
    """numpy's ``convolve`` of two 1-d sequences: ``c[k] = sum_n a[n] * v[k - n]`` (no
    conjugate), the shorter one sliding along the longer (numpy swaps them first, so that
    ``"same"`` has the longer one's length); see ``correlate``."""
    a, v = _as_array(a), _as_array(v)
    if a.ndim == 0:
        a = reshape(a, (1,))  # noqa: F405
    if v.ndim == 0:
        v = reshape(v, (1,))  # noqa: F405
    if v.ndim == 1 and a.ndim == 1 and isinstance(v.shape[0], int) and isinstance(a.shape[0], int) \
            and v.shape[0] > a.shape[0]:
        a, v = v, a
    if a.ndim == 1 and a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.ndim == 1 and v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.ndim != 1:
        raise ValueError("object too deep for desired array")
    return _correlate(a, flip(v), mode, conjugate=False)  # noqa: F405


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """numpy's ``cov``: the covariance matrix of the variables in ``m``'s rows (its columns
    where ``rowvar`` is false), and of ``y``'s; normalized by ``N - 1`` (``N`` with ``bias``,
    ``N - ddof`` with ``ddof``), squeezed as numpy squeezes it. Weights are not supported."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = _as_array(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = _np.result_type(m.dtype, _np.float64) if y is None else \
            _np.result_type(m.dtype, _as_array(y).dtype, _np.float64)
    if y is not None:
        y = _as_array(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    x = astype(atleast_2d(m), dtype)  # noqa: F405
    if not rowvar and m.ndim != 1:
        x = matrix_transpose(x)  # noqa: F405
    if x.shape[0] == 0:
        return zeros((0, 0))  # noqa: F405
    if y is not None:
        y = astype(atleast_2d(y), dtype)  # noqa: F405
        if not rowvar and y.shape[0] != 1:
            y = matrix_transpose(y)  # noqa: F405
        x = concatenate([x, y], axis=0)  # noqa: F405
    if ddof is None:
        ddof = 0 if bias else 1
    samples = x.shape[1]
    if not isinstance(samples, int):
        raise exceptions.UnsupportedError("cov: the number of observations must be known when the DAG is built")
    fact = samples - ddof
    if fact <= 0:
        import warnings

        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    centred = subtract(x, mean(x, axis=1, keepdims=True))  # noqa: F405
    product = matmul(centred, conj(matrix_transpose(centred)))  # noqa: F405
    # numpy's in-place c *= 1 / fact: a float64 factor, the product's dtype kept
    with _np.errstate(divide="ignore"):
        c = astype(multiply(product, _np.true_divide(1, fact)), product.dtype)  # noqa: F405
    return squeeze(c)  # noqa: F405


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """numpy's ``corrcoef``: ``cov`` normalized by the standard deviations, its real part (and
    imaginary part) clipped to ``[-1, 1]`` as numpy clips it."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return divide(c, c)  # noqa: F405
    d = diagonal(c)  # noqa: F405
    stddev = sqrt(real(d))  # noqa: F405
    c = divide(divide(c, stddev[:, None]), stddev[None, :])  # noqa: F405
    if c.dtype.kind == "c":
        return add(clip(real(c), -1, 1), multiply(clip(imag(c), -1, 1), 1j))  # noqa: F405
    return clip(c, -1, 1)  # noqa: F405


_native_einsum = einsum  # noqa: F405


def _sublist_subscripts(sublist):
    """numpy's letters for an ``einsum`` sublist: 0-25 are ``A``-``Z``, 26-51 ``a``-``z``
    (so that the implicit output, in alphabetical order, is in the order of the integers),
    ``Ellipsis`` is ``...``."""
    letters = []
    for s in sublist:
        if s is Ellipsis:
            letters.append("...")
            continue
        if isinstance(s, (_builtins.bool, _np.bool_)) or not isinstance(s, (_builtins.int, _np.integer)):
            raise TypeError("each subscript must be either an integer or an ellipsis")
        if not 0 <= s < 52:
            raise ValueError("subscript is not within the valid range [0, 52)")
        letters.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
    return "".join(letters)


def einsum(*operands, optimize=False):
    """numpy's ``einsum``: ``einsum("ij,jk->ik", a, b)``, or numpy's sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (integers in [0, 52) and ``Ellipsis`` for
    subscripts, the output's sublist last and optional)."""
    if not operands:
        raise TypeError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        return _native_einsum(*operands, optimize=optimize)
    arrays, sublists = operands[0:-1:2] if len(operands) % 2 else operands[0::2], operands[1::2]
    output = operands[-1] if len(operands) % 2 else None
    for sublist in sublists if output is None else (*sublists, output):
        if isinstance(sublist, (Array, _np.ndarray)) or not _np.iterable(sublist):  # noqa: F405
            raise TypeError("each subscript must be either an integer or an ellipsis")
    spec = ",".join(_sublist_subscripts(s) for s in sublists)
    if output is not None:
        spec += "->" + _sublist_subscripts(output)
    return _native_einsum(spec, *arrays, optimize=optimize)


_native_var, _native_std = var, std  # noqa: F405


def _bool_mask(where):
    """A ``where=`` mask as an array: numpy casts it to bool under the 'safe' rule, which only
    bools pass."""
    mask = _as_array(where)
    if mask.dtype != _np.bool_:
        raise TypeError(f"cannot cast the where mask from dtype('{mask.dtype}') to dtype('bool') "
                        "according to the rule 'safe'")
    return mask


def _root(variance):
    """The square root of a variance in its dtype. numpy's ``std`` converts the root of an
    integer variance (computed with an integer ``dtype=``) back to it, truncated, where the
    variance is a scalar; an array it takes the root into, and its 'same_kind' rule refuses."""
    root = sqrt(variance)  # noqa: F405
    if variance.dtype.kind in "fc":
        return root
    if variance.ndim:
        raise exceptions.UnsupportedDTypeError(
            f"std: the {root.dtype} square root of a variance of shape {variance.shape} cannot be stored "
            f"in its dtype {variance.dtype} (numpy's 'same_kind' rule; only a 0-d variance is converted)")
    return astype(root, variance.dtype)  # noqa: F405


def _moment_where(a, axis, dtype, ddof, keepdims, mask, root, nan_aware=False, mean=None):
    """numpy's ``_var`` with ``where=``: the mean of the selected elements (their sum over
    their count, divided in float64 and stored in the sum's dtype; or ``mean``, given with
    ``keepdims`` shape), the squared deviations summed where selected, over ``max(count - ddof,
    0)``. ``nan_aware``: numpy's ``nanvar``, whose deviations are stored in ``a``'s dtype and
    which gives NaN where ``count - ddof`` is not positive."""
    a = _as_array(a)
    mask = broadcast_to(_bool_mask(mask), a.shape)  # noqa: F405
    if dtype is None and a.dtype.kind in "biu":
        dtype = _np.float64
    if mean is None:
        count = count_nonzero(mask, axis=axis, keepdims=True)  # noqa: F405
        total = sum(a, axis=axis, dtype=dtype, keepdims=True, where=mask)  # noqa: F405
        mean = astype(divide(total, count), total.dtype)  # noqa: F405
    x = subtract(a, mean)  # noqa: F405
    if nan_aware:  # numpy subtracts into its copy of a
        x = astype(x, a.dtype)  # noqa: F405
    squares = real(multiply(x, conj(x))) if x.dtype.kind == "c" else multiply(x, x)  # noqa: F405
    ret = sum(squares, axis=axis, dtype=dtype, keepdims=keepdims, where=mask)  # noqa: F405
    dof = subtract(count_nonzero(mask, axis=axis, keepdims=keepdims), ddof)  # noqa: F405
    ret = astype(divide(ret, dof if nan_aware else maximum(dof, 0)), ret.dtype)  # noqa: F405
    if nan_aware:
        ret = where(less_equal(dof, 0), ret.dtype.type(_np.nan), ret)  # noqa: F405
    return _root(ret) if root else ret


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy's ``nanvar``: ``var`` of the elements that are not NaN (and are selected by
    ``where``), NaN where ``count - ddof`` is not positive; ``mean``, where given, is the mean
    already computed (with ``keepdims`` shape)."""
    _no_out("nanvar", out)
    a = _as_array(a)
    ddof = ddof if correction is None else correction
    if a.dtype.kind not in "fc":
        return var(a, axis, dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean)
    if dtype is not None and _np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    selected = logical_not(isnan(a))  # noqa: F405
    if where is not None and where is not True:
        selected = logical_and(selected, _bool_mask(where))  # noqa: F405
    return _moment_where(a, axis, dtype, ddof, keepdims, selected, False, nan_aware=True, mean=mean)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy's ``nanstd``: the square root of ``nanvar``."""
    return _root(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy's ``var`` (the Array API's ``correction`` for ``ddof``; ``mean``, a mean already
    computed, with ``keepdims`` shape); ``where`` selects the elements, as in numpy."""
    if where is None or where is True:
        return _native_var(a, axis, dtype, out, ddof=ddof, keepdims=keepdims, correction=correction, mean=mean)
    _no_out("var", out)
    return _moment_where(a, axis, dtype, ddof if correction is None else correction, keepdims, where, False, mean=mean)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """numpy's ``std``: the square root of ``var`` (``where`` as there)."""
    if where is None or where is True:
        return _native_std(a, axis, dtype, out, ddof=ddof, keepdims=keepdims, correction=correction, mean=mean)
    _no_out("std", out)
    return _moment_where(a, axis, dtype, ddof if correction is None else correction, keepdims, where, True, mean=mean)

# }}}


def set_traceback_tag_enabled(enabled=True):
    """Tag every node built from Python from now on with where it was built
    (:class:`pytato_rs.tags.CreatedAt`, holding the Python traceback; listed in
    ``non_equality_tags``, not in ``tags``, and left out of equality), or stop doing so. Off by
    default: it costs a traceback per node."""
    from ._native import _set_traceback_tags

    _set_traceback_tags(bool(enabled))


def generate_numpy(expr, backend=None):
    """:func:`generate` under the name of pytato's numpy target: a program called with its
    inputs as keyword arguments that returns numpy arrays."""
    return generate(expr, backend)


__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
