"""The estimated-cost report as an ``nki/heatmap`` payload with ``source: "estimate"`` — the same schema the
profile view paints measured data with (``nki_studio.profile.heatmap``), so the extension needs one painter.

Field mapping (all estimated): ``busy_ns`` = the line's estimated time; ``share`` = that over the kernel's
estimated time (busiest engine); ``share_of_compute`` = over the serial sum; ``engines`` per-engine estimated
ns; ``dma_bytes``/``dma_ns`` from the line's DMA instructions; ``top_opcodes`` by estimated time. Fields a
cost model cannot know (semaphore waits, overlap with DMA, fused instructions) stay 0.
"""

from __future__ import annotations

import os
from typing import Any

from nki_studio.profile.heatmap import HeatLine, build_payload
from nki_studio.simulate.result import Cost


def heat_lines(cost: Cost, path: str) -> list[HeatLine]:
    """HeatLines (0-based LSP lines) for the cost report's lines in ``path``."""
    total = float(cost.get("totalNs") or 0.0)
    serial = float(cost.get("serialNs") or 0.0)
    out = []
    for c in cost.get("lines", ()):
        if os.path.abspath(str(c["path"])) != os.path.abspath(path):
            continue
        ns = float(c["ns"])
        top = sorted(c.get("opcodes", {}).items(), key=lambda kv: -kv[1][1])[:3]
        out.append(
            HeatLine(
                line=int(c["line"]) - 1,
                busy_ns=round(ns),
                share=ns / total if total else 0.0,
                share_of_compute=ns / serial if serial else 0.0,
                instr=int(c["instructions"]),
                work_instr=int(c["instructions"]),
                engines={e: round(v) for e, v in c["byEngine"].items()},
                dma_bytes=int(c.get("dmaBytes", 0)),
                dma_ns=round(c["byEngine"].get("dma", 0.0)),
                top_opcodes=[{"opcode": op, "count": int(n), "sum_ns": round(t)} for op, (n, t) in top],
            )
        )
    return out


def estimate_payload(uri: str, path: str, kernel: str, cost: Cost) -> dict[str, Any]:
    """The ``nki/heatmap`` body for one simulated kernel's estimated cost."""
    label = f"estimated by the nki-studio cost model ({cost.get('target')}), not measured: {kernel}"
    info = {
        "label": label,
        "path": path,
        "format": "simulator trace",
        "schema_version": "",
        "location_source": "simulator trace (innermost kernel line)",
        "mapping": {"recorded": path, "local": path, "how": "same file"},
    }
    summary = {
        "name": kernel,
        "latency_ns": round(float(cost.get("totalNs") or 0.0)),
        "latency_source": "estimated busiest-engine time",
        "serial_ns": round(float(cost.get("serialNs") or 0)),
        "engine_ns": {e: round(v) for e, v in (cost.get("engineNs") or {}).items()},
        "roofline": cost.get("roofline"),
        "estimated": True,
    }
    return build_payload(uri, "estimate", info, heat_lines(cost, path), summary)
