"""The ``nki/heatmap`` payload: one schema for measured profiles and for the simulator's estimates.

The payload is declared in ``nki_studio.protocol.heatmap`` (``HeatmapParams``; all times integer ns, shares
fractions 0-1, lines 0-based); ``source`` is ``"estimate"`` for estimates, labelled so everywhere a user sees
them. Producers build ``HeatLine`` rows (``heat_line_from_metrics`` for profiles; the simulator's estimate builder
fills the same fields it knows and leaves the rest 0) and call ``build_payload``. Everything here is pure: no LSP
types, so the CLI, tests and the language server share it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from nki_studio.profile.line_rank import default_metric, line_time_ns, ranked
from nki_studio.profile.linemetrics import LineMetrics
from nki_studio.profile.mapping import MappedFile
from nki_studio.profile.metrics import ProfileMetrics
from nki_studio.protocol.heatmap import (
    EstimatedKernel,
    HeatFinding,
    HeatmapParams,
    HeatMetric,
    HeatSource,
    MeasuredKernel,
    MetricDef,
)
from nki_studio.protocol.heatmap import HeatLine as HeatLineJson
from nki_studio.protocol.profile import IterationJson, ProfileInfo, TopOpcodeJson

# Each metric once: its plain name and meaning (the metric picker, the panel) and the technical definition
# (``detail``: the hover's detail line, docs/profiles.md).
METRIC_DEFS: dict[str, MetricDef] = {
    "time_ns": {
        "label": "time (compute + DMA issued)",
        "unit": "ns",
        "description": "busy time plus the time of the DMA transfers the line issues; the two may overlap, so "
        "this is an upper bound of the line's own time",
        "detail": "busy_ns + the line's DMA time (measured: transfers reached through the profile's flow links; "
        "estimated: the transfers' scheduled time)",
    },
    "busy_ns": {
        "label": "busy",
        "unit": "ns",
        "description": "time the line keeps an engine busy (work that overlaps is counted once)",
        "detail": "length of the union of this line's work-instruction intervals on one core (semaphore waits "
        "excluded); never a sum of durations",
    },
    "share": {
        "label": "share of kernel",
        "unit": "fraction",
        "description": "the line's busy time as a share of the kernel's time; lines run at the same time, so "
        "the shares add up to more than 100 %",
        "detail": "busy_ns / kernel latency",
    },
    "share_of_compute": {
        "label": "share of compute",
        "unit": "fraction",
        "description": "the line's busy time as a share of the time any engine computes",
        "detail": "busy_ns / union of all work instructions",
    },
    "instr": {
        "label": "instructions",
        "unit": "count",
        "description": "instructions the line issues (one fused from several lines counts for each of them)",
        "detail": "instructions attributed to the line (fused ones count for each of their lines)",
    },
    "work_instr": {
        "label": "work instructions",
        "unit": "count",
        "description": "instructions that do work rather than wait for another engine",
        "detail": "instructions that are not semaphore waits",
    },
    "wait_ns": {
        "label": "wait",
        "unit": "ns",
        "description": "time the line's instructions wait for other engines to finish",
        "detail": "union of the line's EVENT_SEMAPHORE(_RANGE_CLEAR) intervals",
    },
    "engines": {
        "label": "per-engine busy",
        "unit": "ns",
        "description": "busy time on each engine",
        "detail": "busy union per engine",
    },
    "dma_bytes": {
        "label": "DMA bytes",
        "unit": "bytes",
        "description": "bytes the line's instructions move between memories (DMA transfers)",
        "detail": "bytes of the kernel's transfers (as counted for the kernel: in the execution window, "
        "no instruction-queue or <= 4-byte packets) triggered by the line's instructions (Flow edges)",
    },
    "dma_ns": {
        "label": "DMA time",
        "unit": "ns",
        "description": "time those transfers take (transfers that overlap are counted once)",
        "detail": "union of those transfers",
    },
    "exclusive_ns": {
        "label": "exclusive",
        "unit": "ns",
        "description": "the line's own part of the kernel's compute time: a moment shared by several lines is "
        "split among them, so these add up",
        "detail": "additive view: every moment of attributed compute split equally among the lines busy in "
        "it; sums over lines to their union",
    },
    "dma_overlap_ns": {
        "label": "DMA overlap",
        "unit": "ns",
        "description": "part of the line's busy time during which data was moving (any DMA)",
        "detail": "part of the line's busy time during which any DMA ran",
    },
    "iterations": {
        "label": "per iteration",
        "unit": "ns",
        "description": "busy time in each iteration of the line's loops",
        "detail": "busy time per loop-iteration value (KernelIterationVariables)",
    },
}

SORT_METRICS = {"busy": "busy_ns", "instr": "instr", "wait": "wait_ns", "dma": "dma_bytes"}


@dataclass
class HeatLine:
    """One painted line (``line`` is 0-based)."""

    line: int
    busy_ns: int = 0
    share: float = 0.0
    share_of_compute: float = 0.0
    instr: int = 0
    work_instr: int = 0
    wait_ns: int = 0
    engines: dict[str, int] = field(default_factory=dict)
    dma_bytes: int = 0
    dma_ns: int = 0
    dma_overlap_ns: int = 0
    exclusive_ns: int = 0
    fused_instr: int = 0
    top_opcodes: list[TopOpcodeJson] = field(default_factory=list)
    iterations: list[IterationJson] | None = None

    def to_dict(self, heat: float, rank: int = 0) -> HeatLineJson:
        """Payload form, with the normalised heat value and the line's rank (``profile.line_rank``)."""
        d: HeatLineJson = {
            "line": self.line,
            "rank": rank,
            "busy_ns": self.busy_ns,
            "time_ns": line_time_ns(self.busy_ns, self.dma_ns),
            "share": self.share,
            "share_of_compute": self.share_of_compute,
            "instr": self.instr,
            "work_instr": self.work_instr,
            "wait_ns": self.wait_ns,
            "engines": self.engines,
            "dma_bytes": self.dma_bytes,
            "dma_ns": self.dma_ns,
            "dma_overlap_ns": self.dma_overlap_ns,
            "exclusive_ns": self.exclusive_ns,
            "fused_instr": self.fused_instr,
            "top_opcodes": self.top_opcodes,
            "heat": heat,
        }
        if self.iterations is not None:
            d["iterations"] = self.iterations
        return d


