"""pytato's ``generate_jax``: a DAG as a Python function of :mod:`jax.numpy` calls."""

from __future__ import annotations

from . import JAXPythonTarget
from .numpy_like import generate_numpy_like


def generate_jax(expr, *, target=None, jit=False, function_name="_pt_kernel", show_code=False,
                 colorize_show_code=None):
    """A :class:`~pytato_rs.target.python.BoundJAXPythonProgram` computing ``expr`` (an array,
    a :class:`~pytato_rs.DictOfNamedArrays` or a mapping of names to arrays) with
    :mod:`jax.numpy`. Called with the placeholders' values as keyword arguments, it returns a
    JAX array for an array and a dict of them by name otherwise.

    ``jit``: decorate the function with :func:`jax.jit`. ``function_name``: the function's name
    in the source (``program``). ``show_code``: print the source. float64 and int64 need
    ``jax.config.update("jax_enable_x64", True)``, as everywhere in JAX. How each node is written,
    and what JAX computes its own way, is in :mod:`pytato_rs.target.python.numpy_like`.
    """
    if target is None:
        target = JAXPythonTarget()
    preambles, decorators = (), ()
    if jit:
        preambles, decorators = ("from jax import jit as _pt_jax_jit",), ("_pt_jax_jit",)
    return generate_numpy_like(
        expr,
        target=target,
        function_name=function_name,
        show_code=show_code,
        entrypoint_decorators=decorators,
        extra_preambles=preambles,
        colorize_show_code=colorize_show_code,
    )


__all__ = ["generate_jax"]
