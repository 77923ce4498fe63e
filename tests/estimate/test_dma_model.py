"""The estimate's DMA model at the causes the calibration suite found (issue 27, item 2; benchmarks/calibration/
README.md): tiny transfers count, strided stores into one output do not depend on each other, the issue cost sits
on the queue (on Trainium2 on the core's two hardware DGE instances), and queues follow the tensors rather than the
source line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from nki_studio.estimate import constants as K
from nki_studio.estimate.profile import estimate_profile
from nki_studio.estimate.schedule import schedule
from nki_studio.model.targets import Generation, Target, limits_for
from nki_studio.profile.metrics import compute_metrics
from nki_studio.sim.api import simulate
from nki_studio.sim.trace import Operand, TraceEvent

LIMITS = Target().limits


def _sbuf(role: str, storage: int, nbytes: int, partitions: int = 128) -> Operand:
    return Operand(
        role, (partitions, nbytes // 4), "float32", "sbuf", storage, 0, partitions, 0, nbytes, nbytes
    )


def _hbm(role: str, storage: int, start: int, end: int, row: int, pitch: int = 0) -> Operand:
    return Operand(role, ((end - start) // 4,), "float32", "hbm", storage, 0, 0, start, end, row, "t", pitch)


def _dma(seq: int, dst: Operand, src: Operand, moved: int, line: int = 1) -> TraceEvent:
    return TraceEvent(
        seq,
        "nisa.dma_copy",
        "dma",
        "k.py",
        line,
        operands=(dst, src),
        partitions=max(dst.part_end - dst.part_start, src.part_end - src.part_start, 1),
        bytes_read={src.buffer: moved},
        bytes_written={dst.buffer: moved},
    )


def test_transfers_of_four_bytes_count_in_the_estimated_dma_time() -> None:
    # 64 one-element loads into distinct tiles: a measured profile's "> 4 bytes" filter must not drop them
    events = [_dma(i, _sbuf("dst", 100 + i, 4, 1), _hbm("src", 0, 4 * i, 4 * i + 4, 4), 4) for i in range(64)]
    metrics = compute_metrics(estimate_profile(events, Target()))
    assert metrics.kernel.dma_union_ns > 0
    assert metrics.kernel.dma_bytes == 64 * 4


def _column_store(seq: int, column: int, width: int, storage: int = 9, pitch: int = 4096) -> TraceEvent:
    """A store of an SBUF [128, width/4] FP32 tile into columns column..column+width of HBM [128, pitch/4]."""
    start = column
    end = 127 * pitch + column + width
    out = _hbm("dst", storage, start, end, width, pitch)
    return _dma(seq, out, _sbuf("src", 200 + seq, width), 128 * width)


def test_column_blocks_of_one_output_do_not_depend_on_each_other() -> None:
    left, right = _column_store(0, 0, 2048), _column_store(1, 2048, 2048)
    s = schedule([left, right], LIMITS)
    assert s.start[1] < s.end[0]  # disjoint columns: no write-after-write wait, only the shared engines
    # the same store without a row pitch (its footprint the flat bounding box) waits for the first to land
    flat = [
        dataclasses.replace(e, operands=(dataclasses.replace(e.operands[0], row_pitch=0), e.operands[1]))
        for e in (left, right)
    ]
    s = schedule(flat, LIMITS)
    assert s.start[1] >= s.end[0]
    # overlapping columns still wait
    s = schedule([left, _column_store(1, 1024, 2048)], LIMITS)
    assert s.start[1] >= s.end[0]


COLUMN_KERNEL = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def columns(x):
    out = nl.ndarray((128, 1024), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in range(2):
        t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, j * 512:(j + 1) * 512])
        nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=t)
    return out
"""


def test_the_simulator_records_column_blocks_as_rows_of_their_tensor(tmp_path: Path) -> None:
    kernel = tmp_path / "columns.py"
    kernel.write_text(COLUMN_KERNEL)
    x = np.arange(128 * 1024, dtype=np.float32).reshape(128, 1024)
    result = simulate(str(kernel), x, trace=True)
    assert result.trace is not None
    hbm = [o for e in result.trace for o in e.operands if o.buffer == "hbm"]
    assert [o.row_pitch for o in hbm] == [4096] * 4  # every view a block of columns of a [128, 1024] FP32
    stores = [e for e in result.trace if any(o.buffer == "hbm" and o.role == "dst" for o in e.operands)]
    s = schedule(list(result.trace), LIMITS)
    assert s.start[stores[1].seq] < s.end[stores[0].seq]  # the second store does not wait for the first


