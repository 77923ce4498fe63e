"""A search's report for people: the ranked table (text), and an HTML page with the table and a scatter plot
(SVG) of estimated time against SBUF peak with the Pareto front. Every time is an estimate and says so, except
the measured times of ``--confirm-remote``, in their own table under the ranked one."""

from __future__ import annotations

import html
from collections.abc import Sequence

from nki_studio.profile.heatmap import fmt_bytes, fmt_ns
from nki_studio.protocol.tune import ConfirmedCandidate, RemoteConfirmation, TuneCandidate, TuneReport

TABLE_ROWS = 20  # ranked rows printed; the rest are counted (--json has them all)
_FAILED_ROWS = 5


def values_text(row: TuneCandidate | ConfirmedCandidate) -> str:
    """``TILE_N=256 BUFS=2``."""
    return " ".join(f"{k}={v}" for k, v in row["values"].items())


def estimate_text(row: TuneCandidate | ConfirmedCandidate) -> str:
    """``≈ 7.5 µs (7.1 µs–9.9 µs)``: the estimate and its likely range ('' when not ranked)."""
    if row["estimatedNs"] is None:
        return ""
    text = f"≈ {fmt_ns(row['estimatedNs'])}"
    if row["lowNs"] is not None and row["highNs"] is not None:
        text += f" ({fmt_ns(row['lowNs'])}–{fmt_ns(row['highNs'])})"
    return text


def verdict_text(row: TuneCandidate) -> str:
    """``ranked, ties #2 #3`` / ``failed: out: allclose ...`` / ``pruned: NKI401 ...``."""
    if row["verdict"] != "ranked":
        return f"{row['verdict']}: {row['reason']}"
    ties = row["tiedWith"]
    if not ties:
        return "ranked"
    shown = " ".join(f"#{r}" for r in ties[:4]) + (f" +{len(ties) - 4}" if len(ties) > 4 else "")
    return f"ranked, within the likely range of {shown}"


def _columns(row: TuneCandidate) -> list[str]:
    return [
        str(row["rank"]) if row["rank"] is not None else "-",
        values_text(row),
        estimate_text(row),
        row["bound"] or "",
        row["bottleneck"] or "",
        f"{row['speedup']:.2f}×" if row["speedup"] is not None else "",
        verdict_text(row),
    ]


HEADER = ["rank", "values", "estimate (likely range)", "bound", "bottleneck", "vs baseline", "verdict"]


def _shown(report: TuneReport) -> list[TuneCandidate]:
    ranked = [r for r in report["candidates"] if r["verdict"] == "ranked"]
    others = [r for r in report["candidates"] if r["verdict"] != "ranked"]
    return ranked[:TABLE_ROWS] + others[:_FAILED_ROWS]


def summary(report: TuneReport) -> str:
    """One line: what was searched and how much ran."""
    rows = report["candidates"]
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("ranked", "failed", "pruned")}
    pruned = ", ".join(f"{code} ×{n}" for code, n in sorted(report["pruned"].items()))
    return (
        f"tune {report['kernel']} ({report['path']}, {report['target']}): {report['spaceSize']:,} points, "
        f"{report['rejectedByConstraints']} rejected by constraints, {counts['pruned']} pruned by lint"
        f"{f' ({pruned})' if pruned else ''}, {report['evaluated']} simulated, {report['cacheHits']} from the "
        f"cache; {counts['ranked']} ranked, {counts['failed']} failed; {report['strategy']} on "
        f"{report['executor']}, {report['elapsedS']:.1f} s"
    )


def table(report: TuneReport) -> list[list[str]]:
    """The rows the table shows, as text columns under ``HEADER`` (the first 20 ranked, then up to 5 others)."""
    return [_columns(r) for r in _shown(report)]


def outcome(report: TuneReport) -> list[str]:
    """The lines under the table: the baseline, the winner (or that nothing passed) and the notes."""
    lines: list[str] = []
    base = report["baseline"]
    if base is not None:
        lines.append(f"baseline {values_text(base)}: {estimate_text(base) or verdict_text(base)}")
    lines.append(winner_line(report))
    lines.extend(report["notes"])
    return lines


