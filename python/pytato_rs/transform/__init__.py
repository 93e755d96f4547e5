"""Transformations of DAGs and the mapper family, under pytato's names (``pytato.transform``).

Mappers dispatch on a node's kind to a ``map_<node>`` method with pytato's names
(``map_placeholder``, ``map_index_lambda``, ``map_einsum``, ...; see
:data:`pytato_rs.array.MAPPER_METHODS`) and may be subclassed as pytato's are:

- :class:`Mapper`: dispatch only; a kind without a method is :meth:`Mapper.handle_unsupported_array`.
- :class:`CachedMapper`: each node mapped once (nodes equal in structure are one node).
- :class:`CopyMapper`: rebuilds the DAG from the mapped children; a node whose children map to
  themselves is kept. Override ``map_<node>`` methods to replace nodes.
- :class:`CombineMapper`: combines the results of what a node depends on with
  :meth:`CombineMapper.combine`: as in pytato, the size parameters its shape names (as
  ``SizeParam`` nodes), then its children. The walk mappers visit those too.
- :class:`WalkMapper` and :class:`CachedWalkMapper`: ``visit`` (descend when it returns true)
  and ``post_visit`` each node, children first in ``post_visit`` order.
- :class:`TopoSortMapper`, :class:`InputGatherer`, :class:`SizeParamGatherer`,
  :class:`DependencyMapper`.

The transformations are importable from pytato's module paths too
(``pytato_rs.transform.materialize``, ``.dead_code_elimination``, ``.metadata``).

Deep DAGs do not recurse: :class:`CachedMapper` (and so :class:`CopyMapper` and
:class:`CombineMapper`) maps every node below the one asked for first, bottom-up with an explicit
stack, so that each ``self.rec(child)`` a method makes finds its result ready; the walk mappers
walk with an explicit stack. A chain of 10^5 nodes maps within Python's default recursion limit.
"""

from __future__ import annotations

from typing import TypeVar

from .._native import (
    Array,
    DictOfNamedArrays,
    deduplicate,
    eliminate_dead_code,
    inline_calls,
    make_dict_of_named_arrays,
    make_size_param,
    materialize_with_mpms,
    tag_all_calls_to_be_inlined,
    unify_axes_tags,
)
from ..array import MAPPER_METHODS, AbstractResultWithNamedArrays

#: What a mapper maps: an array expression or a result with named arrays (pytato's type).
ArrayOrNames = Array | AbstractResultWithNamedArrays
#: A type variable over :data:`ArrayOrNames`, for functions that return what they are given.
ArrayOrNamesTc = TypeVar("ArrayOrNamesTc", Array, AbstractResultWithNamedArrays, DictOfNamedArrays)


class TransformMapperCache(dict):
    """The cache a :class:`TransformMapper` may be given (``_cache=``) to share results with
    another mapper: a dict from cache keys to results. Subscriptable for type checkers as
    pytato's is; pytato's collision checks are the mappers' own here, so its arguments are
    accepted and change nothing."""

    def __init__(self, err_on_collision=False, err_on_created_duplicate=False):
        super().__init__()

    def __class_getitem__(cls, params):
        return cls

__all__ = [
    "ArrayOrNames",
    "ArrayOrNamesTc",
    "CachedMapper",
    "CachedWalkMapper",
    "CombineMapper",
    "CopyMapper",
    "DependencyMapper",
    "InputGatherer",
    "Mapper",
    "SizeParamGatherer",
    "TopoSortMapper",
    "TransformMapper",
    "TransformMapperCache",
    "UnsupportedArrayError",
    "UsersCollector",
    "WalkMapper",
    "copy_dict_of_named_arrays",
    "deduplicate",
    "deduplicate_data_wrappers",
    "eliminate_dead_code",
    "inline_calls",
    "tag_all_calls_to_be_inlined",
    "map_and_copy",
    "rec_get_user_nodes",
    "materialize_with_mpms",
    "unify_axes_tags",
]


class UnsupportedArrayError(ValueError):
    """A mapper met a kind of node it has no method for."""


def _verify_is_array(expr):
    """``expr``, checked to be an array expression (not a dictionary of them)."""
    if not isinstance(expr, Array):
        raise TypeError(f"an array expression was expected, not {type(expr).__name__}")
    return expr


def _method_name(expr):
    if isinstance(expr, DictOfNamedArrays):
        return "map_dict_of_named_arrays"
    if isinstance(expr, Array):
        return MAPPER_METHODS[expr.node_type]
    raise ValueError(f"{type(expr).__name__} is not an array expression")