def _small_loads(count: int, line: int | None = None) -> list[TraceEvent]:
    """``count`` independent 512-byte loads of one HBM tensor into distinct tiles (each its own line unless
    ``line``)."""
    return [
        _dma(
            i, _sbuf("dst", 100 + i, 4, 128), _hbm("src", 0, 512 * i, 512 * i + 512, 512), 512, line or i + 1
        )
        for i in range(count)
    ]


def test_the_issue_cost_sits_on_the_queue() -> None:
    # without hardware DGE (trn1) each queue issues its own transfers; Trainium2: the next test
    no_dge = limits_for(Generation.GEN2)
    s = schedule(_small_loads(100), no_dge)
    issue = K.DMA_ISSUE_COST.value
    assert s.start[99] >= 100 * issue  # one tensor, one queue: 100 issues one after the other
    # two tensors: two queues issuing side by side
    other = [
        dataclasses.replace(e, operands=(e.operands[0], dataclasses.replace(e.operands[1], storage=1)))
        for e in _small_loads(100)[50:]
    ]
    s = schedule(_small_loads(50) + other, no_dge)
    assert s.total_ns < 75 * issue


def test_the_queue_follows_the_tensor_not_the_issuing_line() -> None:
    # one helper line issuing loads of two tensors: two queues, as two lines issuing them
    helper = [dataclasses.replace(e, line=7) for e in _small_loads(100)]
    helper = [
        dataclasses.replace(e, operands=(e.operands[0], dataclasses.replace(e.operands[1], storage=i % 2)))
        for i, e in enumerate(helper)
    ]
    lines = [dataclasses.replace(e, line=e.seq % 2 + 1) for e in helper]
    assert schedule(helper, LIMITS).total_ns == schedule(lines, LIMITS).total_ns < 75 * K.DMA_ISSUE_COST.value


def _loads_of_tensors(tensors: int, each: int) -> list[TraceEvent]:
    """``each`` small loads of each of ``tensors`` HBM tensors, interleaved: one queue per tensor."""
    loads = _small_loads(tensors * each)
    return [
        dataclasses.replace(
            e, operands=(e.operands[0], dataclasses.replace(e.operands[1], storage=e.seq % tensors))
        )
        for e in loads
    ]


def test_trainium2_issues_on_its_two_dge_instances() -> None:
    # four tensors' loads: four queues, but a Trainium2 core issues through its two DGE instances ([DGE]), two
    # issues at a time; a trn1 core (no hardware DGE) issues on every queue side by side
    issue = K.DMA_ISSUE_COST.value
    loads = _loads_of_tensors(4, 25)
    trn2 = limits_for(Generation.GEN3)
    assert trn2.dge_instances == 2
    assert schedule(loads, trn2).start[-1] >= 100 / 2 * issue
    trn1 = limits_for(Generation.GEN2)
    assert trn1.dge_instances == 0
    assert schedule(loads, trn1).total_ns < 100 / 2 * issue


def test_a_dge_instance_issues_in_program_order() -> None:
    # two stores of a tile wait for its load; each holds the DGE instance it is issued on until it can issue, so
    # a later small load of another tensor waits behind them on Trainium2; on trn1 its own queue issues it at once
    tile = _sbuf("dst", 50, 4096)
    load = _dma(0, tile, _hbm("src", 0, 0, 128 * 4096, 4096), 128 * 4096)
    src = dataclasses.replace(tile, role="src")
    stores = [_dma(i, _hbm("dst", 10 + i, 0, 128 * 4096, 4096), src, 128 * 4096) for i in (1, 2)]
    small = _dma(3, _sbuf("dst", 60, 4), _hbm("src", 1, 0, 4, 4), 4)
    trn2 = schedule([load, *stores, small], limits_for(Generation.GEN3))
    assert trn2.start[3] >= trn2.start[2] >= trn2.end[0]
    trn1 = schedule([load, *stores, small], limits_for(Generation.GEN2))
    assert trn1.start[3] < trn1.end[0]
