"""The estimated timeline as an ``nki/heatmap`` payload with ``source: "estimate"`` — the same schema the
profile view paints measured data with (``nki_studio.profile.heatmap``), so the extension needs one painter.

The lines are the estimated profile's per-line metrics (``nki_studio.estimate.section``: busy unions on the
scheduled timeline, DMA bytes and overlap, exclusive time), the kernel summary carries the engine timeline and
the DMA/compute decomposition under a profile summary's keys, plus the estimate's roofline point. Semaphore
waits and fused instructions do not exist in an estimate and stay 0. Everything is labelled estimated.
"""

from __future__ import annotations

import os

from nki_studio.estimate.section import LABEL, kernel_summary
from nki_studio.profile.heatmap import HeatLine, build_payload
from nki_studio.protocol.heatmap import HeatFinding, HeatmapParams
from nki_studio.protocol.profile import ProfileInfo
from nki_studio.protocol.simulation import Estimate


def heat_lines(estimate: Estimate, path: str) -> list[HeatLine]:
    """HeatLines (0-based LSP lines) for the estimate's lines in ``path``."""
    out = []
    for c in estimate["lines"]:
        if os.path.abspath(c["path"]) != os.path.abspath(path):
            continue
        out.append(
            HeatLine(
                line=c["line"] - 1,
                busy_ns=c["busyNs"],
                share=c["share"],
                share_of_compute=c["shareOfCompute"],
                instr=c["instructions"],
                work_instr=c["instructions"],
                engines=dict(c["engines"]),
                dma_bytes=c["dmaBytes"],
                dma_ns=c["dmaNs"],
                dma_overlap_ns=c["dmaOverlapNs"],
                exclusive_ns=c["exclusiveNs"],
                top_opcodes=[
                    {"opcode": o["opcode"], "count": o["count"], "sum_ns": o["sumNs"]}
                    for o in c["topOpcodes"]
                ],
            )
        )
    return out


def estimate_findings(estimate: Estimate, path: str) -> list[HeatFinding]:
    """The investigations' findings on ``path``, as payload entries (0-based ``line``, like heat lines; the
    shape ``profile.analyze.ProfileReport.findings_by_file`` gives a measured profile's)."""
    return [
        {"line": f["line"] - 1, "code": f["code"], "kind": inv["kind"], "message": f["message"]}
        for inv in estimate["investigations"]
        for f in inv["findings"]
        if os.path.abspath(f["file"]) == os.path.abspath(path)
    ]


def estimate_payload(uri: str, path: str, kernel: str, estimate: Estimate) -> HeatmapParams:
    """The ``nki/heatmap`` body for one simulated kernel's estimated timeline."""
    label = f"{LABEL} by the nki-studio timeline ({estimate['target']}), not measured: {kernel}"
    info: ProfileInfo = {
        "label": label,
        "path": path,
        "format": "simulator trace",
        "provenance": LABEL,
        "schema_version": "",
        "location_source": "simulator trace (innermost kernel line)",
        "mapping": {"recorded": path, "local": path, "how": "same file"},
        "notes": list(estimate.get("notes", ())),
    }
    payload = build_payload(
        uri, "estimate", info, heat_lines(estimate, path), kernel_summary(estimate, kernel)
    )
    return {**payload, "findings": estimate_findings(estimate, path)}
