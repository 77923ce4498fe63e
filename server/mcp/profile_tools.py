"""The ``estimate``, ``analyze_profile`` and ``compare`` tools: a kernel's estimated timeline or a measured
Neuron Explorer profile → summary, bounds, investigations and per-line heat (``profile_view``), and two of
them side by side with per-line deltas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nki_studio.mcp import profile_view
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.jobs import Simulator, prepare
from nki_studio.mcp.simulate_tool import failed_metrics
from nki_studio.mcp.workspace import Workspace
from nki_studio.profile.analyze import analyze
from nki_studio.profile.line_align import SourceText, compare_lines, read_snapshot
from nki_studio.profile.model import ProfileError
from nki_studio.protocol.simulation import RAN


def estimate_view(
    ws: Workspace, sim: Simulator, args: dict[str, Any], top: int | None = profile_view.TOP_LINES
) -> dict[str, Any]:
    """Simulate the kernel and view the result's ``estimate`` section (the worker scheduled the trace,
    ``nki_studio.estimate``, and analysed the estimated profile): the fields ``simulate --json`` prints. The
    simulation's verdict comes along: an estimate of a wrong kernel is worth little."""
    job = prepare(ws, args)
    result = sim.run(job, timeout_s=args.get("timeout_s"))
    section = result.get("estimate")
    if result["status"] not in RAN or not section:
        raise ToolFailure(
            "kernel_error" if result["status"] != "timeout" else "timeout",
            f"cannot estimate: the simulation did not finish: {result['status']}: {result['message']}",
            status=result["status"],
        )
    cost = result.get("cost")
    out = profile_view.estimate_section_view(section, cost["roofline"] if cost else None, ws.relative, top)
    out.update(
        kernel=job.spec.kernel,
        path=ws.relative(job.path),
        target=job.generation.value,
        simulation={
            "status": result["status"],
            "message": result["message"],
            "failedMetrics": failed_metrics(result),
        },
    )
    return out


