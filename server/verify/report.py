"""Turn a structured simulation result into findings (for the editor) and a readable text report (CLI).

Finding codes (docs/rules/NKI6xx.md, source ``nki-sim``): NKI610 the kernel raised, NKI611 timeout,
NKI612 memory limit, NKI613 worker crashed, NKI620 oracle mismatch, NKI621 NaN sentinel read,
NKI622 simulator warning, NKI630 SBUF/PSUM peak (info). NKI601 (malformed spec) comes from ``spec``.
"""

from __future__ import annotations

import linecache
import os
import re
from collections.abc import Mapping
from typing import Any

from nki_studio.core.findings import Finding, Related, Span
from nki_studio.core.simulation_codes import (
    NEVER_WRITTEN_READ,
    ON_CHIP_PEAK,
    ORACLE_MISMATCH,
    SIMULATION_ERROR,
    SIMULATION_MEMORY_LIMIT,
    SIMULATION_TIMEOUT,
    SIMULATION_WARNING,
    SIMULATION_WORKER_CRASHED,
)
from nki_studio.estimate.execution import FIXED_NS
from nki_studio.estimate.likely_range import describe as describe_range
from nki_studio.profile.heatmap import fmt_ns as format_ns
from nki_studio.profile.line_rank import line_time_ns
from nki_studio.protocol.simulation import Estimate
from nki_studio.verify.oracle import describe
from nki_studio.verify.spec import KernelInfo

_STATUS_CODES = {
    "error": SIMULATION_ERROR,
    "timeout": SIMULATION_TIMEOUT,
    "memory_limit": SIMULATION_MEMORY_LIMIT,
    "crashed": SIMULATION_WORKER_CRASHED,
}
_WARNING_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<message>.*)$", re.S)


def exit_code(result: Mapping[str, Any]) -> int:
    """CLI exit code: 0 when the kernel ran and the oracle found nothing wrong (with or without a reference to
    compare with), else 1."""
    return 0 if result.get("status") in ("passed", "no_reference") else 1


def _same(a: str, b: str) -> bool:
    return bool(a) and bool(b) and os.path.abspath(a) == os.path.abspath(b)


def _line_span(line: int) -> Span:
    return Span(max(line, 1), 1, max(line, 1), 1_000_000)  # the whole line; front ends clamp to its end


def _frame(text: str) -> tuple[str, int, str]:
    """``path:line:function`` -> parts (paths may contain ':')."""
    path, line, func = text.rsplit(":", 2)
    return path, int(line), func


def _anchor(
    path: str, error: Mapping[str, Any], kernel: KernelInfo | None
) -> tuple[int, tuple[Related, ...]]:
    """The line in ``path`` to report an error on, and the helper call chain as related locations.

    When the failing line is in a helper module, the diagnostic goes on the outermost call in this file
    (the kernel line that led there); every frame of the chain becomes related information.
    """
    frames = [_frame(s) for s in error.get("stack", ())]
    if error.get("file"):
        frames.append((str(error["file"]), int(error.get("line") or 0), "<failing line>"))
    related = tuple(
        Related(
            f, _line_span(ln), f"called from here ({fn})" if fn != "<failing line>" else "the failing line"
        )
        for f, ln, fn in frames[:-1]
        if ln
    ) + tuple(Related(f, _line_span(ln), "the failing line") for f, ln, fn in frames[-1:] if ln)
    in_file = [ln for f, ln, _ in frames if _same(f, path) and ln]
    if in_file:
        line = in_file[-1]  # innermost frame of this file
    else:
        line = kernel.def_line if kernel is not None else 1
    return line, related if len(frames) > 1 or not in_file else ()


