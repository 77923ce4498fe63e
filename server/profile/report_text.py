"""Plain-text rendering of a ``ProfileReport``: kernel summary and annotated source listings (CLI output)."""

from __future__ import annotations

from pathlib import Path

from nki_studio.profile.analyze import ProfileReport
from nki_studio.profile.heatmap import SORT_METRICS, HeatLine, fmt_bytes, fmt_ns, kernel_summary
from nki_studio.protocol.outputs import ProfileReportJson

BAR_WIDTH = 20
# ANSI 256-colour ramp from cool to hot, used only when writing to a terminal.
_RAMP = (22, 28, 64, 100, 136, 172, 166, 160, 196)


def _pct(part: float, whole: float) -> str:
    return f"{part / whole * 100:.1f}%" if whole else "–"


def kernel_text(report: ProfileReport) -> list[str]:
    """The kernel summary block."""
    p, k = report.profile, report.metrics.kernel
    lat = k.latency_ns
    schema = f", schema {p.schema_version}" if p.schema_version else ""
    out = [f"Profile: {p.path} ({p.format}{schema}, {p.provenance})"]
    out.append(f"Latency: {fmt_ns(lat)}")
    out.append(f"  kernel time from: {k.latency_source}")  # the technical source after the plain figure
    if p.has_instructions:
        if k.intersection_ns is None or k.idle_ns is None:
            overlap = "overlap and idle: not recorded in this profile (no DMA rows)"
        else:
            overlap = (
                f"overlap {fmt_ns(k.intersection_ns)} ({_pct(k.intersection_ns, k.dma_union_ns)} of DMA hidden) · "
                f"idle {fmt_ns(k.idle_ns)} ({_pct(k.idle_ns, lat)})"
            )
        out.append(
            f"DMA union {fmt_ns(k.dma_union_ns)} ({_pct(k.dma_union_ns, lat)}) · compute union "
            f"{fmt_ns(k.compute_union_ns)} ({_pct(k.compute_union_ns, lat)}) · {overlap}"
        )
        out.append(f"  DMA union from: {k.dma_union_source}")
    if k.engines:
        out.append(
            "Engines (busy union): "
            + ", ".join(
                f"{e} {fmt_ns(v)} ({_pct(v, lat)})"
                for e, v in sorted(k.engines.items(), key=lambda kv: -kv[1])
            )
        )
        out.append(
            f"Perfect pipeline {fmt_ns(k.perfect_pipeline_ns)} · serialization gap {fmt_ns(k.serialization_gap_ns)}"
        )
    if k.dma_bytes:
        bw = f", {k.effective_dma_gbps:.2f} GB/s over the DMA union" if k.effective_dma_gbps else ""
        e2e = f", {k.end_to_end_dma_gbps:.2f} GB/s end to end" if k.end_to_end_dma_gbps else ""
        out.append(f"DMA bytes: {fmt_bytes(k.dma_bytes)} [{k.dma_bytes_source}]{bw}{e2e}")
    r = k.roofline
    if r is not None:
        line = (
            f"Roofline: {fmt_bytes(r.bytes)} HBM [{r.bytes_source}], ceiling {r.ceiling_gbps:.0f} GB/s "
            f"[{r.ceiling_source}], memory floor {fmt_ns(r.memory_floor_ns)}"
        )
        if r.flops is not None and r.intensity is not None and r.compute_floor_ns is not None:
            line += (
                f"; {r.flops:,} FLOP [{r.flops_source}], AI {r.intensity:.3f} FLOP/B vs ridge {r.ridge:.2f} "
                f"({r.peak_tflops:.1f} TFLOP/s, {r.peak_source}), compute floor {fmt_ns(r.compute_floor_ns)}, "
                f"{r.bound}-bound"
            )
        else:
            line += f"; FLOPs {r.flops_source}"
        if r.efficiency is not None:
            line += f"; efficiency {r.efficiency * 100:.1f}% of the roofline bound"
        out.append(line)
    if p.has_instructions:
        out.append(
            f"Instructions: {k.instr} ({k.work_instr} work) · unattributed: {k.unattributed_instr} "
            f"({k.unattributed_work_instr} work), busy {fmt_ns(k.unattributed_busy_ns)}, wait {fmt_ns(k.unattributed_wait_ns)}"
        )
        out.append(f"Wait opcodes (not busy): {', '.join(k.wait_opcodes)}")
        out.append(f"Source locations from: {k.location_source or 'none'}")
        if len(k.cores) > 1:
            out.append(f"Physical cores: {k.cores} (unions per core; headline = busiest core)")
    for m in sorted(report.mapping.values(), key=lambda m: m.recorded):
        target = str(m.local) if m.local else "NOT MAPPED"
        out.append(f"  {m.recorded} → {target} [{m.how}]")
    out.extend(f"Note: {n}" for n in k.notes)
    return out