def estimate(ws: Workspace, sim: Simulator, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``estimate`` tool."""
    out = estimate_view(ws, sim, args)
    verdict = (
        "" if out["simulation"]["status"] == "passed" else f" (the simulation {out['simulation']['status']})"
    )
    return out, profile_view.headline(out["kernel"], out) + verdict


def profile_report_view(
    ws: Workspace, path_text: str, argument: str = "profile", top: int | None = profile_view.TOP_LINES
) -> dict[str, Any]:
    """Read a measured profile (any supported format) inside the roots and view it, its source paths mapped
    onto the roots."""
    path = ws.resolve(path_text, kind="any", argument=argument)
    try:
        report = analyze(path, roots=list(ws.roots))
    except (ProfileError, ValueError, OverflowError, UnicodeDecodeError) as exc:
        raise ToolFailure("unreadable_profile", f"{argument}: {ws.relative(path)}: {exc}") from exc

    def local(recorded: str) -> str:
        mapped = report.mapping.get(recorded)
        return ws.relative(mapped.local) if mapped is not None and mapped.local else recorded

    out = profile_view.view(report, local, top)
    out.update(
        path=ws.relative(path),
        mapping=[m.to_dict() for m in report.mapping.values()],
        problem=report.problem(),
    )
    return out


def analyze_profile(ws: Workspace, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``analyze_profile`` tool."""
    out = profile_report_view(ws, args.get("profile", ""))
    text = profile_view.headline(Path(out["path"]).name, out)
    if out["problem"]:
        text += f". {out['problem'].splitlines()[0]}"
    return out, text


def _side(
    ws: Workspace, sim: Simulator, name: str, spec: Any
) -> tuple[dict[str, Any], dict[str, SourceText]]:
    """One side's view with all its lines, and the source text it was produced from (workspace-relative path
    -> snapshot): the kernel as simulated for an estimate, the snapshot stored with a measured profile (none:
    lines are then matched by number)."""
    if not isinstance(spec, dict):
        raise ToolFailure(
            "invalid_arguments", f"{name}: expected an object with profile or file", argument=name
        )
    if spec.get("profile"):
        view = profile_report_view(ws, spec["profile"], argument=f"{name}.profile", top=None)
        snap = read_snapshot(ws.resolve(spec["profile"], kind="any", argument=f"{name}.profile"))
        return view, {ws.relative(k): v for k, v in snap.items()}
    if spec.get("file") or spec.get("source") is not None:
        texts = _kernel_text(ws, spec)  # read before the run: the text the simulation sees
        return estimate_view(ws, sim, spec, top=None), texts
    raise ToolFailure(
        "invalid_arguments",
        f"{name}: give profile (a profile path), file or source (a kernel to estimate)",
    )


def _kernel_text(ws: Workspace, spec: dict[str, Any]) -> dict[str, SourceText]:
    if spec.get("source") is not None:
        return {
            ws.relative(ws.unsaved(spec.get("path") or spec.get("file"))): SourceText.of(str(spec["source"]))
        }
    try:
        path = ws.resolve(spec.get("file", ""), argument="file")
        return {ws.relative(path): SourceText.read(path)}
    except (ToolFailure, OSError, UnicodeDecodeError):
        return {}  # estimate_view reports the unreadable file


def _times(view: dict[str, Any]) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for ln in view["lines"]:
        per = out.setdefault(ln["file"], {})
        per[ln["line"]] = per.get(ln["line"], 0) + ln["busy_ns"]
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


def compare(ws: Workspace, sim: Simulator, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``compare`` tool: ``a`` and ``b`` (each a profile or a kernel to estimate) → both views' summaries
    and bounds, the totals' deltas (b − a) and per-line deltas, largest first, with each line followed across
    the edit when both texts are known (``line_align``), and the lines only in a or only in b."""
    (a, sources_a), (b, sources_b) = _side(ws, sim, "a", args.get("a")), _side(ws, sim, "b", args.get("b"))
    totals: dict[str, Any] = {}
    for key in _TOTALS:
        va, vb = a["summary"].get(key), b["summary"].get(key)
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            totals[key] = {"a": va, "b": vb, "delta": vb - va, "ratio": vb / va if va else None}
    engines = sorted({*a["summary"]["engines"], *b["summary"]["engines"]})
    engine_deltas = {
        e: {"a": a["summary"]["engines"].get(e, 0), "b": b["summary"]["engines"].get(e, 0)} for e in engines
    }
    ta, tb = _times(a), _times(b)
    only = (next(iter(ta)), next(iter(tb))) if len(ta) == 1 and len(tb) == 1 else None
    if only:  # one kernel file each side: the same kernel, maybe saved under another name
        ta, tb = {"": ta[only[0]]}, {"": tb[only[1]]}
    got = compare_lines(ta, tb, sources_a, sources_b, only)
    if only:  # name the file again: B's for lines that are in B, A's for removed ones
        for r in (*got["lines"], *got["removed_lines"], *got["added_lines"]):
            r["file"] = only[1] if r["line_b"] is not None else only[0]
    la, lb = a["summary"]["latency_ns"], b["summary"]["latency_ns"]
    faster = "same" if la == lb else ("b" if lb < la else "a")
    out = {
        "a": {k: a[k] for k in ("label", "summary", "bounds", "investigations")} | _name(a),
        "b": {k: b[k] for k in ("label", "summary", "bounds", "investigations")} | _name(b),
        "totals": totals,
        "engines": engine_deltas,
        "lines": got["lines"][: profile_view.TOP_LINES],
        "removed_lines": got["removed_lines"][: profile_view.TOP_LINES],
        "added_lines": got["added_lines"][: profile_view.TOP_LINES],
        "lines_matched_by": got["lines_matched_by"],
        "faster": faster,
        "speedup": la / lb if lb else None,
    }
    labels = f"{a['label']} vs {b['label']}"
    text = f"{labels}: a {la / 1000:.2f} µs, b {lb / 1000:.2f} µs — " + (
        f"{faster} is faster ({out['speedup']:.2f}x a/b)" if faster != "same" else "the same latency"
    )
    text += f"; per-line deltas: {got['lines_matched_by']}"
    return out, text


def _name(view: dict[str, Any]) -> dict[str, Any]:
    return {k: view[k] for k in ("path", "kernel") if k in view}
