"""A DAG as one Python function of numpy-like calls (pytato's ``numpy_like`` code generator).

Each node becomes one or a few assignments, in postorder (found with an explicit stack, and
written as straight-line code: a deep DAG gives a long function, never a deep one):

- placeholders are the function's keyword arguments; data wrappers are arguments too, bound to
  their data when the program is made;
- an index lambda's expression is evaluated on whole arrays: each output axis and each
  reduction iname is an axis of its own, an iname's values an ``arange`` along its axis; a
  binding read at plain inames (``_in0[_1, _0]``, ``_in0[0, _r0]``) is sliced, transposed and
  reshaped onto those axes, any other read is a gather with the index arrays; each reduction
  reduces its axes; the result is broadcast to the lambda's shape. The expression's casts are the
  library's own (it spells numpy's promotions out), so each value has numpy's dtype, not the
  module's promotion rules';
- einsums, reshapes, rolls, transposes, stacks, concatenations and indexing call the module's
  functions of the same names; sorts, cumulative sums and products, ``searchsorted`` and
  scatters too (a scatter that sets repeated positions keeps the last value, as numpy does);
- calls of functions are inlined first.

Not expressible, and refused with ``NotImplementedError`` naming the node: sizes that are not
numbers (size parameters, and the data-dependent lengths of ``nonzero`` and ``x[mask]``), and
distributed sends and receives. Where the module cannot raise inside a traced function, it does
not: JAX clamps indices out of range and converts floats out of an integer's range its own way,
where the library's backends raise or follow numpy; it sums in its own order; and XLA flushes
float subnormals to zero, on CPUs too.
"""

from __future__ import annotations

import keyword
import re

import numpy as np

from ...scalar_expr import _COMPARISONS as _COMPARE

_AXIS_INAME = re.compile(r"^_(0|[1-9][0-9]*)$")

# entries of an index lambda's expression (see ``expr_entries.rs``) by kind: how many operands
_FIXED_ARITY = {"const": 0, "var": 0, "unary": 1, "binary": 2, "compare": 2, "if": 3, "cast": 1, "reduce": 1}

_UNARY = {"Neg": "negative", "LogicalNot": "logical_not", "BitNot": "invert"}
_BINARY = {
    "Add": "add",
    "Sub": "subtract",
    "Mul": "multiply",
    "Div": "true_divide",
    "FloorDiv": "floor_divide",
    "Rem": "remainder",
    "Pow": "power",
    "LogicalAnd": "logical_and",
    "LogicalOr": "logical_or",
    "BitAnd": "bitwise_and",
    "BitOr": "bitwise_or",
    "BitXor": "bitwise_xor",
}
# the library's functions the module has under the same name
_SAME_NAME_FUNCTIONS = frozenset(
    "abs sqrt exp log log10 sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh floor ceil isnan "
    "real imag conj maximum minimum arcsinh arccosh arctanh expm1 log1p log2 hypot logaddexp copysign "
    "nextafter signbit rint fmod cbrt exp2 gcd lcm".split()
)
_REDUCTIONS = {"sum": "sum", "product": "prod", "max": "max", "min": "min", "all": "all", "any": "any"}


class _Names:
    """Names for the generated code that differ from each other and from the inputs'."""

    def __init__(self, taken):
        self._taken = set(taken) | set(keyword.kwlist)
        self._next = {}

    def fresh(self, base):
        """A new name: ``base`` itself where it is free, else ``base_<n>``."""
        if base not in self._taken:
            self._taken.add(base)
            return base
        n = self._next.get(base, 0)
        while f"{base}_{n}" in self._taken:
            n += 1
        self._next[base] = n + 1
        self._taken.add(f"{base}_{n}")
        return f"{base}_{n}"


def _constant(value, np_name):
    """Source for the numpy scalar ``value`` that gives it back exactly, dtype included."""
    dtype = np.dtype(type(value)) if not isinstance(value, np.generic) else value.dtype
    cls = f"{np_name}.{dtype.name}"
    if dtype.kind == "b":
        return f"{cls}({bool(value)})"
    if dtype.kind in "iu":
        return f"{cls}({int(value)})"
    if dtype.kind == "f":
        # a float16/float32 is a float64 exactly, and repr gives a float64 back exactly
        return f"{cls}({_float(float(value))})"
    if dtype.kind == "c":
        return f"{cls}(complex({_float(float(value.real))}, {_float(float(value.imag))}))"
    raise NotImplementedError(f"a constant of dtype {dtype} in an index lambda")


