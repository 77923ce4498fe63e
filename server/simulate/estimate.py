"""The ``estimate`` section of a simulation result: the simulator trace scheduled into an estimated profile
(``nki_studio.estimate``) and measured by the profile's own metrics (``nki_studio.profile.metrics``), so the
numbers mean what they mean for a hardware profile -- busy unions, DMA/compute overlap, the engine timeline.

Also the other direction: the ``kernel`` summary a heatmap payload carries, rebuilt from the section, so the
language server paints an estimate with the fields the kernel panel reads for a measured profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nki_studio.estimate.profile import estimate_profile
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.metrics import compute_metrics
from nki_studio.sim.trace import TraceEvent
from nki_studio.simulate.result import Estimate, EstimateLine

LABEL = "estimated"
LATENCY_SOURCE = "estimated timeline (scheduled from the simulator trace)"


def estimate_section(trace: Sequence[TraceEvent], generation: Generation) -> Estimate:
    """Schedule ``trace`` on ``generation`` and summarise the estimated profile (see the module docstring)."""
    target = Target(generation)
    metrics = compute_metrics(estimate_profile(trace, target))
    k = metrics.kernel
    lines: list[EstimateLine] = [
        {
            "path": m.file,
            "line": m.line,
            "busyNs": m.busy_ns,
            "share": m.share,
            "shareOfCompute": m.share_of_compute,
            "instructions": m.instr,
            "engines": dict(m.engines),
            "dmaBytes": m.dma_bytes,
            "dmaNs": m.dma_ns,
            "dmaOverlapNs": m.dma_overlap_ns,
            "exclusiveNs": m.exclusive_ns,
            "topOpcodes": [{"opcode": o, "count": c, "sumNs": t} for o, c, t in m.top_opcodes],
        }
        for m in metrics.lines
    ]
    return {
        "label": LABEL,
        "target": generation.value,
        "totalNs": k.latency_ns,
        "engineNs": dict(k.engines),
        "dmaNs": k.dma_union_ns,
        "computeNs": k.compute_union_ns,
        "overlapNs": k.intersection_ns,
        "idleNs": k.idle_ns,
        "instructions": k.instr,
        "dmaBytes": k.dma_bytes,
        "lines": lines,
        "timeline": k.timeline,  # type: ignore[typeddict-item]  # tracks built as plain dicts by profile.timeline
        "notes": list(k.notes),
    }


def kernel_summary(estimate: Estimate, name: str, roofline: Any = None) -> dict[str, Any]:
    """The heatmap payload's ``kernel`` object for an estimate, under the keys a profile's summary uses
    (``KernelMetrics.to_dict``), labelled estimated."""
    return {
        "name": name,
        "latency_ns": estimate["totalNs"],
        "latency_source": LATENCY_SOURCE,
        "dma_union_ns": estimate["dmaNs"],
        "compute_union_ns": estimate["computeNs"],
        "intersection_ns": estimate["overlapNs"],
        "idle_ns": estimate["idleNs"],
        "engines": dict(estimate["engineNs"]),
        "instr": estimate["instructions"],
        "dma_bytes": estimate["dmaBytes"],
        "timeline": estimate["timeline"],
        "roofline": roofline,
        "notes": list(estimate.get("notes", ())),
        "estimated": True,
    }
