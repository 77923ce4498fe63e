"""One profile, measured or estimated, in one JSON shape (``View``): the kernel summary, the bounds, the
investigations and the per-line heat; and two views compared (``compare_views``), which is how a measured
profile is compared with a simulation's estimate.

The bound families and line-level investigations (bounds.md §2, §3) are those ``nki_studio.profile.analyze``
computed for the report, the same the CLI's ``profile analyze`` and the editor show. An estimate is viewed from
the simulation result's ``estimate`` section (``estimate_view``): the same fields ``simulate --json`` prints, so
a CI script and an agent read one set of numbers. The types are declared here until the protocol declares
them (issue 26, protocol part).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from nki_studio.profile.line_rank import line_time_ns, ranked
from nki_studio.protocol.analysis import FamilyJson, InvestigationJson
from nki_studio.protocol.profile import LineDelta
from nki_studio.protocol.simulation import Estimate, Roofline
from nki_studio.service.profiles import compare_lines, estimate_summary

if TYPE_CHECKING:
    from nki_studio.service.profiles import ProfileReport, SourceText

TOP_LINES = 40  # hottest lines returned per profile (an agent reads them; the rest are in the totals)


class Summary(TypedDict):
    """The kernel-level numbers (metrics.md §2, §4): latency, unions, idle, engines, DMA."""

    latency_ns: int
    latency_source: str
    compute_union_ns: int
    dma_union_ns: int
    intersection_ns: int | None
    idle_ns: int | None
    perfect_pipeline_ns: int
    serialization_gap_ns: int
    engines: dict[str, int]
    instr: int
    dma_bytes: int
    effective_dma_gbps: float | None


class BusiestEngine(TypedDict):
    engine: str
    busy_ns: int


class BoundsView(TypedDict):
    """The bound families (each bound, its gap and the bottleneck-aware speedup), the bottleneck engine, the
    roofline point and the DMA/compute decomposition of the kernel."""

    families: list[FamilyJson]
    bottleneck: str | None
    boundNotes: list[str]
    roofline: Roofline | None  # the estimate's roofline point, or a profile's
    busiestEngine: BusiestEngine
    dmaShare: float | None
    computeShare: float | None
    overlapShare: float | None


class OpcodeTime(TypedDict):
    opcode: str
    count: int
    sum_ns: int


class LineView(TypedDict):
    """One source line's heat."""

    file: str
    line: int
    time_ns: int  # busy_ns + dma_ns: the line's compute and the DMA it issues (profile.line_rank)
    busy_ns: int
    share: float
    wait_ns: int
    instr: int
    engines: dict[str, int]
    dma_bytes: int
    dma_ns: int
    top_opcodes: list[OpcodeTime]


class View(TypedDict):
    """Everything said about one profile, measured or estimated."""

    label: Literal["measured", "estimated"]  # shown with every number
    format: str
    summary: Summary
    bounds: BoundsView
    investigations: list[InvestigationJson]
    lines: list[LineView]
    notes: list[str]


class Delta(TypedDict):
    a: float
    b: float
    delta: float
    ratio: float | None


class EngineTimes(TypedDict):
    a: int
    b: int


class ViewComparison(TypedDict):
    """Two views side by side: the totals' deltas (b − a), per-engine busy time, per-line deltas largest first
    (each line followed across the edit when both texts are known), the lines only in a or only in b."""

    totals: dict[str, Delta]
    engines: dict[str, EngineTimes]
    lines: list[LineDelta]  # the rows of ``profile.line_align.compare_lines``
    removed_lines: list[LineDelta]
    added_lines: list[LineDelta]
    lines_matched_by: str
    faster: Literal["a", "b", "same"]
    speedup: float | None


def summary_of(kernel: Mapping[str, Any]) -> Summary:
    """The kernel-level numbers of a profile's ``KernelMetrics.to_dict()`` or of an estimate's kernel summary
    (the same keys)."""
    return Summary(
        latency_ns=kernel["latency_ns"],
        latency_source=kernel["latency_source"],
        compute_union_ns=kernel["compute_union_ns"],
        dma_union_ns=kernel["dma_union_ns"],
        intersection_ns=kernel["intersection_ns"],
        idle_ns=kernel["idle_ns"],
        perfect_pipeline_ns=kernel["perfect_pipeline_ns"],
        serialization_gap_ns=kernel["serialization_gap_ns"],
        engines=kernel["engines"],
        instr=kernel["instr"],
        dma_bytes=kernel["dma_bytes"],
        effective_dma_gbps=kernel["effective_dma_gbps"],
    )


def _bounds_view(summary: Summary, bounds: Mapping[str, Any] | None, roofline: Roofline | None) -> BoundsView:
    latency, overlap = summary["latency_ns"], summary["intersection_ns"]
    busiest = max(summary["engines"].items(), key=lambda kv: kv[1], default=("", 0))
    return BoundsView(
        families=bounds["families"] if bounds else [],
        bottleneck=bounds["bottleneck"] if bounds else None,
        boundNotes=bounds["notes"] if bounds else ["the profile holds no instructions: no bounds"],
        roofline=roofline,
        busiestEngine=BusiestEngine(engine=busiest[0], busy_ns=busiest[1]),
        dmaShare=summary["dma_union_ns"] / latency if latency else None,
        computeShare=summary["compute_union_ns"] / latency if latency else None,
        overlapShare=overlap / latency if latency and overlap is not None else None,
    )


