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
