"""Pickling of expressions: a DAG is written as its nodes in postorder, each with what its
function needs to build it again (children by position), and rebuilt with those functions, so
that ``pickle.loads(pickle.dumps(expr)) == expr``. Both directions use an explicit stack: deep
DAGs pickle without recursion. Index lambdas travel as their expressions listed exactly (the
library's operations, dtypes and constants; see ``expr_entries.rs``) with their conditions on the
sizes; where nodes were created (``non_equality_tags``) is not kept. Host steps (sorts, scans,
binary searches, mask positions, scatters) are rebuilt as the nodes they are; calls are not
picklable yet (a ``pickle.PicklingError`` says so)."""

from __future__ import annotations

import pickle

import numpy as np

from .utils import are_shape_components_equal

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_spec(node):
    """The subscripts of an einsum node: output axes first, then reductions."""
    from .array import EinsumElementwiseAxis

    ndim = len(node.shape)

    def letter(axis):
        index = axis.dim if isinstance(axis, EinsumElementwiseAxis) else ndim + axis.dim
        return _LETTERS[index]

    operands = ",".join("".join(letter(a) for a in access) for access in node.access_descriptors)
    return f"{operands}->{_LETTERS[:ndim]}"


# The host steps' fields besides their children, rebuilt as the node itself (the frontend
# functions that made them add casts and wrappers, which are records of their own).
_HOST_STEP_FIELDS = {"Nonzero": ("count",), "Sort": ("axis", "descending", "result"), "Scan": ("axis", "op"),
                     "SearchSorted": ("side",), "Scatter": ("mode",)}


def _from_end(position, length):
    """A normalized index or slice bound as Python's index syntax takes it: a number as it is, a
    symbolic position ``length - k`` as ``-k`` (counted from the end, as it was written)."""
    if isinstance(position, int):
        return position
    offset = position - length
    if isinstance(offset, int) and offset < 0:
        return offset
    raise pickle.PicklingError(f"an index position {position} on an axis of length {length} has no index syntax")


def _fields(node):
    """What rebuilding ``node`` needs besides its children, by kind."""
    kind = node.node_type
    if kind == "Placeholder":
        return (node.name, node.shape, node.dtype)
    if kind == "SizeParam":
        return (node.name,)
    if kind == "DataWrapper":
        # the declared shape (it may name size parameters); the values as they were wrapped
        return (np.asarray(node._evaluated), node.name, node.shape)
    if kind == "IndexLambda":
        descriptors = {k: d.tags for k, d in node.var_to_reduction_descr.items()}
        # the expression exactly (typing a pymbolic expression again may build an equivalent
        # one of another shape), and the conditions on the sizes, which the expression does not
        # hold (a maximum over a symbolic axis must not be empty: without them the rebuilt node
        # would give -inf where numpy raises)
        return (node._expr_entries, node.shape, tuple(node.bindings), descriptors, node._size_checks)
    if kind == "Einsum":
        return (_einsum_spec(node), {a.dim: d.tags for a, d in node.redn_axis_to_redn_descr.items()})
    if kind == "Reshape":
        return (node.newshape, node.order)
    if kind == "Roll":
        return (node.shift, node.axis)
    if kind == "AxisPermutation":
        return (node.axis_permutation,)
    if kind in ("Stack", "Concatenate"):
        return (node.axis,)
    if kind in ("BasicIndex", "AdvancedIndexInContiguousAxes", "AdvancedIndexInNoncontiguousAxes"):
        items = []
        for length, item in zip(node.array.shape, node.indices, strict=True):
            if isinstance(item, slice):
                # bounds at the ends of the axis as None (they may be symbolic lengths, and a
                # normalized slice running down through 0 stops at -1, which a slice would read
                # as the last element)
                first, end = (0, length) if item.step > 0 else (length - 1, -1)
                start = None if are_shape_components_equal(item.start, first) else _from_end(item.start, length)
                stop = None if are_shape_components_equal(item.stop, end) else _from_end(item.stop, length)
                items.append(("slice", start, stop, item.step))
            elif hasattr(item, "node_type"):
                items.append(("array",))
            else:
                items.append(("int", _from_end(item, length)))
        return (tuple(items),)
    if kind in _HOST_STEP_FIELDS:
        return tuple(getattr(node, name) for name in _HOST_STEP_FIELDS[kind])
    if kind == "DistributedRecv":
        return (node.src_rank, node.comm_tag, node.shape, node.dtype)
    if kind == "DistributedSendRefHolder":
        # children: the array passed through, then the array sent
        return (node.send.dest_rank, node.send.comm_tag)
    raise pickle.PicklingError(f"pickling a {kind} node is not supported yet")


