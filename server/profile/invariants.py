"""The checks every profile result passes before a front end shows it (text, JSON, the ``nki/heatmap`` payload).

Metrics computed from validated inputs (``validate``) satisfy these by construction; this is the net under that
promise. A busy time or union is within ``[0, latency]``, the overlap within both unions, idle time and the
serialisation gap non-negative, bytes non-negative, shares and heat within ``[0, 1]``, every number finite.
A failing optional metric (overlap, idle, bandwidths) is withdrawn — shown as unavailable, with a note saying
why; any other failure is a ``ProfileError`` naming the metric, so no wrong number is ever shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from nki_studio.profile.metrics import KernelMetrics, ProfileMetrics
from nki_studio.profile.model import ProfileError
from nki_studio.protocol.heatmap import HeatmapParams

# Optional kernel metrics: withdrawn (None) instead of refusing the whole report.
_OPTIONAL = ("intersection_ns", "dma_or_compute_ns", "idle_ns", "effective_dma_gbps", "end_to_end_dma_gbps")


def _numbers(value: Any, where: str) -> Iterator[tuple[str, float]]:
    """Every number inside ``value`` (dicts, lists, dataclass dicts) with its path."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{where}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{where}[{i}]")


def _withheld(where: str, value: Any, rule: str) -> ProfileError:
    return ProfileError(
        f"internal check failed: {where} = {value} ({rule}); the report is withheld rather than shown with a "
        "wrong number — please report it with the profile"
    )


def _kernel_bounds(k: KernelMetrics) -> list[tuple[str, Any, float]]:
    """(name, value, upper bound) of each kernel metric that lies within ``[0, bound]``."""
    lat = k.latency_ns if k.latency_ns > 0 else math.inf  # no latency (empty profile): no upper bound known
    out: list[tuple[str, Any, float]] = [
        ("dma_union_ns", k.dma_union_ns, lat),
        ("compute_union_ns", k.compute_union_ns, lat),
        ("perfect_pipeline_ns", k.perfect_pipeline_ns, lat),
        ("serialization_gap_ns", k.serialization_gap_ns, lat),
        ("unattributed_busy_ns", k.unattributed_busy_ns, lat),
        ("unattributed_wait_ns", k.unattributed_wait_ns, lat),
        ("intersection_ns", k.intersection_ns, min(k.dma_union_ns, k.compute_union_ns)),
        ("dma_or_compute_ns", k.dma_or_compute_ns, lat),
        ("idle_ns", k.idle_ns, lat),
    ]
    out += [(f"engines.{e}", v, lat) for e, v in k.engines.items()]
    return out


def check_metrics(metrics: ProfileMetrics) -> ProfileMetrics:
    """``metrics`` after the checks of the module docstring (optional metrics may be withdrawn, with a note)."""
    k = metrics.kernel
    if k.latency_ns < 0:
        raise _withheld("kernel.latency_ns", k.latency_ns, "negative")
    for name, value, hi in _kernel_bounds(k):
        if value is not None and not 0 <= value <= hi:
            if name not in _OPTIONAL:
                raise _withheld(f"kernel.{name}", value, f"outside [0, {hi}]")
            _withdraw(k, name, f"{value} is outside [0, {hi}]")
    for name in ("effective_dma_gbps", "end_to_end_dma_gbps"):
        value = getattr(k, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            _withdraw(k, name, f"{value} is not a finite non-negative number")
    lat = k.latency_ns if k.latency_ns > 0 else math.inf
    for i, ln in enumerate(metrics.lines):
        where = f"line {ln.file}:{ln.line}"
        for name, value, hi in (
            ("busy_ns", ln.busy_ns, lat),
            ("wait_ns", ln.wait_ns, lat),
            ("dma_ns", ln.dma_ns, lat),
            ("dma_overlap_ns", ln.dma_overlap_ns, ln.busy_ns),
            ("exclusive_ns", ln.exclusive_ns, ln.busy_ns),
            ("share", ln.share, 1.0),
            ("share_of_compute", ln.share_of_compute, 1.0),
            ("dma_bytes", ln.dma_bytes, math.inf),
        ):
            if not 0 <= value <= hi:
                raise _withheld(f"{where} {name}", value, f"outside [0, {hi}] (row {i})")
    check_finite(k.to_dict(), "kernel")
    return metrics


def _withdraw(k: KernelMetrics, name: str, why: str) -> None:
    setattr(k, name, None)
    if name in ("intersection_ns", "dma_or_compute_ns", "idle_ns"):  # one depends on the other
        k.intersection_ns = k.dma_or_compute_ns = k.idle_ns = None
    k.notes.append(f"{name} not shown: {why}")


def check_finite(value: Any, where: str) -> None:
    """Raise unless every number inside ``value`` is finite and non-negative (all report numbers are counts,
    times, bytes, fractions or indices)."""
    for path, number in _numbers(value, where):
        if not (math.isfinite(number) and number >= 0):
            raise _withheld(path, number, "not a finite non-negative number")


def check_payload(payload: HeatmapParams) -> HeatmapParams:
    """An ``nki/heatmap`` payload after the checks: heat and shares within [0, 1], every number finite."""
    for ln in payload["lines"]:
        for name in ("heat", "share", "share_of_compute"):
            if not 0 <= ln[name] <= 1:
                raise _withheld(f"{payload['uri']} line {ln['line']} {name}", ln[name], "outside [0, 1]")
    check_finite(payload["lines"], "lines")
    check_finite(payload["kernel"], "kernel")
    return payload