def _children(expr):
    """What a node uses: its children in their fixed order; the arrays a dictionary holds."""
    if isinstance(expr, DictOfNamedArrays):
        return [expr[name].expr for name in expr]
    return expr._children()


def _shape_size_params(expr):
    """The size parameters named in ``expr``'s shape, as nodes, by name."""
    if isinstance(expr, DictOfNamedArrays):
        return []
    names = {name for d in expr.shape if not isinstance(d, int) for name in d.params}
    return [make_size_param(name) for name in sorted(names)]


def _dependencies(expr):
    """What a node depends on, as pytato's mappers visit it: the size parameters its shape
    names, then its children."""
    return [*_shape_size_params(expr), *_children(expr)]


class Mapper:
    """Dispatches each expression to the ``map_<node>`` method of its kind. Subscriptable as
    pytato's generic mappers are (``Mapper[ResultT, FunctionResultT, P]``): the parameters are
    for type checkers only."""

    def __class_getitem__(cls, params):
        return cls

    def handle_unsupported_array(self, expr, *args, **kwargs):
        raise UnsupportedArrayError(f"{type(self).__name__} cannot handle expressions of type {expr.node_type}")

    def rec(self, expr, *args, **kwargs):
        method = getattr(self, _method_name(expr), None)
        if method is None:
            return self.handle_unsupported_array(expr, *args, **kwargs)
        return method(expr, *args, **kwargs)

    def __call__(self, expr, *args, **kwargs):
        return self.rec(expr, *args, **kwargs)


class CachedMapper(Mapper):
    """A :class:`Mapper` that maps each node once per arguments (see the module docs for how
    deep DAGs are mapped without recursion)."""

    def __init__(self, err_on_collision=False, _cache=None, _function_cache=None):
        self._cache = {} if _cache is None else _cache

    def get_cache_key(self, expr, *args, **kwargs):
        return (expr, args, tuple(sorted(kwargs.items()))) if args or kwargs else expr

    def rec(self, expr, *args, **kwargs):
        key = self.get_cache_key(expr, *args, **kwargs)
        try:
            return self._cache[key]
        except KeyError:
            pass
        if not args and not kwargs:
            self._map_below(expr)
        result = self._map_one(expr, *args, **kwargs)
        self._cache[key] = result
        return result

    def _map_one(self, expr, *args, **kwargs):
        """The result of one node (its method; its children's results are cached)."""
        return Mapper.rec(self, expr, *args, **kwargs)

    def _map_below(self, expr):
        """Maps every node below ``expr`` not mapped yet, children before their users, with an
        explicit stack (each node's method then finds its children's results cached)."""
        stack = [(child, False) for child in reversed(_dependencies(expr))]
        while stack:
            node, children_done = stack.pop()
            key = self.get_cache_key(node)
            if key in self._cache:
                continue
            if children_done:
                self._cache[key] = self._map_one(node)
                continue
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_dependencies(node)) if self.get_cache_key(child) not in self._cache)


def _default_method(self, expr, *args, **kwargs):
    return self._default(expr, *args, **kwargs)


def _default_for_every_kind(cls):
    """``cls`` with each ``map_<node>`` it lacks calling ``self._default``."""
    for name in {*MAPPER_METHODS.values(), "map_dict_of_named_arrays"}:
        if not hasattr(cls, name):
            setattr(cls, name, _default_method)
    return cls


class TransformMapper(CachedMapper):
    """A :class:`CachedMapper` whose results are expressions (pytato's base of transforms).
    With ``err_on_created_duplicate``, a method that returns a new node equal to the one it
    was given, over the very same children (rather than that node itself, as
    ``replace_if_different`` does), is a ``ValueError``: such copies defeat the caches of the
    passes that follow. A new node over children that are new but equal (duplicates in the
    input, merged by the cache) is fine."""

    def __init__(self, err_on_collision=False, err_on_created_duplicate=False, _cache=None, _function_cache=None):
        super().__init__(err_on_collision, _cache, _function_cache)
        self._err_on_created_duplicate = err_on_created_duplicate

    def _map_one(self, expr, *args, **kwargs):
        result = super()._map_one(expr, *args, **kwargs)
        if (
            self._err_on_created_duplicate
            and isinstance(result, Array)
            and result._node_id != expr._node_id
            and result == expr
            and [c._node_id for c in _children(result)] == [c._node_id for c in _children(expr)]
        ):
            raise ValueError(
                f"{type(self).__name__} mapped a {expr.node_type} to a new node equal to it: "
                "return the node itself where nothing changes (replace_if_different)"
            )
        return result


