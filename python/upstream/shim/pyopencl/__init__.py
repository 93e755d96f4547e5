"""Stand-ins for the pyopencl names upstream pytato's tests touch: contexts and queues are
tokens (``pytato_rs`` chooses its backend itself), device arrays are ``pytato_rs.EvaluatedArray``."""

from __future__ import annotations


class Device:
    """A token for the device a queue runs on."""

    name = "pytato_rs"


class Context:
    """A token: pytato_rs runs on its default backend (``PYTATO_BACKEND`` chooses another)."""

    devices = (Device(),)


class CommandQueue:
    def __init__(self, context=None, device=None, properties=None):
        self.context = context
        self.device = device or Device()

    def finish(self):
        pass


def create_some_context(interactive=None, answers=None):
    return Context()


CtxFactory = type(create_some_context)


class Event:
    """A finished event: pytato_rs programs have returned when their call returns."""

    def wait(self):
        pass