def heat_line_from_metrics(m: LineMetrics) -> HeatLine:
    """A profile line's metrics as a HeatLine (1-based source line → 0-based LSP line)."""
    return HeatLine(
        line=m.line - 1,
        busy_ns=m.busy_ns,
        share=m.share,
        share_of_compute=m.share_of_compute,
        instr=m.instr,
        work_instr=m.work_instr,
        wait_ns=m.wait_ns,
        engines=dict(m.engines),
        dma_bytes=m.dma_bytes,
        dma_ns=m.dma_ns,
        dma_overlap_ns=m.dma_overlap_ns,
        exclusive_ns=m.exclusive_ns,
        fused_instr=m.fused_instr,
        top_opcodes=[{"opcode": o, "count": c, "sum_ns": t} for o, c, t in m.top_opcodes],
        iterations=m.iterations,
    )


@dataclass
class FileHeat:
    """All heat for one local file, plus the mapping that put it there."""

    mapping: MappedFile
    lines: list[HeatLine]


def group_by_file(
    metrics: ProfileMetrics, mapped: dict[str, MappedFile]
) -> tuple[dict[str, FileHeat], list[MappedFile], int]:
    """Group line metrics by mapped local file. Returns (local path → FileHeat, unmapped files, their busy ns)."""
    out: dict[str, FileHeat] = {}
    unmapped: dict[str, MappedFile] = {}
    unmapped_busy = 0
    for m in metrics.lines:
        mf = mapped.get(m.file)
        if mf is None or mf.local is None:
            unmapped[m.file] = mf or MappedFile(m.file, None, "not mapped")
            unmapped_busy += m.busy_ns
            continue
        key = str(mf.local)
        fh = out.setdefault(key, FileHeat(mf, []))
        fh.lines.append(heat_line_from_metrics(m))
    return out, list(unmapped.values()), unmapped_busy