@_default_for_every_kind
class CopyMapper(TransformMapper):
    """Rebuilds each node from its mapped children (pytato's ``CopyMapper``): with no method
    overridden, the result equals the input, and nodes whose children are unchanged are kept."""

    def _default(self, expr):
        if isinstance(expr, DictOfNamedArrays):
            return make_dict_of_named_arrays({name: self.rec(expr[name].expr) for name in expr})
        children = _children(expr)
        if not children:
            return expr
        return expr._with_children([self.rec(child) for child in children])


@_default_for_every_kind
class CombineMapper(CachedMapper):
    """Maps each node to :meth:`combine` of its children's results (inputs: ``combine()``).
    Subclasses define :meth:`combine` and the methods of the nodes they look at."""

    def combine(self, *args):
        raise NotImplementedError

    def _default(self, expr):
        return self.combine(*(self.rec(child) for child in _dependencies(expr)))


@_default_for_every_kind
class WalkMapper(Mapper):
    """Walks the DAG: :meth:`visit` each node (its children are walked when it returns true),
    then :meth:`post_visit` it after its children. Without a cache, a node used twice is walked
    twice (see :class:`CachedWalkMapper`).

    Each node goes through the ``map_<node>`` method of its kind, as in pytato: a subclass may
    override one (``map_data_wrapper``, say) and call ``super()`` to walk on below the node, or
    not, to stop there. The walk keeps its own stack (the methods schedule children on it rather
    than recurse), so deep DAGs walk without recursion."""

    _walk_stack = None

    def visit(self, expr, *args, **kwargs):
        return True

    def post_visit(self, expr, *args, **kwargs):
        pass

    def _seen(self, expr, *args, **kwargs):
        return False

    def _default(self, expr, *args, **kwargs):
        """What every ``map_<node>`` does: visit the node and, where :meth:`visit` says so,
        schedule its dependencies and then its :meth:`post_visit`."""
        if self._walk_stack is None:
            # Called directly, not from a walk: walk from here.
            return self._walk(expr, *args, _dispatched=True, **kwargs)
        if self.visit(expr, *args, **kwargs):
            self._walk_stack.append((expr, True))
            self._walk_stack.extend((child, False) for child in reversed(_dependencies(expr)))
        return None

    def _walk(self, expr, *args, _dispatched=False, **kwargs):
        outer, stack = self._walk_stack, []
        self._walk_stack = stack
        try:
            if _dispatched:
                # ``expr``'s method is the caller: only its visit and children are left.
                self._default(expr, *args, **kwargs)
            else:
                stack.append((expr, False))
            while stack:
                node, children_done = stack.pop()
                if children_done:
                    self.post_visit(node, *args, **kwargs)
                elif not self._seen(node, *args, **kwargs):
                    Mapper.rec(self, node, *args, **kwargs)
        finally:
            self._walk_stack = outer

    def rec(self, expr, *args, **kwargs):
        if self._walk_stack is not None:
            # A method walking a node of its own choosing (pytato's ``self.rec(child)``).
            self._walk_stack.append((expr, False))
            return None
        return self._walk(expr, *args, **kwargs)


class CachedWalkMapper(WalkMapper):
    """A :class:`WalkMapper` that walks each node once (per :meth:`get_cache_key`, which
    takes the walk's extra arguments too)."""

    def __init__(self, _visited_nodes=None):
        self._visited_nodes = set() if _visited_nodes is None else _visited_nodes

    def get_cache_key(self, expr, *args, **kwargs):
        return expr

    def _seen(self, expr, *args, **kwargs):
        key = self.get_cache_key(expr, *args, **kwargs)
        if key in self._visited_nodes:
            return True
        self._visited_nodes.add(key)
        return False


class TopoSortMapper(CachedWalkMapper):
    """Collects the nodes in ``topological_order``: each after the nodes it uses."""

    def __init__(self, _visited_nodes=None):
        super().__init__(_visited_nodes)
        self.topological_order = []

    def post_visit(self, expr, *args, **kwargs):
        self.topological_order.append(expr)


class InputGatherer(CombineMapper):
    """The inputs of a DAG: a frozenset of its placeholders, data wrappers and size parameters
    (used as arrays or named in shapes)."""

    def combine(self, *args):
        return frozenset().union(*args)

    def map_placeholder(self, expr):
        return frozenset([expr]) | self._default(expr)

    map_data_wrapper = map_placeholder

    def map_size_param(self, expr):
        return frozenset([expr])


