"""A pytest plugin that registers :class:`~pytato_rs.arraycontext.PytatoRsArrayContext` with
arraycontext's test-factory registry under the name ``"pytato_rs"``, so that test suites
written for arraycontext (arraycontext's, meshmode's, grudge's) run on it::

    ARRAYCONTEXT_TEST=pytato_rs python -m pytest -p pytato_rs.arraycontext.pytest ...

``PYTATO_BACKEND`` picks the backend, as everywhere else.
"""

from __future__ import annotations

from arraycontext.pytest import (
    _ARRAY_CONTEXT_FACTORY_REGISTRY,
    PytestArrayContextFactory,
    register_pytest_array_context_factory,
)


class PytestPytatoRsArrayContextFactory(PytestArrayContextFactory):
    """Makes a :class:`~pytato_rs.arraycontext.PytatoRsArrayContext` for each test."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    @classmethod
    def is_available(cls) -> bool:
        return True

    def __call__(self):
        from pytato_rs.arraycontext import PytatoRsArrayContext
        return PytatoRsArrayContext()

    def __str__(self) -> str:
        return "<PytatoRsArrayContext>"


if "pytato_rs" not in _ARRAY_CONTEXT_FACTORY_REGISTRY:
    register_pytest_array_context_factory("pytato_rs", PytestPytatoRsArrayContextFactory)
