"""The ``estimate``, ``analyze_profile`` and ``compare`` tools: a kernel's estimated timeline or a measured
Neuron Explorer profile → summary, bounds, investigations and per-line heat (``service.views``), and two of
them side by side with per-line deltas (``service.views.compare_views``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.jobs import Simulator, prepare
from nki_studio.mcp.simulate_tool import failed_metrics
from nki_studio.mcp.workspace import Workspace
from nki_studio.protocol.simulation import RAN
from nki_studio.service import measured_estimated, profiles, reports, views
from nki_studio.service.profiles import LoadOptions, ProfileError
from nki_studio.service.views import TOP_LINES, View

if TYPE_CHECKING:
    from nki_studio.service.profiles import ProfileReport, SourceText


def local_paths(ws: Workspace, report: ProfileReport) -> Callable[[str], str]:
    """A recorded source path as the workspace-relative file it maps to (as recorded when it maps to none)."""

    def local(recorded: str) -> str:
        mapped = report.mapping.get(recorded)
        return ws.relative(mapped.local) if mapped is not None and mapped.local else recorded

    return local


def headline(name: str, v: View) -> str:
    """One line: the label, latency and busiest engine of a view."""
    s = v["summary"]
    busiest = v["bounds"]["busiestEngine"]
    top = v["lines"][0] if v["lines"] else None
    hot = f"; hottest line {top['file']}:{top['line']} ({top['share']:.0%})" if top else ""
    return (
        f"{name}: {v['label']} latency {s['latency_ns'] / 1000:.2f} µs; busiest engine "
        f"{busiest['engine'] or '-'} {busiest['busy_ns'] / 1000:.2f} µs{hot}"
    )


def estimate_view(
    ws: Workspace, sim: Simulator, args: dict[str, Any], top: int | None = TOP_LINES
) -> tuple[View, dict[str, Any]]:
    """Simulate the kernel and view the result's ``estimate`` section (the worker scheduled the trace and
    analysed the estimated profile): the fields ``simulate --json`` prints; and what the tool adds (kernel,
    path, target, the simulation's verdict: an estimate of a wrong kernel is worth little)."""
    job = prepare(ws, sim.config.settings, args)
    result = sim.run(job, timeout_s=args.get("timeout_s"))
    section = result.get("estimate")
    if result["status"] not in RAN or not section:
        raise ToolFailure(
            "kernel_error" if result["status"] != "timeout" else "timeout",
            f"cannot estimate: the simulation did not finish: {result['status']}: {result['message']}",
            status=result["status"],
        )
    seen = views.estimate_view(section, ws.relative, top)
    return seen, {
        "kernel": job.spec.kernel,
        "path": ws.relative(job.path),
        "target": job.generation.value,
        "range": section["range"],
        "rangeText": reports.estimate_range_text(section),
        "calibration": section.get("calibration"),
        "simulation": {
            "status": result["status"],
            "message": result["message"],
            "failedMetrics": failed_metrics(result),
        },
    }


def estimate(ws: Workspace, sim: Simulator, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``estimate`` tool."""
    seen, extra = estimate_view(ws, sim, args)
    status = extra["simulation"]["status"]
    verdict = "" if status == "passed" else f" (the simulation {status})"
    return {
        **seen,
        **extra,
    }, f"{headline(extra['kernel'], seen)}{verdict}. The estimate's likely range: {extra['rangeText']}"


def profile_report_view(
    ws: Workspace, path_text: str, argument: str = "profile", top: int | None = TOP_LINES
) -> tuple[View, dict[str, Any]]:
    """Read a measured profile (any supported format) inside the roots and view it, its source paths mapped
    onto the roots; and what the tool adds (path, mapping, the reason nothing maps)."""
    path = ws.resolve(path_text, kind="any", argument=argument)
    try:
        report = profiles.load(path, LoadOptions(roots=list(ws.roots)))
    except (ProfileError, ValueError, UnicodeDecodeError) as exc:
        raise ToolFailure("unreadable_profile", f"{argument}: {ws.relative(path)}: {exc}") from exc
    return views.view(report, local_paths(ws, report), top), {
        "path": ws.relative(path),
        "mapping": [m.to_dict() for m in report.mapping.values()],
        "problem": report.problem(),
    }


def analyze_profile(ws: Workspace, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``analyze_profile`` tool."""
    seen, extra = profile_report_view(ws, args.get("profile", ""))
    text = headline(Path(extra["path"]).name, seen)
    if extra["problem"]:
        text += f". {extra['problem'].splitlines()[0]}"
    return {**seen, **extra}, text


def _side(
    ws: Workspace, sim: Simulator, name: str, spec: Any
) -> tuple[View, dict[str, Any], dict[str, SourceText]]:
    """One side's view with all its lines, its path (and kernel), and the source text it was produced from
    (workspace-relative path -> snapshot): the kernel as simulated for an estimate, the snapshot stored with a
    measured profile (none: lines are then matched by number)."""
    if not isinstance(spec, dict):
        raise ToolFailure(
            "invalid_arguments", f"{name}: expected an object with profile or file", argument=name
        )
    if spec.get("profile"):
        seen, extra = profile_report_view(ws, spec["profile"], argument=f"{name}.profile", top=None)
        snap = profiles.snapshot(ws.resolve(spec["profile"], kind="any", argument=f"{name}.profile"))
        return seen, {"path": extra["path"]}, {ws.relative(k): v for k, v in snap.items()}
    if spec.get("file") or spec.get("source") is not None:
        texts = _kernel_text(ws, spec)  # read before the run: the text the simulation sees
        seen, extra = estimate_view(ws, sim, spec, top=None)
        return seen, {"path": extra["path"], "kernel": extra["kernel"]}, texts
    raise ToolFailure(
        "invalid_arguments",
        f"{name}: give profile (a profile path), file or source (a kernel to estimate)",
    )


def _kernel_text(ws: Workspace, spec: dict[str, Any]) -> dict[str, SourceText]:
    if spec.get("source") is not None:
        return {
            ws.relative(ws.unsaved(spec.get("path") or spec.get("file"))): profiles.source_text(
                text=str(spec["source"])
            )
        }
    try:
        path = ws.resolve(spec.get("file", ""), argument="file")
        return {ws.relative(path): profiles.source_text(path)}
    except (ToolFailure, OSError, UnicodeDecodeError):
        return {}  # estimate_view reports the unreadable file


def compare(ws: Workspace, sim: Simulator, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``compare`` tool: ``a`` and ``b`` (each a profile or a kernel to estimate) → both views' summaries
    and bounds, the totals' deltas (b − a) and per-line deltas, largest first, with each line followed across
    the edit when both texts are known, and the lines only in a or only in b."""
    a, name_a, sources_a = _side(ws, sim, "a", args.get("a"))
    b, name_b, sources_b = _side(ws, sim, "b", args.get("b"))
    got = views.compare_views(a, b, sources_a, sources_b)
    both = measured_estimated.of_pair(a, b, sources_a, sources_b, _from(name_a), _from(name_b))
    out = {
        "a": {
            "label": a["label"],
            "summary": a["summary"],
            "bounds": a["bounds"],
            "investigations": a["investigations"],
        }
        | name_a,
        "b": {
            "label": b["label"],
            "summary": b["summary"],
            "bounds": b["bounds"],
            "investigations": b["investigations"],
        }
        | name_b,
        **got,
    }
    if both is not None:
        out["measured_vs_estimated"] = both
    la, lb, faster = a["summary"]["latency_ns"], b["summary"]["latency_ns"], got["faster"]
    text = f"{a['label']} vs {b['label']}: a {la / 1000:.2f} µs, b {lb / 1000:.2f} µs — " + (
        f"{faster} is faster ({got['speedup']:.2f}x a/b)" if faster != "same" else "the same latency"
    )
    text += f"; per-line deltas: {got['lines_matched_by']}"
    if both is not None and both["kernel"]["ratio"] is not None:
        text += f"; estimated/measured latency {both['kernel']['ratio']:.2f}x"
    return out, text


def _from(name: dict[str, Any]) -> str:
    """A side's provenance for ``measured_vs_estimated``: the kernel simulated, or the profile read."""
    if "kernel" in name:
        return measured_estimated.estimated_from(name["path"], name["kernel"])
    return measured_estimated.measured_from(name["path"])
