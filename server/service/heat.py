"""The per-line heat editors paint (``nki/heatmap`` payloads), from a simulation's estimate or a loaded
profile, with its labels and hovers. The payload builders pull NumPy, so each function imports them on first
use: the language server imports this module at start-up.

The payload is the ``dict`` that ``nki_studio.profile.heatmap.build_payload`` returns (its typed protocol
declaration is the protocol part of issue 26).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nki_studio.protocol.simulation import AnyResult, Estimate


def estimate_of(result: AnyResult) -> Estimate | None:
    """The estimated timeline of a result (a notice has none)."""
    return result.get("estimate") if "cost" in result else None


def estimate_payload(uri: str, path: str, kernel: str, result: AnyResult) -> dict[str, Any] | None:
    """The estimated heatmap of a result: its estimated timeline, with the cost model's roofline point."""
    estimate = estimate_of(result)
    if not estimate:
        return None
    from nki_studio.estimate.heat import estimate_payload as payload

    cost = result["cost"] if "cost" in result else None
    return payload(uri, path, kernel, estimate, cost["roofline"] if cost else None)


def estimate_findings(results: Iterable[AnyResult], path: str) -> list[dict[str, Any]]:
    """The investigation findings of every result's estimate on ``path``, as payload entries."""
    estimates = [e for r in results if (e := estimate_of(r))]
    if not estimates:
        return []
    from nki_studio.estimate.heat import estimate_findings as findings

    return [f for e in estimates for f in findings(e, path)]


def inlay_label(line: dict[str, Any], source: str) -> str:
    """``⏱ 12.3 µs · 18% · Vector``: a heat line's inlay hint (``source``: measured or estimate)."""
    from nki_studio.profile.heatmap import inlay_label as label

    return label(line, source)


def line_hover_markdown(payload: dict[str, Any], line: int) -> str | None:
    """The hover of 0-based ``line`` of a payload (None: no heat there)."""
    from nki_studio.profile.heatmap import line_hover_markdown as hover

    return hover(payload, line)


def fmt_ns(ns: float) -> str:
    """A duration as the heat labels write it."""
    from nki_studio.profile.heatmap import fmt_ns as fmt

    return fmt(ns)


def remap_lines(
    lines: Iterable[dict[str, Any]], old_text: str, new_text: str
) -> tuple[list[dict[str, Any]], bool]:
    """Carry payload lines across an edit (``profile.heatmap.remap_lines``): the moved lines and whether
    anything changed."""
    from nki_studio.profile.heatmap import remap_lines as remap

    return remap(lines, old_text, new_text)
