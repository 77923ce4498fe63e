"""Measured instructions and transfers matched to the simulated ones that issued them, as fit samples.

A measured instruction is matched by its engine, its source line in the kernel file and its order on that
(engine, line); its opcode narrows the match when the profile spells it as we do (Neuron Explorer's ISA
spellings, e.g. ``MATMUL`` for ``nc_matmul``, often differ: then the (engine, line) group is matched as a whole
-- inferred, no opcode table is published). A DMA transfer is matched through the instruction that triggered it
(Flow links), by the trigger's line. Where a group holds as many measured as simulated rows they pair in order
(one sample each); otherwise the group is one sample: the sum of its measured durations against the sum of
its instructions' features, which the linear cost model fits alike. Semaphore waits and setup opcodes are not
work and are left out (metrics.md §1).

A sample's target is the cost the overlay replaces: the measured duration minus what the scheduler adds to the
instruction's base cost (stationary and activation-table loads, the DMA per-transfer latency), read from the
built-in schedule of the same trace.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from nki_studio.estimate.calibration.overlay import ComputeKey, compute_key, dma_row, elements, moved_bytes
from nki_studio.estimate.schedule import Schedule, base_cost
from nki_studio.model.targets import TargetLimits
from nki_studio.profile.model import SETUP_OPCODES, WAIT_OPCODES, Profile, canonical_engine
from nki_studio.sim.trace import TraceEvent

DmaKey = tuple[str, int]  # ("dma", descriptor-row bucket)
Key = ComputeKey | DmaKey


@dataclass(frozen=True)
class Sample:
    """One fit row: ``count`` instructions of one key with feature sum ``x`` (elements, or bytes per DMA engine)
    took ``target`` ns of base cost on hardware; the built-in model gives them ``builtin`` ns."""

    key: Key
    engine: str
    count: int
    x: float
    target: float
    builtin: float


@dataclass(frozen=True)
class Matched:
    """The samples of one profile and how much of it they cover."""

    samples: list[Sample]
    matched: int  # measured rows (instructions and transfers) in a sample
    measured: int  # measured work rows on the kernel file's lines


def normalised_opcode(op: str) -> str:
    """An opcode compared across spellings: lower case, letters and digits, no module prefix."""
    return re.sub(r"[^a-z0-9]", "", op.rsplit(".", 1)[-1].lower())


def match(
    measured: Profile,
    in_kernel: Callable[[str], bool],
    trace: Sequence[TraceEvent],
    sched: Schedule,
    limits: TargetLimits,
) -> Matched:
    """The fit samples of ``measured`` against ``trace`` scheduled as ``sched`` by the built-in model;
    ``in_kernel(recorded_path)``: whether a profile's source path is the simulated kernel's file."""
    ins, loc = measured.instructions, measured.locations
    line_of = np.full(len(ins), -1, np.int64)
    rows = np.array([in_kernel(f) for f in loc.file.values], bool)
    if rows.size:
        keep = rows[loc.file.codes] if loc.file.codes.size else np.zeros(0, bool)
        first: dict[int, int] = {}
        for i, ln in zip(loc.instr[keep].tolist(), loc.line[keep].tolist(), strict=True):
            first.setdefault(i, ln)
        if first:
            line_of[np.fromiter(first, np.int64)] = np.fromiter(first.values(), np.int64)
    skip = WAIT_OPCODES | SETUP_OPCODES
    groups_m: dict[tuple[str, int], list[tuple[int, str, float]]] = defaultdict(list)
    for i in np.flatnonzero(line_of >= 0).tolist():
        op = ins.opcode.values[ins.opcode.codes[i]]
        if op in skip:
            continue
        engine = canonical_engine(ins.engine.values[ins.engine.codes[i]])
        groups_m[(engine, int(line_of[i]))].append(
            (int(ins.start[i]), normalised_opcode(op), float(ins.end[i] - ins.start[i]))
        )
    dma = measured.dma
    for j in range(len(dma.start)):
        trigger = int(dma.instr[j])
        if trigger >= 0 and line_of[trigger] >= 0:
            groups_m[("dma", int(line_of[trigger]))].append(
                (int(dma.start[j]), "dma", float(dma.end[j] - dma.start[j]))
            )

    cost = base_cost(limits)
    groups_e: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
    for k, e in enumerate(trace):
        if e.engine == "sync":
            continue
        engine = "dma" if e.engine == "dma" else canonical_engine(e.engine)
        groups_e[(engine, e.line)].append((normalised_opcode(e.op) if e.engine != "dma" else "dma", k))

    samples: list[Sample] = []
    matched = 0
    for where, m_rows in groups_m.items():
        e_rows = groups_e.get(where)
        if not e_rows:
            continue
        m_rows.sort()
        by_op_m: dict[str, list[float]] = defaultdict(list)
        by_op_e: dict[str, list[int]] = defaultdict(list)
        for _, op, d in m_rows:
            by_op_m[op].append(d)
        for op, k in e_rows:
            by_op_e[op].append(k)
        if set(by_op_m) <= set(by_op_e):  # the profile spells opcodes as we do: match per opcode
            pairs = [(by_op_m[op], by_op_e[op]) for op in by_op_m]
        else:
            pairs = [([d for _, _, d in m_rows], [k for _, k in e_rows])]
        for durations, events in pairs:
            got = _samples(durations, events, trace, sched, cost)
            samples += got
            matched += len(durations) if got else 0
    measured_rows = sum(len(v) for v in groups_m.values())
    return Matched(samples, matched, measured_rows)


def _samples(
    durations: list[float],
    events: list[int],
    trace: Sequence[TraceEvent],
    sched: Schedule,
    cost: Callable[[TraceEvent], tuple[int, int, float]],
) -> list[Sample]:
    """Paired in order when the counts agree, else one summed sample (none when its events mix keys)."""
    rows = []
    for k in events:
        e = trace[k]
        first, last, base = cost(e)
        extra = float(sched.end[k] - sched.start[k]) - base  # what the scheduler adds to the base cost
        if e.engine == "dma":
            key: Key = ("dma", dma_row(e))
            x = moved_bytes(e) / max(last - first + 1, 1)
        else:
            key, x = compute_key(e), float(elements(e))
        rows.append((key, e.engine, x, extra, base))
    if len(durations) == len(rows):
        return [
            Sample(key, eng, 1, x, d - extra, base)
            for d, (key, eng, x, extra, base) in zip(durations, rows, strict=True)
        ]
    if len({r[0] for r in rows}) != 1:
        return []
    key, eng = rows[0][0], rows[0][1]
    return [
        Sample(
            key,
            eng,
            len(rows),
            sum(r[2] for r in rows),
            sum(durations) - sum(r[3] for r in rows),
            sum(r[4] for r in rows),
        )
    ]
