"""pytato_rs as an :mod:`arraycontext` array context, for meshmode, grudge and their users.

:class:`PytatoRsArrayContext` is a lazy array context: ``actx.np`` and array arithmetic build
a DAG of :mod:`pytato_rs` arrays; :meth:`~PytatoRsArrayContext.freeze` compiles the DAG for a
backend (the default one, or ``backend=``) and runs it. Frozen arrays are
:class:`~pytato_rs.EvaluatedArray`\\ s: buffers the library holds, which carry the tags and
axes of the expressions they were computed from and go back into a DAG
(:meth:`~PytatoRsArrayContext.thaw`) without a copy. Backends cache compiled programs by the
DAG with its data taken out, so freezing the same computation over new data compiles once.

To run arraycontext's or meshmode's test suites on it, load the pytest plugin and name it::

    ARRAYCONTEXT_TEST=pytato_rs python -m pytest -p pytato_rs.arraycontext.pytest test_arraycontext.py

This module needs :mod:`arraycontext` (and, through it, :mod:`loopy`) installed.
"""

from __future__ import annotations

from arraycontext.container.traversal import (
    rec_keyed_map_array_container,
    rec_map_container,
    with_array_context,
)
from arraycontext.context import ArrayContext, CSRMatrix
from arraycontext.metadata import NameHint
from arraycontext.typing import is_scalar_like
import numpy as np
from pytools.tag import normalize_tags

import pytato_rs as pt
from pytato_rs._native import EvaluatedArray


def _tags_for_pytato(tags) -> frozenset:
    """arraycontext's tags as pytato_rs takes them: a ``NameHint`` becomes the prefix of the
    array's name in generated code (``PrefixNamed``)."""
    tags = normalize_tags(tags)
    hints = [t for t in tags if isinstance(t, NameHint)]
    if not hints:
        return tags
    from pytato_rs.tags import PrefixNamed
    return (tags - set(hints)) | {PrefixNamed(hints[0].name)}


