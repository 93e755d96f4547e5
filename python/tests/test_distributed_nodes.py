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