class DependencyMapper(CombineMapper):
    """Every array node an expression depends on, itself included, as a frozenset (for a
    dictionary of outputs: what its arrays depend on).

    A plain ``DependencyMapper`` gathers the nodes reachable from the expression in one walk,
    linear in the DAG. Combining cached sets node by node, as pytato does (and as subclasses
    here still do, since they may change what a node contributes), holds every node's set at
    once: quadratic on a chain, where 2 * 10^5 nodes exhausted the memory."""

    def rec(self, expr, *args, **kwargs):
        if type(self) is not DependencyMapper or args or kwargs:
            return super().rec(expr, *args, **kwargs)
        try:
            return self._cache[expr]
        except KeyError:
            pass
        reached, stack = set(), [expr]
        while stack:
            node = stack.pop()
            if node in reached:
                continue
            reached.add(node)
            stack.extend(_dependencies(node))
        result = frozenset(node for node in reached if not isinstance(node, DictOfNamedArrays))
        self._cache[expr] = result
        return result

    def combine(self, *args):
        return frozenset().union(*args)

    def _default(self, expr):
        below = super()._default(expr)
        return below if isinstance(expr, DictOfNamedArrays) else below | {expr}


class SizeParamGatherer(CombineMapper):
    """The size parameters of a DAG, used as arrays or named in shapes, as a frozenset."""

    def combine(self, *args):
        return frozenset().union(*args)

    def map_size_param(self, expr):
        return frozenset([expr])


class UsersCollector(CachedWalkMapper):
    """Collects ``node_to_users``: for every node of the DAG, the set of nodes that use it
    (empty for the outputs)."""

    def __init__(self, _visited_nodes=None):
        super().__init__(_visited_nodes)
        self.node_to_users = {}

    def post_visit(self, expr, *args, **kwargs):
        self.node_to_users.setdefault(expr, set())
        for child in _dependencies(expr):
            self.node_to_users.setdefault(child, set()).add(expr)


def map_and_copy(expr, map_fn):
    """``expr`` with every node ``n`` replaced by ``map_fn(n)``, children first."""

    class _Replacer(CopyMapper):
        def _map_one(self, expr, *args, **kwargs):
            return map_fn(super()._map_one(expr, *args, **kwargs))

    return _Replacer()(expr)


def _memory_key(data):
    """Where a numpy array's elements are: its first element's address, shape, strides and dtype
    (two views with equal keys are the same elements)."""
    return (data.__array_interface__["data"][0], data.shape, data.strides, data.dtype.str)


def _same_values(a, b):
    """Whether two data wrappers' copies hold the same bits (the memory they were copied from may
    have changed between the copies)."""
    import numpy as np

    x, y = np.asarray(a._evaluated), np.asarray(b._evaluated)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def deduplicate_data_wrappers(array_or_names):
    """``array_or_names`` with the data wrappers of the same memory as one node (pytato's
    ``deduplicate_data_wrappers``), and equal expressions merged as :func:`deduplicate` merges
    them. Wrappers were made of the same memory where their numpy arrays (``.data``) are views of
    the same elements (address, shape, strides and dtype); wrappers of one
    :class:`~pytato_rs.EvaluatedArray` are one node already. A wrapper copies its data when it is
    made, so two wrappers of memory that changed in between hold different values: those stay
    apart. The first wrapper met of each memory is kept."""
    import numpy as np

    from ..array import DataWrapper

    kept = {}

    def merge(node):
        if not isinstance(node, DataWrapper):
            return node
        data = node.data
        if not isinstance(data, np.ndarray):
            return node
        first = kept.setdefault(_memory_key(data), node)
        return first if first is node or _same_values(first, node) else node

    return deduplicate(map_and_copy(array_or_names, merge))


def copy_dict_of_named_arrays(source_dict, copy_mapper):
    """A :class:`DictOfNamedArrays` of ``copy_mapper`` applied to each entry of ``source_dict``."""
    return make_dict_of_named_arrays({name: copy_mapper(source_dict[name]) for name in source_dict})


def rec_get_user_nodes(expr, node):
    """Every node of the DAG ``expr`` that uses ``node``, directly or through others (``expr``
    itself included where it is a dictionary of outputs), as a frozenset."""
    from ..analysis import get_list_of_users

    users = get_list_of_users(expr)
    found, stack = set(), [node]
    while stack:
        for user in users.get(stack.pop(), ()):
            if user not in found:
                found.add(user)
                stack.append(user)
    return frozenset(found)
