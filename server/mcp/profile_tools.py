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
from nki_studio.profile.model import ProfileError


def estimate_view(ws: Workspace, sim: Simulator, args: dict[str, Any]) -> dict[str, Any]:
    """Simulate the kernel and view the result's ``estimate`` section (the worker scheduled the trace,
    ``nki_studio.estimate``, and analysed the estimated profile): the fields ``simulate --json`` prints. The
    simulation's verdict comes along: an estimate of a wrong kernel is worth little."""
    job = prepare(ws, args)
    result = sim.run(job, timeout_s=args.get("timeout_s"))
    section = result.get("estimate")
    if result["status"] not in ("passed", "failed") or not section:
        raise ToolFailure(
            "kernel_error" if result["status"] != "timeout" else "timeout",
            f"cannot estimate: the simulation did not finish: {result['status']}: {result['message']}",
            status=result["status"],
        )
    cost = result.get("cost")
    out = profile_view.estimate_section_view(section, cost["roofline"] if cost else None, ws.relative)
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


def profile_report_view(ws: Workspace, path_text: str, argument: str = "profile") -> dict[str, Any]:
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

    out = profile_view.view(report, local)
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


def _side(ws: Workspace, sim: Simulator, name: str, spec: Any) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise ToolFailure(
            "invalid_arguments", f"{name}: expected an object with profile or file", argument=name
        )
    if spec.get("profile"):
        return profile_report_view(ws, spec["profile"], argument=f"{name}.profile")
    if spec.get("file") or spec.get("source") is not None:
        return estimate_view(ws, sim, spec)
    raise ToolFailure(
        "invalid_arguments",
        f"{name}: give profile (a profile path), file or source (a kernel to estimate)",
    )


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
    and bounds, the totals' deltas (b − a) and per-line deltas, largest first."""
    a, b = _side(ws, sim, "a", args.get("a")), _side(ws, sim, "b", args.get("b"))
    totals: dict[str, Any] = {}
    for key in _TOTALS:
        va, vb = a["summary"].get(key), b["summary"].get(key)
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            totals[key] = {"a": va, "b": vb, "delta": vb - va, "ratio": vb / va if va else None}
    engines = sorted({*a["summary"]["engines"], *b["summary"]["engines"]})
    engine_deltas = {
        e: {"a": a["summary"]["engines"].get(e, 0), "b": b["summary"]["engines"].get(e, 0)} for e in engines
    }
    lines: dict[tuple[str, int], dict[str, Any]] = {}
    for side, view in (("a", a), ("b", b)):
        for ln in view["lines"]:
            row = lines.setdefault(
                (ln["file"], ln["line"]), {"file": ln["file"], "line": ln["line"], "a_ns": 0, "b_ns": 0}
            )
            row[f"{side}_ns"] = ln["busy_ns"]
    deltas = sorted(
        ({**r, "delta_ns": r["b_ns"] - r["a_ns"]} for r in lines.values()), key=lambda r: -abs(r["delta_ns"])
    )
    la, lb = a["summary"]["latency_ns"], b["summary"]["latency_ns"]
    faster = "same" if la == lb else ("b" if lb < la else "a")
    out = {
        "a": {k: a[k] for k in ("label", "summary", "bounds", "investigations")} | _name(a),
        "b": {k: b[k] for k in ("label", "summary", "bounds", "investigations")} | _name(b),
        "totals": totals,
        "engines": engine_deltas,
        "lines": deltas[: profile_view.TOP_LINES],
        "faster": faster,
        "speedup": la / lb if lb else None,
    }
    labels = f"{a['label']} vs {b['label']}"
    text = f"{labels}: a {la / 1000:.2f} µs, b {lb / 1000:.2f} µs — " + (
        f"{faster} is faster ({out['speedup']:.2f}x a/b)" if faster != "same" else "the same latency"
    )
    return out, text


def _name(view: dict[str, Any]) -> dict[str, Any]:
    return {k: view[k] for k in ("path", "kernel") if k in view}
