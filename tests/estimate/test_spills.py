"""SBUF spills (issue 27, item 2): a kernel whose program-order SBUF peak exceeds the capacity pays a store and
a reload of whole tiles covering the overflow as DMA, on its own queues, before the instructions that need the
room or the data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from nki_studio.estimate.profile import estimate_profile, profile_from_schedule
from nki_studio.estimate.schedule import schedule
from nki_studio.estimate.spills import RELOAD_OP, SAVE_OP, SPILL_TENSOR, spill_transfers, with_spills
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.metrics import compute_metrics
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import Operand, TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, as_compact

TILE = 32 * 1024  # bytes per partition of one [128, 8192] FP32 tile

# ``count`` tiles loaded, then summed into a tenth tile: count + 1 tiles live when the sum starts
HOLD_KERNEL = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def hold(x):
    count = x.shape[0] // 128
    out = nl.ndarray((128, 8192), dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = []
    for i in range(count):
        t = nl.ndarray((128, 8192), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        tiles.append(t)
    acc = nl.ndarray((128, 8192), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=acc, src=tiles[0])
    for t in tiles[1:]:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out
"""


def _trace(tmp_path: Path, count: int, generation: Generation) -> CompactTrace:
    kernel = tmp_path / "hold.py"
    kernel.write_text(HOLD_KERNEL)
    x = np.ones((count * 128, 8192), np.float32)
    result = simulate(str(kernel), x, trace=True, target=generation, capacity="warn")
    assert result.trace is not None
    return as_compact(list(result.trace))


@pytest.mark.parametrize("generation", [Generation.GEN2, Generation.GEN3])
def test_the_overflow_is_saved_and_reloaded_as_dma(tmp_path: Path, generation: Generation) -> None:
    count = 8  # 9 tiles of 32 KiB live: 288 KiB per partition, over 192 (trn1) and 224 KiB (trn2)
    trace = _trace(tmp_path, count, generation)
    target = Target(generation)
    overflow = (count + 1) * TILE - target.limits.sbuf_bytes_per_partition
    transfers, _ = spill_transfers(trace, target.limits)
    assert {t.nbytes for t in transfers} == {TILE}  # whole tiles
    saved = sum(t.nbytes for t in transfers if t.save)
    assert saved >= overflow
    assert sum(t.nbytes for t in transfers if not t.save) == saved  # every spilled tile is used again
    # the first save makes room for the load that overflows, and its victim is not that load's tile
    first = next(t for t in transfers if t.save)
    assert trace[first.before].op == "nisa.dma_copy" and first.room and first.victim not in first.room

    spilled = with_spills(trace, target.limits)
    saves = [i for i, e in enumerate(spilled) if e.op == SAVE_OP]
    reloads = [i for i, e in enumerate(spilled) if e.op == RELOAD_OP]
    assert saves and reloads and max(saves) < min(reloads)
    # each reload comes just before the instruction that reads the data back
    for i in reloads:
        victim = spilled[i].operands[0].storage
        assert victim in {o.storage for o in spilled[i + 1].operands} or spilled[i + 1].op == RELOAD_OP

    kernel_bytes = (count + 1) * 128 * TILE  # the loads and the store
    profile = estimate_profile(trace, target)
    metrics = compute_metrics(profile)
    assert metrics.kernel.dma_bytes == kernel_bytes + 2 * 128 * saved
    assert SPILL_TENSOR not in {t.name for t in profile.tensors}  # not a kernel input or output
    assert any("VIRTUAL" in s for s in profile.dma.source.values)  # named as measured profiles name spills


def test_no_spill_under_the_capacity(tmp_path: Path) -> None:
    trace = _trace(tmp_path, 4, Generation.GEN2)  # 5 tiles: 160 KiB of 192
    assert spill_transfers(trace, Target(Generation.GEN2).limits)[0] == []
    assert with_spills(trace, Target(Generation.GEN2).limits) is trace


def test_spills_lengthen_the_estimate(tmp_path: Path) -> None:
    target = Target(Generation.GEN2)
    trace = _trace(tmp_path, 8, Generation.GEN2)
    spilled = compute_metrics(estimate_profile(trace, target)).kernel
    # the same instructions scheduled without the spill transfers
    plain = compute_metrics(profile_from_schedule(schedule(trace, target.limits), target)).kernel
    assert spilled.latency_ns > plain.latency_ns


