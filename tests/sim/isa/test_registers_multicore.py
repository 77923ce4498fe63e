"""Registers, NkiScalar load/store, target queries (isa.md §7-§8), core_barrier and sendrecv (§6)."""

from __future__ import annotations

import numpy as np
import pytest
from isa_tiles import HBM, new, raw, tile
from nki_studio.model.targets import Generation, NkiVersion, Target
from nki_studio.sim import context
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.context import SimOptions
from nki_studio.sim.errors import HardwareLimitError, NotImplementedInSimulator
from nki_studio.sim.launch import run_kernel
from nki_studio.sim.scalars import NkiScalar


def test_register_roundtrip(sim):
    r = nisa.register_alloc()
    nisa.register_load(r, tile(np.array([[42]]), np.int32))
    out = new((1, 1), np.int32, HBM)
    nisa.register_store(out, r)
    assert raw(out).tolist() == [[42]]
    nisa.register_move(r, 5)
    nisa.register_store(out, r)
    assert raw(out).tolist() == [[5]]
    with pytest.raises(HardwareLimitError, match="exactly one element"):
        nisa.register_load(r, tile(np.ones((1, 2)), np.int32))


def test_scalar_load_store_is_0_7_only(sim):
    src = tile(np.array([[7]]), np.int32)
    s = nisa.scalar_load(src)
    assert isinstance(s, NkiScalar) and s.sim_value() == 7
    out = new((1, 1), np.int32)
    nisa.scalar_store(out, s * 3 + 1)
    assert raw(out).tolist() == [[22]]
    with pytest.raises(HardwareLimitError, match="must be an NkiScalar"):
        nisa.scalar_store(out, 5)  # type: ignore[arg-type]


def test_scalar_load_rejected_for_nki_0_6():
    with context.session(target=Target(nki_version=NkiVersion(0, 6))):
        with pytest.raises(HardwareLimitError, match=r"NKI 0\.7"):
            nisa.scalar_load(tile(np.array([[7]]), np.int32))


def test_target_queries(trn3):
    assert nisa.get_nc_version() == nisa.nc_version.gen4
    assert nisa.get_nc_sub_version() == 0


def test_removed_names_raise_not_implemented_where_used(sim):
    removed = nisa.tensor_copy_dynamic_src  # importing a removed name works ...
    with pytest.raises(NotImplementedInSimulator, match=r"tensor_copy_dynamic_src.*removed in NKI 0\.4\.0"):
        removed(dst=None, src=None)  # ... using it does not
    with pytest.raises(AttributeError):
        nisa.no_such_instruction  # noqa: B018
    with pytest.raises(NotImplementedInSimulator, match=r"not a documented nki\.isa name"):
        nisa.no_such_instruction  # noqa: B018
    assert not hasattr(nisa, "no_such_instruction") and getattr(nisa, "no_such", None) is None
    with pytest.raises(NotImplementedInSimulator, match="rand_get_state"):
        nisa.rand_get_state(new((1, 6), np.uint32))


def _swap_kernel(data):
    core = nl.program_id(0)
    mine = tile(np.full((2, 3), core + 1.0))
    theirs = new((2, 3))
    nisa.sendrecv(mine, theirs, send_to_rank=1 - core, recv_from_rank=1 - core, pipe_id=0)
    nisa.dma_copy(data[core * 2 : core * 2 + 2, :], theirs)
    nisa.core_barrier(data, (0, 1))
    check = new((4, 3))
    nisa.dma_copy(check, data)
    return raw(check)


def test_sendrecv_and_barrier_between_two_cores():
    data = np.zeros((4, 3), np.float32)
    opts = SimOptions(target=Target(generation=Generation.GEN3), lnc=2)
    run = run_kernel(_swap_kernel, (data,), {}, opts, grid=True, deadline_s=30)
    assert run.output.tolist() == [[2.0] * 3] * 2 + [[1.0] * 3] * 2


def _failing_kernel(data):
    core = nl.program_id(0)
    if core == 1:
        raise ValueError("boom")
    nisa.core_barrier(data, (0, 1))


def test_a_failing_core_releases_the_waiting_one():
    opts = SimOptions(target=Target(generation=Generation.GEN3), lnc=2)
    with pytest.raises(Exception, match="boom"):
        run_kernel(_failing_kernel, (np.zeros((2, 2), np.float32),), {}, opts, grid=True, deadline_s=30)


def test_core_barrier_under_lnc1_warns(sim):
    nisa.core_barrier(tile(np.zeros((2, 2)), buffer=HBM), (0, 1))
    assert any("LNC=1" in w for w in sim.warnings)
    with pytest.raises(HardwareLimitError, match="cores must be"):
        nisa.core_barrier(tile(np.zeros((2, 2)), buffer=HBM), (0, 2))


def test_deprecated_engine_aliases_are_enum_members():
    assert nisa.vector_engine is nisa.engine.vector and nisa.scalar_engine is nisa.engine.scalar
    assert nisa.tensor_engine is nisa.engine.tensor and nisa.gpsimd_engine is nisa.engine.gpsimd
    assert nisa.unknown_engine is nisa.engine.unknown