class PytatoRsArrayContext(ArrayContext):
    """A lazy :class:`arraycontext.ArrayContext` on :mod:`pytato_rs` (see the module docs).

    :arg backend: the backend programs are compiled for (``"cranelift"``, ``"interp"``,
        ``"wgpu"``); by default :func:`pytato_rs.default_backend_name`'s.
    :arg compile_trace_callback: called as ``callback(what, stage, dag)`` before
        (``"pre_transform_dag"``) and after (``"post_transform_dag"``) :meth:`transform_dag`
        for every DAG compiled.
    """

    def __init__(self, *, backend: str | None = None, compile_trace_callback=None) -> None:
        super().__init__()
        self.backend = backend if backend is not None else pt.default_backend_name()
        self.array_types = (pt.Array, EvaluatedArray)
        self._compile_trace_callback = compile_trace_callback

    def _get_fake_numpy_namespace(self):
        from pytato_rs.arraycontext.fake_numpy import PytatoRsFakeNumpyNamespace
        return PytatoRsFakeNumpyNamespace(self)

    def clone(self):
        return type(self)(backend=self.backend,
                          compile_trace_callback=self._compile_trace_callback)

    # {{{ properties

    @property
    def permits_inplace_modification(self) -> bool:
        return False

    @property
    def supports_nonscalar_broadcasting(self) -> bool:
        return True

    @property
    def permits_advanced_indexing(self) -> bool:
        return True

    # }}}

    def _map_leaves(self, f, array, allowed_types, what):
        """*f* on every leaf of *array* of one of *allowed_types*; numbers pass through."""
        def leaf(ary):
            if isinstance(ary, allowed_types):
                return f(ary)
            if is_scalar_like(ary):
                return ary
            raise TypeError(
                f"{type(self).__name__}.{what}: a leaf of type {type(ary).__name__}; "
                f"expected one of {allowed_types}")
        return rec_map_container(leaf, array)

    # {{{ host transfers

    def from_numpy(self, array):
        return with_array_context(
            self._map_leaves(pt.make_data_wrapper, array, (np.ndarray,), "from_numpy"),
            actx=self)

    def to_numpy(self, array):
        return with_array_context(
            self._map_leaves(lambda a: a.get(), self.freeze(array), (EvaluatedArray,),
                             "to_numpy"),
            actx=None)

    # }}}

    # {{{ freeze and thaw

    def _generate(self, dag, what):
        """The program for *dag* after :meth:`transform_dag`."""
        if self._compile_trace_callback is not None:
            self._compile_trace_callback(what, "pre_transform_dag", dag)
        dag = self.transform_dag(dag)
        if self._compile_trace_callback is not None:
            self._compile_trace_callback(what, "post_transform_dag", dag)
        return pt.generate(dag, backend=self.backend)

    def freeze(self, array):
        """Computes every lazy array of *array* (one program for all of them) and returns the
        container with :class:`~pytato_rs.EvaluatedArray`\\ s in their places."""
        if is_scalar_like(array):
            return array
        frozen = {}
        lazy = {}

        def record(key, ary):
            if isinstance(ary, EvaluatedArray) or is_scalar_like(ary):
                frozen[key] = ary
            elif isinstance(ary, pt.DataWrapper):
                frozen[key] = ary._evaluated.with_metadata(ary.tags, ary.axes)
            elif isinstance(ary, pt.Array):
                lazy[key] = ary
            else:
                raise TypeError(
                    f"{type(self).__name__}.freeze: a leaf of type {type(ary).__name__}; "
                    f"expected one of {self.array_types}")
            return ary

        rec_keyed_map_array_container(record, array)
        if lazy:
            names = {key: f"_actx_frozen_{k}" for k, key in enumerate(lazy)}
            dag = pt.make_dict_of_named_arrays(
                {names[key]: ary for key, ary in lazy.items()})
            results = self._generate(dag, what="freeze").evaluate()
            for key, ary in lazy.items():
                frozen[key] = results[names[key]].with_metadata(ary.tags, ary.axes)
        return with_array_context(
            rec_keyed_map_array_container(lambda key, _: frozen[key], array), actx=None)

    def thaw(self, array):
        """Puts every :class:`~pytato_rs.EvaluatedArray` of *array* back into the DAG (a data
        wrapper over the same buffer, with its tags and axes)."""
        def _thaw(ary):
            return pt.make_data_wrapper(ary, tags=ary.tags, axes=ary.axes)
        return with_array_context(
            self._map_leaves(_thaw, array, (EvaluatedArray,), "thaw"), actx=self)

    # }}}

    # {{{ metadata

    def tag(self, tags, array):
        tags = _tags_for_pytato(tags)

        def _tag(ary):
            if isinstance(ary, EvaluatedArray):
                return ary.with_metadata(ary.tags | tags, ary.axes)
            return ary.tagged(tags)
        return self._map_leaves(_tag, array, self.array_types, "tag")

    def tag_axis(self, iaxis, tags, array):
        tags = normalize_tags(tags)
        return self._map_leaves(lambda ary: ary.with_tagged_axis(iaxis, tags), array,
                                (pt.Array,), "tag_axis")

    # }}}

    # {{{ computations

    def einsum(self, spec, *args, arg_names=None, tagged=()):
        def operand(ary, name):
            ary = self.thaw_if_frozen(ary)
            if not isinstance(ary, pt.Array):
                raise TypeError(
                    f"{type(self).__name__}.einsum: an operand of type {type(ary).__name__}; "
                    f"expected one of {self.array_types}")
            # A placeholder has a name already, and an array has one name at most.
            from pytato_rs.tags import PrefixNamed
            if (name is not None and not isinstance(ary, pt.Placeholder)
                    and not ary.tags_of_type(NameHint) and not ary.tags_of_type(PrefixNamed)):
                ary = ary.tagged(_tags_for_pytato(NameHint(name)))
            return ary

        names = arg_names if arg_names is not None else (None,) * len(args)
        operands = [operand(a, n) for a, n in zip(args, names, strict=True)]
        return pt.einsum(spec, *operands).tagged(_tags_for_pytato(tagged))

    def make_csr_matrix(self, shape, elem_values, elem_col_indices, row_starts, *,
                        tags=frozenset(), axes=None):
        return CSRMatrix(shape, elem_values, elem_col_indices, row_starts,
                         tags=tags, axes=axes if axes is not None else (frozenset(),) * 2,
                         _actx=self)

    def sparse_matmul(self, x1, x2):
        """``x1 @ x2`` for a CSR matrix *x1* and an array or container *x2*: each row of the
        result sums its entries in storage order (:func:`pytato_rs.sparse.make_csr_matrix`)."""
        if not isinstance(x1, CSRMatrix):
            raise TypeError(
                f"{type(self).__name__}.sparse_matmul: a sparse matrix of type "
                f"{type(x1).__name__}; expected a CSRMatrix")
        from pytato_rs.sparse import make_csr_matrix
        matrix = make_csr_matrix(
            x1.shape, self.thaw_if_frozen(x1.elem_values),
            self.thaw_if_frozen(x1.elem_col_indices), self.thaw_if_frozen(x1.row_starts),
            tags=normalize_tags(x1.tags), axes=x1.axes)
        return self._map_leaves(lambda ary: matrix @ self.thaw_if_frozen(ary), x2,
                                self.array_types, "sparse_matmul")

    def thaw_if_frozen(self, ary):
        """*ary* itself if lazy, thawed if evaluated."""
        return self.thaw(ary) if isinstance(ary, EvaluatedArray) else ary

    def call_loopy(self, program, **kwargs):
        """The outputs (a dict by name) of the loopy kernel *program* on *kwargs*, translated
        into the DAG's own nodes by :func:`pytato_rs.loopy.call_loopy` (which says what kernels
        it takes)."""
        from pytato_rs.loopy import call_loopy
        arguments = {name: self.thaw_if_frozen(value) for name, value in kwargs.items()}
        outputs = call_loopy(program, arguments)
        return {name: outputs[name] for name in outputs.keys()}

    # }}}

    # {{{ compilation

    def transform_dag(self, dag):
        """Returns *dag* transformed before it is compiled: subclasses override it (the
        default returns *dag*)."""
        return dag

    def compile(self, f):
        from pytato_rs.arraycontext.compile import CompiledFunction
        return CompiledFunction(self, f)

    def outline(self, f, *, id=None):
        """Returns *f*: calls are traced into the caller's DAG (backends inline them)."""
        return f

    # }}}


__all__ = ["PytatoRsArrayContext"]