def _build(kind, fields, children):
    from . import _native

    if kind == "Placeholder":
        name, shape, dtype = fields
        return _native.make_placeholder(name, shape, dtype)
    if kind == "SizeParam":
        return _native.make_size_param(fields[0])
    if kind == "DataWrapper":
        data, name, shape = fields
        return _native.make_data_wrapper(data, name=name, shape=shape)
    if kind == "IndexLambda":
        entries, shape, names, descriptors, checks = fields
        node = _native._index_lambda_from_entries(entries, shape, dict(zip(names, children, strict=True)), descriptors)
        return node._with_size_checks(checks)
    if kind == "Einsum":
        from .array import EinsumReductionAxis

        spec, descriptors = fields
        node = _native.einsum(spec, *children)
        for r, tags in descriptors.items():
            if tags:
                node = node.with_tagged_reduction(EinsumReductionAxis(r), tags)
        return node
    if kind == "Reshape":
        return _native.reshape(children[0], fields[0], fields[1])
    if kind == "Roll":
        return _native.roll(children[0], fields[0], fields[1])
    if kind == "AxisPermutation":
        return _native.transpose(children[0], list(fields[0]))
    if kind == "Stack":
        return _native.stack(children, fields[0])
    if kind == "Concatenate":
        return _native.concatenate(children, fields[0])
    if kind in _HOST_STEP_FIELDS:
        return _native._host_step_node(kind, children, dict(zip(_HOST_STEP_FIELDS[kind], fields, strict=True)))
    if kind == "DistributedRecv":
        src_rank, comm_tag, shape, dtype = fields
        return _native.make_distributed_recv(src_rank, comm_tag, shape, dtype)
    if kind == "DistributedSendRefHolder":
        dest_rank, comm_tag = fields
        passthrough, sent = children
        return _native.staple_distributed_send(sent, dest_rank, comm_tag, passthrough)
    # indexing: the array, then the index arrays in order
    arrays = iter(children[1:])
    key = []
    for item in fields[0]:
        if item[0] == "slice":
            key.append(slice(*item[1:]))
        elif item[0] == "array":
            key.append(next(arrays))
        else:
            key.append(item[1])
    return children[0][tuple(key)]


def records(root):
    """The nodes of the DAG below ``root`` in postorder: ``(kind, fields, children, tags,
    axes' tags)``, children as positions of earlier records."""
    return _postorder([root])[0]


def _postorder(roots):
    """The records of the nodes below all of ``roots`` (each node once, however many roots
    share it), and the position of each root's record."""
    position, out = {}, []
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if node._node_id in position:
                continue
            children = node._children()
            if not children_done:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(children) if c._node_id not in position)
                continue
            position[node._node_id] = len(out)
            axes = tuple(axis.tags for axis in node.axes)
            out.append((node.node_type, _fields(node), tuple(position[c._node_id] for c in children), node.tags, axes))
    return out, [position[root._node_id] for root in roots]


def _rebuild_all(entries):
    """Every node :func:`records` wrote, in its order."""
    from .tags import Axis

    built = []
    for kind, fields, children, tags, axes in entries:
        node = _build(kind, fields, [built[k] for k in children])
        if tags:
            node = node.tagged(tags)
        if any(axes):
            node = node.copy(axes=tuple(Axis(t) for t in axes))
        built.append(node)
    return built


def rebuild(entries):
    """The DAG :func:`records` wrote: its last node."""
    return _rebuild_all(entries)[-1]


def dict_records(outputs):
    """The records of the entries of a :class:`DictOfNamedArrays`, written once for all of them
    (a node several outputs share comes back as one node: a data wrapper with one copy of its
    data, a mask with one count), and each output's position among them, by name."""
    names = list(outputs)
    out, roots = _postorder([outputs[name].expr for name in names])
    return out, dict(zip(names, roots))


def rebuild_dict(entries):
    """A :class:`DictOfNamedArrays` from :func:`dict_records`'s records and positions."""
    from . import _native

    out, roots = entries
    built = _rebuild_all(out)
    return _native.make_dict_of_named_arrays({name: built[k] for name, k in roots.items()})