def build_payload(
    uri: str,
    source: HeatSource,
    profile_info: ProfileInfo,
    lines: Sequence[HeatLine],
    kernel: MeasuredKernel | EstimatedKernel,
    *,
    stale: bool = False,
    max_busy_ns: int | None = None,
) -> HeatmapParams:
    """The ``nki/heatmap`` notification body. ``max_busy_ns`` normalises heat across several documents."""
    if source not in ("measured", "estimate"):
        raise ValueError("source must be 'measured' or 'estimate'")
    top = max_busy_ns if max_busy_ns is not None else max((ln.busy_ns for ln in lines), default=0)
    bottleneck = bottleneck_of(kernel)
    hottest = ranked(lines, lambda ln: ln.busy_ns, lambda ln: ln.dma_ns, bottleneck, lambda ln: ln.line)
    rank = {id(ln): i + 1 for i, ln in enumerate(hottest)}
    return {
        "uri": uri,
        "source": source,
        "profile": profile_info,
        "metric_defs": METRIC_DEFS,
        "stale": stale,
        "lines": [
            ln.to_dict(ln.busy_ns / top if top else 0.0, rank[id(ln)])
            for ln in sorted(lines, key=lambda x: x.line)
        ],
        "kernel": kernel,
        "default_metric": default_metric(bottleneck),
    }


def bottleneck_of(kernel: MeasuredKernel | EstimatedKernel | Mapping[str, object]) -> str | None:
    """The bottleneck of a payload's kernel (``profile.bounds``), None without bounds."""
    bounds = kernel.get("bounds")
    found = bounds.get("bottleneck") if isinstance(bounds, Mapping) else None
    return found if isinstance(found, str) else None


def fmt_ns(ns: float) -> str:
    """Human time: 850 ns, 12.3 µs, 4.56 ms, 1.20 s."""
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_bytes(n: float) -> str:
    """Human bytes (binary units)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _main_engine(line: HeatLineJson | HeatLine) -> str:
    engines = line["engines"] if isinstance(line, dict) else line.engines
    return max(engines.items(), key=lambda kv: kv[1])[0] if engines else "—"


def inlay_label(
    line: HeatLineJson, source: HeatSource = "measured", metric: HeatMetric = "busy", latency_ns: int = 0
) -> str:
    """Short end-of-line hint, e.g. "⏱ 12.3 µs · 18% · Vector" (prefixed "est." for estimates). ``metric``: the
    payload's ``default_metric`` (``time`` or ``dma_time``: the share is of ``latency_ns``; a line whose time is
    its DMA names "DMA" instead of an engine)."""
    prefix = "est. " if source == "estimate" else ""
    if metric not in ("time", "dma_time"):
        return f"⏱ {prefix}{fmt_ns(line['busy_ns'])} · {line['share'] * 100:.0f}% · {_main_engine(line)}"
    dma = line.get("dma_ns", 0)
    value = dma if metric == "dma_time" else line_time_ns(line["busy_ns"], dma)
    share = f" · {value / latency_ns * 100:.0f}%" if latency_ns else ""
    where = "DMA" if dma >= line["busy_ns"] and dma else _main_engine(line)
    return f"⏱ {prefix}{fmt_ns(value)}{share} · {where}"


def line_hover_markdown(payload: HeatmapParams, n: int) -> str | None:
    """The hover of 0-based line ``n`` of a painted payload: its heat (``hover_markdown``) and its investigation
    findings, labelled measured or estimated; None when the line has neither."""
    line = next((ln for ln in payload["lines"] if ln["line"] == n), None)
    found = [f for f in payload.get("findings", []) if f["line"] == n]
    if line is None and not found:
        return None
    parts = [hover_markdown(line, payload)] if line is not None else []
    if found:
        label = "estimated" if payload["source"] == "estimate" else "measured"
        parts.append(
            f"**Investigations** ({label}):\n\n" + "\n".join(f"* `{f['code']}` {f['message']}" for f in found)
        )
    return "\n\n".join(parts)


def layer_label(payload: HeatmapParams) -> str:
    """Which layer of heat a payload is, as every view names it: "Measured, from <profile>" or "Estimated
    (simulator trace, not measured): <kernel>"."""
    info = payload["profile"]
    if payload["source"] == "estimate":
        name = payload["kernel"].get("name")
        return "Estimated (simulator trace, not measured)" + (f": {name}" if name else "")
    path = info.get("path") or ""
    return f"Measured, from {info.get('label') or os.path.basename(path.rstrip('/')) or 'a profile'}"