def _float(x):
    return repr(x) if np.isfinite(x) else f"float({repr(x)!r})"


def _static_shape(node, what):
    """``node.shape`` as ints; ``NotImplementedError`` for a length that is not a number."""
    shape = tuple(node.shape)
    for length in shape:
        if not isinstance(length, (int, np.integer)):
            raise NotImplementedError(
                f"{what} of shape {shape}: a length that is not a number ({length}) has no "
                "fixed shape in the generated code; evaluate the size parameters first"
            )
    return tuple(int(d) for d in shape)


def _postorder(roots):
    """The nodes below ``roots`` (each once), children before parents, without recursion."""
    seen, order = set(), []
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if node._node_id in seen:
                continue
            if children_done:
                seen.add(node._node_id)
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(_dependencies(node)) if c._node_id not in seen)
    return order


def _dependencies(node):
    """What ``node``'s code reads: a named array reads its own entry only."""
    if node.node_type == "NamedArray":
        return [node.expr]
    return list(node._children())


class NumpyLikeWriter:
    """Writes the assignments of a DAG's nodes (see the module's doc). ``np`` and ``xp`` are
    the names under which the code refers to numpy and to the numpy-like module, ``lax`` to
    ``jax.lax`` (complex numbers from parts, the precision of contractions)."""

    def __init__(self, names, np, xp, lax):
        self.names = names
        self.np, self.xp, self.lax = np, xp, lax
        self.lines = []
        #: the function's arguments in order: placeholders' names, then bound data's
        self.arguments = []
        #: name to data, for data wrappers
        self.bound_arguments = {}
        #: arguments named like Python keywords (``lambda``), by name: their variables
        self.keyword_arguments = {}
        #: whether a maximum or minimum over an empty range needs ``_pt_empty_max``/``_min``
        self.needs_empty_extrema = False
        self._var = {}

    def write(self, roots):
        """Writes every node below ``roots``; returns the variable of each root."""
        for node in _postorder(roots):
            self._var[node._node_id] = self._write(node)
        return [self._var[root._node_id] for root in roots]

    # -- nodes ------------------------------------------------------------------------------

    def _assign(self, base, source):
        name = self.names.fresh(base)
        self.lines.append(f"{name} = {source}")
        return name

    def _argument(self, name):
        """The variable of the argument ``name``: the name itself, or a fresh one for a name
        that cannot be a parameter (a Python keyword: it arrives in ``**``, see
        :attr:`keyword_arguments`)."""
        self.arguments.append(name)
        if not keyword.iskeyword(name):
            return name
        variable = self.names.fresh("_pt_arg")
        self.keyword_arguments[name] = variable
        return variable

    def _of(self, node):
        return self._var[node._node_id]

    def _write(self, node):
        kind = node.node_type
        xp = self.xp
        if kind == "Placeholder":
            _static_shape(node, f"placeholder {node.name!r}")
            return self._argument(node.name)
        if kind == "DataWrapper":
            _static_shape(node, "a data wrapper")
            # a named one keeps its name (reserved with the placeholders')
            name = node.name if node.name else self.names.fresh("_pt_data")
            self.bound_arguments[name] = node.data
            return self._argument(name)
        if kind == "NamedArray":
            return self._of(node.expr)
        if kind == "IndexLambda":
            return _IndexLambdaWriter(self, node).write()
        shape = _static_shape(node, f"a {kind} node")
        children = [self._of(c) for c in node._children()]
        if kind == "Einsum":
            from ..._pickle import _einsum_spec

            operands = ", ".join(children)
            return self._assign(
                "_pt_einsum",
                f"{xp}.einsum({_einsum_spec(node)!r}, {operands}, precision={self.lax}.Precision.HIGHEST)"
                f".astype({self.np}.dtype({str(node.dtype)!r}))",
            )
        if kind == "Reshape":
            return self._assign("_pt_reshape", f"{xp}.reshape({children[0]}, {shape}, order={node.order!r})")
        if kind == "Roll":
            return self._assign("_pt_roll", f"{xp}.roll({children[0]}, {node.shift}, axis={node.axis})")
        if kind == "AxisPermutation":
            return self._assign("_pt_transpose", f"{xp}.transpose({children[0]}, {tuple(node.axis_permutation)})")
        if kind in ("Stack", "Concatenate"):
            function = kind.lower()
            return self._assign(f"_pt_{function}", f"{xp}.{function}([{', '.join(children)}], axis={node.axis})")
        if kind in ("BasicIndex", "AdvancedIndexInContiguousAxes", "AdvancedIndexInNoncontiguousAxes"):
            return self._assign("_pt_index", f"{children[0]}[{self._index_key(node, iter(children[1:]))}]")
        if kind == "Sort":
            function = "sort" if node.result == "values" else "argsort"
            call = f"{xp}.{function}({children[0]}, axis={node.axis}, stable=True, descending={node.descending})"
            if function == "argsort":
                call += f".astype({self.np}.int64)"
            return self._assign("_pt_sort", call)
        if kind == "Scan":
            function = "cumsum" if node.op == "sum" else "cumprod"
            return self._assign(
                f"_pt_{function}", f"{xp}.{function}({children[0]}, axis={node.axis}, dtype={children[0]}.dtype)"
            )
        if kind == "SearchSorted":
            return self._assign(
                "_pt_searchsorted",
                f"{xp}.searchsorted({children[0]}, {children[1]}, side={node.side!r}).astype({self.np}.int64)",
            )
        if kind == "Scatter":
            return self._scatter(node, shape, *children)
        if kind == "Nonzero":
            raise NotImplementedError(
                "a Nonzero node (nonzero, x[mask]): its length depends on the data, and the generated "
                "code has fixed shapes"
            )
        raise NotImplementedError(f"a {kind} node has no numpy-like code")

    def _index_key(self, node, arrays):
        items = []
        for item, length in zip(node.indices, node.array.shape, strict=True):
            if isinstance(item, slice):
                # normalized bounds, left out at the ends of the axis (a slice that runs down
                # through 0 stops at -1, which Python would read as the last element)
                first, end = (0, length) if item.step > 0 else (length - 1, -1)
                start = "" if item.start == first else item.start
                stop = "" if item.stop == end else item.stop
                items.append(f"{start}:{stop}" + ("" if item.step == 1 else f":{item.step}"))
            elif hasattr(item, "node_type"):
                items.append(next(arrays))
            else:
                items.append(str(int(item)))
        return ", ".join(items) + ("," if len(items) == 1 else "") if items else "()"

    def _scatter(self, node, shape, array, positions, values):
        """``array`` with ``values`` set at (or added to) its flat ``positions``: numpy's
        ``a.flat[p] = v`` (the last of repeated positions wins) and ``np.add.at``."""
        xp, np_ = self.xp, self.np
        size = int(np.prod(shape, dtype=np.int64))
        flat = self._assign("_pt_flat", f"{xp}.ravel({array})")
        where = self._assign("_pt_positions", f"{xp}.ravel({positions})")
        where = self._assign("_pt_positions", f"{xp}.where({where} < 0, {where} + {size}, {where})")
        items = self._assign("_pt_values", f"{xp}.ravel({values})")
        if node.mode == "add":
            result = f"{flat}.at[{where}].add({items}.astype({flat}.dtype))"
        else:
            # which write wins each position: the last in order, as numpy's
            order = self._assign("_pt_order", f"{xp}.arange({items}.shape[0])")
            last = self._assign("_pt_last", f"{xp}.full(({size},), -1).at[{where}].max({order})")
            result = f"{xp}.where({last} >= 0, {items}[{xp}.maximum({last}, 0)].astype({flat}.dtype), {flat})"
        return self._assign("_pt_scatter", f"{xp}.reshape({result}, {shape}).astype({np_}.dtype({str(node.dtype)!r}))")