def _load(seq: int, storage: int, core: int) -> TraceEvent:
    """A [128, 8192] FP32 load into tile ``storage`` on logical core ``core``."""
    tile = Operand("dst", (128, 8192), "float32", "sbuf", storage, 0, 128, 0, TILE, TILE)
    src = Operand("src", (128 * 8192,), "float32", "hbm", 0, 0, 0, 0, 128 * TILE, TILE, "x")
    return TraceEvent(
        seq,
        "nisa.dma_copy",
        "dma",
        "k.py",
        1,
        operands=(tile, src),
        partitions=128,
        core=core,
        bytes_read={"hbm": 128 * TILE},
        bytes_written={"sbuf": 128 * TILE},
    )


def _use(seq: int, storage: int, core: int) -> TraceEvent:
    """A Vector instruction reading tile ``storage`` on logical core ``core``."""
    tile = Operand("data", (128, 8192), "float32", "sbuf", storage, 0, 128, 0, TILE, TILE)
    return TraceEvent(
        seq, "nisa.tensor_reduce", "vector", "k.py", 2, operands=(tile,), partitions=128, core=core
    )


def test_each_core_spills_its_own_sbuf() -> None:
    # core 0 holds 7 tiles (224 KiB > 192 KiB on trn1), core 1 holds 6 (192 KiB: fits), interleaved in the trace
    events = []
    for i in range(7):
        events.append(_load(len(events), i, 0))
        if i < 6:
            events.append(_load(len(events), 10 + i, 1))
    events += [_use(len(events) + i, i, 0) for i in range(7)] + [_use(40 + i, 10 + i, 1) for i in range(6)]
    trace = as_compact(events)
    limits = Target(Generation.GEN2).limits
    transfers, _ = spill_transfers(trace, limits)
    assert {trace[t.before].core for t in transfers} == {0}
    assert sum(t.save for t in transfers) == 1 == sum(not t.save for t in transfers)
    spilled = with_spills(trace, limits)
    assert [e.core for e in spilled if e.op in (SAVE_OP, RELOAD_OP)] == [0, 0]


def _produce(seq: int, storage: int) -> TraceEvent:
    """A Vector instruction writing tile ``storage`` (on core 0)."""
    tile = Operand("dst", (128, 8192), "float32", "sbuf", storage, 0, 128, 0, TILE, TILE)
    return TraceEvent(seq, "nisa.memset", "vector", "k.py", 3, operands=(tile,), partitions=128)


def _spill_tensor(event: TraceEvent) -> int:
    return next(o.storage for o in event.operands if o.buffer == "hbm")


def test_spills_queue_per_engine_of_the_spilled_tile() -> None:
    # 8 tiles of 32 KiB live (256 of 192 KiB on trn1): 4 loaded (DMA), 4 written by Vector, then all read back,
    # tile 0 (loaded) and tile 4 (written by Vector) last, so those two are the ones saved (furthest next use)
    events = [_load(i, i, 0) for i in range(4)] + [_produce(4 + i, 4 + i) for i in range(4)]
    events += [_use(8 + i, tile, 0) for i, tile in enumerate((5, 6, 7, 1, 2, 3, 4, 0))]
    spilled = with_spills(as_compact(events), Target(Generation.GEN2).limits)
    moves = [e for e in spilled if e.op in (SAVE_OP, RELOAD_OP)]
    by_victim: dict[int, set[int]] = {}
    for e in moves:
        victim = next(o.storage for o in e.operands if o.buffer == "sbuf" and o.role in ("src", "dst"))
        by_victim.setdefault(victim, set()).add(_spill_tensor(e))
    assert all(len(tensors) == 1 for tensors in by_victim.values())  # a tile's save and reload: one tensor
    loaded = {t for v, ts in by_victim.items() if v < 4 for t in ts}
    computed = {t for v, ts in by_victim.items() if v >= 4 for t in ts}
    # measured profiles name spill queues by engine (qSyncSpillReload0, qVectorSpillReload0): the tiles the DMA
    # loaded and those Vector wrote are spilled through different tensors, so on different DMA queues
    assert loaded and computed and loaded.isdisjoint(computed)


