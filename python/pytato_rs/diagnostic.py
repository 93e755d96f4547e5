"""pytato's exception classes (``pytato.diagnostic``), as the library raises them.

Each name is the library's exception class for the same situation (see
:mod:`pytato_rs.exceptions`), so that ``except pytato.diagnostic.NameClashError`` catches what
pytato code expects; :class:`NotAReductionAxis` is this module's own.
"""

from __future__ import annotations

from .exceptions import (
    BroadcastMismatchError,
    DuplicateNameError,
    InvalidArgumentError,
    PytatoError,
    UnknownVariableError,
)

#: Two different inputs (placeholders, size parameters, data) with one name in a program.
NameClashError = DuplicateNameError
#: Shapes that do not broadcast.
CannotBroadcastError = BroadcastMismatchError
#: An index lambda's expression that reads what it does not bind.
UnknownIndexLambdaExpr = UnknownVariableError
#: An einsum subscript that does not parse or fit its operands.
InvalidEinsumIndex = InvalidArgumentError


class NotAReductionAxis(PytatoError, ValueError):
    """``with_tagged_reduction`` of an axis that is not one of the node's reductions."""

    kind = "NotAReductionAxis"


__all__ = [
    "CannotBroadcastError",
    "InvalidEinsumIndex",
    "NameClashError",
    "NotAReductionAxis",
    "UnknownIndexLambdaExpr",
]
