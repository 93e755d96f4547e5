"""Loopy kernels in the DAG: :func:`call_loopy` translates a loopy kernel into array nodes.

meshmode and grudge state some operators as loopy kernels (resampling between
discretizations, picking face nodes, projections) and call them on lazy arrays with
``actx.call_loopy``. This module reads such a kernel and builds the same computation out of
the library's own nodes, so that every backend runs it and every pass sees through it:

- each **assignment over a box of its target** (``out[iel, idof] = expr``, the left-hand side
  indexed by distinct loop indices) is an ``IndexLambda`` over the loops: the loop indices
  become the lambda's axes, ``sum(j, ...)``, ``product``, ``max`` and ``min`` reductions its
  reductions, ``a if c else b`` a ``where``, and array reads with affine or indirect
  subscripts its bindings' subscripts; where the loops cover part of the target
  (``{[k]: 2 <= k < n}``) it is written into that slice (``out.at[2:n].set``);
- each **scattered assignment** (any other left-hand side, ``out[to_el[iel], idof] = expr``)
  computes the values and the target indices over its loop domain and writes them with
  ``out.at[...].set``; one of the form ``out[idx] = out[idx] + expr`` adds with
  ``out.at[...].add`` (repeated indices add up). Elements no assignment writes are 0;
- an assignment under predicates (``if c ... end``) keeps the old value (0 if unwritten)
  where they fail, and what its expression would read there is not read; a scattered one
  must accumulate (``out[idx] = out[idx] + expr``: points where they fail add -0.0);
- instructions run in the order of their dependencies (``dep=``), barriers and no-ops only
  order them;
- loop domains are boxes (``{[i, j]: 0 <= i < n and 0 <= j < m}``) or, for assignments that
  write whole arrays and for sums and products, polyhedra with affine bounds
  (``{[i, j]: 0 <= i < n and 0 <= j <= i}``): the loops run over the bounding box, elements
  outside the domain keep their values, terms outside add 0 (multiply 1), and nothing is
  read at points outside;
- size parameters are taken from the keyword arguments (``nelements=...``, a number or a size
  parameter of the DAG) or from the shapes of the array arguments that declare them, and may be
  symbolic: a kernel called on arrays of shape ``(n, 3)`` for a size parameter ``n`` of the DAG
  has loops of length ``n`` (declared lengths are solved for the kernel's parameters as affine
  equations in the DAG's, one unknown at a time or several as one linear system);
- a value argument may be a lazy 0-d array (``call_loopy(knl, {"x": 3 * x})``): the kernel
  reads it as an array.

Anything outside this subset (strided domains, scattered writes or ``max``/``min`` over
domains that are not boxes, scattered ``=`` under predicates, C instructions, calls of other kernels, loopy-only expression
nodes) is an :class:`~pytato_rs.exceptions.UnsupportedError` that names
the construct, never a wrong value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pytato_rs as pt
from pytato_rs.exceptions import UnsupportedError

__all__ = ["call_loopy"]


def _unsupported(kernel, what):
    return UnsupportedError(f"call_loopy: kernel '{kernel.name}': {what} is not supported")


@dataclass(frozen=True)
class _Loop:
    """A loop index: the values ``lower, lower + 1, ..., lower + length - 1`` (the length an
    int or a :class:`~pytato_rs.Dim`)."""
    lower: int
    length: object


def _affine(length):
    """``(constant, {parameter: coefficient})`` of a length: an int or a :class:`~pytato_rs.Dim`."""
    if isinstance(length, pt.Dim):
        return length.constant, dict(length.terms)
    return int(length), {}


def _length(constant, terms):
    """The length ``constant + sum(coefficient * parameter)``: an int where no term is left."""
    terms = {p: int(c) for p, c in terms.items() if c}
    return pt.Dim(int(constant), sorted(terms.items())) if terms else int(constant)


def _evaluate_length(expr, env, what):
    """The value of the affine pymbolic ``expr`` in the size parameters ``env``: an int, or a
    :class:`~pytato_rs.Dim` where ``env`` holds symbolic lengths."""
    from pymbolic import evaluate
    from pymbolic.mapper.evaluator import UnknownVariableError
    try:
        value = evaluate(expr, env)
    except UnknownVariableError as e:
        raise ValueError(f"call_loopy: {what} reads the size parameter {e}, which is neither "
                         "given nor implied by an argument's shape") from None
    except TypeError:
        # Dim takes sums and products with numbers only.
        raise UnsupportedError(f"call_loopy: {what} is {expr}, which is not affine in the "
                               "symbolic lengths it reads") from None
    if isinstance(value, pt.Dim):
        return value
    if int(value) != value:
        raise ValueError(f"call_loopy: {what} is {value}, not an integer")
    return int(value)


def _as_array(value, name):
    if isinstance(value, pt.Array):
        return value
    if isinstance(value, (pt.EvaluatedArray, np.ndarray)):
        return pt.make_data_wrapper(value)
    raise TypeError(f"call_loopy: argument '{name}' is a {type(value).__name__}; "
                    "expected an array (lazy, evaluated or numpy)")


def _solve_length(declared, length, env):
    """Binds the one size parameter of ``env`` that the affine length ``declared`` (``n``,
    ``n - 1``, ``2*n``) reads, if it reads one, to the value that makes it ``length``."""
    from pymbolic import evaluate
    from pymbolic.mapper.dependency import DependencyMapper

    unknown = {v.name for v in DependencyMapper()(declared)} - set(env)
    if len(unknown) != 1:
        return
    name, = unknown
    try:
        offset = evaluate(declared, {**env, name: 0})
        slope = evaluate(declared, {**env, name: 1}) - offset
    except TypeError:
        return  # not affine in the symbolic lengths
    if isinstance(slope, pt.Dim) or slope == 0:
        return
    constant, terms = _affine(length - offset)
    if constant % slope == 0 and all(c % slope == 0 for c in terms.values()):
        env[name] = _length(constant // slope, {p: c // slope for p, c in terms.items()})


def _solve_lengths_together(equations, env):
    """Binds the size parameters that lengths of several unknowns state together (``2*n + 3*m
    + 2`` and ``6*n + 4*m + 3``): the affine equations ``declared = length`` solved as one
    linear system, where it has exactly one integer solution. Symbolic lengths (affine in the
    DAG's size parameters) are solved for their constant and each parameter's coefficient
    apart: the unknowns are then affine in those parameters too."""
    from pymbolic import evaluate
    from pymbolic.mapper.dependency import DependencyMapper

    pending = [(d, n if isinstance(n, pt.Dim) else int(n)) for d, n in equations
               if {v.name for v in DependencyMapper()(d)} - set(env)]
    unknowns = sorted({v.name for d, _ in pending for v in DependencyMapper()(d)} - set(env))
    if not unknowns:
        return
    rows, rhs = [], []
    for declared, length in pending:
        zero = {**env, **dict.fromkeys(unknowns, 0)}
        try:
            at_zero = evaluate(declared, zero)
            row = [evaluate(declared, {**zero, u: 1}) - at_zero for u in unknowns]
        except TypeError:
            return  # not affine in the symbolic lengths
        if any(isinstance(c, pt.Dim) for c in row):
            return
        rows.append(row)
        rhs.append(_affine(length - at_zero))
    matrix = np.array(rows, dtype=np.float64)
    if np.linalg.matrix_rank(matrix) < len(unknowns):
        return
    params = sorted({p for _, terms in rhs for p in terms})
    columns = [[c for c, _ in rhs]] + [[terms.get(p, 0) for _, terms in rhs] for p in params]
    solutions = [np.rint(np.linalg.lstsq(matrix, np.array(col, dtype=np.float64), rcond=None)[0])
                 .astype(np.int64) for col in columns]
    candidate = dict(env)
    for k, u in enumerate(unknowns):
        candidate[u] = _length(solutions[0][k], {p: solutions[1 + j][k] for j, p in enumerate(params)})
    try:
        solved = all(evaluate(d, candidate) == n for d, n in pending)
    except TypeError:
        solved = False
    if solved:
        env.update(candidate)


def _native_length(value):
    """A 0-d integer expression of size parameters (``n``, ``2*n + 1``) as a length."""
    from pytato_rs import _native
    return _native._length(value)


def _size_parameters(kernel, bindings):
    """The kernel's size parameters: those given as numbers, and those an array argument's
    declared shape names (``shape=(nelements, ndofs)``), checked against every shape that
    states them."""
    env = {}
    for arg in kernel.args:
        if arg.name in bindings and not hasattr(arg, "shape"):
            value = bindings[arg.name]
            if isinstance(value, pt.Array):
                if value.ndim != 0:
                    raise TypeError(f"call_loopy: kernel '{kernel.name}': value argument "
                                    f"'{arg.name}' given an array of shape {value.shape}")
                try:
                    # A size parameter of the DAG (or an affine length of them): a length.
                    env[arg.name] = _native_length(value)
                except (TypeError, ValueError):
                    pass  # another lazy value: the kernel reads it as a 0-d array
                continue
            if np.ndim(value) != 0:
                raise TypeError(f"call_loopy: kernel '{kernel.name}': value argument "
                                f"'{arg.name}' given an array of shape {np.shape(value)}")
            value = np.asarray(value)[()]
            declared = getattr(arg.dtype, "numpy_dtype", None)
            # A value of the declared dtype; an undeclared one keeps the Python number's
            # (weak) type, as a literal in the kernel would.
            env[arg.name] = (np.dtype(declared).type(value) if declared is not None
                             else value.item())
    array_args = [a for a in kernel.args if hasattr(a, "shape") and a.name in bindings]
    for arg in array_args:
        shape = arg.shape if isinstance(arg.shape, tuple) else None
        if shape is None:
            continue
        actual = bindings[arg.name].shape
        if len(shape) != len(actual):
            raise ValueError(f"call_loopy: kernel '{kernel.name}': argument '{arg.name}' of shape "
                             f"{tuple(actual)} for a {len(shape)}-d array {shape}")
        for declared, length in zip(shape, actual, strict=True):
            _solve_length(declared, length, env)
    _solve_lengths_together(
        [(d, n) for arg in array_args if isinstance(arg.shape, tuple)
         for d, n in zip(arg.shape, bindings[arg.name].shape, strict=True)], env)
    for arg in array_args:
        if not isinstance(arg.shape, tuple):
            continue
        declared = tuple(_evaluate_length(d, env, f"the shape of '{arg.name}'") for d in arg.shape)
        if not _same_lengths(declared, tuple(bindings[arg.name].shape)):
            raise ValueError(f"call_loopy: kernel '{kernel.name}': argument '{arg.name}' of shape "
                             f"{tuple(bindings[arg.name].shape)}, declared {arg.shape} = {declared}")
    return env


def _same_lengths(a, b):
    """Whether two shapes (ints and :class:`~pytato_rs.Dim` s) are equal."""
    return len(a) == len(b) and all(_affine(x) == _affine(y) for x, y in zip(a, b))


@dataclass(frozen=True)
class _Coupling:
    """A domain constraint between loop indices (``j <= i``): points of the indices' bounding
    box where it fails are outside the domain."""
    inames: frozenset
    condition: object


def _loops(kernel, env):
    """Every loop index of the kernel with the bounds of its domain's bounding box, and the
    constraints that tie indices together (empty for box domains)."""
    import islpy as isl
    from loopy.symbolic import constraint_to_cond_expr, pw_aff_to_expr

    all_inames = kernel.all_inames()
    couplings = []
    for domain in kernel.domains:
        if domain.dim(isl.dim_type.div):
            raise _unsupported(kernel, f"the domain {domain}, which has strides or "
                               "existentially quantified indices")
        for constraint in domain.get_constraints():
            involved = frozenset(n for n, c in constraint.get_coefficients_by_name().items()
                                 if n in all_inames and c != 0)
            if len(involved) > 1:
                couplings.append(_Coupling(involved, constraint_to_cond_expr(constraint)))
    loops = {}
    for iname in kernel.all_inames():
        bounds = kernel.get_iname_bounds(iname)
        lower = _evaluate_length(pw_aff_to_expr(bounds.lower_bound_pw_aff), env,
                              f"the lower bound of loop '{iname}'")
        if isinstance(lower, pt.Dim):
            raise _unsupported(kernel, f"loop '{iname}' starting at the symbolic {lower}")
        length = _evaluate_length(pw_aff_to_expr(bounds.size), env, f"the length of loop '{iname}'")
        # A symbolic length that is negative when the program runs is an error then.
        loops[iname] = _Loop(lower, length if isinstance(length, pt.Dim) else max(length, 0))
    return loops, couplings


def _conjunction(conditions):
    from pymbolic import primitives as prim
    return conditions[0] if len(conditions) == 1 else prim.LogicalAnd(tuple(conditions))


def _ordered(kernel):
    """The kernel's instructions in an order their dependencies allow (the kernel's own order
    where they leave a choice)."""
    by_id = {insn.id: insn for insn in kernel.instructions}
    done, order = set(), []
    for first in kernel.instructions:
        stack = [(first, False)]
        while stack:
            insn, expanded = stack.pop()
            if insn.id in done:
                continue
            if expanded:
                done.add(insn.id)
                order.append(insn)
                continue
            stack.append((insn, True))
            for dep in sorted(insn.depends_on, reverse=True):
                if dep not in by_id:
                    raise _unsupported(kernel, f"instruction '{insn.id}' depending on "
                                       f"'{dep}', which is not an instruction of the kernel")
                if dep not in done:
                    stack.append((by_id[dep], False))
    return order


class _Translator:
    """Builds the arrays of one call of a kernel."""

    def __init__(self, kernel, bindings, env, loops, couplings):
        self.kernel = kernel
        self.env = env
        self.loops = loops
        self.couplings = couplings
        # The current value of every array: arguments, and what instructions wrote.
        self.values = dict(bindings)
        self.written = set()

    def _shape_of(self, name):
        """The declared shape of array ``name`` (an argument or a temporary), or None where
        the kernel leaves it to loopy to find (``<> t[i] = ...``)."""
        kernel = self.kernel
        var = kernel.arg_dict.get(name) or kernel.temporary_variables.get(name)
        if var is None or not isinstance(getattr(var, "shape", None), tuple):
            return None
        return tuple(_evaluate_length(d, self.env, f"the shape of '{name}'") for d in var.shape)

    def _declared_dtype(self, name):
        kernel = self.kernel
        var = kernel.arg_dict.get(name) or kernel.temporary_variables.get(name)
        dtype = getattr(var, "dtype", None)
        numpy_dtype = getattr(dtype, "numpy_dtype", None)
        return np.dtype(numpy_dtype) if numpy_dtype is not None else None

    def _lambda(self, expr, axes, what):
        """An IndexLambda computing ``expr`` at every point of the loops ``axes`` (in order)."""
        from pymbolic import primitives as prim

        from pytato_rs.scalar_expr import Reduce, TypeCast, _Bounds
        import loopy.symbolic as lps

        kernel, env, loops, values = self.kernel, self.env, self.loops, self.values
        translator = self
        bindings = {}
        reduction_count = [0]

        class Rename(lps.IdentityMapper):
            def __init__(self, indices):
                super().__init__()
                self.indices = indices

            def map_variable(self, e, *args):
                name = e.name
                if name in self.indices:
                    return self.indices[name]
                if name in loops:
                    raise _unsupported(kernel, f"{what} reading loop index '{name}' outside "
                                       "its loop")
                if name in env:
                    value = env[name]
                    return _length_expr(value, bindings) if isinstance(value, pt.Dim) else value
                if name in values:
                    array = values[name]
                    if array.ndim != 0:
                        raise _unsupported(kernel, f"{what} reading array '{name}' without "
                                           "a subscript")
                    bindings[name] = array
                    return prim.Variable(name)
                raise ValueError(f"call_loopy: kernel '{kernel.name}': {what} reads '{name}', "
                                 "which is neither an argument, an array written before, "
                                 "a loop index nor a size parameter")

            def map_subscript(self, e, *args):
                if not isinstance(e.aggregate, prim.Variable):
                    raise _unsupported(kernel, f"the subscript {e}")
                name = e.aggregate.name
                if name not in values:
                    if name in kernel.arg_dict and kernel.arg_dict[name].is_input:
                        raise TypeError(f"call_loopy: kernel '{kernel.name}': argument "
                                        f"'{name}' not given")
                    raise ValueError(f"call_loopy: kernel '{kernel.name}': {what} reads "
                                     f"'{name}' before any instruction writes it")
                bindings[name] = values[name]
                index = e.index if isinstance(e.index, tuple) else (e.index,)
                return prim.Subscript(prim.Variable(name), tuple(self.rec(i) for i in index))

            def map_call(self, e, *args):
                # The function is a name, not a variable to look up.
                return prim.Call(e.function, tuple(self.rec(p) for p in e.parameters))

            def map_reduction(self, e, *args):
                bounds, indices = _Bounds(), dict(self.indices)
                reduced = set()
                for iname in e.inames:
                    iname = getattr(iname, "name", iname)
                    loop = loops[iname]
                    label = f"_r{reduction_count[0]}"
                    reduction_count[0] += 1
                    bounds[label] = (loop.lower, loop.lower + loop.length)
                    indices[iname] = prim.Variable(label)
                    reduced.add(iname)
                # Over a domain that is not a box, the reduction runs over the bounding box
                # and the points outside add (or multiply) the identity.
                term = e.expr
                conditions = translator._conditions(reduced, set(indices), what)
                if conditions:
                    identity = {"SumReductionOperation": 0, "ProductReductionOperation": 1}
                    op_name = type(e.operation).__name__
                    if op_name not in identity:
                        raise _unsupported(kernel, f"{what}: a {e.operation} reduction over a "
                                           "domain that is not a box")
                    condition = _conjunction(conditions)
                    term = prim.If(condition, _guarded(term, condition), identity[op_name])
                return Reduce(Rename(indices).rec(term), e.operation, bounds)

            def map_type_cast(self, e, *args):
                return TypeCast(np.dtype(e.type.numpy_dtype), self.rec(e.child))

            def map_tagged_variable(self, e, *args):
                return self.map_variable(prim.Variable(e.name))

        indices = {}
        for k, iname in enumerate(axes):
            index = prim.Variable(f"_{k}")
            lower = loops[iname].lower
            indices[iname] = index if lower == 0 else index + lower
        renamed = Rename(indices).rec(expr)
        shape = tuple(loops[iname].length for iname in axes)
        try:
            return pt.IndexLambda(expr=renamed, shape=shape, dtype=None, bindings=bindings)
        except NotImplementedError as e:
            raise _unsupported(kernel, f"{what}: {e}") from None

    def _conditions(self, inames, scope, what, elsewhere=frozenset()):
        """The constraints that tie ``inames`` to indices of ``scope`` (which holds them), for
        a computation that runs over ``scope``'s bounding box; constraints on indices
        ``elsewhere`` (a reduction's, which masks its own terms) are left out."""
        conditions = []
        for coupling in self.couplings:
            if not coupling.inames & inames or coupling.inames & elsewhere:
                continue
            if not coupling.inames <= scope:
                raise _unsupported(self.kernel, f"{what}: the domain constraint "
                                   f"{coupling.condition}, which ties its loops to "
                                   f"{sorted(coupling.inames - scope)}, loops it does not run")
            conditions.append(coupling.condition)
        return conditions

    def assign(self, insn):
        from pymbolic import primitives as prim

        kernel = self.kernel
        what = f"instruction '{insn.id}'"
        lhs, rhs = insn.assignee, insn.expression
        if isinstance(lhs, prim.Variable):
            target, index = lhs.name, ()
        elif isinstance(lhs, prim.Subscript) and isinstance(lhs.aggregate, prim.Variable):
            target = lhs.aggregate.name
            index = lhs.index if isinstance(lhs.index, tuple) else (lhs.index,)
        else:
            raise _unsupported(kernel, f"{what} assigning to {lhs}")
        if target in kernel.arg_dict and not kernel.arg_dict[target].is_output:
            raise ValueError(f"call_loopy: kernel '{kernel.name}': {what} writes '{target}', "
                             "an argument that is not an output")
        declared = self._shape_of(target)
        inames = set(insn.within_inames)
        loop_indices = (len(set(index)) == len(index)
                        and all(isinstance(i, prim.Variable) and i.name in inames for i in index)
                        and {i.name for i in index} == inames)
        loops = [self.loops[i.name] for i in index] if loop_indices else None
        shape = declared
        if shape is None and loop_indices and all(loop.lower == 0 for loop in loops):
            shape = tuple(loop.length for loop in loops)
        if shape is None:
            raise _unsupported(kernel, f"{what} writing part of '{target}', whose shape is "
                               "not declared")
        predicates = sorted(insn.predicates, key=str)
        domain = self._conditions(inames, inames, what, elsewhere=frozenset(insn.reduction_inames()))
        if loop_indices and len(index) == len(shape):
            self._assign_box(target, index, loops, shape, lhs, rhs, predicates + domain, what)
            return
        if domain:
            raise _unsupported(kernel, f"{what}, a scattered write over a domain that is not "
                               "a box")
        # A scattered write: values and target indices at every point of the loops.
        axes = sorted(inames)
        current = self._current(target, shape)
        accumulated = _accumulated(rhs, lhs)
        if predicates and accumulated is None:
            # Points where the predicates fail would write old values back over new ones.
            raise _unsupported(kernel, f"{what}, a scattered write (=) under predicates")
        if predicates:
            # Points where the predicates fail add -0.0 (0 for integers), the identity of
            # addition, at index 0, reading nothing.
            condition = _conjunction(predicates)
            index = tuple(prim.If(condition, _guarded(i, condition), 0) for i in index)
            term = _guarded(accumulated, condition)
            identity = -0.0 if self._lambda(term, axes, what).dtype.kind in "fc" else 0
            accumulated = prim.If(condition, term, identity)
        values = self._lambda(accumulated if accumulated is not None else rhs, axes, what)
        positions = tuple(
            self._lambda(i, axes, f"{what}'s index {k}").astype(np.int64)
            for k, i in enumerate(index))
        dtype = self._result_dtype(target, current.dtype, values.dtype)
        current = current.astype(dtype) if current.dtype != dtype else current
        values = values.astype(dtype) if values.dtype != dtype else values
        if accumulated is not None:
            self._store(target, current.at[positions].add(values))
        else:
            self._store(target, current.at[positions].set(values))

    def _assign_box(self, target, index, loops, shape, lhs, rhs, conditions, what):
        """``target[index] = rhs`` where ``index`` are loop indices running over a box of
        ``target``: the whole target, or a slice of it. Where ``conditions`` (predicates,
        domain constraints between loop indices) fail, the element keeps its value (zero if
        no instruction wrote it), and what ``rhs`` reads there is not read."""
        from pymbolic import primitives as prim

        kernel = self.kernel
        if conditions:
            self.values[target] = self._current(target, shape)
            condition = _conjunction(conditions)
            rhs = prim.If(condition, _guarded(rhs, condition), lhs)
        box = []
        for i, loop, n in zip(index, loops, shape):
            end = loop.lower + loop.length
            past = end - n  # an int where the lengths' symbolic parts cancel
            if loop.lower < 0 or (not isinstance(past, pt.Dim) and past > 0):
                raise ValueError(
                    f"call_loopy: kernel '{kernel.name}': {what} writes '{target}' of shape "
                    f"{shape} at {i.name} = {loop.lower}..{end - 1}")
            box.append(slice(loop.lower, end))
        value = self._lambda(rhs, [i.name for i in index], what)
        if all(b.start == 0 and _same_lengths((b.stop,), (n,)) for b, n in zip(box, shape)):
            self._store(target, value)
        else:
            current = self._current(target, shape)
            dtype = self._result_dtype(target, current.dtype, value.dtype)
            self._store(target, current.astype(dtype).at[tuple(box)].set(value.astype(dtype)))

    def _current(self, name, shape):
        """The value an instruction that writes part of ``name`` starts from."""
        if name in self.values:
            return self.values[name]
        return pt.zeros(shape, self._declared_dtype(name) or np.int8)

    def _result_dtype(self, name, old, new):
        declared = self._declared_dtype(name)
        if declared is not None:
            return declared
        # Elements written before and zeros no one wrote take the written values' type.
        return np.result_type(old, new) if name in self.written else new

    def _store(self, name, value):
        declared = self._declared_dtype(name)
        if name in self.written and declared is None:
            dtype = np.result_type(self.values[name].dtype, value.dtype)
            if dtype != value.dtype:
                value = value.astype(dtype)
        elif declared is not None and value.dtype != declared:
            value = value.astype(declared)
        self.values[name] = value
        self.written.add(name)


def _length_expr(length, bindings):
    """A symbolic length read in an expression: its size parameters bound as 0-d arrays."""
    from pymbolic import primitives as prim

    terms = [length.constant] if length.constant else []
    for param, coefficient in length.terms.items():
        name = f"_size_{param}"
        bindings[name] = pt.make_size_param(param)
        terms.append(prim.Variable(name) if coefficient == 1 else coefficient * prim.Variable(name))
    return terms[0] if len(terms) == 1 else prim.Sum(tuple(terms))


def _guarded(expr, condition):
    """``expr`` with every subscript index ``k`` read as ``k if condition else 0``: where the
    condition fails the value is not used, and the read must still be in bounds."""
    import loopy.symbolic as lps
    from pymbolic import primitives as prim

    class Guard(lps.IdentityMapper):
        def map_subscript(self, e, *args):
            index = e.index if isinstance(e.index, tuple) else (e.index,)
            return prim.Subscript(
                e.aggregate, tuple(prim.If(condition, self.rec(i), 0) for i in index))

    return Guard()(expr)


def _accumulated(rhs, lhs):
    """``expr`` where ``rhs`` is ``lhs + expr`` or ``expr + lhs``, else None."""
    from pymbolic import primitives as prim
    if isinstance(rhs, prim.Sum) and len(rhs.children) >= 2:
        children = list(rhs.children)
        for k, child in enumerate(children):
            if child == lhs:
                rest = children[:k] + children[k + 1:]
                return rest[0] if len(rest) == 1 else prim.Sum(tuple(rest))
    return None


def call_loopy(translation_unit, bindings, entrypoint=None):
    """The outputs of the loopy kernel ``entrypoint`` (default: the translation unit's only
    entry point) called on ``bindings`` (argument name to array, lazy, evaluated or numpy, or
    to a number for size parameters), as a :class:`~pytato_rs.DictOfNamedArrays` keyed by the
    kernel's output arguments. See the module docs for the kernels it takes."""
    import loopy as lp

    if entrypoint is None:
        kernel = translation_unit.default_entrypoint
    else:
        kernel = translation_unit[entrypoint]
    if len([c for c in translation_unit.callables_table.values()
            if isinstance(c, lp.kernel.function_interface.CallableKernel)]) > 1:
        raise _unsupported(kernel, "a translation unit of several kernels (kernel calls)")
    known = {arg.name for arg in kernel.args}
    unknown = sorted(set(bindings) - known)
    if unknown:
        raise TypeError(f"call_loopy: kernel '{kernel.name}' has no arguments {unknown} "
                        f"(its arguments: {sorted(known)})")
    arrays = {}
    for name, value in bindings.items():
        arg = kernel.arg_dict[name]
        if hasattr(arg, "shape"):
            arrays[name] = _as_array(value, name)
            declared = getattr(arg.dtype, "numpy_dtype", None)
            if declared is not None and np.dtype(declared) != arrays[name].dtype:
                raise TypeError(f"call_loopy: kernel '{kernel.name}': argument '{name}' of "
                                f"dtype {arrays[name].dtype}, declared {np.dtype(declared)}")
        else:
            arrays[name] = value
    env = _size_parameters(kernel, arrays)
    loops, couplings = _loops(kernel, env)
    values = {}
    for name, value in arrays.items():
        if isinstance(value, pt.Array) and name not in env:
            # A lazy value argument is read as the dtype the kernel declares for it.
            declared = getattr(kernel.arg_dict[name].dtype, "numpy_dtype", None)
            if declared is not None and value.dtype != np.dtype(declared):
                value = value.astype(declared)
            values[name] = value
    translator = _Translator(kernel, values, env, loops, couplings)
    for insn in _ordered(kernel):
        if isinstance(insn, (lp.BarrierInstruction, lp.NoOpInstruction)):
            continue
        if not isinstance(insn, lp.Assignment):
            raise _unsupported(kernel, f"instruction '{insn.id}', a {type(insn).__name__}")
        translator.assign(insn)
    outputs = {}
    for arg in kernel.args:
        if getattr(arg, "is_output", False):
            if arg.name not in translator.written:
                raise ValueError(f"call_loopy: kernel '{kernel.name}': output '{arg.name}' is "
                                 "written by no instruction")
            outputs[arg.name] = translator.values[arg.name]
    return pt.make_dict_of_named_arrays(outputs)
