"""nki.collectives across simulated ranks (collectives.md): one kernel thread per rank."""

from __future__ import annotations

import numpy as np
import pytest
from isa_tiles import HBM, new, raw, tile
from nki_studio.model.targets import Generation, Target
from nki_studio.sim import collectives as ncc
from nki_studio.sim import language as nl
from nki_studio.sim.context import SimOptions
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.launch import run_kernel


def run(kernel, ranks: int) -> list:
    """Per-rank outputs of ``kernel`` run as ``ranks`` collective ranks."""
    opts = SimOptions(target=Target(generation=Generation.GEN3), ranks=ranks)
    return run_kernel(kernel, (), {}, opts, grid=True, deadline_s=30).rank_outputs


def _mine(shape=(4, 3)):
    return tile(np.full(shape, ncc.rank_id().sim_value() + 1.0), np.float32, HBM)


def _all_reduce():
    dst = new((4, 3), np.float32, HBM)
    ncc.all_reduce([_mine()], [dst], ncc.ReplicaGroup([[0, 1, 2, 3]]), op=nl.add)
    return dst


def test_all_reduce_four_ranks():
    outs = run(_all_reduce, 4)
    assert len(outs) == 4 and all(np.all(o == 10) for o in outs)


def _gather_in_groups():
    dst = new((4, 3), np.float32, HBM)
    ncc.all_gather([_mine((2, 3))], [dst], ncc.ReplicaGroup([[0, 2], [1, 3]]), collective_dim=0)
    return dst


def test_all_gather_in_two_groups():
    outs = run(_gather_in_groups, 4)
    assert outs[0][:, 0].tolist() == [1, 1, 3, 3] and outs[3][:, 0].tolist() == [2, 2, 4, 4]


def _reduce_scatter_and_a2a():
    r = ncc.rank_id().sim_value()
    src = tile(np.arange(4 * 3, dtype=np.float32).reshape(4, 3) + 100 * r, np.float32, HBM)
    rs = new((2, 3), np.float32, HBM)
    ncc.reduce_scatter([src], [rs], ncc.ReplicaGroup([[0, 1]]), collective_dim=0, op=nl.maximum)
    a2a = new((4, 3), np.float32, HBM)
    ncc.all_to_all([src], [a2a], ncc.ReplicaGroup([[0, 1]]), collective_dim=0)
    return rs, a2a


def test_reduce_scatter_and_all_to_all():
    (rs0, a0), (rs1, a1) = run(_reduce_scatter_and_a2a, 2)
    base = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(rs0, base[:2] + 100)
    np.testing.assert_array_equal(rs1, base[2:] + 100)
    np.testing.assert_array_equal(a0, np.concatenate([base[:2], base[:2] + 100]))
    np.testing.assert_array_equal(a1, np.concatenate([base[2:], base[2:] + 100]))


def _permutes():
    mine = _mine((1, 3))
    dst = tile(np.zeros((1, 3)), np.float32, HBM)
    ncc.collective_permute([mine], [dst], [(0, 1), (1, 2), (2, 0)])
    ring = new((1, 3), np.float32, HBM)
    rg = ncc.ReplicaGroup([[0, 1, 2]])
    ncc.collective_permute_implicit([[mine]], [[ring]], rg)
    who = ncc.collective_permute_implicit_current_processing_rank_id(1, rg).sim_value()
    red = new((1, 3), np.float32, HBM)
    ncc.collective_permute_implicit_reduce([[mine]], [[mine]], [[red]], rg, op=nl.add)
    return dst, ring, red, who


def test_permutes_and_ring():
    outs = run(_permutes, 3)
    assert [o[0][0, 0] for o in outs] == [3, 1, 2]  # from 2, 0, 1
    assert [o[1][0, 0] for o in outs] == [3, 1, 2]  # ring predecessor
    assert [o[2][0, 0] for o in outs] == [6, 2, 4]  # predecessor's x + x
    assert [o[3] for o in outs] == [2, 0, 1]  # rank processed at step 1