def test_psum_over_its_capacity_is_not_spilled() -> None:
    # five 4 KiB-per-partition PSUM tiles live together (20 of 16 KiB): the compiler reorders, it does not spill
    loads = [
        dataclasses.replace(_load(i, i, 0), operands=(_psum(i), _load(i, i, 0).operands[1])) for i in range(5)
    ]
    uses = [dataclasses.replace(_use(5 + i, i, 0), operands=(_psum(i),)) for i in range(5)]
    assert spill_transfers(as_compact(loads + uses), Target(Generation.GEN2).limits)[0] == []


def _psum(storage: int) -> Operand:
    return Operand("dst", (128, 1024), "float32", "psum", storage, 0, 128, 0, 4096, 4096)


# Legacy block tensors (nl.par_dim not first): each block is a tile the compiler allocates on its own, live from its
# first to its last access (MIG "What are block dimensions?"); AccelOpt's silu has five such tensors, each over SBUF.
LEGACY_BLOCKS = """
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def silu_like(x):
    n = x.shape[0]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((n, nl.par_dim(128), 4096), dtype=x.dtype, buffer=nl.sbuf)
    b = nl.ndarray((n, nl.par_dim(128), 4096), dtype=x.dtype, buffer=nl.sbuf)
    c = nl.ndarray((n, nl.par_dim(128), 4096), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        a[i] = nl.load(x[i])
        b[i] = nl.exp(a[i])
        c[i] = nl.multiply(a[i], b[i])
        nl.store(out[i], value=c[i])
    return out


@nki.jit
def hold_blocks(x):
    n = x.shape[0]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((n, nl.par_dim(128), 4096), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        a[i] = nl.load(x[i])
    for i in nl.affine_range(n):
        nl.store(out[i], value=nl.exp(a[i]))
    return out
"""

BLOCK = 4096 * 4  # bytes per partition of one [128, 4096] FP32 block


def _legacy_trace(tmp_path: Path, kernel: str, blocks: int) -> CompactTrace:
    path = tmp_path / "legacy_blocks.py"
    path.write_text(LEGACY_BLOCKS)
    x = np.ones((blocks, 128, 4096), np.float32)
    result = simulate(str(path), x, trace=True, kernel_name=kernel, target=Generation.GEN2, capacity="warn")
    assert result.trace is not None
    return as_compact(list(result.trace))


def test_block_tensors_larger_than_sbuf_whose_live_blocks_fit_do_not_spill(tmp_path: Path) -> None:
    # three 16-block tensors of 256 KiB per partition each (768 KiB against trn1's 192), one block of each live
    trace = _legacy_trace(tmp_path, "silu_like", 16)
    assert {o.block_bytes for e in trace for o in e.operands if o.buffer == "sbuf"} >= {BLOCK}
    limits = Target(Generation.GEN2).limits
    assert spill_transfers(trace, limits)[0] == []
    assert with_spills(trace, limits) is trace


def test_a_block_tensor_whose_blocks_stay_live_spills_whole_blocks(tmp_path: Path) -> None:
    # every block loaded before the first is read: 16 x 16 KiB = 256 KiB live, 64 KiB over trn1's 192
    trace = _legacy_trace(tmp_path, "hold_blocks", 16)
    limits = Target(Generation.GEN2).limits
    transfers, a = spill_transfers(trace, limits)
    assert a is not None and transfers
    assert {t.nbytes for t in transfers} == {BLOCK}
    saved = sum(t.nbytes for t in transfers if t.save)
    assert 16 * BLOCK - limits.sbuf_bytes_per_partition <= saved < 16 * BLOCK
    # a transfer of the block tensor moves its own block's bytes, so only that block's accesses wait for it
    (blocked,) = {o.storage for e in trace for o in e.operands if o.block_bytes}
    moved = {
        (o.byte_start, o.byte_end)
        for e in with_spills(trace, limits)
        if e.op in (SAVE_OP, RELOAD_OP)
        for o in e.operands
        if o.storage == blocked and o.buffer == "sbuf"
    }
    assert len(moved) > 1 and all(lo % BLOCK == 0 and hi == lo + BLOCK for lo, hi in moved)
