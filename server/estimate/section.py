"""The ``estimate`` section of a simulation result, *the* estimate of a kernel: the simulator trace scheduled
into an estimated profile (``nki_studio.estimate``) and measured by the profile's own metrics
(``nki_studio.profile.metrics``), so the numbers mean what they mean for a hardware profile -- busy unions,
DMA/compute overlap, the engine timeline, the per-line table -- and analysed by its own bounds and investigations
(``profile.bounds``, ``profile.investigations``), with its roofline point (``estimate.roofline``), all computed
once in the worker so ``simulate --json``, the editor and the MCP tools carry the same objects. The
perfect-overlap and no-overlap figures are bounds of the scheduled time, never a second estimate.

Also the other direction: the ``kernel`` summary a heatmap payload carries, rebuilt from the section, so the
language server paints an estimate with the fields the kernel panel reads for a measured profile.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from nki_studio.estimate import constants as K
from nki_studio.estimate.calibration.overlay import Overlay
from nki_studio.estimate.estimated_schedule import estimated_schedule
from nki_studio.estimate.execution import fixed_cost_track, kernel_ns
from nki_studio.estimate.likely_range import kernel_class, likely_range, load_residuals
from nki_studio.estimate.profile import profile_from_schedule
from nki_studio.estimate.roofline import estimate_roofline
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.bounds import compute_bounds
from nki_studio.profile.investigations import investigate
from nki_studio.profile.line_rank import ranked
from nki_studio.profile.metrics import compute_metrics
from nki_studio.profile.model import Codes, Profile
from nki_studio.protocol.calibration import CalibrationNote, CalibrationTable
from nki_studio.protocol.heatmap import EstimatedKernel
from nki_studio.protocol.simulation import Estimate, EstimateLine
from nki_studio.sim.trace import TraceEvent

LABEL = "estimated"
LATENCY_SOURCE = "estimated timeline (scheduled from the simulator trace)"

_ARG = re.compile(r"^(?P<tag>.*?)arg(?P<i>\d+)$")


def with_argument_names(profile: Profile, names: Sequence[str]) -> Profile:
    """The profile with the simulator's positional tensor names (``arg0``, ``r1.arg0``) replaced by the kernel's
    parameter names, so findings say "input `b`"."""

    def rename(value: str) -> str:
        m = _ARG.match(value)
        i = int(m.group("i")) if m else -1
        return f"{m.group('tag')}{names[i]}" if m and i < len(names) else value

    dma = profile.dma
    tensors = [dataclasses.replace(t, name=rename(t.name)) for t in profile.tensors]
    renamed = Codes(tuple(rename(v) for v in dma.tensor.values), dma.tensor.codes)
    return dataclasses.replace(profile, tensors=tensors, dma=dataclasses.replace(dma, tensor=renamed))


def estimate_section(
    trace: Sequence[TraceEvent],
    generation: Generation,
    arg_names: Sequence[str] = (),
    *,
    calibration: CalibrationTable | None = None,
    calibration_note: CalibrationNote | None = None,
) -> Estimate:
    """Schedule ``trace`` on ``generation`` and summarise the estimated profile (see the module docstring): its
    metrics, bounds and investigations. ``arg_names``: the kernel's parameters in call order (tensor names).
    ``calibration``: the user's calibration table of this target (``estimate.calibration``), used to price
    the instructions it covers; ``calibration_note``: what the section says about it (applied, or ignored and
    why). The trace is priced as it runs (``estimated_schedule``: a legacy kernel's repeated loads merged, SBUF
    spills); the roofline and the serial bound count its transfers as run too."""
    target = Target(generation)
    overlay = Overlay(calibration) if calibration is not None else None
    sched = estimated_schedule(trace, target.limits, overlay)
    run = sched.events
    profile = with_argument_names(profile_from_schedule(sched, target), arg_names)
    metrics = compute_metrics(profile)
    k = metrics.kernel
    has_instructions = profile.has_instructions
    bounds = compute_bounds(profile, generation.value) if has_instructions else None
    rows: list[EstimateLine] = [
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
    # Hottest first by the kernel's bottleneck (profile.line_rank), the order every view lists them in.
    lines = ranked(
        rows,
        lambda r: r["busyNs"],
        lambda r: r["dmaNs"],
        bounds.bottleneck if bounds else None,
        lambda r: r["line"],
    )
    # the per-execution fixed cost (estimate.execution) is in the kernel time, so in both of its bounds too
    perfect = round(kernel_ns(k.perfect_pipeline_ns)) if k.latency_ns else 0
    roofline = (
        estimate_roofline(run, target.limits, k.latency_ns).to_dict()
        if has_instructions and k.latency_ns > 0
        else None
    )
    section: Estimate = {
        "label": LABEL,
        "target": generation.value,
        "totalNs": k.latency_ns,
        "range": (
            likely_range(k.latency_ns, generation.value, kernel_class(roofline), load_residuals())
            if k.latency_ns > 0
            else None
        ),
        "engineNs": dict(k.engines),
        "dmaNs": k.dma_union_ns,
        "computeNs": k.compute_union_ns,
        "overlapNs": k.intersection_ns,
        "idleNs": k.idle_ns,
        "perfectPipelineNs": perfect,
        # nothing overlapping: every engine's work, every transfer's data and every transfer's issue on its queue
        # (a transfer's record in the profile is its data movement, as a measured one's)
        "serialNs": round(
            kernel_ns(
                sum(k.engines.values())
                + k.dma_union_ns
                + int(K.DMA_ISSUE_COST.value * sum(1 for e in run if e.engine == "dma"))
            )
        ),
        "serializationGapNs": k.latency_ns - perfect,
        "effectiveDmaGbps": k.effective_dma_gbps,
        "instructions": k.instr,
        "dmaBytes": k.dma_bytes,
        "lines": lines,
        "roofline": roofline,
        "timeline": [fixed_cost_track(k.latency_ns), *k.timeline] if k.latency_ns else k.timeline,
        "bounds": bounds.to_dict() if bounds else None,
        "investigations": (
            [i.to_dict() for i in investigate(profile, generation.value)] if has_instructions else []
        ),
        "notes": list(k.notes),
    }
    if calibration_note is not None:
        section["calibration"] = calibration_note
    return section


def kernel_summary(estimate: Estimate, name: str) -> EstimatedKernel:
    """The heatmap payload's ``kernel`` object for an estimate, under the keys a profile's summary uses
    (``KernelMetrics.to_dict``), labelled estimated."""
    return {
        "name": name,
        "latency_ns": estimate["totalNs"],
        "latency_source": LATENCY_SOURCE,
        "latency_range": estimate["range"],
        "dma_union_ns": estimate["dmaNs"],
        "compute_union_ns": estimate["computeNs"],
        "intersection_ns": estimate["overlapNs"],
        "idle_ns": estimate["idleNs"],
        "engines": dict(estimate["engineNs"]),
        "instr": estimate["instructions"],
        "dma_bytes": estimate["dmaBytes"],
        "perfect_pipeline_ns": estimate["perfectPipelineNs"],
        "serialization_gap_ns": estimate["serializationGapNs"],
        "effective_dma_gbps": estimate["effectiveDmaGbps"],
        "timeline": estimate["timeline"],
        "roofline": estimate["roofline"],
        "bounds": estimate["bounds"],
        "investigations": estimate["investigations"],
        "notes": list(estimate.get("notes", ())),
        "estimated": True,
        "calibration": estimate.get("calibration"),
    }
