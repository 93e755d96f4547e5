"""Exceptions: one class per kind of library error.

Every error the library reports is a :class:`PytatoError` whose ``kind`` names the library's
error variant (``"ShapeMismatch"``, ``"MissingInput"``, ...) and whose message is the
library's own, naming the operation and the shapes and dtypes involved. Each class also
derives from the builtin exception a Python user would catch: a shape that does not fit is a
``ValueError``, an unsupported dtype a ``TypeError``, an axis or index out of range an
``IndexError`` (an axis out of range also a ``ValueError``, as numpy's ``AxisError``).
"""

from __future__ import annotations

from . import _native


class PytatoError(Exception):
    """Base class of the library's errors."""

    kind: str = ""


# (kind, builtin base, what it means)
_KINDS = [
    ("BroadcastMismatch", ValueError, "shapes that do not broadcast"),
    ("ShapeMismatch", ValueError, "shapes that do not fit an operation"),
    ("NegativeLength", ValueError, "a negative length"),
    ("NonAffine", ValueError, "a length that is not affine in the size parameters"),
    ("Overflow", OverflowError, "a size or value that overflows"),
    # numpy's AxisError is both.
    ("AxisOutOfRange", (ValueError, IndexError), "an axis outside -ndim..ndim"),
    ("IndexOutOfRange", IndexError, "an index outside its axis"),
    ("UnsupportedDType", TypeError, "a dtype the operation does not take"),
    ("DTypeMismatch", TypeError, "dtypes that do not fit together"),
    ("ScalarOutOfRange", OverflowError, "a scalar outside its dtype (numpy: OverflowError)"),
    ("InvalidName", ValueError, "a name that is not an identifier"),
    ("ReservedName", ValueError, "a name the library reserves"),
    ("DuplicateName", ValueError, "two different inputs with one name"),
    ("UnknownVariable", ValueError, "an expression reading an unknown variable"),
    ("MissingReductionDescriptor", ValueError, "a reduction without its descriptor"),
    ("ExprType", TypeError, "an ill-typed scalar expression"),
    ("UniqueTagConflict", ValueError, "two tags of one unique family on a node"),
    ("MissingInput", TypeError, "an input the program needs and was not given"),
    # Python's error for an unexpected keyword, and pytato's.
    ("UnknownInput", (TypeError, ValueError), "an argument the program does not take"),
    ("InputDType", TypeError, "an input of the wrong dtype"),
    ("InputShape", ValueError, "an input of the wrong shape"),
    ("OutputArray", ValueError, "an output array of the wrong dtype or shape"),
    ("OutputNames", ValueError, "output arrays that do not match the outputs"),
    ("SizeBinding", ValueError, "size parameters the inputs bind inconsistently"),
    ("InvalidForSizes", ValueError, "an operation invalid for the bound sizes"),
    ("IndexOutOfBounds", IndexError, "an index array value out of bounds at run time"),
    ("Unsupported", NotImplementedError, "something a backend does not do"),
    ("UnknownBackend", ValueError, "a backend that is not linked"),
    ("Internal", RuntimeError, "a bug in the library: please report it"),
    ("InvalidArgument", ValueError, "an argument out of its domain"),
    ("DatashapeSyntax", ValueError, "datashape that does not parse"),
    ("DatashapeUnsupported", ValueError, "datashape with no array meaning"),
    ("DistributedMismatch", ValueError, "ranks that disagree"),
    ("Communication", RuntimeError, "a failed send or receive"),
    ("OutOfMemory", MemoryError, "memory for an array that could not be had"),
    # Raised by the Python bindings themselves:
    ("ArgumentType", TypeError, "a Python argument of the wrong type"),
    ("MissingKey", KeyError, "a name a mapping does not hold"),
]

__all__ = ["PytatoError"]

for _kind, _base, _doc in _KINDS:
    _class = type(
        f"{_kind}Error",
        (PytatoError, *(_base if isinstance(_base, tuple) else (_base,))),
        {"kind": _kind, "__doc__": f"The library's ``{_kind}`` error: {_doc}.", "__module__": __name__},
    )
    globals()[_class.__name__] = _class
    __all__.append(_class.__name__)


class InvalidIndexError(InvalidArgumentError, IndexError):  # noqa: F821 (defined above)
    """An invalid index (too many indices, a zero step): numpy's ``IndexError``, and a
    ``ValueError`` as the library's ``InvalidArgument``."""


class IndexDTypeError(UnsupportedDTypeError, IndexError):  # noqa: F821 (defined above)
    """An index of a dtype that does not index (floats): numpy's ``IndexError``, and a
    ``TypeError`` as the library's ``UnsupportedDType``."""


class IndexShapeError(ShapeMismatchError, IndexError):  # noqa: F821 (defined above)
    """A boolean mask whose shape is not that of the axes it indexes: numpy's ``IndexError``, and
    a ``ValueError`` as the library's ``ShapeMismatch``."""


class IndexBroadcastError(BroadcastMismatchError, IndexError):  # noqa: F821 (defined above)
    """Index arrays whose shapes do not broadcast together: numpy's ``IndexError``, and a
    ``ValueError`` as the library's ``BroadcastMismatch``."""


__all__ += ["IndexBroadcastError", "IndexDTypeError", "IndexShapeError", "InvalidIndexError"]


# The kinds of DistributedMismatch, under pytato's names (pytato.distributed.verify).
class MissingSendError(DistributedMismatchError):  # noqa: F821 (defined above)
    """A receive that no rank sends to."""


class MissingRecvError(DistributedMismatchError):  # noqa: F821
    """A send that no rank receives."""


class DuplicateSendError(DistributedMismatchError):  # noqa: F821
    """Two sends from one rank to another with one tag."""


class DuplicateRecvError(DistributedMismatchError):  # noqa: F821
    """Two receives on one rank from another with one tag."""


try:  # pytato's partitioner raises pytools' CycleError for a cycle: catch either.
    from pytools.graph import CycleError as _CycleError
except ImportError:  # pytools is optional
    class _CycleError(Exception):
        pass


class PartitionInducedCycleError(DistributedMismatchError, AssertionError, _CycleError):  # noqa: F821
    """Parts that wait for each other across ranks (a deadlock); an ``AssertionError`` as
    pytato's ``PartitionInducedCycleError``, and ``pytools.graph.CycleError`` where pytools is
    installed, as pytato's partitioner raises."""


_MISMATCHES = {
    "MissingSend": MissingSendError,
    "MissingRecv": MissingRecvError,
    "DuplicateSend": DuplicateSendError,
    "DuplicateRecv": DuplicateRecvError,
    "Cycle": PartitionInducedCycleError,
}
__all__ += [c.__name__ for c in _MISMATCHES.values()]

_native._register_exceptions(
    {
        **{kind: globals()[f"{kind}Error"] for kind, _, _ in _KINDS},
        "InvalidIndex": InvalidIndexError,
        "IndexDType": IndexDTypeError,
        "IndexShape": IndexShapeError,
        "IndexBroadcast": IndexBroadcastError,
        **{f"DistributedMismatch:{name}": c for name, c in _MISMATCHES.items()},
    }
)
