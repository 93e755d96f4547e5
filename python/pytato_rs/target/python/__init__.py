"""pytato's ``pytato.target.python``: DAGs as Python code that calls a numpy-like module.

:func:`pytato_rs.generate_jax` writes one Python function that computes a DAG with
``jax.numpy`` (see :mod:`pytato_rs.target.python.numpy_like` for how each node is written). The
result is a :class:`BoundJAXPythonProgram`: called with the placeholders' values as keyword
arguments, it runs the function with the data wrappers' values bound at generation time.
``program`` holds the source, ``expected_arguments`` the names the function takes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from .. import BoundProgram, Target


class PythonTarget(Target, ABC):
    """A target whose programs are Python source."""

    @abstractmethod
    def bind_program(self, program, entrypoint, expected_arguments, bound_arguments):
        """The :class:`BoundPythonProgram` of ``program`` (source) whose function
        ``entrypoint`` takes ``expected_arguments``, with ``bound_arguments`` bound."""


@dataclass(repr=False, eq=False)
class BoundPythonProgram(BoundProgram):
    """A Python program with bound arguments; calling it runs its entrypoint.

    Keyword arguments only. A name that was bound cannot be passed again; names the function
    does not take are ignored (as pytato does), and a missing one is Python's ``TypeError``.
    """

    expected_arguments: frozenset
    entrypoint: str

    @cached_property
    def _compiled_function(self):
        namespace = {"_MODULE_SOURCE_CODE": self.program}
        exec(compile(self.program, f"<generated {self.entrypoint}>", "exec"), namespace)  # noqa: S102
        return namespace[self.entrypoint]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise ValueError(f"{type(self).__name__} takes keyword arguments only, got {len(args)} positional")
        rebound = set(kwargs) & set(self.bound_arguments)
        if rebound:
            raise ValueError(f"arguments bound when the program was generated cannot be passed: {sorted(rebound)}")
        arguments = {name: value for name, value in kwargs.items() if name in self.expected_arguments}
        arguments.update(self._bound)
        return self._compiled_function(**arguments)

    @cached_property
    def _bound(self):
        return dict(self.bound_arguments)

    def copy(self, **kwargs: Any) -> BoundPythonProgram:
        """This program with the fields in ``kwargs`` replaced."""
        return replace(self, **kwargs)

    def with_transformed_program(self, *args: Any, **kwargs: Any) -> BoundPythonProgram:
        """Not possible: Python source is not transformed (a ``ValueError``, as in pytato)."""
        raise ValueError("a generated Python program cannot be transformed")


class NumpyLikePythonTarget(PythonTarget, ABC):
    """A Python target that computes with a module of numpy's interface."""

    @property
    @abstractmethod
    def numpy_like_module_name(self) -> str:
        """The module imported (``"jax.numpy"``)."""

    @property
    @abstractmethod
    def numpy_like_module_name_shorthand(self) -> str:
        """The name the generated code imports it as, unless an input takes that name."""


class BoundJAXPythonProgram(BoundPythonProgram):
    """A program of :class:`JAXPythonTarget`: it returns JAX arrays."""

    @cached_property
    def _bound(self):
        return {name: _to_jax(name, value) for name, value in self.bound_arguments.items()}


def _to_jax(name, value):
    """A bound value on JAX's default device: numpy arrays and scalars are put there once."""
    import jax

    if isinstance(value, jax.Array) or np.isscalar(value):
        return value
    if isinstance(value, np.ndarray):
        return jax.device_put(value)
    raise TypeError(
        f"the data bound to {name!r} must be a numpy array, a JAX array or a scalar, not {type(value).__name__}"
    )


class JAXPythonTarget(NumpyLikePythonTarget):
    """Generates Python code that computes with :mod:`jax.numpy`."""

    @property
    def numpy_like_module_name(self) -> str:
        return "jax.numpy"

    @property
    def numpy_like_module_name_shorthand(self) -> str:
        return "_pt_jnp"

    def bind_program(self, program, entrypoint, expected_arguments, bound_arguments):
        return BoundJAXPythonProgram(
            program=program,
            bound_arguments=bound_arguments,
            target=self,
            expected_arguments=frozenset(expected_arguments),
            entrypoint=entrypoint,
        )


__all__ = [
    "BoundJAXPythonProgram",
    "BoundPythonProgram",
    "JAXPythonTarget",
    "NumpyLikePythonTarget",
    "PythonTarget",
]
