"""Stand-ins for the pyopencl names upstream pytato's tests touch: contexts and queues are
tokens (``pytato_rs`` chooses its backend itself), device arrays are ``pytato_rs.EvaluatedArray``."""

from __future__ import annotations


class Context:
    """A token: pytato_rs runs on its default backend (``PYTATO_BACKEND`` chooses another)."""


class CommandQueue:
    def __init__(self, context=None, device=None, properties=None):
        self.context = context

    def finish(self):
        pass


def create_some_context(interactive=None, answers=None):
    return Context()


CtxFactory = type(create_some_context)
