"""One candidate, verified then priced: its substituted source run through the sandboxed job runner
(``verify.runner``: its own process group, the wall-clock timeout, the memory limit) on the spec's inputs
against the reference, and the result reduced to a candidate row. The same function runs in a local thread
and inside a Ray task, so a candidate gets the same limits wherever it runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from nki_studio.protocol.simulation import SimulationResult
from nki_studio.protocol.tune import TuneCandidate, TuneValue, Verdict
from nki_studio.verify.job import Job
from nki_studio.verify.runner import WorkerPool, run_job


@dataclass(frozen=True)
class Task:
    """A candidate ready to run: the kernel's job (its file, spec, target, limits), the substituted text."""

    job: Job
    timeout_s: float
    values: Mapping[str, TuneValue]
    source: str


def run_task(task: Task, pool: WorkerPool | None = None) -> TuneCandidate:
    """Simulate ``task`` in a sandboxed worker (``pool``'s warm one, else a fresh one) and reduce the result."""
    started = time.perf_counter()
    result = run_job(task.job, pool=pool, timeout_s=task.timeout_s, source=task.source)
    return candidate_of(task.values, result, time.perf_counter() - started)


def blank(values: Mapping[str, TuneValue], verdict: Verdict = "failed", reason: str = "") -> TuneCandidate:
    """A candidate row with no estimate yet."""
    return {
        "values": dict(values),
        "verdict": verdict,
        "reason": reason,
        "rank": None,
        "tiedWith": [],
        "estimatedNs": None,
        "lowNs": None,
        "highNs": None,
        "bound": None,
        "bottleneck": None,
        "sbufPeakBytes": None,
        "speedup": None,
        "cached": False,
        "seconds": 0.0,
    }


def first_failure(result: SimulationResult) -> str | None:
    """Why ``result`` cannot be ranked: its first failing oracle metric, or its status and message; None when
    it ran and matched its reference. A kernel without a reference is not verified, so it is not ranked."""
    status = result["status"]
    if status == "passed":
        return None
    oracle = result.get("oracle")
    if status == "failed" and oracle:
        for output in oracle["outputs"]:
            for metric in output["metrics"]:
                if metric["passed"] is False:
                    return f"{output['name']}: {metric['name']} = {metric['value']} (needs {metric['threshold']})"
        if oracle["problems"]:
            return oracle["problems"][0]
    if status == "no_reference":
        return "no_reference: the spec names no reference, so the candidate cannot be verified"
    return f"{status}: {result['message']}"


def candidate_of(values: Mapping[str, TuneValue], result: SimulationResult, seconds: float) -> TuneCandidate:
    """The candidate row of one simulation result: failed with its first failure, or its estimate."""
    row = blank(values, reason=first_failure(result) or "")
    row["seconds"] = round(seconds, 3)
    estimate = result.get("estimate")
    peak = result.get("peak") or {}
    if "sbuf" in peak:
        row["sbufPeakBytes"] = peak["sbuf"]["peakBytes"]
    if row["reason"]:
        return row
    if not estimate:
        row["reason"] = "no estimate: the simulation gave no instructions to schedule"
        return row
    rng = estimate.get("range")
    bounds = estimate.get("bounds")
    roofline = estimate.get("roofline")
    row["verdict"] = "ranked"
    row["estimatedNs"] = estimate["totalNs"]
    row["lowNs"] = rng["lowNs"] if rng else None
    row["highNs"] = rng["highNs"] if rng else None
    row["bound"] = roofline["bound"] if roofline else None
    row["bottleneck"] = bounds["bottleneck"] if bounds else None
    return row
