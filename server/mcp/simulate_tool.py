"""The ``simulate`` tool: run a kernel in the sandboxed worker and check it against its reference → the
oracle's verdict with its metrics, an output summary, SBUF/PSUM peaks and errors located on kernel lines."""

from __future__ import annotations

from typing import Any, TypedDict

from nki_studio.core.finding_json import finding_dict
from nki_studio.mcp.errors import Kind, ToolFailure
from nki_studio.mcp.jobs import Simulator, prepare
from nki_studio.mcp.workspace import Workspace
from nki_studio.protocol.simulation import RAN, LiveAllocation, MetricValue, SimulationResult
from nki_studio.service.reports import metric_text
from nki_studio.service.simulation import result_findings

_FAILURE_KIND: dict[str, Kind] = {
    "timeout": "timeout",
    "memory_limit": "memory_limit",
    "crashed": "crashed",
    "error": "kernel_error",
    "refused": "refused",
}


class FailedMetric(TypedDict):
    """One oracle check that failed, named by output (or input) and metric."""

    output: str
    metric: str
    value: MetricValue
    threshold: str


class OutputSummary(TypedDict):
    """One output: shape, dtype, NaN/Inf counts and whether it passed."""

    name: str
    shape: list[int]
    dtype: str
    nan_count: int
    inf_count: int
    passed: bool


class RegionUse(TypedDict):
    """Peak bytes per partition of one on-chip region against its capacity."""

    peakBytes: int
    capacityBytes: int
    share: float
    live: list[LiveAllocation]


def failed_metrics(result: SimulationResult) -> list[FailedMetric]:
    """Every oracle check that failed, named by output (or input) and metric."""
    oracle = result.get("oracle")
    if not oracle:
        return []
    out = [
        FailedMetric(output=o["name"], metric=m["name"], value=m["value"], threshold=m["threshold"])
        for o in oracle["outputs"]
        for m in o["metrics"]
        if m["passed"] is False
    ]
    out += [
        FailedMetric(output=m["name"], metric="unchanged", value=m["value"], threshold=m["threshold"])
        for m in oracle["inputs"]
        if m["passed"] is False
    ]
    return out


def outputs_summary(result: SimulationResult) -> list[OutputSummary]:
    """Per output: shape, dtype, NaN/Inf counts and whether it passed."""
    oracle = result.get("oracle")
    return [
        OutputSummary(
            name=o["name"],
            shape=o["shape"],
            dtype=o["dtype"],
            nan_count=o["nan_count"],
            inf_count=o["inf_count"],
            passed=o["passed"],
        )
        for o in (oracle["outputs"] if oracle else ())
    ]


def peaks(result: SimulationResult) -> dict[str, RegionUse]:
    """Peak bytes per partition against capacity, per on-chip region."""
    return {
        region: RegionUse(
            peakBytes=p["peakBytes"],
            capacityBytes=p["capacityBytes"],
            share=p["peakBytes"] / p["capacityBytes"] if p["capacityBytes"] else 0.0,
            live=p["live"][:8],
        )
        for region, p in (result.get("peak") or {}).items()
    }


def simulate(ws: Workspace, sim: Simulator, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Run the kernel ``args`` name; returns the structured result and a one-line summary. A kernel that
    fails, times out or runs out of memory is a result (``passed: false``), not a tool error."""
    job = prepare(ws, sim.config.settings, args)
    result = sim.run(job, timeout_s=args.get("timeout_s"))
    located = [finding_dict(f) for f in result_findings(result, job.path, job.info)]
    for f in located:
        f["path"] = ws.relative(f["path"])
    failed = failed_metrics(result)
    error = result.get("error")
    where = ws.relative(error["file"]) if error and error["file"] else ""
    structured = {
        "status": result["status"],
        "passed": result["status"] == "passed",
        "message": result["message"],
        "kernel": job.spec.kernel,
        "path": ws.relative(job.path),
        "backend": result.get("backend"),
        "spec": job.spec.to_comment(),
        "failedMetrics": failed,
        "outputs": outputs_summary(result),
        "oracle": result.get("oracle"),
        "peak": peaks(result),
        "error": {**error, "file": where} if error else None,
        "findings": located,
        "warnings": result.get("warnings", []),
        # simulation: the kernel itself; wait: until the worker was ready; total: the whole job
        "seconds": {k: result["timings"].get(k, 0.0) for k in ("simulation", "wait", "total")},
    }
    summary = f"{result['status']}: {result['message']}"
    if failed:
        summary += " — failed: " + ", ".join(
            f"{m['output']} "
            + metric_text(
                {"name": m["metric"], "value": m["value"], "threshold": m["threshold"], "passed": False}
            )
            for m in failed[:4]
        )
    if error and error.get("line"):
        summary += f" (at {where}:{error['line']})"
    if result["status"] not in RAN:
        # The kernel did not run to the oracle: a tool error the agent must act on, with the whole result.
        raise ToolFailure(_FAILURE_KIND.get(result["status"], "kernel_error"), summary, result=structured)
    return structured, summary
