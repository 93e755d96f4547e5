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
import math as _math

import numpy as _np

from . import analysis, array, diagnostic, distributed, equality, exceptions, loopy, raising, reductions, scalar_expr, sparse, tags, transform, utils, visualization
from .visualization import show_dot_graph, show_fancy_placeholder_data_flow
from .sparse import CSRMatrix, make_csr_matrix
from ._native import *  # noqa: F403
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
    default) every value with a NaN counts as one value. ``sorted=False`` gives them sorted too,
    which numpy allows. Unique slices along an axis are not supported."""
    if axis is not None:
        raise NotImplementedError("unique along an axis (unique slices) is not supported: pass axis=None")
    from ._native import _unique

    values, index, inverse, counts = _unique(ar, bool(equal_nan))
    extra = [part for part, asked in ((index, return_index), (inverse, return_inverse), (counts, return_counts))
             if asked]
    return (values, *extra) if extra else values


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy's ``linspace`` of scalar bounds, computed as numpy computes it (see the Rust
    ``linspace``): in float64, or complex128 where a bound is complex; the result in ``dtype``
    (integer dtypes after rounding down); numpy scalars of a narrower float dtype (``float32``
    bounds) are computed in it, as in numpy (``float16`` ones in float32, rounded once).
    ``retstep`` returns ``(samples, step)``."""
    from ._native import _linspace

    if axis not in (0, -1):
        raise exceptions.AxisOutOfRangeError(f"linspace: axis {axis} is out of range for a 1-dimensional result")
    numbers = (int, float, complex, _np.number, _np.bool_)
    # numpy computes in its result type of the bounds: float32 scalars stay float32.
    compute = _np.result_type(start, stop, 1.0) if isinstance(start, numbers) and isinstance(stop, numbers) else None
    samples = _linspace(start, stop, num, endpoint, compute, dtype)
    if not retstep:
        return samples
    div = num - 1 if endpoint else num
    delta = _np.subtract(stop, start, dtype=_np.result_type(start, stop, 1.0))  # a scalar, as numpy's
    return samples, (delta / div if div > 0 else _np.nan)


# {{{ numpy functions composed of the library's

def _ufunc_dtype(ufunc, *operands):
    """The dtype numpy's ``ufunc`` gives for these operands (expressions by their dtype, numbers
    as they are): numpy's own loop selection, asked on empty arrays."""
    probes = [_np.zeros(0, o.dtype) if isinstance(o, Array) else o for o in operands]  # noqa: F405
    return ufunc(*probes).dtype


def _times_constant(ufunc, x, numerator, denominator):
    """``x * (numerator / denominator)`` as numpy's loops of ``deg2rad``/``rad2deg`` compute it:
    the constant divided in the loop's precision (float32 for float32 and float16, whose loop
    computes in float32 and rounds once), the product rounded to numpy's result dtype."""
    dtype = _ufunc_dtype(ufunc, x)
    compute = _np.dtype(_np.float32) if dtype == _np.float16 else dtype
    constant = compute.type(numerator) / compute.type(denominator)
    return astype(multiply(astype(x, compute), constant), dtype)  # noqa: F405


def deg2rad(x):
    """numpy's ``deg2rad``: ``x * (pi / 180)``, as its loop computes it."""
    return _times_constant(_np.deg2rad, x, _math.pi, 180.0)


def rad2deg(x):
    """numpy's ``rad2deg``: ``x * (180 / pi)``, as its loop computes it."""
    return _times_constant(_np.rad2deg, x, 180.0, _math.pi)


radians, degrees = deg2rad, rad2deg


def fabs(x):
    """numpy's ``fabs``: the absolute value in numpy's float result dtype (complex refused)."""
    return abs(astype(x, _ufunc_dtype(_np.fabs, x)))  # noqa: F405


def heaviside(x1, x2):
    """numpy's ``heaviside``: 0 below zero, ``x2`` at zero, 1 above, NaN where ``x1`` is NaN."""
    dtype = _ufunc_dtype(_np.heaviside, x1, x2)
    x1 = astype(x1, dtype) if isinstance(x1, Array) else dtype.type(x1)  # noqa: F405
    zero, one = dtype.type(0), dtype.type(1)
    return where(less(x1, 0), zero, where(equal(x1, 0), x2, where(greater(x1, 0), one, x1)))  # noqa: F405


def float_power(x1, x2):
    """numpy's ``float_power``: ``power`` in float64 (complex128 for complex operands)."""
    dtype = _ufunc_dtype(_np.float_power, x1, x2)
    cast = lambda v: astype(v, dtype) if isinstance(v, Array) else dtype.type(v)  # noqa: E731, F405
    return power(cast(x1), cast(x2))  # noqa: F405


def divmod(x1, x2):  # noqa: A001
    """numpy's ``divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``, the same loops."""
    return floor_divide(x1, x2), remainder(x1, x2)  # noqa: F405


def outer(a, b):
    """numpy's ``outer``: ``a.ravel()[:, None] * b.ravel()[None, :]``."""
    return multiply(ravel(a)[:, None], ravel(b)[None, :])  # noqa: F405


def ptp(a, axis=None, keepdims=False):
    """numpy's ``ptp``: ``max - min`` along ``axis``."""
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))  # noqa: F405


def nansum(a, axis=None, dtype=None, keepdims=False):
    """numpy's ``nansum``: the sum with NaNs counted as zero."""
    if a.dtype.kind in "fc":
        a = where(isnan(a), a.dtype.type(0), a)  # noqa: F405
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims)  # noqa: F405


def nanprod(a, axis=None, dtype=None, keepdims=False):
    """numpy's ``nanprod``: the product with NaNs counted as one."""
    if a.dtype.kind in "fc":
        a = where(isnan(a), a.dtype.type(1), a)  # noqa: F405
    return prod(a, axis=axis, dtype=dtype, keepdims=keepdims)  # noqa: F405


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
    """numpy's ``average``: ``mean`` without weights; with weights of ``a``'s shape,
    ``sum(a * w) / sum(w)`` in numpy's result dtype. ``returned`` adds the sum of the weights."""
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)  # noqa: F405
        scale = None
        if returned:
            count = _math.prod(a.shape) if axis is None else _math.prod(
                a.shape[k] for k in (axis if isinstance(axis, tuple) else (axis,)))
            scale = full_like(avg, count, dtype=avg.dtype)  # noqa: F405
    else:
        if not isinstance(weights, Array):  # noqa: F405
            weights = asarray(_np.asarray(weights))  # noqa: F405
        if tuple(weights.shape) != tuple(a.shape):
            raise ValueError("average: weights must have the shape of a here "
                             f"(got {tuple(weights.shape)} for {tuple(a.shape)})")
        dtype = _np.result_type(a.dtype, weights.dtype, "f8" if a.dtype.kind in "biu" else a.dtype)
        scale = sum(weights, axis=axis, dtype=dtype, keepdims=keepdims)  # noqa: F405
        avg = divide(sum(multiply(astype(a, dtype), astype(weights, dtype)), axis=axis,  # noqa: F405
                         keepdims=keepdims), scale)
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
