"""The per-line heat editors paint (``nki/heatmap`` payloads), from a simulation's estimate or a loaded
profile, with its labels and hovers. The payload builders pull NumPy, so each function imports them on first
use: the language server imports this module at start-up.

The payload is ``nki_studio.protocol.heatmap.HeatmapParams``, as ``nki_studio.profile.heatmap.build_payload``
returns it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar, cast

from nki_studio.protocol.heatmap import (
    EstimatedKernel,
    HeatFinding,
    HeatLayer,
    HeatLine,
    HeatmapParams,
    HeatMetric,
    HeatSource,
)
from nki_studio.protocol.profile import LineEstimate
from nki_studio.protocol.simulation import AnyResult, Estimate

Painted = TypeVar("Painted", HeatLine, HeatFinding)  # anything with a 0-based ``line``


def estimate_of(result: AnyResult) -> Estimate | None:
    """The estimated timeline of a result (a notice has none)."""
    return result.get("estimate") if "estimate" in result else None


def estimate_payload(uri: str, path: str, kernel: str, result: AnyResult) -> HeatmapParams | None:
    """The estimated heatmap of a result: its estimated timeline, with its roofline point."""
    estimate = estimate_of(result)
    if not estimate:
        return None
    from nki_studio.estimate.heat import estimate_payload as payload

    return payload(uri, path, kernel, estimate)


def estimate_findings(results: Iterable[AnyResult], path: str) -> list[HeatFinding]:
    """The investigation findings of every result's estimate on ``path``, as payload entries."""
    estimates = [e for r in results if (e := estimate_of(r))]
    if not estimates:
        return []
    from nki_studio.estimate.heat import estimate_findings as findings

    return [f for e in estimates for f in findings(e, path)]


def inlay_label(line: HeatLine, payload: HeatmapParams) -> str:
    """``⏱ 12.3 µs · 18% · Vector``: a heat line's inlay hint, by the payload's default metric (its kernel's
    bottleneck's: a DMA-bound kernel's ``dma_copy`` lines show the DMA they issue)."""
    from nki_studio.profile.heatmap import inlay_label as label

    metric: HeatMetric = payload.get("default_metric", "busy")
    return label(line, payload["source"], metric, payload["kernel"]["latency_ns"])


LAYERS: tuple[HeatLayer, ...] = ("measured", "estimate", "compare")  # measured first: what a user paid for


def layers_of(sources: Iterable[HeatSource], compared: bool) -> list[HeatLayer]:
    """The layers a document has given the heat sources it has: each source, and compare when it has both and
    their comparison (``compared``: the profile maps to this document's estimated kernel)."""
    have = set(sources)
    both = compared and {"measured", "estimate"} <= have
    return [layer for layer in LAYERS if layer in have or (layer == "compare" and both)]


def shown_layer(available: list[HeatLayer], chosen: HeatLayer | None) -> HeatLayer | None:
    """The layer every view shows: the one chosen while the document has it, else the measured one, else the
    estimate. A new simulation therefore never hides a measured layer."""
    if chosen in available:
        return chosen
    return next((layer for layer in LAYERS if layer in available and layer != "compare"), None)


def layer_label(layer: HeatLayer | None, payloads: dict[HeatSource, HeatmapParams]) -> str:
    """What a layer is, as every view names it: "Measured, from <profile>", "Estimated (simulator trace, not
    measured): <kernel>", or the two compared."""
    from nki_studio.profile.heatmap import layer_label as label

    if layer is None:
        return "no heat"
    if layer == "compare":
        return f"Measured − estimated ({label(payloads['measured'])} vs the simulator's estimate)"
    return label(payloads[layer])


def line_hover_markdown(payload: HeatmapParams, line: int) -> str | None:
    """The hover of 0-based ``line`` of a payload (None: no heat there)."""
    from nki_studio.profile.heatmap import line_hover_markdown as hover

    text = hover(payload, line)
    if text is None or payload["source"] != "estimate":  # measured: no range to add
        return text
    from nki_studio.estimate.likely_range import describe

    kernel = cast(EstimatedKernel, payload["kernel"])  # an estimate's payload carries an estimate's kernel
    estimated = describe(
        kernel["latency_ns"], kernel["latency_range"], "this target", fmt_ns, kernel.get("calibration")
    )
    return f"{text}\n\nKernel time (estimated): {estimated}"


def estimate_label(estimate: Estimate) -> str:
    """An estimated time and its likely range in few words: "≈ 170 µs, likely 140 µs–210 µs", with the user's
    calibration: "; calibrated on 5 of your profiles, held-out error 4%" (ignored: just that, the hover says why)."""
    from nki_studio.estimate.likely_range import short

    label = short(estimate["totalNs"], estimate["range"], fmt_ns)
    note = estimate.get("calibration")
    if note is None:
        return label
    return f"{label}; {note['message'] if note['status'] == 'applied' else 'calibration file ignored'}"


def fmt_ns(ns: float) -> str:
    """A duration as the heat labels write it."""
    from nki_studio.profile.heatmap import fmt_ns as fmt

    return fmt(ns)


def remap_lines(lines: Iterable[Painted], old_text: str, new_text: str) -> tuple[list[Painted], bool]:
    """Carry payload lines across an edit (``profile.heatmap.remap_lines``): the moved lines and whether
    anything changed."""
    from nki_studio.profile.heatmap import remap_lines as remap

    return remap(lines, old_text, new_text)


def delta_label(row: LineEstimate) -> str:
    """A compared line in few words: "Δ +3.2 µs (measured 12.0 µs, est. 8.8 µs)" (measured − estimated)."""
    delta = row["measured_ns"] - row["estimated_ns"]
    sign = "+" if delta >= 0 else "−"
    return f"Δ {sign}{fmt_ns(abs(delta))} (measured {fmt_ns(row['measured_ns'])}, est. {fmt_ns(row['estimated_ns'])})"
