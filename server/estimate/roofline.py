"""The FLOPs and HBM bytes of a simulator trace, and the estimate's roofline point.

``flops_from_trace`` sums what the simulator recorded per instruction; a measured profile's roofline takes
those sums too (``nki_studio.profile.roofline.TraceFlops``: the profiler does not count Vector/Scalar FLOPs).
``estimate_roofline`` places the estimated kernel on the roofline, as the one ``profile.roofline.Roofline``
type: the memory roof is the target's DMA bandwidth; the compute roof is that of the engines that did the
FLOPs, each at its own peak (hardware.md §3 throughput table), the busiest one setting the compute time
because engines run concurrently. Every figure is estimated.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nki_studio.estimate.cost import FP32_INPUTS, operand
from nki_studio.model.targets import TargetLimits
from nki_studio.profile.roofline import Roofline, TraceFlops, make_roofline
from nki_studio.sim.trace import TraceEvent, read_jsonl

FLOPS_SOURCE = "simulator trace (estimated FLOPs)"


def flops_from_trace(events: Iterable[TraceEvent] | str | Path) -> TraceFlops:
    """Sum FLOPs per engine and per source line from TraceEvent records or a JSON Lines trace file."""
    if isinstance(events, (str, Path)):
        with open(events, encoding="utf-8") as fh:
            return flops_from_trace(list(read_jsonl(fh)))
    by_engine: dict[str, int] = {}
    by_line: dict[tuple[str, int], int] = {}
    total = hbm = 0
    for ev in events:
        total += ev.flops
        by_engine[ev.engine] = by_engine.get(ev.engine, 0) + ev.flops
        by_line[(ev.file, ev.line)] = by_line.get((ev.file, ev.line), 0) + ev.flops
        hbm += ev.bytes_read.get("hbm", 0) + ev.bytes_written.get("hbm", 0)
    return TraceFlops(total, by_engine, hbm, by_line, FLOPS_SOURCE)


def estimate_roofline(events: Iterable[TraceEvent], limits: TargetLimits, latency_ns: float) -> Roofline:
    """The roofline point of one rank of the traced kernel on ``limits``' generation, for the estimated kernel
    time ``latency_ns`` (> 0). The trace holds every rank's instructions; ranks run the same program on separate
    devices (an SPMD assumption), so FLOPs and bytes are divided by the number of ranks."""
    events = list(events)
    ranks = len({e.rank for e in events}) or 1
    sums = flops_from_trace(events)
    flops, hbm = sums.total // ranks, sums.hbm_bytes // ranks
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
        (f / ranks / (peaks.get(eng, default_peak) * 1e3) for eng, f in sums.by_engine.items() if f),
        default=0.0,
    )
    # the engines' combined peak as one roof: the FLOPs over the busiest engine's compute time
    peak = flops / compute_ns / 1e3 if compute_ns else peaks["tensor"]
    where = limits.generation.value
    return make_roofline(
        flops,
        FLOPS_SOURCE,
        hbm,
        "simulator trace HBM bytes (estimated)",
        limits.dma_bytes_per_ns,  # bytes per ns == GB/s
        f"{where} DMA bandwidth (model/targets.py)",
        peak,
        f"{where} peaks of the engines that did the FLOPs, the busiest one setting the compute time (model/targets.py)",
        latency_ns,
    )