class _Iname:
    """An iname's values ``lower..upper`` along axis ``axis`` of the lambda's evaluation."""

    __slots__ = ("axis", "lower", "upper")

    def __init__(self, axis, lower, upper):
        self.axis, self.lower, self.upper = axis, lower, upper


class _Const:
    """A constant of an expression: a numpy scalar."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def index_below(self, length):
        """Whether it is an integer index into an axis of ``length``."""
        return self.value.dtype.kind in "iu" and 0 <= int(self.value) < length


class _IndexLambdaWriter:
    """The assignments of one index lambda (see the module's doc)."""

    def __init__(self, writer, node):
        self.w = writer
        self.node = node
        self.shape = _static_shape(node, "an index lambda")
        self.entries = node._expr_entries
        self.bindings = dict(node.bindings)
        reductions = [e for e in self.entries if e[0] == "reduce"]
        # one axis per reduction iname, after the output axes
        self.reduction_axis = {}
        for entry in reductions:
            for iname, lower, upper in entry[2]:
                for bound in (lower, upper):
                    if not isinstance(bound, (int, np.integer)):
                        raise NotImplementedError(
                            f"a reduction over {iname} from {lower} to {upper}: bounds that are not "
                            "numbers have no fixed shape in the generated code"
                        )
                self.reduction_axis.setdefault(iname, len(self.shape) + len(self.reduction_axis))
        self.ndim = len(self.shape) + len(self.reduction_axis)
        self.bounds_of_entry = self._reduction_bounds()
        self._aranges = {}

    def _reduction_bounds(self):
        """For each entry that reads a reduction iname, the bounds of the reduction it is in."""
        bounds, stack = {}, []
        for k, entry in enumerate(self.entries):
            kind = entry[0]
            arity = entry[2] if kind in ("subscript", "call") else _FIXED_ARITY[kind]
            open_reads = [read for operand in stack[len(stack) - arity :] for read in operand] if arity else []
            del stack[len(stack) - arity :]
            if kind == "var" and entry[1] in self.reduction_axis:
                open_reads = [(k, entry[1])]
            elif kind == "reduce":
                ranges = {iname: (int(lower), int(upper)) for iname, lower, upper in entry[2]}
                for position, iname in open_reads:
                    if iname in ranges:
                        bounds[position] = ranges[iname]
                open_reads = [(p, i) for p, i in open_reads if i not in ranges]
            stack.append(open_reads)
        return bounds

    def _assign(self, source):
        return self.w._assign("_pt_tmp", source)

    def _operand(self, value):
        """Source for ``value`` as an array or scalar operand."""
        if isinstance(value, _Iname):
            key = (value.axis, value.lower, value.upper)
            if key not in self._aranges:
                extent = [1] * self.ndim
                extent[value.axis] = value.upper - value.lower
                self._aranges[key] = self._assign(
                    f"{self.w.xp}.arange({value.lower}, {value.upper}, dtype={self.w.np}.int64).reshape({tuple(extent)})"
                )
            return self._aranges[key]
        if isinstance(value, _Const):
            return _constant(value.value, self.w.np)
        return value

    def write(self):
        w, xp = self.w, self.w.xp
        stack = []
        for k, entry in enumerate(self.entries):
            kind = entry[0]
            if kind == "const":
                stack.append(_Const(np.asarray(entry[1])[()]))
            elif kind == "var":
                stack.append(self._variable(k, entry[1]))
            elif kind == "subscript":
                name, n = entry[1], entry[2]
                indices = stack[len(stack) - n :]
                del stack[len(stack) - n :]
                stack.append(self._subscript(name, indices))
            elif kind == "unary":
                stack.append(self._assign(f"{xp}.{_UNARY[entry[1]]}({self._operand(stack.pop())})"))
            elif kind in ("binary", "compare"):
                b, a = self._operand(stack.pop()), self._operand(stack.pop())
                function = _BINARY[entry[1]] if kind == "binary" else _COMPARE[entry[1]]
                stack.append(self._assign(f"{xp}.{function}({a}, {b})"))
            elif kind == "if":
                else_, then, condition = (self._operand(stack.pop()) for _ in range(3))
                stack.append(self._assign(f"{xp}.where({condition}, {then}, {else_})"))
            elif kind == "cast":
                stack.append(self._assign(f"{xp}.asarray({self._operand(stack.pop())}).astype({w.np}.dtype({entry[1]!r}))"))
            elif kind == "call":
                n = entry[2]
                args = [self._operand(v) for v in stack[len(stack) - n :]]
                del stack[len(stack) - n :]
                stack.append(self._call(entry[1], args))
            elif kind == "reduce":
                stack.append(self._reduce(entry, self._operand(stack.pop())))
            else:
                raise NotImplementedError(f"an expression entry of kind {kind!r}")
        (value,) = stack
        value = self._operand(value)
        if self.ndim > len(self.shape):
            # the reduction axes, each of length 1 now
            value = self._assign(f"{xp}.reshape({value}, {xp}.shape({value})[:{len(self.shape)}])")
        return self._assign(
            f"{xp}.broadcast_to({value}, {self.shape}).astype({w.np}.dtype({str(self.node.dtype)!r}))"
        )

    def _variable(self, k, name):
        if name in self.bindings:
            return self.w._of(self.bindings[name])
        match = _AXIS_INAME.match(name)
        if match and int(match.group(1)) < len(self.shape):
            axis = int(match.group(1))
            return _Iname(axis, 0, self.shape[axis])
        if name in self.reduction_axis:
            lower, upper = self.bounds_of_entry[k]
            return _Iname(self.reduction_axis[name], lower, upper)
        raise NotImplementedError(f"the variable {name!r} in an index lambda (size parameters are not supported)")

    def _subscript(self, name, indices):
        binding = self.bindings[name]
        array = self.w._of(binding)
        if not indices:
            return array
        lengths = _static_shape(binding, f"binding {name}")
        axes = [i.axis for i in indices if isinstance(i, _Iname)]
        plain = len(set(axes)) == len(axes) and all(
            (isinstance(i, _Iname) and 0 <= i.lower and i.upper <= length)
            or (isinstance(i, _Const) and i.index_below(length))
            for i, length in zip(indices, lengths, strict=True)
        )
        if not plain:
            # a gather: the index arrays broadcast over the evaluation's axes
            return self._assign(f"{array}[{', '.join(self._operand(i) for i in indices)}]")
        key = []
        for i, length in zip(indices, lengths, strict=True):
            if isinstance(i, _Iname):
                key.append(":" if (i.lower, i.upper) == (0, length) else f"{i.lower}:{i.upper}")
            else:
                key.append(str(int(i.value)))
        value = array if all(k == ":" for k in key) else self._assign(f"{array}[{', '.join(key)},]")
        if not axes:
            return value
        order = sorted(range(len(axes)), key=lambda k: axes[k])
        if order != list(range(len(axes))):
            value = self._assign(f"{self.w.xp}.transpose({value}, {tuple(order)})")
        extent = [1] * self.ndim
        for i in indices:
            if isinstance(i, _Iname):
                extent[i.axis] = i.upper - i.lower
        if sorted(axes) != list(range(self.ndim)):
            value = self._assign(f"{self.w.xp}.reshape({value}, {tuple(extent)})")
        return value

    def _call(self, function, args):
        xp, np_ = self.w.xp, self.w.np
        if function in _SAME_NAME_FUNCTIONS:
            return self._assign(f"{xp}.{function}({', '.join(args)})")
        if function == "zero":
            return self._assign(f"{xp}.zeros_like({args[0]})")
        if function == "normalize_index":
            # numpy's reading of a negative index (the module cannot raise for one out of range)
            i, n = args[0], args[1]
            return self._assign(f"{xp}.where({i} < 0, {i} + {n}, {i})")
        if function in ("integer_exponent", "require_non_negative"):
            # checks the library raises for; the value passes through
            return args[0]
        if function == "complex":
            return self._assign(f"{self.w.lax}.complex({args[0]}, {args[1]})")
        if function == "textbook_product":
            a, b = args
            re_a, im_a, re_b, im_b = (self._assign(f"{xp}.{part}({z})") for z in (a, b) for part in ("real", "imag"))
            return self._assign(
                f"{self.w.lax}.complex({re_a} * {re_b} - {im_a} * {im_b}, {re_a} * {im_b} + {im_a} * {re_b})"
            )
        if function == "ldexp":
            return self._assign(f"{xp}.ldexp({args[0]}, {xp}.asarray({args[1]}).astype({np_}.int32))")
        if function == "frexp_mantissa":
            return self._assign(f"{xp}.frexp({args[0]})[0]")
        if function == "frexp_exponent":
            return self._assign(f"{xp}.frexp({args[0]})[1].astype({np_}.int32)")
        raise NotImplementedError(f"the function {function!r} in an index lambda")

    def _reduce(self, entry, inner):
        xp, np_ = self.w.xp, self.w.np
        op, ranges, start = entry[1], entry[2], entry[3]
        axes = tuple(sorted(self.reduction_axis[iname] for iname, _, _ in ranges))
        extent = [1] * self.ndim
        for iname, lower, upper in ranges:
            extent[self.reduction_axis[iname]] = int(upper) - int(lower)
        terms = self._assign(f"{xp}.broadcast_to({inner}, {np_}.broadcast_shapes({xp}.shape({inner}), {tuple(extent)}))")
        keywords = f"axis={axes}, keepdims=True"
        if op in ("sum", "product"):
            keywords += f", dtype={terms}.dtype"
        if op in ("max", "min") and any(extent[a] == 0 for a in axes):
            keywords += f", initial=_pt_empty_{op}({terms}.dtype)"
            self.w.needs_empty_extrema = True
        result = self._assign(f"{xp}.{_REDUCTIONS[op]}({terms}, {keywords})")
        if start is not None:
            # numpy's product with ``initial``: the start multiplied in
            result = self._assign(f"{_constant(start, np_)} * {result}")
        return result


# The start of a maximum (minimum) over an empty range: the library's neutral elements.
_EMPTY_EXTREMA = """
def _pt_empty_max(dtype):
    if {np}.issubdtype(dtype, {np}.floating):
        return -{np}.inf
    return False if dtype == {np}.bool_ else {np}.iinfo(dtype).min


def _pt_empty_min(dtype):
    if {np}.issubdtype(dtype, {np}.floating):
        return {np}.inf
    return True if dtype == {np}.bool_ else {np}.iinfo(dtype).max
"""


def generate_numpy_like(expr, target, function_name, show_code, entrypoint_decorators=(), extra_preambles=(),
                        colorize_show_code=None):
    """The program of ``expr`` (an array, a :class:`~pytato_rs.DictOfNamedArrays` or a mapping
    of names to arrays) for ``target`` (a
    :class:`~pytato_rs.target.python.NumpyLikePythonTarget`): one function ``function_name``,
    decorated by ``entrypoint_decorators`` (names the ``extra_preambles``, lines of source, define).
    It returns an array for an array, and a dict by name otherwise. ``show_code`` prints the
    source; ``colorize_show_code`` is accepted for pytato's signature (the source is printed
    plain)."""
    from ... import _native
    from ...transform import inline_calls, tag_all_calls_to_be_inlined

    single = isinstance(expr, _native.Array)
    if not single and not isinstance(expr, _native.DictOfNamedArrays):
        expr = _native.make_dict_of_named_arrays(dict(expr))
    if not function_name.isidentifier() or keyword.iskeyword(function_name):
        raise ValueError(f"function_name {function_name!r} is not a Python identifier")
    if _has_calls(expr):
        expr = inline_calls(tag_all_calls_to_be_inlined(expr))
    outputs = {} if single else {name: expr[name].expr for name in expr}
    roots = [expr] if single else list(outputs.values())

    inputs = {n.name for n in _postorder(roots) if n.node_type in ("Placeholder", "DataWrapper") and n.name}
    names = _Names(inputs | {function_name})
    np_name, xp_name, lax_name = (
        names.fresh("_pt_np"),
        names.fresh(target.numpy_like_module_name_shorthand),
        names.fresh("_pt_lax"),
    )
    for helper in ("_pt_empty_max", "_pt_empty_min", *entrypoint_decorators):
        if helper in inputs:
            raise ValueError(f"an input named {helper!r} takes a name the generated code needs")
        names.fresh(helper)
    writer = NumpyLikeWriter(names, np_name, xp_name, lax_name)
    results = writer.write(roots)

    if single:
        returned = results[0]
    else:
        returned = "{" + ", ".join(f"{name!r}: {var}" for name, var in zip(outputs, results, strict=True)) + "}"
    preamble = [
        f"import numpy as {np_name}",
        f"import {target.numpy_like_module_name} as {xp_name}",
        f"import jax.lax as {lax_name}" if target.numpy_like_module_name.startswith("jax") else "",
        *extra_preambles,
    ]
    if writer.needs_empty_extrema:
        preamble.append(_EMPTY_EXTREMA.format(np=np_name))
    parameters = [name for name in writer.arguments if name not in writer.keyword_arguments]
    reads = []
    if writer.keyword_arguments:
        # names that are Python keywords cannot be parameters: they come in a dict
        rest = names.fresh("_pt_keyword_arguments")
        parameters.append(f"**{rest}")
        for name, variable in writer.keyword_arguments.items():
            reads += [
                f"if {name!r} not in {rest}:",
                f"    raise TypeError({function_name + ' is missing the keyword argument ' + repr(name)!r})",
                f"{variable} = {rest}[{name!r}]",
            ]
    signature = f"*, {', '.join(parameters)}" if parameters and not parameters[0].startswith("**") else ", ".join(parameters)
    body = [*reads, *writer.lines, f"return {returned}"]
    program = "\n".join(
        [
            *(line for line in preamble if line),
            "",
            "",
            *(f"@{decorator}" for decorator in entrypoint_decorators),
            f"def {function_name}({signature}):",
            *(f"    {line}" for line in body),
            "",
        ]
    )
    if show_code:
        print(program)
    return target.bind_program(
        program, function_name, expected_arguments=frozenset(writer.arguments),
        bound_arguments=dict(writer.bound_arguments),
    )


def _has_calls(expr):
    from ...analysis import get_num_call_sites

    return get_num_call_sites(expr) > 0