def test_single_rank_all_reduce_is_identity_and_missing_ranks_error(sim):
    src, dst = tile(np.ones((2, 2)), np.float32, HBM), new((2, 2), np.float32, HBM)
    ncc.all_reduce([src], [dst], ncc.ReplicaGroup([[0]]), op=nl.add)
    assert raw(dst).tolist() == [[1, 1], [1, 1]]
    with pytest.raises(HardwareLimitError, match="ranks \\[1\\] do not exist"):
        ncc.all_reduce([src], [dst], ncc.ReplicaGroup([[0, 1]]), op=nl.add)
    with pytest.raises(HardwareLimitError, match="must not overlap"):
        ncc.ReplicaGroup([[0, 1], [1, 2]])
    with pytest.raises(HardwareLimitError, match="all in HBM or all in SBUF"):
        ncc.all_reduce([src], [new((2, 2))], ncc.ReplicaGroup([[0]]), op=nl.add)
    with pytest.raises(HardwareLimitError, match="needs LNC=2"):
        ncc.all_gather_v([src], [dst], ncc.ReplicaGroup([[0]]), src)


def _lnc2_all_reduce():
    # per-core buffers: the n-th shared_hbm allocation of both cores is one tensor (a race between them)
    core = nl.program_id(0)
    src = tile(np.full((1, 2), 10.0 * core + ncc.rank_id().sim_value()), np.float32, nl.private_hbm)
    dst = new((1, 2), np.float32, nl.private_hbm)
    ncc.all_reduce([src], [dst], ncc.ReplicaGroup([[0, 1]]), op=nl.add)
    return raw(dst)


def test_under_lnc2_each_core_reduces_with_the_same_core_of_other_ranks():
    opts = SimOptions(target=Target(generation=Generation.GEN3), ranks=2, lnc=2)
    run_ = run_kernel(_lnc2_all_reduce, (), {}, opts, grid=True, deadline_s=30)
    assert [o[0, 0] for o in run_.rank_outputs] == [1.0, 1.0]  # core 0 of ranks 0 and 1: 0 + 1


def _gather_v():
    r = ncc.rank_id().sim_value()
    src = tile(np.arange(8, dtype=np.float32).reshape(1, 8) + 10 * r, np.float32, HBM)
    dst = tile(np.full((1, 16), -1.0), np.float32, HBM)
    meta = tile(np.array([[r + 1, 0, 0, 0], [r, 0, 0, 0], [0, 0, 0, 0]]), np.uint32, HBM)
    ncc.all_gather_v([src], [dst], ncc.ReplicaGroup([[0, 1, 2, 3]]), meta)
    return dst, meta


def test_all_gather_v_chunks_and_recv_counts():
    opts = SimOptions(target=Target(generation=Generation.GEN3), ranks=4, lnc=2)
    outs = run_kernel(_gather_v, (), {}, opts, grid=True, deadline_s=30).rank_outputs
    dst, meta = outs[2]
    expect = np.full(16, -1.0)
    for s in range(4):  # rank s sends s+1 elements from displacement s: 10s+s ...
        expect[4 * s : 4 * s + s + 1] = 10 * s + np.arange(s, 2 * s + 1)
    np.testing.assert_array_equal(dst.reshape(-1), expect)
    assert meta[2].tolist() == [1, 2, 3, 4]


def _a2a_v():
    r = ncc.rank_id().sim_value()
    src = tile(np.arange(6, dtype=np.float32).reshape(1, 6) + 100 * r, np.float32, HBM)
    dst = tile(np.zeros((1, 8)), np.float32, HBM)
    # rank r sends 1 element (from 0) to rank 0 and 3 elements (from 2) to rank 1
    meta = tile(np.array([[1, 3], [0, 2], [0, 0]]), np.uint32, HBM)
    rg = ncc.ReplicaGroup([[0, 1]])
    handle = ncc.all_to_all_v_prepare([src], [dst], rg, meta)
    ncc.all_to_all_v_trigger(handle)
    with pytest.raises(HardwareLimitError, match="pending"):
        ncc.all_to_all_v_trigger(handle)
    return dst, meta


def test_all_to_all_v_with_prepare_trigger():
    (d0, m0), (d1, m1) = run(_a2a_v, 2)
    assert d0.reshape(-1).tolist() == [0, 0, 0, 0, 100, 0, 0, 0]
    assert d1.reshape(-1).tolist() == [2, 3, 4, 0, 102, 103, 104, 0]
    assert m0[2].tolist() == [1, 1] and m1[2].tolist() == [3, 3]
