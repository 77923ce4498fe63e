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


class _Interner:
    """String -> code, for building ``Codes`` columns without a per-row string list."""

    def __init__(self) -> None:
        self.table: dict[str, int] = {}

    def code(self, value: str) -> int:
        got = self.table.get(value)
        if got is None:
            got = self.table[value] = len(self.table)
        return got

    def codes(self, codes: list[int]) -> Codes:
        return Codes(tuple(self.table), np.array(codes, np.int32))


def _dma_row(event: TraceEvent) -> tuple[int, int, str, str]:
    """(bytes, SBUF partitions, HBM tensor name, direction) of one transfer."""
    moved = max(sum(event.bytes_read.values()), sum(event.bytes_written.values()))
    chip = [o.part_end - o.part_start for o in event.operands if o.buffer != "hbm"]
    return moved, max(chip, default=0), _hbm_name(event), _direction(event)


def profile_from_schedule(sched: Schedule, target: Target, path: str = "") -> Profile:
    """The ``Profile`` of a scheduled trace (see the module docstring). One pass over the events with every
    string interned, since a trace has millions of rows but few distinct names."""
    events = sched.events
    ncores = max((e.core for e in events), default=0) + 1
    ins_rows: list[int] = []
    dma_rows: list[int] = []
    for i, e in enumerate(events):
        (dma_rows if e.engine == "dma" else ins_rows).append(i)
    # Each DMA also gets its issue instruction on the Sync queue (see the module docstring).
    rows = ins_rows + dma_rows
    n_ins = len(ins_rows)
    start = np.floor(sched.start).astype(np.int64)
    end = np.maximum(np.ceil(sched.end).astype(np.int64), start + 1)
    order_ins = np.asarray(rows, np.int64)
    ins_start = start[order_ins]
    ins_end = end[order_ins].copy()
    ins_end[n_ins:] = ins_start[n_ins:]  # the issue instruction takes no time of its own

    engine_names, opcodes, files = _Interner(), _Interner(), _Interner()
    engine_of: dict[str, int] = {}
    opcode_of: dict[str, int] = {}
    engine_codes: list[int] = []
    opcode_codes: list[int] = []
    pcores: list[int] = []
    file_codes: list[int] = []
    lines: list[int] = []
    iterations: list[int] = []
    seen: dict[tuple[str, int, tuple[str, ...], str], int] = {}
    sync = engine_names.code("Sync")
    for k, i in enumerate(rows):
        e = events[i]
        if k < n_ins:
            code = engine_of.get(e.engine)
            if code is None:
                code = engine_of[e.engine] = engine_names.code(
                    _ENGINE.get(e.engine) or canonical_engine(e.engine)
                )
            engine_codes.append(code)
        else:
            engine_codes.append(sync)
        op = opcode_of.get(e.op)
        if op is None:
            op = opcode_of[e.op] = opcodes.code(e.op.rsplit(".", 1)[-1])
        opcode_codes.append(op)
        pcores.append(e.rank * ncores + e.core)
        file_codes.append(files.code(e.file))
        lines.append(e.line)
        key = (e.file, e.line, e.stack, e.op)
        n = seen.get(key, 0)
        seen[key] = n + 1
        iterations.append(n)
    instructions = make_instructions(
        ins_start,
        ins_end,
        engine_names.codes(engine_codes),
        opcodes.codes(opcode_codes),
        np.array(pcores, np.int32),
    )
    flops, transpose, kmn = instruction_columns(events, rows)
    instructions = dataclasses.replace(instructions, flops=flops, transpose=transpose, matmul_kmn=kmn)
    roles = _tensors(events)
    source, dest, dma_transpose, hbm_range = dma_columns(events, dma_rows, roles)
    top = max(iterations, default=-1)
    locations = Locations(
        np.arange(len(rows), dtype=np.int64),
        files.codes(file_codes),
        np.array(lines, np.int32),
        Codes(tuple(f"iteration={n}" for n in range(top + 1)), np.array(iterations, np.int32)),
        "simulator trace (innermost kernel line)",
    )

    d = np.asarray(dma_rows, np.int64)
    queues, tensors, directions = _Interner(), _Interner(), _Interner()
    moved: list[int] = []
    partitions: list[int] = []
    queue_codes: list[int] = []
    tensor_codes: list[int] = []
    direction_codes: list[int] = []
    for i in dma_rows:
        nbytes, parts, tensor, direction = _dma_row(events[i])
        first, last = sched.dma_engines[i]
        moved.append(nbytes)
        partitions.append(parts)
        queue_codes.append(queues.code(f"dma{first}-{last}"))
        tensor_codes.append(tensors.code(tensor))
        direction_codes.append(directions.code(direction))
    n_dma = len(dma_rows)
    dma = DmaTransfers(
        start[d] if d.size else np.zeros(0, np.int64),
        end[d] if d.size else np.zeros(0, np.int64),
        np.array(moved, np.int64),
        queues.codes(queue_codes),
        tensors.codes(tensor_codes),
        Codes(("estimated",) if n_dma else (), np.zeros(n_dma, np.int32)),
        np.array(pcores[n_ins:], np.int32),
        np.arange(n_ins, n_ins + n_dma, dtype=np.int64),
        "estimated",
        np.array(partitions, np.int32),
        directions.codes(direction_codes),
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
        tensors=roles,
        provenance="estimated",
    )
    return sort_by_start(profile)


def estimate_profile(trace: Sequence[TraceEvent], target: Target, path: str = "") -> Profile:
    """Schedule a simulator trace on ``target`` and return the estimated profile (``provenance="estimated"``)."""
    return profile_from_schedule(schedule(trace, target.limits), target, path)