def _value(line: HeatLine, metric: str) -> float:
    return float(getattr(line, SORT_METRICS[metric]))


def _bar(frac: float, color: bool) -> str:
    filled = round(frac * BAR_WIDTH)
    bar = "█" * filled + "·" * (BAR_WIDTH - filled)
    if color and filled:
        c = _RAMP[min(len(_RAMP) - 1, int(frac * (len(_RAMP) - 1) + 0.5))]
        return f"\x1b[38;5;{c}m{bar}\x1b[0m"
    return bar


def _label(line: HeatLine, metric: str) -> str:
    if metric == "instr":
        return f"{line.instr:>7} instr"
    if metric == "wait":
        return f"{fmt_ns(line.wait_ns):>10} wait"
    if metric == "dma":
        return f"{fmt_bytes(line.dma_bytes):>10} DMA"
    engine = max(line.engines.items(), key=lambda kv: kv[1])[0] if line.engines else ""
    return f"{fmt_ns(line.busy_ns):>10} {line.share * 100:5.1f}% {engine:<6}"


def listing_text(report: ProfileReport, metric: str = "busy", color: bool = False) -> list[str]:
    """Annotated listing of every mapped file: a heat bar per measured line, source text beside it."""
    out: list[str] = []
    top = max((_value(ln, metric) for fh in report.files.values() for ln in fh.lines), default=0.0)
    for local, fh in sorted(report.files.items()):
        try:
            text = Path(local).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            out.append(f"── {local}: cannot read ({exc.strerror})")
            continue
        by_line = {ln.line: ln for ln in fh.lines}
        out.append(f"── {local}  [{fh.mapping.how}; metric: {metric}; bar relative to the hottest line]")
        width = len(str(len(text)))
        blank = " " * (BAR_WIDTH + 2 + len(_label(HeatLine(0), metric)))
        for i, src in enumerate(text):
            ln = by_line.get(i)
            if ln is None:
                out.append(f"{i + 1:>{width}} {blank} │ {src}")
            else:
                frac = _value(ln, metric) / top if top else 0.0
                out.append(f"{i + 1:>{width}} {_bar(frac, color)} {_label(ln, metric)} │ {src}")
        beyond = [ln for ln in fh.lines if ln.line >= len(text)]
        for ln in beyond:
            out.append(
                f"  line {ln.line + 1} is past the end of the file ({_label(ln, metric)}): file changed since profiling?"
            )
    return out


def report_json(report: ProfileReport) -> ProfileReportJson:
    """Machine-readable report: the same payloads the language server sends, keyed by local path."""
    return {
        "profile": report.profile_info(),
        "kernel": report.kernel()
        if report.files
        else kernel_summary(report.metrics, report.unmapped, report.unmapped_busy_ns),
        "files": report.payloads(lambda p: Path(p).as_uri()),
        "mapping": [m.to_dict() for m in report.mapping.values()],
    }
