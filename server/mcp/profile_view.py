"""What the ``estimate``, ``analyze_profile`` and ``compare`` tools say about one profile, measured or
estimated: the kernel summary, the bounds, the investigations and the per-line heat, in one JSON shape.

The bound families and line-level investigations (bounds.md §2, §3) are those ``nki_studio.profile.analyze``
computed for the report, the same the CLI's ``profile analyze`` and the editor show. An estimate is viewed from
the simulation result's ``estimate`` section (``estimate_section_view``): the same fields ``simulate --json``
prints, so a CI script and an agent read one set of numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nki_studio.protocol.simulation import Estimate, Roofline
from nki_studio.service.profiles import estimate_summary

if TYPE_CHECKING:
    from nki_studio.service.profiles import ProfileReport

TOP_LINES = 40  # hottest lines returned per profile (an agent reads them; the rest are in the totals)

_SUMMARY_KEYS = (
    "latency_ns",
    "latency_source",
    "compute_union_ns",
    "dma_union_ns",
    "intersection_ns",
    "idle_ns",
    "perfect_pipeline_ns",
    "serialization_gap_ns",
    "engines",
    "instr",
    "dma_bytes",
    "effective_dma_gbps",
)


def label_of(report: ProfileReport) -> str:
    """ "estimated" for the nki-studio schedule, "measured" for a device profile: shown with every number."""
    return "estimated" if report.profile.provenance == "estimated" else "measured"


def summary_of(kernel: dict[str, Any]) -> dict[str, Any]:
    """The kernel-level numbers (metrics.md §2, §4): latency, unions, idle, engines, DMA (from a profile's
    ``KernelMetrics.to_dict()`` or an estimate's kernel summary under the same keys)."""
    return {k: kernel[k] for k in _SUMMARY_KEYS}


def _bounds_view(summary: dict[str, Any], bounds: Any, roofline: Any) -> dict[str, Any]:
    """The bound families (memory, compute, pipeline: each bound, its gap and the bottleneck-aware speedup),
    the bottleneck engine, and the roofline point and DMA/compute decomposition of the kernel."""
    latency, overlap = summary["latency_ns"], summary["intersection_ns"]
    busiest = max(summary["engines"].items(), key=lambda kv: kv[1], default=("", 0))
    return {
        "families": bounds["families"] if bounds else [],
        "bottleneck": bounds["bottleneck"] if bounds else None,
        "boundNotes": bounds["notes"] if bounds else ["the profile holds no instructions: no bounds"],
        "roofline": roofline,
        "busiestEngine": {"engine": busiest[0], "busy_ns": busiest[1]},
        "dmaShare": summary["dma_union_ns"] / latency if latency else None,
        "computeShare": summary["compute_union_ns"] / latency if latency else None,
        "overlapShare": overlap / latency if latency and overlap is not None else None,
    }


def bounds_of(report: ProfileReport) -> dict[str, Any]:
    """``_bounds_view`` of an analysed profile."""
    k = report.metrics.kernel
    bounds = report.bounds.to_dict() if report.bounds else None
    return _bounds_view(summary_of(k.to_dict()), bounds, k.roofline.to_dict() if k.roofline else None)


def lines_of(
    report: ProfileReport, local: Callable[[str], str], top: int | None = TOP_LINES
) -> list[dict[str, Any]]:
    """The ``top`` hottest lines (None: all), each with its local file (``local`` maps the recorded path)."""
    out = []
    for m in report.metrics.lines[:top]:
        out.append(
            {
                "file": local(m.file),
                "line": m.line,
                "busy_ns": m.busy_ns,
                "share": m.share,
                "wait_ns": m.wait_ns,
                "instr": m.instr,
                "engines": m.engines,
                "dma_bytes": m.dma_bytes,
                "dma_ns": m.dma_ns,
                "top_opcodes": [{"opcode": o, "count": c, "sum_ns": t} for o, c, t in m.top_opcodes],
            }
        )
    return out


def view(report: ProfileReport, local: Callable[[str], str], top: int | None = TOP_LINES) -> dict[str, Any]:
    """Everything a tool returns about one analysed profile (its bounds and investigations as ``analyze``
    computed them; ``top``: how many of the hottest lines, None: all)."""
    return {
        "label": label_of(report),
        "format": report.profile.format,
        "summary": summary_of(report.metrics.kernel.to_dict()),
        "bounds": bounds_of(report),
        "investigations": [inv.to_dict() for inv in report.investigations],
        "lines": lines_of(report, local, top),
        "notes": list(report.metrics.kernel.notes),
    }


def estimate_section_view(
    estimate: Estimate, roofline: Roofline | None, local: Callable[[str], str], top: int | None = TOP_LINES
) -> dict[str, Any]:
    """``view`` of a simulation result's ``estimate`` section (``roofline``: the result's cost-model point):
    its bounds and investigations are the section's own objects, its numbers the section's fields."""
    summary = summary_of(estimate_summary(estimate, roofline))
    lines = [
        {
            "file": local(ln["path"]),
            "line": ln["line"],
            "busy_ns": ln["busyNs"],
            "share": ln["share"],
            "wait_ns": 0,  # an estimate schedules no semaphore waits of its own
            "instr": ln["instructions"],
            "engines": ln["engines"],
            "dma_bytes": ln["dmaBytes"],
            "dma_ns": ln["dmaNs"],
            "top_opcodes": [
                {"opcode": o["opcode"], "count": o["count"], "sum_ns": o["sumNs"]} for o in ln["topOpcodes"]
            ],
        }
        for ln in estimate["lines"][:top]
    ]
    return {
        "label": "estimated",
        "format": "simulator trace",
        "summary": summary,
        "bounds": _bounds_view(summary, estimate["bounds"], roofline),
        "investigations": estimate["investigations"],
        "lines": lines,
        "notes": list(estimate.get("notes", ())),
    }


def headline(name: str, v: dict[str, Any]) -> str:
    """One line: the label, latency and busiest engine of a view."""
    s = v["summary"]
    busiest = v["bounds"]["busiestEngine"]
    top = v["lines"][0] if v["lines"] else None
    hot = f"; hottest line {top['file']}:{top['line']} ({top['share']:.0%})" if top else ""
    return (
        f"{name}: {v['label']} latency {s['latency_ns'] / 1000:.2f} µs ({s['latency_source']}); busiest engine "
        f"{busiest['engine'] or '-'} {busiest['busy_ns'] / 1000:.2f} µs{hot}"
    )
