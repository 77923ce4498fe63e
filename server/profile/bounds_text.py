"""Plain-text and JSON renderings of bounds, investigations and a before/after comparison (CLI output).

Estimated numbers say so: every block names the profile's provenance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from nki_studio.profile.analyze import ProfileReport
from nki_studio.profile.bounds import Bounds
from nki_studio.profile.heatmap import fmt_bytes, fmt_ns
from nki_studio.profile.line_align import SourceText, compare_lines, line_map, source_for
from nki_studio.protocol.analysis import BoundsJson, InvestigationJson
from nki_studio.protocol.profile import BoundDelta, Comparison, FindingKey, LineDelta


def _ns(v: float | None) -> str:
    return "n/a" if v is None else fmt_ns(v)


def _x(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}×"


def bounds_text(b: BoundsJson | None) -> list[str]:
    """The bounds block: each family with its bounds, gaps and bottleneck-aware speedups. Rendered from the JSON
    shape (``Bounds.to_dict``), so the text says what ``--json`` and the ``estimate`` section say."""
    if b is None:
        return ["Bounds: not available (the profile holds kernel totals only, no instructions)"]
    out = [
        f"Bounds ({b['provenance']}, core {b['core']}): total {fmt_ns(b['total_ns'])} [{b['window_source']}] · "
        f"bottleneck {b['bottleneck']}",
        "  engines busy: "
        + ", ".join(f"{e} {fmt_ns(v)}" for e, v in sorted(b["engines"].items(), key=lambda kv: -kv[1])),
    ]
    for fam in b["families"]:
        out.append(f"  {fam['name']}:")
        for x in fam["bounds"]:
            if x["ns"] is None:
                out.append(f"    {x['label']:<46} n/a  ({x['missing']})  [{x['name']}]")
                continue
            out.append(
                f"    {x['label']:<46} {_ns(x['ns']):>10}  gap {_ns(x['gap_ns']):>10} ({x['gap_means']})  "
                f"speedup {_x(x['speedup'])}  [{x['name']}]"
            )
    nec = fmt_bytes(b["necessary_bytes"]) if b["necessary_bytes"] is not None else "unknown"
    flops = f"{b['hardware_flops']:,}" if b["hardware_flops"] is not None else "unknown"
    pk = b["peaks"]
    out.append(
        f"  DMA {fmt_bytes(b['dma_bytes'])} (necessary {nec}) · Tensor-engine FLOPs {flops}"
        f" · peaks {pk['dma_bytes_per_s'] / 1e9:.0f} GB/s [{pk['dma_source']}], "
        f"{pk['te_flops_per_s'] / 1e12:.1f} TFLOP/s [{pk['te_source']}]"
    )
    out += [f"  note: {n}" for n in b["notes"]]
    return out


def investigations_text(
    provenance: str, investigations: Sequence[InvestigationJson], local: Callable[[str], str | None]
) -> list[str]:
    """Each investigation: status, summary, and its findings as ``file:line: CODE message`` (``local``: the
    workspace file of a recorded path, None when it maps to none)."""
    out = [f"Investigations ({provenance}):"]
    for inv in investigations:
        out.append(f"  {inv['title']}: {inv['status']} — {inv['summary']}")
        for f in inv["findings"]:
            out.append(f"    {local(f['file']) or f['file']}:{f['line']}: {f['code']} {f['message']}")
    return out


def _bound_values(b: Bounds | None) -> dict[str, float | None]:
    if b is None:
        return {}
    vals: dict[str, float | None] = {"total_time": float(b.total_ns)}
    for fam in b.families:
        for x in fam.bounds:
            vals[x.name] = x.ns
    return vals


def _line_times(report: ProfileReport, one_file: bool) -> dict[str, dict[int, int]]:
    """file key (local file or recorded path; "" for ``one_file``) -> line -> busy ns."""
    out: dict[str, dict[int, int]] = {}
    for ln in report.metrics.lines:
        per = out.setdefault("" if one_file else report.local_path(ln.file) or ln.file, {})
        per[ln.line] = per.get(ln.line, 0) + ln.busy_ns
    return out


def _files(report: ProfileReport) -> set[str]:
    return {report.local_path(ln.file) or ln.file for ln in report.metrics.lines}


def _finding_keys(report: ProfileReport, one_file: bool) -> set[tuple[str, str, int]]:
    return {
        (f.code, "" if one_file else report.local_path(f.file) or f.file, f.line)
        for i in report.investigations
        for f in i.findings
    }


def _only(files_a: set[str], files_b: set[str]) -> tuple[str, str] | None:
    return (next(iter(files_a)), next(iter(files_b))) if len(files_a) == 1 and len(files_b) == 1 else None


def compare(
    a: ProfileReport,
    b: ProfileReport,
    sources_a: Mapping[str, SourceText] | None = None,
    sources_b: Mapping[str, SourceText] | None = None,
) -> Comparison:
    """Bounds side by side, per-line busy-time deltas and the findings that appeared or went away.

    ``sources_*``: each version's source text (``line_align``; path -> snapshot). With both texts of a file,
    its lines are followed across the edit (``line_a`` -> ``line_b``) and lines only in A or only in B are
    listed as ``removed``/``added``; without them lines are matched by number, and ``lines_matched_by`` says so.
    """
    va, vb = _bound_values(a.bounds), _bound_values(b.bounds)
    bounds: list[BoundDelta] = []
    for name in dict.fromkeys([*va, *vb]):
        x, y = va.get(name), vb.get(name)
        bounds.append(
            {
                "name": name,
                "a": x,
                "b": y,
                "delta": None if x is None or y is None else y - x,
                "ratio": None if not x or y is None else y / x,
            }
        )
    # Two single-file profiles (a kernel before and after an edit, maybe saved under another name) are one
    # file; otherwise lines are compared within the same file.
    files_a, files_b = _files(a), _files(b)
    one_file = len(files_a) == 1 and len(files_b) == 1
    la, lb = _line_times(a, one_file), _line_times(b, one_file)
    got = compare_lines(la, lb, sources_a or {}, sources_b or {}, _only(files_a, files_b))
    only = _only(files_a, files_b)
    fb = _finding_keys(b, one_file)
    # A finding on a line that only moved is the same finding: A's lines are translated to B's first.
    maps: dict[str, dict[int, int] | None] = {}
    gone: list[FindingKey] = []
    kept = set()
    for code, f, n in sorted(_finding_keys(a, one_file)):
        if f not in maps:
            maps[f] = line_map(
                source_for(sources_a or {}, f, only[0] if only else None),
                source_for(sources_b or {}, f, only[1] if only else None),
            )
        m = maps[f]
        nb = n if m is None else m.get(n)
        if nb is not None and (code, f, nb) in fb:
            kept.add((code, f, nb))
        else:
            gone.append({"code": code, "file": f, "line": n})  # A's line
    return {
        "a": {"path": a.profile.path, "provenance": a.profile.provenance},
        "b": {"path": b.profile.path, "provenance": b.profile.provenance},
        "bottleneck": {
            "a": a.bounds.bottleneck if a.bounds else None,
            "b": b.bounds.bottleneck if b.bounds else None,
        },
        "bounds": bounds,
        **got,
        "findings": {
            "gone": gone,
            "new": [{"code": c, "file": f, "line": n} for c, f, n in sorted(fb - kept)],  # B's lines
        },
    }


def _signed(ns: float) -> str:
    return "0" if not ns else ("+" if ns > 0 else "−") + fmt_ns(abs(ns))


def _where(r: LineDelta) -> str:
    """ "line 40 → 43" for a line that moved, "line 40" for one that did not (with the file when several)."""
    la, lb = r.get("line_a"), r.get("line_b")
    n = (
        f"{la} → {lb}"
        if la is not None and lb is not None and la != lb
        else str(lb if lb is not None else la)
    )
    return f"{r['file']}:{n}" if r["file"] else f"line {n}"


def _quote(r: LineDelta) -> str:
    text = r.get("text")
    return f"  `{text[:60]}`" if text else ""


def compare_text(cmp: Comparison, top: int = 15) -> list[str]:
    """The comparison as a table: bounds A | B | change, then the lines whose time changed most."""
    a, b = cmp["a"], cmp["b"]
    out = [
        f"A: {a['path']} ({a['provenance']})",
        f"B: {b['path']} ({b['provenance']})",
        f"Bottleneck: {cmp['bottleneck']['a']} → {cmp['bottleneck']['b']}",
        f"  {'bound':<34} {'A':>10} {'B':>10} {'B − A':>11} {'B / A':>7}",
    ]
    for bd in cmp["bounds"]:
        delta = "n/a" if bd["delta"] is None else _signed(bd["delta"])
        ratio = "–" if bd["ratio"] is None else f"{bd['ratio']:.2f}"
        out.append(f"  {bd['name']:<34} {_ns(bd['a']):>10} {_ns(bd['b']):>10} {delta:>11} {ratio:>7}")
    changed = [r for r in cmp["lines"] if r["delta_ns"]]
    out.append(
        f"Lines whose busy time changed ({len(changed)}; top {min(top, len(changed))}; "
        f"{cmp['lines_matched_by']}):"
    )
    for r in changed[:top]:
        out.append(
            f"  {_where(r)}: {fmt_ns(r['a_ns'])} → {fmt_ns(r['b_ns'])} ({_signed(r['delta_ns'])}){_quote(r)}"
        )
    for rows, label, in_a in (
        (cmp["removed_lines"], "Lines only in A (removed)", True),
        (cmp["added_lines"], "Lines only in B (added)", False),
    ):
        out.append(f"{label}: {len(rows)}" + (f"; top {min(top, len(rows))}:" if rows else ""))
        for r in rows[:top]:
            n = r["line_a"] if in_a else r["line_b"]
            where = f"{r['file']}:{n}" if r["file"] else f"line {n}"
            out.append(f"  {where}: {fmt_ns(r['a_ns'] if in_a else r['b_ns'])}{_quote(r)}")
    for items, label in (
        (cmp["findings"]["gone"], "Findings gone"),
        (cmp["findings"]["new"], "Findings new"),
    ):
        out.append(
            f"{label}: " + (", ".join(f"{i['code']} {i['file']}:{i['line']}" for i in items) or "none")
        )
    return out