def findings(result: Mapping[str, Any], path: str, kernel: KernelInfo | None) -> list[Finding]:
    """Diagnostics for ``path`` from one result (the kernel's def line when nothing better is known)."""
    out: list[Finding] = []
    status = str(result.get("status"))
    kernel_line = kernel.def_line if kernel is not None else 1
    if status in _STATUS_CODES:
        code = _STATUS_CODES[status]
        error = result.get("error") or {}
        line, related = _anchor(path, error, kernel) if error else (kernel_line, ())
        out.append(
            code.finding(
                path,
                _line_span(line),
                f"simulation: {error.get('message') or result.get('message')}",
                related=related,
            )
        )
    oracle = result.get("oracle") or {}
    for output in oracle.get("outputs", ()):
        failed = [m for m in output.get("metrics", ()) if m.get("passed") is False and m["name"] != "finite"]
        if failed:
            detail = "; ".join(describe(m) for m in failed)
            out.append(
                ORACLE_MISMATCH.finding(
                    path,
                    _line_span(kernel_line),
                    f"simulation: {output['name']} does not match the reference: {detail}",
                )
            )
        if output.get("nan_count"):
            read = result.get("uninitializedRead")
            line, related = _anchor(path, read, kernel) if read else (kernel_line, ())
            notes = " ".join(n for n in output.get("notes", ()) if "sentinel" in n or "strict re-run" in n)
            out.append(
                NEVER_WRITTEN_READ.finding(
                    path,
                    _line_span(line),
                    f"simulation: {notes}",
                    related=related,
                )
            )
    for m in oracle.get("inputs", ()):
        if m.get("passed") is False:
            out.append(
                ORACLE_MISMATCH.finding(
                    path,
                    _line_span(kernel_line),
                    f"simulation: input {m['name'].split(':', 1)[-1]} was modified by the kernel",
                )
            )
    for warning in result.get("warnings", ()):
        m = _WARNING_LINE.match(str(warning))
        if m and _same(m.group("file"), path):
            out.append(
                SIMULATION_WARNING.finding(
                    path,
                    _line_span(int(m.group("line"))),
                    f"simulation: {m.group('message')}",
                )
            )
    out.extend(peak_findings(result.get("peak") or {}, path))
    return out


def _kib(n: float) -> str:
    return f"{n / 1024:.1f}".removesuffix(".0") + " KiB"


def _alloc_name(alloc: Mapping[str, Any]) -> str:
    """The allocation's ``name=``, else the variable its source line assigns (``x_tile = nl.ndarray(...)``)."""
    if alloc.get("name"):
        return str(alloc["name"])
    path = str(alloc.get("file", ""))
    linecache.checkcache(path)  # the file may have been edited since the last look
    line = linecache.getline(path, int(alloc.get("line") or 0))
    m = re.match(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]", line)
    return m.group(1) if m else "<unnamed>"


def peak_findings(peak: Mapping[str, Any], path: str) -> list[Finding]:
    """One info finding per on-chip region, at the allocation that reached the peak."""
    out = []
    for region, data in peak.items():
        live = list(data.get("live", ()))
        if not live or not data.get("peakBytes"):
            continue
        at = live[-1]  # the tensor whose first access reached the peak (live ranges join in that order)
        if not _same(str(at.get("file", "")), path):
            at = next((a for a in reversed(live) if _same(str(a.get("file", "")), path)), None)
            if at is None:
                continue
        parts = ", ".join(
            f"{_alloc_name(a)} {_kib(a['bytesPerPartition'])}"
            for a in sorted(live, key=lambda a: -a["bytesPerPartition"])[:6]
        )
        more = ", …" if len(live) > 6 else ""
        message = (
            f"{region.upper()} peak {_kib(data['peakBytes'])}/{_kib(data['capacityBytes'])} per partition "
            f"(simulated): {parts}{more}"
        )
        related = tuple(
            Related(
                str(a["file"]),
                _line_span(int(a["line"])),
                f"{_alloc_name(a)} {_kib(a['bytesPerPartition'])} live at the peak",
            )
            for a in live
            if a.get("file")
        )
        out.append(
            ON_CHIP_PEAK.finding(
                path,
                _line_span(int(at["line"])),
                message,
                related=related,
            )
        )
    return out


def range_text(estimate: Estimate) -> str:
    """The estimate with its likely range in words (``estimate.likely_range.describe``)."""
    return describe_range(
        estimate["totalNs"], estimate.get("range"), estimate["target"], format_ns, estimate.get("calibration")
    )


