"""pytato's ``pytato.target.loopy`` target classes, for code that names them (arraycontext's
pytato array contexts import and subclass :class:`LoopyPyOpenCLTarget` whichever context is
used).

The library generates no loopy kernels: its backends compile DAGs themselves
(:func:`pytato_rs.generate`) and :func:`pytato_rs.generate_jax` writes JAX code. These classes
can be named, subclassed and instantiated; no program is generated for them."""

from __future__ import annotations

from . import Target


class LoopyTarget(Target):
    """pytato's target of loopy kernels."""


class LoopyPyOpenCLTarget(LoopyTarget):
    """pytato's target of loopy kernels run with pyopencl on ``device``."""

    def __init__(self, device=None):
        self.device = device


__all__ = ["LoopyPyOpenCLTarget", "LoopyTarget"]
