"""Estimated cost of a kernel from its simulator trace: per-instruction time by engine, per-line totals and a
roofline point. Every number here is an *estimate* from rules of thumb; the model is documented in
docs/cost-model.md and its constants live in ``nki_studio.model.targets`` (hardware.md §1/§3).

Model summary (one instruction):

* DMA: ``bytes / dma_bytes_per_ns + dma_fixed_overhead_ns / dma_engines`` (the per-transfer overhead is
  paid by one of the 16 DMA engines while the others keep streaming -- inferred amortisation).
* TensorE matmul: ``max(matmul_min_cycles, N_moving)`` cycles, x4 for FP32 inputs, at the Tensor clock.
* Vector/Scalar/GpSimd: ``max(MIN_II, ceil(k * N * 128 / lanes)) + access_overhead`` cycles at the engine
  clock, where N = the largest free size per partition among the on-chip operands, ``lanes`` the data-path
  width for the operand dtypes and k = 2 when two inputs stream at full size (8 for reciprocal, 13/3 for
  bn_aggr; iota/affine_select 150+N).
* Kernel time: engines run concurrently, so the estimate is the busiest (core, engine) queue; the serial sum
  is reported too. A line's share is its time over the serial sum.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from nki_studio.estimate.cost import FP32_INPUTS, instruction_cost, operand
from nki_studio.model.targets import COST_RULES, InstructionCostRules, TargetLimits
from nki_studio.profile.roofline import TraceFlops
from nki_studio.protocol.simulation import Cost
from nki_studio.sim.trace import TraceEvent, read_jsonl

LABEL = "estimated"


@dataclass
class LineCost:
    """Estimated time issued from one source line, with its engine breakdown."""

    path: str
    line: int
    ns: float = 0.0
    instructions: int = 0
    by_engine: dict[str, float] = field(default_factory=dict)
    opcodes: dict[str, list[float]] = field(default_factory=dict)  # op -> [count, ns]
    dma_bytes: int = 0
    share: float = 0.0  # of the serial total

    @property
    def engine(self) -> str:
        """The engine that takes most of this line's time."""
        return max(self.by_engine.items(), key=lambda kv: kv[1])[0] if self.by_engine else "none"


@dataclass(frozen=True)
class Roofline:
    """The kernel's point on the roofline: FLOPs, HBM bytes, intensity and which roof bounds it."""

    flops: int
    hbm_bytes: int
    intensity: float  # FLOPs per HBM byte
    ridge: float  # intensity at which the compute and memory roofs meet for this kernel's FLOP mix
    compute_ns: float  # FLOPs at the peaks of the engines that did them (concurrent engines)
    memory_ns: float  # HBM bytes at the DMA bandwidth
    bound: Literal["memory", "compute"]


@dataclass
class CostReport:
    """Everything the estimated-cost view shows."""

    target: str
    lines: list[LineCost]
    engine_ns: dict[str, float]  # "engine" or "engine@core" -> busy time
    total_ns: float  # busiest engine queue (engines overlap)
    serial_ns: float  # every instruction one after another
    roofline: Roofline
    label: str = LABEL

    def to_json(self) -> Cost:
        """JSON form for ``nki/simulationResult`` and ``--json`` (times in ns, all estimated)."""
        r = self.roofline
        return {
            "label": self.label,
            "target": self.target,
            "totalNs": self.total_ns,
            "serialNs": self.serial_ns,
            "engineNs": self.engine_ns,
            "lines": [
                {
                    "path": c.path,
                    "line": c.line,
                    "ns": c.ns,
                    "engine": c.engine,
                    "share": c.share,
                    "instructions": c.instructions,
                    "byEngine": c.by_engine,
                    "dmaBytes": c.dma_bytes,
                    "opcodes": c.opcodes,
                }
                for c in self.lines
            ],
            "roofline": {
                "flops": r.flops,
                "hbmBytes": r.hbm_bytes,
                "intensity": r.intensity,
                "ridge": r.ridge,
                "computeNs": r.compute_ns,
                "memoryNs": r.memory_ns,
                "bound": r.bound,
            },
        }


def flops_from_trace(events: Iterable[TraceEvent] | str | Path) -> TraceFlops:
    """Sum FLOPs per engine and per source line from TraceEvent records or a JSON Lines trace file."""
    if isinstance(events, (str, Path)):
        with open(events, encoding="utf-8") as fh:
            return flops_from_trace(list(read_jsonl(fh)))
    return _sum_trace(events)


