"""pytato's distributed nodes built from Python: receives, stapled sends, their fields, and
mappers and analyses that visit them."""

from __future__ import annotations

import numpy as np
import pytest

import pytato_rs as pt


def test_sends_and_receives_read_as_pytatos_nodes():
    x = pt.make_placeholder("x", (4,), np.float64)
    recv = pt.make_distributed_recv(src_rank=1, comm_tag=("halo", 3), shape=(4,), dtype=np.float64)
    assert isinstance(recv, pt.DistributedRecv) and recv.src_rank == 1 and recv.comm_tag == ("halo", 3)
    held = pt.staple_distributed_send(2 * x, dest_rank=0, comm_tag=7, stapled_to=recv + 1)
    assert isinstance(held, pt.DistributedSendRefHolder)
    assert held.send.dest_rank == 0 and held.send.comm_tag == 7 and held.send.data == 2 * x
    assert held.passthrough_data == recv + 1 and held.shape == (4,)
    send = pt.make_distributed_send(2 * x, 0, 7)
    assert pt.make_distributed_send_ref_holder(send, recv + 1) == held
    assert pt.distributed.nodes.make_distributed_recv is pt.make_distributed_recv

    # mappers and analyses see the sent data as a dependency
    outputs = pt.make_dict_of_named_arrays({"y": held})
    nodes = pt.transform.DependencyMapper()(outputs)
    assert pt.analysis.get_num_nodes(outputs, count_duplicates=False) == len(nodes)
    assert any(isinstance(n, pt.Placeholder) for n in nodes)


def test_bad_tags_and_nodes_are_errors():
    with pytest.raises(TypeError, match="communication tag"):
        pt.make_distributed_recv(src_rank=0, comm_tag=1.5, shape=(2,), dtype=np.float64)
    with pytest.raises(TypeError, match="communication tag"):
        pt.make_distributed_send(pt.make_placeholder("x", (2,), np.float64), 0, object())
    # a program with communication must be partitioned: the backends say so
    recv = pt.make_distributed_recv(src_rank=0, comm_tag=1, shape=(2,), dtype=np.float64)
    with pytest.raises(NotImplementedError, match="partition"):
        pt.generate(recv + 1)(**{})


class _BoundaryTag:
    """A tag class, as grudge's communication tags are."""


def test_classes_and_frozensets_are_tags_read_back_as_themselves():
    tag = (_BoundaryTag, frozenset({"a", 2, _BoundaryTag}), ("flux", 1))
    recv = pt.make_distributed_recv(src_rank=0, comm_tag=tag, shape=(2,), dtype=np.float64)
    assert recv.comm_tag == tag
    assert recv.comm_tag[0] is _BoundaryTag
    # A set is one tag whatever order its elements were given in; a tuple keeps its order.
    same = pt.make_distributed_recv(src_rank=0, comm_tag=(_BoundaryTag, frozenset({_BoundaryTag, 2, "a"}),
                                                          ("flux", 1)), shape=(2,), dtype=np.float64)
    assert same == recv
    other = pt.make_distributed_recv(src_rank=0, comm_tag=(_BoundaryTag, frozenset({"a", 2}), ("flux", 1)),
                                     shape=(2,), dtype=np.float64)
    assert other != recv
    # A string that looks like a class's spelling stays a string.
    text = f"{_BoundaryTag.__module__}.{_BoundaryTag.__qualname__}"
    assert pt.make_distributed_recv(src_rank=0, comm_tag=text, shape=(2,), dtype=np.float64).comm_tag == text
    with pytest.raises(TypeError, match="class"):
        pt.make_distributed_recv(src_rank=0, comm_tag=object(), shape=(2,), dtype=np.float64)


def _flux_kernel():
    """A function used as part of a tag, as upstream's mpi-distributed example does."""


def test_functions_are_tags_read_back_as_themselves():
    tag = (_flux_kernel, "x")
    recv = pt.make_distributed_recv(src_rank=0, comm_tag=tag, shape=(2,), dtype=np.float64)
    assert recv.comm_tag == tag and recv.comm_tag[0] is _flux_kernel
    assert recv != pt.make_distributed_recv(src_rank=0, comm_tag=(_flux_kernel, "y"), shape=(2,), dtype=np.float64)
    # Other callables and objects are not tags: ranks could not spell them alike.
    for bad in (print, object()):
        with pytest.raises(TypeError, match="communication tag"):
            pt.make_distributed_recv(src_rank=0, comm_tag=bad, shape=(2,), dtype=np.float64)
