"""pytato's import path ``pytato.function``: function definitions traced once and called many
times (:func:`~pytato_rs.trace_call`), their calls and the calls' results."""

from __future__ import annotations

import enum

from ._native import Call, FunctionDefinition, trace_call
from .array import NamedCallResult


@enum.unique
class ReturnType(enum.Enum):
    """What a traced function returned, as pytato records it: one array, a dict of arrays or a
    tuple of them. :func:`~pytato_rs.trace_call` gives its results back in the same shape."""

    ARRAY = 0
    DICT_OF_ARRAYS = 1
    TUPLE_OF_ARRAYS = 2


__all__ = ["Call", "FunctionDefinition", "NamedCallResult", "ReturnType", "trace_call"]