def _sum_trace(events: Iterable[TraceEvent]) -> TraceFlops:
    by_engine: dict[str, int] = {}
    by_line: dict[tuple[str, int], int] = {}
    total = hbm = 0
    for ev in events:
        total += ev.flops
        by_engine[ev.engine] = by_engine.get(ev.engine, 0) + ev.flops
        by_line[(ev.file, ev.line)] = by_line.get((ev.file, ev.line), 0) + ev.flops
        hbm += ev.bytes_read.get("hbm", 0) + ev.bytes_written.get("hbm", 0)
    return TraceFlops(total, by_engine, hbm, by_line, "simulator trace (estimated FLOPs)")


def roofline(events: Iterable[TraceEvent], limits: TargetLimits) -> Roofline:
    """FLOPs, HBM bytes and the bounding roof (compute peaks from hardware.md §3 throughput table)."""
    events = list(events)
    sums = flops_from_trace(events)
    fp32_matmul = any(
        (moving := operand(e, "moving", "src", "data")) is not None and moving.dtype in FP32_INPUTS
        for e in events
        if e.engine == "tensor"
    )
    peaks: dict[str, float] = dict(limits.engine_fp32_tflops)
    peaks["tensor"] = limits.tensor_tflops["fp32" if fp32_matmul else "bf16"]
    default_peak = peaks["vector"]
    # GpSimd peak is unknown (hardware.md §9): the Vector peak stands in for it (inferred)
    # TFLOPS == 1e3 FLOPs per ns; engines run concurrently, so the busiest one sets the compute time
    compute_ns = max(
        (f / (peaks.get(eng, default_peak) * 1e3) for eng, f in sums.by_engine.items() if f), default=0.0
    )
    memory_ns = sums.hbm_bytes / limits.dma_bytes_per_ns
    intensity = sums.total / sums.hbm_bytes if sums.hbm_bytes else math.inf
    ridge = (sums.total / compute_ns if compute_ns else 0.0) / limits.dma_bytes_per_ns
    return Roofline(
        sums.total,
        sums.hbm_bytes,
        intensity,
        ridge,
        compute_ns,
        memory_ns,
        "compute" if compute_ns > memory_ns else "memory",
    )


def estimate(
    events: Iterable[TraceEvent],
    limits: TargetLimits,
    rules: InstructionCostRules = COST_RULES,
    ranks: int = 1,
) -> CostReport:
    """The estimated-cost report of a trace on ``limits``' generation.

    ``ranks`` > 1: the trace holds every collective rank's instructions (it does not record the rank), and
    ranks are separate devices running the same program, so every figure is divided by ``ranks`` to give
    one rank's estimate (an SPMD assumption, stated in the report).
    """
    events = list(events)
    lines: dict[tuple[str, int], LineCost] = {}
    engine_ns: dict[str, float] = defaultdict(float)
    multi_core = len({e.core for e in events}) > 1
    for event in events:
        cost = instruction_cost(event, limits, rules)
        line = lines.setdefault((event.file, event.line), LineCost(event.file, event.line))
        line.ns += cost.ns
        line.instructions += 1
        line.by_engine[event.engine] = line.by_engine.get(event.engine, 0.0) + cost.ns
        count_ns = line.opcodes.setdefault(event.op, [0, 0.0])
        count_ns[0] += 1
        count_ns[1] += cost.ns
        if event.engine == "dma":
            line.dma_bytes += max(sum(event.bytes_read.values()), sum(event.bytes_written.values()))
        engine_ns[f"{event.engine}@{event.core}" if multi_core else event.engine] += cost.ns
    serial = sum(c.ns for c in lines.values())
    for c in lines.values():
        c.share = c.ns / serial if serial else 0.0
    ordered = sorted(lines.values(), key=lambda c: (c.path, c.line))
    report = CostReport(
        limits.generation.value,
        ordered,
        dict(engine_ns),
        max(engine_ns.values(), default=0.0),
        serial,
        roofline(events, limits),
    )
    return report if ranks <= 1 else _per_rank(report, ranks)


def _per_rank(report: CostReport, ranks: int) -> CostReport:
    """One rank's share of a report over ``ranks`` identical programs (shares and intensity are unchanged)."""
    for c in report.lines:
        c.ns /= ranks
        c.instructions //= ranks
        c.dma_bytes //= ranks
        c.by_engine = {e: v / ranks for e, v in c.by_engine.items()}
        c.opcodes = {op: [n // ranks, t / ranks] for op, (n, t) in c.opcodes.items()}
    r = report.roofline
    return CostReport(
        report.target,
        report.lines,
        {e: v / ranks for e, v in report.engine_ns.items()},
        report.total_ns / ranks,
        report.serial_ns / ranks,
        Roofline(
            r.flops // ranks,
            r.hbm_bytes // ranks,
            r.intensity,
            r.ridge,
            r.compute_ns / ranks,
            r.memory_ns / ranks,
            r.bound,
        ),
        label=f"{LABEL}, per rank of {ranks} (assuming every rank issues the same instructions)",
    )