def view(report: ProfileReport, local: Callable[[str], str], top: int | None = TOP_LINES) -> View:
    """An analysed profile (its bounds and investigations as ``analyze`` computed them; ``top``: how many of
    the hottest lines, None: all; ``local`` maps a recorded source path to the file shown)."""
    k = report.metrics.kernel
    summary = summary_of(k.to_dict())
    bounds = report.bounds.to_dict() if report.bounds else None
    return View(
        label="estimated" if report.profile.provenance == "estimated" else "measured",
        format=report.profile.format,
        summary=summary,
        bounds=_bounds_view(summary, bounds, k.roofline.to_dict() if k.roofline else None),
        investigations=[inv.to_dict() for inv in report.investigations],
        lines=[
            LineView(
                file=local(m.file),
                line=m.line,
                time_ns=line_time_ns(m.busy_ns, m.dma_ns),
                busy_ns=m.busy_ns,
                share=m.share,
                wait_ns=m.wait_ns,
                instr=m.instr,
                engines=m.engines,
                dma_bytes=m.dma_bytes,
                dma_ns=m.dma_ns,
                top_opcodes=[OpcodeTime(opcode=o, count=c, sum_ns=t) for o, c, t in m.top_opcodes],
            )
            for m in ranked(
                report.metrics.lines,
                lambda m: m.busy_ns,
                lambda m: m.dma_ns,
                report.bounds.bottleneck if report.bounds else None,
                lambda m: m.line,
            )[:top]
        ],
        notes=list(k.notes),
    )


def estimate_view(estimate: Estimate, local: Callable[[str], str], top: int | None = TOP_LINES) -> View:
    """``view`` of a simulation result's ``estimate`` section: its bounds, investigations and roofline point are
    the section's own objects, its numbers the section's fields."""
    summary = summary_of(estimate_summary(estimate))
    return View(
        label="estimated",
        format="simulator trace",
        summary=summary,
        bounds=_bounds_view(summary, estimate["bounds"], estimate["roofline"]),
        investigations=estimate["investigations"],
        lines=[
            LineView(
                file=local(ln["path"]),
                line=ln["line"],
                time_ns=line_time_ns(ln["busyNs"], ln["dmaNs"]),
                busy_ns=ln["busyNs"],
                share=ln["share"],
                wait_ns=0,  # an estimate schedules no semaphore waits of its own
                instr=ln["instructions"],
                engines=ln["engines"],
                dma_bytes=ln["dmaBytes"],
                dma_ns=ln["dmaNs"],
                top_opcodes=[
                    OpcodeTime(opcode=o["opcode"], count=o["count"], sum_ns=o["sumNs"])
                    for o in ln["topOpcodes"]
                ],
            )
            for ln in estimate["lines"][:top]
        ],
        notes=list(estimate.get("notes", ())),
    )


def _times(v: View) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for ln in v["lines"]:
        per = out.setdefault(ln["file"], {})
        per[ln["line"]] = per.get(ln["line"], 0) + ln["time_ns"]  # compute and the DMA it issues
    return out


_TOTALS = (
    "latency_ns",
    "compute_union_ns",
    "dma_union_ns",
    "idle_ns",
    "serialization_gap_ns",
    "instr",
    "dma_bytes",
)


def compare_views(
    a: View,
    b: View,
    sources_a: Mapping[str, SourceText],
    sources_b: Mapping[str, SourceText],
    top: int | None = TOP_LINES,
) -> ViewComparison:
    """``a`` and ``b`` (measured or estimated, with all their lines) side by side; ``sources_*``: the text each
    was produced from (file as the views name it -> snapshot; none: lines are matched by number)."""
    sa, sb = a["summary"], b["summary"]
    totals: dict[str, Delta] = {}
    for key in _TOTALS:
        va, vb = sa.get(key), sb.get(key)
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            totals[key] = Delta(a=va, b=vb, delta=vb - va, ratio=vb / va if va else None)
    engines = {
        e: EngineTimes(a=sa["engines"].get(e, 0), b=sb["engines"].get(e, 0))
        for e in sorted({*sa["engines"], *sb["engines"]})
    }
    ta, tb = _times(a), _times(b)
    only = (next(iter(ta)), next(iter(tb))) if len(ta) == 1 and len(tb) == 1 else None
    if only:  # one kernel file each side: the same kernel, maybe saved under another name
        ta, tb = {"": ta[only[0]]}, {"": tb[only[1]]}
    got = compare_lines(ta, tb, sources_a, sources_b, only)
    if only:  # name the file again: B's for lines that are in B, A's for removed ones
        for r in (*got["lines"], *got["removed_lines"], *got["added_lines"]):
            r["file"] = only[1] if r["line_b"] is not None else only[0]
    la, lb = sa["latency_ns"], sb["latency_ns"]
    return ViewComparison(
        totals=totals,
        engines=engines,
        lines=got["lines"][:top],
        removed_lines=got["removed_lines"][:top],
        added_lines=got["added_lines"][:top],
        lines_matched_by=got["lines_matched_by"],
        faster="same" if la == lb else ("b" if lb < la else "a"),
        speedup=la / lb if lb else None,
    )