def _estimate_lines(estimate: Estimate) -> list[str]:
    """The estimate's lines of the text report: the scheduled time (the one estimate), its bounds labelled as
    bounds, the roofline point and the five hottest lines."""
    overlap = estimate["overlapNs"]
    out = [
        f"  {estimate['label']} time ({estimate['target']}, scheduled timeline, not measured): "
        f"{format_ns(estimate['totalNs'])} (DMA busy {format_ns(estimate['dmaNs'])}, compute busy "
        f"{format_ns(estimate['computeNs'])}"
        + (f", overlapping {format_ns(overlap)}" if overlap is not None else "")
        + ")",
        f"    the estimate's likely range: {range_text(estimate)}",
        f"    bounds of that time: lower bound: busiest engine alone {format_ns(estimate['perfectPipelineNs'])} "
        f"(perfect overlap); upper bound: engines one after another {format_ns(estimate['serialNs'])} (no overlap); "
        f"each with the estimated per-execution fixed cost ({format_ns(FIXED_NS)})",
    ]
    roof = estimate["roofline"]
    if roof:
        intensity = f"{roof['intensity']:.3g} FLOP/B" if roof["intensity"] is not None else "no HBM traffic"
        out.append(
            f"  estimated roofline: {roof['flops'] or 0:,} FLOPs, {roof['bytes']:,} HBM bytes, intensity "
            f"{intensity} -> {roof['bound']}-bound"
        )
    total = estimate["totalNs"]
    for ln in estimate["lines"][:5]:  # hottest first by the bottleneck (profile.line_rank)
        engine = max(ln["engines"].items(), key=lambda kv: kv[1])[0] if ln["engines"] else "none"
        time = line_time_ns(ln["busyNs"], ln["dmaNs"])
        where = "DMA" if ln["dmaNs"] >= ln["busyNs"] and ln["dmaNs"] else engine
        out.append(
            f"    line {ln['line']:>4}: estimated {format_ns(time):>10} {time / total if total else 0:6.1%} {where}"
            f" (compute {format_ns(ln['busyNs'])}, DMA issued {format_ns(ln['dmaNs'])})"
        )
    return out


def format_text(result: Mapping[str, Any]) -> str:
    """The CLI's readable report."""
    lines = [
        f"{result.get('kernel')} ({result.get('path')}): {str(result.get('status')).upper()} - "
        f"{result.get('message')}"
    ]
    if result.get("backend"):
        lines.append(f"  backend: {result['backend']}")
    spec = result.get("spec") or {}
    if spec.get("args"):
        origin = "+".join(spec.get("origin") or ()) or "given"
        lines.append(
            f"  inputs ({origin}): "
            + " ".join(f"{n}={v}" for n, v in spec["args"])
            + f" seed={spec.get('seed', 0)}"
        )
    error = result.get("error")
    if error and error.get("stack"):
        lines.append("  call chain:")
        lines.extend(f"    {s}" for s in error["stack"])
        lines.append(f"    {error.get('file')}:{error.get('line')} (failing line)")
    oracle = result.get("oracle")
    if oracle:
        ref = "reference" if oracle.get("hasReference") else "no reference"
        lines.append(f"  oracle ({ref}): {'pass' if oracle.get('passed') else 'FAIL'}")
        for output in oracle.get("outputs", ()):
            lines.append(
                f"    {output['name']} {output['dtype']}{output['shape']}: NaN {output['nan_count']}, "
                f"Inf {output['inf_count']}"
            )
            for m in output.get("metrics", ()):
                mark = {True: "ok  ", False: "FAIL", None: "n/a "}[m.get("passed")]
                lines.append(f"      {mark} {describe(m)}")
            lines.extend(f"      note: {n}" for n in output.get("notes", ()))
        for m in oracle.get("inputs", ()):
            if m.get("passed") is False:
                lines.append(f"    FAIL input {m['name'].split(':', 1)[-1]} was modified by the kernel")
        lines.extend(f"    problem: {p}" for p in oracle.get("problems", ()))
    for region, data in (result.get("peak") or {}).items():
        lines.append(
            f"  {region.upper()} peak: {_kib(data.get('peakBytes', 0))}/"
            f"{_kib(data.get('capacityBytes', 0))} per partition"
        )
    estimate = result.get("estimate")
    if estimate:
        lines.extend(_estimate_lines(estimate))
    lines.extend(f"  warning: {w}" for w in result.get("warnings", ()))
    lines.extend(f"  config: {c}" for c in result.get("ignoredConfig", ()))
    t = result.get("timings") or {}
    split = ", ".join(
        f"{k} {t[k]:.3f}s"
        for k in (
            "processStart",
            "import",
            "wait",
            "inputs",
            "simulation",
            "reference",
            "oracle",
            "estimate",
            "total",
        )
        if k in t
    )
    lines.append(f"  timings ({'warm' if t.get('warm') else 'cold'} worker): {split}")
    if result.get("output", "").strip():
        lines.append("  kernel output (tail):")
        lines.extend(f"    {x}" for x in str(result["output"]).rstrip().splitlines()[-10:])
    return "\n".join(lines)
