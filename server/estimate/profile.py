"""The estimated timeline as a profile: the normalised model the profile readers produce
(``nki_studio.profile.model``), labelled ``provenance="estimated"``, so every profile view works on it.

* Instructions: the non-DMA events, engine names as profiles spell them, the op name as opcode (e.g.
  ``nc_matmul``), times rounded to whole ns, ``pcore`` = rank x cores + core.
* Locations: one row per instruction, the innermost kernel line; ``iteration`` labels the n-th time that
  source line (with its call stack) issued an instruction of that op, "iteration=n" -- the loop iteration for a
  line inside one loop (the trace does not record loop variables).
* DMA transfers: one row per DMA event, on the DMA engines it ran on (queue "dma<first>-<last>"), with
  bytes, SBUF partitions, direction, the HBM tensor's name and the triggering "instruction": a DMA row links
  to the DMA-issue instruction the profile also holds (a zero-length ``dma_copy`` row on the Sync queue at
  the transfer's start, so that per-line DMA attribution works as for Flow links in measured profiles).
* Tensors: HBM allocations the kernel read that were kernel arguments (IN) and HBM allocations it wrote
  that it created itself (OUT), sized by the bytes touched; not the spill buffer (``estimate.spills``), which,
  as in a measured profile, is ``VIRTUAL`` memory in the transfers' source or destination.
* Metadata: the target's peaks under Neuron Explorer's ``Metadata`` names (bounds.md §1).
* Execution window: one ``ExecutionInfo`` window from 0 to the kernel's end, the per-execution fixed cost
  around the instructions (``estimate.execution``: the first instruction starts ``LEAD_NS`` after the window's
  start), so the metrics take the kernel time and the timeline origin from it, as from a measured profile's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from nki_studio.estimate.columns import first_of, group, occurrence, recode
from nki_studio.estimate.estimated_schedule import estimated_schedule
from nki_studio.estimate.execution import LEAD_NS, NOTE, kernel_ns
from nki_studio.estimate.heap import heap_for_large_arrays
from nki_studio.estimate.profile_details import (
    OperandView,
    dma_columns,
    hbm_key,
    instruction_columns,
    lut,
    tensor_name,
    tensors,
)
from nki_studio.estimate.schedule import Schedule
from nki_studio.model.targets import Target
from nki_studio.profile.model import (
    Codes,
    DmaTransfers,
    Execution,
    Locations,
    Profile,
    assign_executions,
    canonical_engine,
    make_instructions,
    sort_by_start,
)
from nki_studio.sim.trace import TraceEvent
from nki_studio.sim.trace_columns import as_compact

if TYPE_CHECKING:
    from nki_studio.estimate.calibration.overlay import Overlay

FORMAT = "nki-studio estimate"
_ENGINE = {"tensor": "Tensor", "vector": "Vector", "scalar": "Scalar", "gpsimd": "GpSimd", "sync": "Sync"}


def _metadata(target: Target) -> dict[str, object]:
    lim = target.limits
    return {
        "dma_ddr_bandwidth": lim.dma_bytes_per_ns * 1e9,  # bytes/s
        "tensor_engine_num_rows": lim.partitions,
        "tensor_engine_num_cols": lim.matmul_stationary_free_max,
        "tensor_engine_clock_freq": lim.clock_ghz["tensor"],
        "target": lim.generation.value,
    }


def _engine_name(engine: str) -> str:
    return _ENGINE.get(engine) or canonical_engine(engine)


def _dma_rows(v: OperandView, rows: npt.NDArray[np.int64]) -> tuple[Any, ...]:
    """(bytes, SBUF partitions, HBM tensor name, direction) columns of the transfers ``rows``."""
    t = v.trace
    moved = np.maximum(t.regions("bytes_read"), t.regions("bytes_written"))[rows]
    chip = ~v.hbm
    spans = t.operand("part_end") - t.operand("part_start")
    # the widest on-chip operand per event: ``owner`` is non-decreasing, so a segmented reduce (``np.maximum.at``
    # costs several times more on millions of rows)
    owner, span = v.owner[chip], spans[chip]
    partitions = np.zeros(v.n, np.int64)
    if owner.size:
        seg = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
        partitions[owner[seg]] = np.maximum.reduceat(span, seg)
    partitions = partitions[rows]
    # tensor: the first HBM operand's name, "sbuf" when none
    first_hbm = first_of(v.hbm, v.owner, v.n)[rows]
    has = first_hbm >= 0
    ids = np.full(len(rows), -1, np.int64)
    names: dict[int, str] = {-1: "sbuf"}
    if has.any():
        hid, reps = hbm_key(v, first_hbm[has])
        ids[has] = hid
        names.update((h, tensor_name(v, r)) for h, r in enumerate(reps.tolist()))
    tensor = recode(ids + 1, lambda i: names[i - 1])
    # direction "src->dst" of buffers ("?" for no operand)
    buffers = t.operand_table("buffer")
    nb = len(buffers)
    src = np.where(
        v.src_row[rows] >= 0, v.buffer[np.maximum(v.src_row[rows], 0)] if v.buffer.size else -1, nb
    )
    dst = np.where(
        v.dst_row[rows] >= 0, v.buffer[np.maximum(v.dst_row[rows], 0)] if v.buffer.size else -1, nb
    )
    label = (*buffers, "?")
    direction = recode(src * (nb + 1) + dst, lambda i: f"{label[i // (nb + 1)]}->{label[i % (nb + 1)]}")
    return moved, partitions.astype(np.int32), tensor, direction


def profile_from_schedule(sched: Schedule, target: Target, path: str = "") -> Profile:
    """The ``Profile`` of a scheduled trace (see the module docstring), built column by column from the
    trace's columns: a trace has millions of rows but few distinct names."""
    with heap_for_large_arrays(as_compact(sched.events).nbytes()):
        return _profile_from_schedule(sched, target, path)


