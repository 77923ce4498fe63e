"""The kernel's roofline point (metrics.md §5).

FLOPs come from the simulator's trace of the same kernel when one is given, summed by the caller into a
:class:`TraceFlops` (``nki_studio.estimate.roofline.flops_from_trace``; this layer does not read traces): the
profiler does not count Vector/Scalar FLOPs and ``Summary.model_flops`` is 0 for standalone NKI kernels, so that
field is never used. Without a trace, ``Summary.hardware_flops`` (Tensor Engine only) is used when non-zero and
labelled as such.

:class:`Roofline` is the one roofline type: a measured profile's point (:func:`roofline_point`) and the
estimate's (``nki_studio.estimate.roofline``) are both built by :func:`make_roofline`, and sent as
``nki_studio.protocol.simulation.Roofline``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from nki_studio.model.targets import limits_for, parse_generation
from nki_studio.protocol.simulation import Roofline as RooflineJson

# Walkthrough figure for the FP32 Vector Engine peak; not in any profile (metrics.md §5), so configurable.
DEFAULT_VECTOR_PEAK_TFLOPS = 1.0


@dataclass(frozen=True)
class RooflineOptions:
    """Ceilings; ``None`` means: take it from the profile's Metadata, else from the target generation."""

    dma_ceiling_gbps: float | None = None
    tensor_peak_tflops: float | None = None
    vector_peak_tflops: float = DEFAULT_VECTOR_PEAK_TFLOPS
    generation: str = "trn2"


@dataclass(frozen=True)
class TraceFlops:
    """FLOPs and HBM bytes summed over a simulator trace."""

    total: int
    by_engine: dict[str, int]
    hbm_bytes: int
    by_line: dict[tuple[str, int], int]
    source: str


@dataclass
class Roofline:
    """One roofline point with every input named."""

    flops: int | None
    flops_source: str
    bytes: int
    bytes_source: str
    intensity: float | None  # FLOP per byte
    ceiling_gbps: float
    ceiling_source: str
    peak_tflops: float
    peak_source: str
    ridge: float  # FLOP per byte where the roofs meet
    attainable_tflops: float | None
    achieved_tflops: float | None
    memory_floor_ns: float
    compute_floor_ns: float | None
    bound: Literal["memory", "compute", "unknown"]
    efficiency: float | None  # max(floors) / latency

    def to_dict(self) -> RooflineJson:
        """JSON-ready dict; its keys are the fields (tests/protocol checks that they agree)."""
        return cast(RooflineJson, dict(self.__dict__))


def _ceiling(meta: dict[str, Any], opts: RooflineOptions) -> tuple[float, str]:
    if opts.dma_ceiling_gbps:
        return opts.dma_ceiling_gbps, "setting"
    bw = meta.get("dma_ddr_bandwidth")
    if isinstance(bw, (int, float)) and bw > 0:
        return float(bw) / 1e9, "Metadata.dma_ddr_bandwidth"
    lim = limits_for(parse_generation(opts.generation))
    return lim.dma_bytes_per_ns, f"{lim.generation.value} DMA bandwidth (model/targets.py)"


def _tensor_peak(meta: dict[str, Any], opts: RooflineOptions) -> tuple[float, str]:
    if opts.tensor_peak_tflops:
        return opts.tensor_peak_tflops, "setting"
    rows, cols, ghz = (
        meta.get(k) for k in ("tensor_engine_num_rows", "tensor_engine_num_cols", "tensor_engine_clock_freq")
    )
    if all(isinstance(v, (int, float)) and v > 0 for v in (rows, cols, ghz)):
        return float(rows) * float(cols) * 2 * float(ghz) / 1e3, "Metadata tensor_engine rows×cols×2×clock"  # type: ignore[arg-type]
    lim = limits_for(parse_generation(opts.generation))
    return 128 * 128 * 2 * lim.clock_ghz["tensor"] / 1e3, f"{lim.generation.value} PE array 128×128×2×clock"


def roofline_point(
    profile: Any, opts: RooflineOptions, trace: TraceFlops | None, latency_ns: int, dma_bytes: int
) -> Roofline | None:
    """The roofline point of a profiled kernel, or None when there is no latency to place it."""
    if latency_ns <= 0:
        return None
    summ, meta = profile.summary, profile.metadata
    hbm = int(summ.get("hbm_read_bytes") or 0) + int(summ.get("hbm_write_bytes") or 0)
    bytes_source = "Summary.hbm_read_bytes + hbm_write_bytes"
    if not hbm and dma_bytes:
        hbm, bytes_source = dma_bytes, "kernel DMA bytes"
    if not hbm and trace is not None and trace.hbm_bytes:
        hbm, bytes_source = trace.hbm_bytes, "simulator trace HBM bytes (estimated)"
    ceiling, ceiling_source = _ceiling(meta, opts)
    flops: int | None = None
    flops_source = "unavailable: pass the simulator trace of this kernel (FLOPs are not in the profile)"
    tensor_share = 1.0
    if trace is not None and trace.total > 0:
        flops, flops_source = trace.total, trace.source
        tensor_share = trace.by_engine.get("tensor", 0) / trace.total
    elif int(summ.get("hardware_flops") or 0) > 0:
        flops, flops_source = int(summ["hardware_flops"]), "Summary.hardware_flops (Tensor Engine only)"
    if tensor_share >= 0.5:
        peak, peak_source = _tensor_peak(meta, opts)
    else:
        peak, peak_source = (
            opts.vector_peak_tflops,
            "Vector Engine FP32 peak (setting; walkthrough 1.0 TFLOP/s)",
        )
    return make_roofline(
        flops, flops_source, hbm, bytes_source, ceiling, ceiling_source, peak, peak_source, latency_ns
    )


def make_roofline(
    flops: int | None,
    flops_source: str,
    hbm: int,
    bytes_source: str,
    ceiling: float,
    ceiling_source: str,
    peak: float,
    peak_source: str,
    latency_ns: float,
) -> Roofline:
    """The roofline point of ``flops`` over ``hbm`` bytes against a ``ceiling`` GB/s memory roof and a ``peak``
    TFLOP/s compute roof, for a kernel that took ``latency_ns`` (> 0); every input keeps its source."""
    ridge = peak * 1e3 / ceiling  # (TFLOP/s → GFLOP/s) / (GB/s)
    mem_floor = hbm / ceiling if hbm else 0.0
    intensity = flops / hbm if flops is not None and hbm else None
    comp_floor = flops / (peak * 1e3) if flops is not None else None  # GFLOP/s == FLOP/ns
    floors = [f for f in (mem_floor, comp_floor) if f]
    bound: Literal["memory", "compute", "unknown"] = (
        "unknown" if comp_floor is None else ("memory" if mem_floor >= comp_floor else "compute")
    )
    return Roofline(
        flops=flops,
        flops_source=flops_source,
        bytes=hbm,
        bytes_source=bytes_source,
        intensity=intensity,
        ceiling_gbps=ceiling,
        ceiling_source=ceiling_source,
        peak_tflops=peak,
        peak_source=peak_source,
        ridge=ridge,
        attainable_tflops=min(peak, intensity * ceiling / 1e3) if intensity is not None else None,
        achieved_tflops=flops / latency_ns / 1e3 if flops is not None else None,
        memory_floor_ns=mem_floor,
        compute_floor_ns=comp_floor,
        bound=bound,
        efficiency=max(floors) / latency_ns if floors else None,
    )
