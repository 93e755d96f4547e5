"""Makes ``import pytato`` (and every ``pytato.<sub>``) import ``pytato_rs`` (``pytato_rs.<sub>``).

Python imports this module at start-up when its folder is on ``PYTHONPATH``. The alias is a
meta-path finder, so ``pytato.transform`` *is* ``pytato_rs.transform`` (one module object, so
``isinstance`` between classes reached by either name works). A name pytato has and
``pytato_rs`` lacks fails to import, as it should: that is what the upstream suite measures.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


class _PytatoAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "pytato" and not fullname.startswith("pytato."):
            return None
        real = "pytato_rs" + fullname[len("pytato"):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module("pytato_rs" + spec.name[len("pytato"):])
        if spec.name == "pytato":
            import _pytato_loopy_plumbing

            _pytato_loopy_plumbing.install(module)
        return module

    def exec_module(self, module):
        # The module is pytato_rs's, already executed.
        pass


sys.meta_path.insert(0, _PytatoAlias())
