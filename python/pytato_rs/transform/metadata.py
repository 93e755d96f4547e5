"""pytato's import path ``pytato.transform.metadata``: :func:`unify_axes_tags` and the tag
that keeps an axis out of it."""

from __future__ import annotations

import re

from .._native import unify_axes_tags
from ..tags import AxisIgnoredForPropagationTag

#: The names the library gives an index lambda's bindings (``_in0``, ``_in1``, ...), in their
#: canonical spelling (the library also refuses zero-padded ones such as ``_in01`` as names of
#: inputs).
BINDING_NAME_RESERVED_PATTERN = re.compile(r"^_in(0|[1-9][0-9]*)$")

__all__ = ["BINDING_NAME_RESERVED_PATTERN", "AxisIgnoredForPropagationTag", "unify_axes_tags"]
