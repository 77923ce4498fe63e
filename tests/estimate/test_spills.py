"""SBUF spills (issue 27, item 2): a kernel whose program-order SBUF peak exceeds the capacity pays a store and
a reload of whole tiles covering the overflow as DMA, on its own queues, before the instructions that need the
room or the data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nki_studio.estimate.profile import estimate_profile, profile_from_schedule
from nki_studio.estimate.schedule import schedule
from nki_studio.estimate.spills import RELOAD_OP, SAVE_OP, SPILL_TENSOR, spill_transfers, with_spills
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.metrics import compute_metrics
from nki_studio.sim.api import simulate
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
