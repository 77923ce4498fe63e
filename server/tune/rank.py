"""Rank candidates by their estimate, saying which ones the estimate cannot tell apart.

Only candidates that ran and matched their reference are ranked (verdict ``ranked``); failed and pruned ones
follow, unranked. Two ranked candidates *tie* when their likely ranges overlap (``estimate.likely_range``:
10th to 90th percentile of measured/estimated): the order between them is the estimate's, but its error is
larger than their difference. Without a range (no calibration for the target) only equal estimates tie.
"""

from __future__ import annotations

from collections.abc import Sequence

from nki_studio.protocol.tune import TuneCandidate

_ORDER = {"ranked": 0, "failed": 1, "pruned": 2}


def _interval(row: TuneCandidate) -> tuple[int, int]:
    estimate = row["estimatedNs"] or 0
    low, high = row["lowNs"], row["highNs"]
    return (low, high) if low is not None and high is not None else (estimate, estimate)


def rank(rows: Sequence[TuneCandidate], baseline: TuneCandidate | None) -> list[TuneCandidate]:
    """``rows`` ordered (ranked by estimate, then failed, then pruned) with rank, ties and the speed-up over
    the baseline's estimate filled in. The rows are updated in place and returned in the new order."""
    ordered = sorted(
        rows,
        key=lambda r: (_ORDER[r["verdict"]], r["estimatedNs"] or 0, sorted(r["values"].items(), key=str)),
    )
    ranked = [r for r in ordered if r["verdict"] == "ranked"]
    base = baseline["estimatedNs"] if baseline and baseline["verdict"] == "ranked" else None
    for position, row in enumerate(ranked, start=1):
        row["rank"] = position
        row["speedup"] = round(base / row["estimatedNs"], 3) if base and row["estimatedNs"] else None
    for row in ranked:
        low, high = _interval(row)
        row["tiedWith"] = [
            other["rank"]
            for other in ranked
            if other is not row and other["rank"] is not None and _overlaps((low, high), _interval(other))
        ]
    for row in ordered[len(ranked) :]:
        row["rank"], row["speedup"], row["tiedWith"] = None, None, []
    return ordered


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