def winner_line(report: TuneReport) -> str:
    """``winner TILE_N=256 BUFS=2: ≈ 7.5 µs (...) estimated (not measured), 1.40× the baseline's estimate``, or
    that nothing passed."""
    winner = report["winner"]
    if winner is None:
        return "no candidate ran and matched its reference: nothing to rank"
    return (
        f"winner {values_text(winner)}: {estimate_text(winner)} estimated (not measured)"
        + (f", {winner['speedup']:.2f}× the baseline's estimate" if winner["speedup"] is not None else "")
        + (
            "; the estimate cannot separate it from " + verdict_text(winner).split(" of ", 1)[1]
            if winner["tiedWith"]
            else ""
        )
    )


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns padded to their widths; the last one is not (it is the longest, free text)."""
    cells = [header, *rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1] for row in cells
    ]


def text(report: TuneReport) -> str:
    """The summary, the table (times are the simulator's estimates) and the winner; with ``--confirm-remote``,
    the measured table after them."""
    rows = table(report)
    lines = [summary(report), "", *_aligned(HEADER, rows)]
    hidden = len(report["candidates"]) - len(rows)
    if hidden:
        lines.append(f"... {hidden} more (--json lists every candidate)")
    lines.append("")
    lines.extend(outcome(report))
    if "confirmation" in report:
        lines.extend(["", *confirmation_text(report["confirmation"])])
    return "\n".join(lines)


CONFIRM_HEADER = ["rank", "values", "estimate (likely range)", "measured", "estimated/measured", "order"]


def _confirm_columns(row: ConfirmedCandidate) -> list[str]:
    """One profiled candidate: its estimate, its measured time and ratio, and its measured order."""
    first = [str(row["rank"]), values_text(row), estimate_text(row)]
    if row["measuredNs"] is None:
        return [
            *first,
            "-",
            "",
            f"not measured: {row['error'].splitlines()[0] if row['error'] else ''}",
        ]
    ratio = f"{row['ratio']:.2f}×" if row["ratio"] is not None else ""
    if row["withinRange"] is not None:
        ratio += " (in the likely range)" if row["withinRange"] else " (outside the likely range)"
    order = (
        f"measured #{row['measuredRank']}" + {True: ", agrees", False: ", disagrees", None: ""}[row["agrees"]]
    )
    return [*first, fmt_ns(row["measuredNs"]), ratio, order]


def confirmation_text(c: RemoteConfirmation) -> list[str]:
    """The measured table of ``--confirm-remote`` and what follows from it: the order, the ranks left out,
    where the profiles are and the calibrate command."""
    lines = [
        f"measured on {c['host']}: the top {c['requested']} ranked candidates profiled "
        "(estimates are the simulator's; measured times are the device's)",
        *_aligned(CONFIRM_HEADER, [_confirm_columns(r) for r in c["candidates"]]),
    ]
    if c["orderAgrees"] is not None:
        lines.append(
            "the measured order agrees with the estimated ranking"
            if c["orderAgrees"]
            else "the measured order does NOT agree with the estimated ranking"
        )
    if c["tiedNotSent"]:
        ranks = " ".join(f"#{r}" for r in c["tiedNotSent"])
        lines.append(
            f"not profiled but within the likely range of a profiled one: {ranks} (raise --confirm-remote)"
        )
    lines.append(f"candidate sources: {c['directory']}")
    lines.extend(f"profile #{r['rank']}: {r['profile']}" for r in c["candidates"] if r["profile"])
    if c["calibrateCommand"]:
        lines.append(f"fit the estimate to them: {c['calibrateCommand']}")
    if c["calibration"] is not None:
        lines.append(f"calibrate: {c['calibration']['message']}")
    return lines


def pareto(rows: Sequence[TuneCandidate]) -> list[TuneCandidate]:
    """The ranked rows no other beats on both estimated time and SBUF peak, fastest first."""
    points = sorted(
        (r for r in rows if r["verdict"] == "ranked" and r["sbufPeakBytes"] is not None),
        key=lambda r: (r["estimatedNs"] or 0, r["sbufPeakBytes"] or 0),
    )
    front: list[TuneCandidate] = []
    for row in points:
        if not front or (row["sbufPeakBytes"] or 0) < (front[-1]["sbufPeakBytes"] or 0):
            front.append(row)
    return front


def scatter_svg(report: TuneReport, width: int = 640, height: int = 400) -> str:
    """Estimated time (x, with its likely range as a bar) against SBUF peak per partition (y) of the ranked
    candidates; the Pareto front joined by a line, the winner filled. Colours are attributes, so the page
    stands alone; each part also has a class (``axis``, ``tune-front``, ``tune-range``, ``tune-point``,
    ``tune-winner``) that a themed host such as the VS Code kernel panel restyles."""
    rows = [r for r in report["candidates"] if r["verdict"] == "ranked" and r["estimatedNs"] is not None]
    pad = 56
    if not rows:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="60"><text x="8" y="30">no ranked candidate</text></svg>'
    xs = [float(r["highNs"] or r["estimatedNs"] or 0) for r in rows] + [
        float(r["lowNs"] or r["estimatedNs"] or 0) for r in rows
    ]
    ys = [float(r["sbufPeakBytes"] or 0) for r in rows]
    x0, x1 = min(xs), max(xs) or 1.0
    y1 = max(ys) or 1.0
    x1 = x1 if x1 > x0 else x0 + 1.0

    def px(ns: float) -> float:
        return pad + (ns - x0) / (x1 - x0) * (width - 2 * pad)

    def py(b: float) -> float:
        return height - pad - b / y1 * (height - 2 * pad)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
        f'<line class="axis" x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#888"/>',
        f'<line class="axis" x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>',
        f'<text x="{width / 2}" y="{height - 16}" text-anchor="middle">estimated time (likely range) — '
        f"{html.escape(fmt_ns(x0))} to {html.escape(fmt_ns(x1))}</text>",
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" text-anchor="middle">SBUF peak per '
        f"partition (up to {html.escape(fmt_bytes(y1))})</text>",
    ]
    front = pareto(rows)
    if len(front) > 1:
        path = " ".join(
            f"{px(float(r['estimatedNs'] or 0)):.1f},{py(float(r['sbufPeakBytes'] or 0)):.1f}" for r in front
        )
        parts.append(
            f'<polyline class="tune-front" points="{path}" fill="none" stroke="#d62728" stroke-dasharray="4 3"/>'
        )
    for r in rows:
        x, y = px(float(r["estimatedNs"] or 0)), py(float(r["sbufPeakBytes"] or 0))
        if r["lowNs"] is not None and r["highNs"] is not None:
            parts.append(
                f'<line class="tune-range" x1="{px(r["lowNs"]):.1f}" y1="{y:.1f}" x2="{px(r["highNs"]):.1f}" y2="{y:.1f}" stroke="#9ecae1"/>'
            )
        fill, cls = ("#1f77b4", "tune-point tune-winner") if r["rank"] == 1 else ("white", "tune-point")
        title = html.escape(f"#{r['rank']} {values_text(r)}: {estimate_text(r)}")
        parts.append(
            f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{fill}" stroke="#1f77b4"><title>{title}</title></circle>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def html_page(report: TuneReport) -> str:
    """A self-contained page: summary, scatter plot, table and the winner's diff."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _columns(r)) + "</tr>"
        for r in report["candidates"]
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>nki-studio tune "
        f"{html.escape(report['kernel'])}</title><style>body{{font-family:sans-serif}}td,th{{padding:2px 8px;"
        "text-align:left}}</style></head><body>"
        f"<h1>tune {html.escape(report['kernel'])}</h1><p>{html.escape(summary(report))}</p>"
        "<p>Times are the simulator's estimates with their likely range, not measurements.</p>"
        f"{scatter_svg(report)}<table><tr>{head}</tr>\n{body}</table>"
        f"{_confirmation_html(report['confirmation']) if 'confirmation' in report else ''}"
        f"<h2>winner's diff</h2><pre>{html.escape(report['diff'] or '(no winner)')}</pre></body></html>\n"
    )


def _confirmation_html(c: RemoteConfirmation) -> str:
    """The measured table and its notes as a page section."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in CONFIRM_HEADER)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{html.escape(col)}</td>" for col in _confirm_columns(r)) + "</tr>"
        for r in c["candidates"]
    )
    lines = confirmation_text(c)  # the title, the header and a row per candidate, then the notes
    notes = "".join(f"<p>{html.escape(line)}</p>" for line in lines[len(c["candidates"]) + 2 :])
    return (
        f"<h2>measured on {html.escape(c['host'])}</h2><p>{html.escape(lines[0])}</p>"
        f"<table><tr>{head}</tr>\n{body}</table>{notes}"
    )