def hover_markdown(line: HeatLineJson, payload: HeatmapParams) -> str:
    """Markdown hover for one payload line: busy, share, engines, top opcodes, waits, DMA, iterations."""
    kernel = payload["kernel"]
    out = [f"**{layer_label(payload)}**"]
    if payload.get("stale"):
        out.append("_The file changed since this profile was taken: numbers may no longer match the code._")
    if line.get("dma_ns"):
        out.append(
            f"Time **{fmt_ns(line_time_ns(line['busy_ns'], line['dma_ns']))}**: compute busy plus the DMA "
            f"this line issues ({fmt_ns(line['dma_ns'])}; they may overlap)"
        )
    out.append(
        f"Busy **{fmt_ns(line['busy_ns'])}** · {line['share'] * 100:.1f}% of kernel time "
        f"· {line['share_of_compute'] * 100:.1f}% of compute"
        + (f" · exclusive {fmt_ns(line['exclusive_ns'])}" if line.get("exclusive_ns") else "")
    )
    out.append(
        f"Instructions: {line['instr']} ({line['work_instr']} work, {line['instr'] - line['work_instr']} wait)"
        + (f", {line['fused_instr']} fused with other lines" if line.get("fused_instr") else "")
    )
    if line["engines"]:
        out.append(
            "Engines: "
            + ", ".join(f"{e} {fmt_ns(v)}" for e, v in sorted(line["engines"].items(), key=lambda kv: -kv[1]))
        )
    if line["top_opcodes"]:
        out.append(
            "Top opcodes: "
            + ", ".join(f"`{o['opcode']}` ×{o['count']} ({fmt_ns(o['sum_ns'])})" for o in line["top_opcodes"])
        )
    if line["wait_ns"]:
        out.append(f"Semaphore wait: {fmt_ns(line['wait_ns'])}")
    if line["dma_bytes"] or line["dma_overlap_ns"]:
        out.append(
            f"DMA: {fmt_bytes(line['dma_bytes'])} triggered ({fmt_ns(line['dma_ns'])}); "
            f"{fmt_ns(line['dma_overlap_ns'])} of this line's busy time overlaps DMA"
        )
    its = line.get("iterations")
    if its:
        hot = sorted(its, key=lambda d: -d["busy_ns"])[:4]
        out.append("Iterations (hottest): " + ", ".join(f"{d['label']}: {fmt_ns(d['busy_ns'])}" for d in hot))
    # The detail line: the technical definitions behind the plain words above.
    out.append(
        f"_busy: {METRIC_DEFS['busy_ns']['detail']}; kernel time: {kernel.get('latency_source', 'latency')}_"
    )
    return "\n\n".join(out)


Painted = TypeVar("Painted", HeatLineJson, HeatFinding)  # anything with a 0-based ``line``


def remap_lines(lines: Iterable[Painted], old_text: str, new_text: str) -> tuple[list[Painted], bool]:
    """Carry payload lines from ``old_text`` to ``new_text`` (an edit happened).

    Unchanged lines move with the code around them; a block replaced by a block of the same length keeps
    its heat line for line (the code was edited in place); deleted or reshaped blocks lose their heat, since
    the numbers no longer describe that code. Returns (moved lines, whether anything changed at all) — the
    caller marks the heat stale once the text differs from what was profiled.
    """
    import difflib

    old, new = old_text.splitlines(), new_text.splitlines()
    if old == new:
        return list(lines), False
    where: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            where.update({i1 + k: j1 + k for k in range(i2 - i1)})
    return [{**ln, "line": where[ln["line"]]} for ln in lines if ln["line"] in where], True


def kernel_summary(
    metrics: ProfileMetrics, unmapped: Sequence[MappedFile], unmapped_busy: int
) -> MeasuredKernel:
    """The ``kernel`` object of the payload."""
    return {
        **metrics.kernel.to_dict(),
        "unmapped_files": [m.to_dict() for m in unmapped],
        "unmapped_busy_ns": unmapped_busy,
    }


__all__ = [
    "METRIC_DEFS",
    "FileHeat",
    "HeatLine",
    "build_payload",
    "group_by_file",
    "heat_line_from_metrics",
    "hover_markdown",
    "inlay_label",
    "kernel_summary",
    "layer_label",
    "remap_lines",
]
