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
  that it created itself (OUT), sized by the bytes touched.
* Metadata: the target's peaks under Neuron Explorer's ``Metadata`` names (bounds.md §1).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from nki_studio.estimate.profile_details import dma_columns, instruction_columns
from nki_studio.estimate.schedule import Schedule, schedule
from nki_studio.model.targets import Target
from nki_studio.profile.model import (
    Codes,
    DmaTransfers,
    Locations,
    Profile,
    TensorRole,
    canonical_engine,
    make_instructions,
    sort_by_start,
)
from nki_studio.sim.trace import TraceEvent

FORMAT = "nki-studio estimate"
_ENGINE = {"tensor": "Tensor", "vector": "Vector", "scalar": "Scalar", "gpsimd": "GpSimd", "sync": "Sync"}


def _direction(event: TraceEvent) -> str:
    src = next((o.buffer for o in event.operands if not o.role.startswith("dst")), "?")
    dst = next((o.buffer for o in event.operands if o.role.startswith("dst")), "?")
    return f"{src}->{dst}"


def _hbm_name(event: TraceEvent) -> str:
    for o in event.operands:
        if o.buffer == "hbm":
            return o.name or f"hbm#{o.storage}"
    return "sbuf"


def _tensors(events: Sequence[TraceEvent]) -> list[TensorRole]:
    """Kernel inputs (arguments the kernel read) and outputs (HBM it allocated and wrote), in first-use order."""
    sizes: dict[tuple[str, str], int] = {}
    for e in events:
        for o in e.operands:
            if o.buffer != "hbm" or o.storage < 0:
                continue
            written = o.role.startswith("dst")
            is_arg = o.name.startswith("arg") or (bool(o.name) and not written)
            if written == is_arg:
                continue  # an argument written in place, or a scratch read: neither role
            key = (o.name or f"hbm#{o.storage}", "OUT" if written else "IN")
            sizes[key] = max(sizes.get(key, 0), o.byte_end)
    return [TensorRole(name, role, size) for (name, role), size in sizes.items()]


def _metadata(target: Target) -> dict[str, object]:
    lim = target.limits
    return {
        "dma_ddr_bandwidth": lim.dma_bytes_per_ns * 1e9,  # bytes/s
        "tensor_engine_num_rows": lim.partitions,
        "tensor_engine_num_cols": lim.matmul_stationary_free_max,
        "tensor_engine_clock_freq": lim.clock_ghz["tensor"],
        "target": lim.generation.value,
    }


def profile_from_schedule(sched: Schedule, target: Target, path: str = "") -> Profile:
    """The ``Profile`` of a scheduled trace (see the module docstring)."""
    events = sched.events
    ncores = max((e.core for e in events), default=0) + 1
    ins_rows: list[int] = []
    dma_rows: list[int] = []
    for i, e in enumerate(events):
        (dma_rows if e.engine == "dma" else ins_rows).append(i)
    # Each DMA also gets its issue instruction on the Sync queue (see the module docstring).
    issue_rows = dma_rows
    rows = ins_rows + issue_rows
    n_ins = len(ins_rows)
    start = np.floor(sched.start).astype(np.int64)
    end = np.maximum(np.ceil(sched.end).astype(np.int64), start + 1)
    order_ins = np.asarray(rows, np.int64)
    ins_start = start[order_ins]
    ins_end = end[order_ins].copy()
    ins_end[n_ins:] = ins_start[n_ins:]  # the issue instruction takes no time of its own
    engines = [_ENGINE.get(events[i].engine, canonical_engine(events[i].engine)) for i in ins_rows]
    engines += ["Sync"] * len(issue_rows)
    opcodes = [events[i].op.rsplit(".", 1)[-1] for i in rows]
    pcore = np.array([events[i].rank * ncores + events[i].core for i in rows], np.int32)
    instructions = make_instructions(
        ins_start, ins_end, Codes.from_strings(engines), Codes.from_strings(opcodes), pcore
    )
    flops, transpose, kmn = instruction_columns(events, rows)
    instructions = dataclasses.replace(instructions, flops=flops, transpose=transpose, matmul_kmn=kmn)
    tensors = _tensors(events)
    source, dest, dma_transpose, hbm_range = dma_columns(events, dma_rows, tensors)

    seen: dict[tuple[str, int, tuple[str, ...], str], int] = defaultdict(int)
    labels: list[str] = []
    for i in rows:
        e = events[i]
        key = (e.file, e.line, e.stack, e.op)
        labels.append(f"iteration={seen[key]}")
        seen[key] += 1
    locations = Locations(
        np.arange(len(rows), dtype=np.int64),
        Codes.from_strings([events[i].file for i in rows]),
        np.array([events[i].line for i in rows], np.int32),
        Codes.from_strings(labels),
        "simulator trace (innermost kernel line)",
    )

    d = np.asarray(dma_rows, np.int64)
    first_last = [sched.dma_engines[i] for i in dma_rows]
    partitions = []
    for i in dma_rows:
        chip = [o for o in events[i].operands if o.buffer != "hbm"]
        partitions.append(max((o.part_end - o.part_start for o in chip), default=0))
    dma = DmaTransfers(
        start[d] if d.size else np.zeros(0, np.int64),
        end[d] if d.size else np.zeros(0, np.int64),
        np.array(
            [
                max(sum(events[i].bytes_read.values()), sum(events[i].bytes_written.values()))
                for i in dma_rows
            ],
            np.int64,
        ),
        Codes.from_strings([f"dma{a}-{b}" for a, b in first_last]),
        Codes.from_strings([_hbm_name(events[i]) for i in dma_rows]),
        Codes.from_strings(["estimated"] * len(dma_rows)),
        np.array([events[i].rank * ncores + events[i].core for i in dma_rows], np.int32),
        np.arange(n_ins, n_ins + len(dma_rows), dtype=np.int64),
        "estimated",
        np.array(partitions, np.int32),
        Codes.from_strings([_direction(events[i]) for i in dma_rows]),
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
        # no Summary: the latency is the span of the instructions and transfers, as metrics.md §2 names it
        metadata=_metadata(target),
        notes=["estimated from the simulator trace by the nki-studio scheduler (docs/cost-model.md)"],
        tensors=tensors,
        provenance="estimated",
    )
    return sort_by_start(profile)


def estimate_profile(trace: Sequence[TraceEvent], target: Target, path: str = "") -> Profile:
    """Schedule a simulator trace on ``target`` and return the estimated profile (``provenance="estimated"``)."""
    return profile_from_schedule(schedule(trace, target.limits), target, path)
