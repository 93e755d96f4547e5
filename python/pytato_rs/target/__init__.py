"""pytato's ``pytato.target``: what code generation for a target returns.

A :class:`Target` names where generated code runs; a :class:`BoundProgram` is the generated
program with the arguments that were bound when it was generated (the data of data wrappers).
The library's own backends are reached through :func:`pytato_rs.generate`; the targets here
generate Python code for other array libraries (:mod:`pytato_rs.target.python`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Target:
    """Where generated code runs."""


@dataclass(init=True, repr=False, eq=False)
class BoundProgram:
    """A generated ``program`` for ``target``, with ``bound_arguments`` (name to value) that
    every call passes. Subclasses run the program when called."""

    program: Any
    bound_arguments: Any
    target: Target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not run its program")


__all__ = ["BoundProgram", "Target"]
