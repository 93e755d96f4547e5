"""``actx.compile``: a Python function traced once per kind of argument, then run as one
compiled program.

A call describes its arguments: each array leaf by shape, dtype, tags and axes, each number
by dtype, the containers by type and keys. The first call with a new description traces the
function on placeholders that stand for the leaves and compiles the result; later calls with
the same description run that program on the new data. Number arguments are 0-d inputs of
their numpy dtype (a Python float is a float64 array), as arraycontext's lazy contexts treat
them, so a time loop that passes ``t`` compiles once.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np
from arraycontext.container.traversal import (
    rec_keyed_map_array_container,
    with_array_context,
)
from arraycontext.typing import is_scalar_like

import pytato_rs as pt


@dataclass(frozen=True)
class _Leaf:
    """An array leaf of an argument: its place in the container, and what it looks like."""
    key: tuple
    shape: tuple
    dtype: np.dtype
    tags: frozenset
    axes: Any


@dataclass
class _Compiled:
    """A traced function: its program, and how to put the results back into containers."""
    program: Any
    # The function's result, with lazy arrays at the leaves.
    template: Any
    # Each result leaf's key path to the program's output name.
    output_names: dict
    # The names the program takes.
    input_names: frozenset = frozenset()


def _input_name(argument, leaf=None):
    """The program input for argument number ``argument`` (a number), or for its array leaf
    number ``leaf``."""
    return f"_actx_in_{argument}" if leaf is None else f"_actx_in_{argument}_{leaf}"


def _leaves(value) -> list:
    """The array leaves of a container (or of a lone array), as (key path, leaf)."""
    found = []

    def record(key, leaf):
        found.append((key, leaf))
        return leaf

    rec_keyed_map_array_container(record, value)
    return found


class CompiledFunction:
    """What :meth:`PytatoRsArrayContext.compile` returns: call it as the function itself."""

    def __init__(self, actx, f):
        self.actx = actx
        self.f = f
        self._compiled: dict = {}
        try:
            self._signature = inspect.signature(f)
        except (TypeError, ValueError):
            self._signature = None

    def _arguments(self, args, kwargs) -> list:
        """The call's arguments as (name, value), in the function's parameter order."""
        if self._signature is not None:
            bound = self._signature.bind(*args, **kwargs)
            return list(bound.arguments.items())
        return [(i, a) for i, a in enumerate(args)] + sorted(kwargs.items())

    def _describe(self, value):
        """How an argument looks (the cache key), and its array leaves."""
        if is_scalar_like(value):
            return ("number", np.asarray(value).dtype), None
        leaves = []
        for key, leaf in _leaves(value):
            if is_scalar_like(leaf):
                raise TypeError(
                    f"{type(self.actx).__name__}.compile: a number inside an array container "
                    f"(at {key}) is not supported as an argument")
            if not isinstance(leaf, self.actx.array_types):
                raise TypeError(
                    f"{type(self.actx).__name__}.compile: an argument leaf of type "
                    f"{type(leaf).__name__} (at {key}); expected one of {self.actx.array_types}")
            leaves.append(_Leaf(key, tuple(leaf.shape), leaf.dtype, leaf.tags, leaf.axes))
        return ("arrays", type(value), tuple(leaves)), leaves

    def __call__(self, *args, **kwargs):
        arguments = self._arguments(args, kwargs)
        described = [(name, *self._describe(value)) for name, value in arguments]
        cache_key = tuple((name, key) for name, key, _ in described)
        compiled = self._compiled.get(cache_key)
        if compiled is None:
            compiled = self._trace(arguments, described)
            self._compiled[cache_key] = compiled

        inputs = {}
        for index, ((_, value), (_, _, leaves)) in enumerate(zip(arguments, described, strict=True)):
            if leaves is None:
                inputs[_input_name(index)] = np.asarray(value)
                continue
            frozen = dict(_leaves(self.actx.freeze(value)))
            for k, leaf in enumerate(leaves):
                inputs[_input_name(index, k)] = frozen[leaf.key]
        if compiled.output_names:
            # Arguments the function ignores are not inputs of its program.
            taken = compiled.input_names
            results = compiled.program.evaluate(
                **{name: value for name, value in inputs.items() if name in taken})
        else:
            results = {}

        def thawed_result(key, leaf):
            if is_scalar_like(leaf):
                return leaf
            return self.actx.thaw(results[compiled.output_names[key]].with_metadata(
                leaf.tags, leaf.axes))

        return with_array_context(
            rec_keyed_map_array_container(thawed_result, compiled.template), actx=self.actx)

    def _trace(self, arguments, described) -> _Compiled:
        """Calls the function on placeholders and compiles what it returns."""
        stand_ins = {}
        for index, ((name, value), (_, _, leaves)) in enumerate(
                zip(arguments, described, strict=True)):
            if leaves is None:
                stand_ins[name] = pt.make_placeholder(
                    _input_name(index), (), np.asarray(value).dtype)
                continue
            by_key = {
                leaf.key: pt.make_placeholder(
                    _input_name(index, k), leaf.shape, leaf.dtype,
                    tags=leaf.tags, axes=leaf.axes)
                for k, leaf in enumerate(leaves)}
            stand_ins[name] = with_array_context(
                rec_keyed_map_array_container(lambda key, _: by_key[key], value),
                actx=self.actx)

        if self._signature is not None:
            bound = self._signature.bind_partial()
            bound.arguments.update(stand_ins)
            template = self.f(*bound.args, **bound.kwargs)
        else:
            positional = [v for n, v in stand_ins.items() if isinstance(n, int)]
            keywords = {n: v for n, v in stand_ins.items() if not isinstance(n, int)}
            template = self.f(*positional, **keywords)

        output_names = {}
        outputs = {}
        for key, leaf in _leaves(template):
            if is_scalar_like(leaf):
                continue
            if not isinstance(leaf, pt.Array):
                raise TypeError(
                    f"{type(self.actx).__name__}.compile: the function returned a "
                    f"{type(leaf).__name__} (at {key}); expected lazy arrays or numbers")
            output_names[key] = f"_actx_out_{len(outputs)}"
            outputs[output_names[key]] = leaf
        if not outputs:
            return _Compiled(program=None, template=template, output_names={})
        dag = pt.make_dict_of_named_arrays(outputs)
        program = self.actx._generate(dag, what=self.f)
        return _Compiled(program=program, template=template, output_names=output_names,
                         input_names=frozenset(program.input_names))


__all__ = ["CompiledFunction"]