def _profile_from_schedule(sched: Schedule, target: Target, path: str) -> Profile:
    trace = as_compact(sched.events)
    v = OperandView(trace)
    n = len(trace)
    engines = trace.event_table("engine")
    eng = trace.event("engine")
    is_dma = lut(engines, lambda e: e == "dma", bool)[eng] if n else np.zeros(0, bool)
    ins_rows, dma_rows = np.flatnonzero(~is_dma), np.flatnonzero(is_dma)
    # Each DMA also gets its issue instruction on the Sync queue (see the module docstring).
    rows = np.concatenate([ins_rows, dma_rows])
    n_ins, n_dma = len(ins_rows), len(dma_rows)
    start = np.floor(sched.start).astype(np.int64)
    end = np.maximum(np.ceil(sched.end).astype(np.int64), start + 1)
    # the fixed cost's share before the first instruction (estimate.execution); no window when nothing ran
    executions: list[Execution] = []
    if n:
        shift = LEAD_NS - int(start.min())
        start += shift
        end += shift
        executions = [Execution(0, 0, round(kernel_ns(int(end.max()) - LEAD_NS)))]
    ins_start = start[rows]
    ins_end = end[rows].copy()
    ins_end[n_ins:] = ins_start[n_ins:]  # the issue instruction takes no time of its own

    # engine names as profiles spell them; the issue instructions on Sync
    sync = len(engines)
    engine_ids = np.concatenate([eng[ins_rows].astype(np.int64), np.full(n_dma, sync, np.int64)])
    engine_codes = recode(engine_ids, lambda i: "Sync" if i == sync else _engine_name(engines[i]), ("Sync",))
    ops = trace.event_table("op")
    op_code = trace.event("op")[rows].astype(np.int64)
    opcodes = recode(op_code, lambda i: ops[i].rsplit(".", 1)[-1])
    rank, core = trace.event("rank"), trace.event("core")
    ncores = int(core.max(initial=0)) + 1
    pcores = (rank * ncores + core)[rows].astype(np.int32)
    file_code = trace.event("file").astype(np.int64)
    files = trace.event_table("file")
    lines = trace.event("line")
    # the n-th time a source line (with its call stack) issued an instruction of that op
    same = group([file_code[rows], lines[rows], trace.event("stack")[rows].astype(np.int64), op_code])[0]
    iterations = occurrence(same)
    instructions = make_instructions(ins_start, ins_end, engine_codes, opcodes, pcores)
    flops, transpose, kmn = instruction_columns(v, rows)
    instructions = dataclasses.replace(instructions, flops=flops, transpose=transpose, matmul_kmn=kmn)
    roles = tensors(v)
    source, dest, dma_transpose, hbm_range = dma_columns(v, dma_rows, roles)
    top = int(iterations.max(initial=-1))
    locations = Locations(
        np.arange(len(rows), dtype=np.int64),
        recode(file_code[rows], lambda i: files[i]),
        lines[rows].astype(np.int32),
        Codes(tuple(f"iteration={k}" for k in range(top + 1)), iterations.astype(np.int32)),
        "simulator trace (innermost kernel line)",
    )

    moved, partitions, tensor, direction = _dma_rows(v, dma_rows)
    pairs = sched.dma_engines[dma_rows]
    q_ids, q_first = group([pairs[:, 0], pairs[:, 1]])
    queues = recode(q_ids, lambda q: f"dma{pairs[q_first[q], 0]}-{pairs[q_first[q], 1]}")
    dma = DmaTransfers(
        start[dma_rows],
        end[dma_rows],
        moved.astype(np.int64),
        queues,
        tensor,
        Codes(("estimated",) if n_dma else (), np.zeros(n_dma, np.int32)),
        pcores[n_ins:],
        np.arange(n_ins, n_ins + n_dma, dtype=np.int64),
        "estimated",
        partitions,
        direction,
        source,
        dest,
        dma_transpose,
        hbm_range,
    )
    profile = Profile(
        path=path,
        format=FORMAT,
        instructions=instructions,
        locations=locations,
        dma=dma,
        # no Summary: the latency is the execution window (the instructions' span and the fixed cost)
        metadata=_metadata(target),
        executions=executions,
        notes=[
            "estimated from the simulator trace by the nki-studio scheduler (docs/cost-model.md)",
            *([NOTE] if n else []),
        ],
        tensors=roles,
        provenance="estimated",
    )
    return assign_executions(sort_by_start(profile))


def estimate_profile(
    trace: Sequence[TraceEvent], target: Target, path: str = "", overlay: Overlay | None = None
) -> Profile:
    """Schedule a simulator trace on ``target`` as it runs (``estimate.estimated_schedule``: merged loads,
    SBUF spills) and return the estimated profile (``provenance="estimated"``); ``overlay``: a calibration of
    the per-instruction costs (``estimate.calibration``)."""
    return profile_from_schedule(estimated_schedule(trace, target.limits, overlay), target, path)
