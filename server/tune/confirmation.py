"""``tune --confirm-remote K`` without the host: which candidates go to the Trn2 host (the top K *ranked* ones,
never a failed or pruned one) and how their measured times compare with the estimate's ranking.

The ranking's order stands between candidates whose likely ranges overlap (``rank``: "tied"), so the top K
is the first K ranks; the ranks left out that tie with a chosen one are named, since the estimate cannot say
they are slower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nki_studio.protocol.tune import ConfirmedCandidate, TuneCandidate


@dataclass(frozen=True)
class Selection:
    """The candidates to profile, by rank, and the ranks not sent that tie with one of them."""

    chosen: list[TuneCandidate]
    tied_not_sent: list[int]


def select(candidates: Sequence[TuneCandidate], count: int) -> Selection:
    """The first ``count`` ranked candidates of a report's ``candidates`` (fewer when fewer passed)."""
    ranked = sorted(
        (c for c in candidates if c["verdict"] == "ranked" and c["rank"] is not None),
        key=lambda c: c["rank"] or 0,
    )
    chosen = ranked[:count]
    sent = {c["rank"] for c in chosen}
    tied = sorted({r for c in chosen for r in c["tiedWith"] if r not in sent})
    return Selection(chosen, tied)


def pending(row: TuneCandidate, source: str) -> ConfirmedCandidate:
    """The confirmation row of a chosen candidate before it is measured (``source``: its kept source)."""
    return {
        "rank": row["rank"] or 0,
        "values": dict(row["values"]),
        "estimatedNs": row["estimatedNs"],
        "lowNs": row["lowNs"],
        "highNs": row["highNs"],
        "measuredNs": None,
        "ratio": None,
        "withinRange": None,
        "measuredRank": None,
        "agrees": None,
        "source": source,
        "profile": "",
        "error": "",
    }


def measured(row: ConfirmedCandidate, measured_ns: int, profile: str) -> None:
    """Fill in ``row``'s measurement: the time, estimated / measured, whether it lies in the likely range."""
    estimated, low, high = row["estimatedNs"], row["lowNs"], row["highNs"]
    row["measuredNs"] = measured_ns
    row["profile"] = profile
    row["ratio"] = round(estimated / measured_ns, 3) if estimated and measured_ns > 0 else None
    row["withinRange"] = low <= measured_ns <= high if low is not None and high is not None else None


def compare_order(rows: Sequence[ConfirmedCandidate], ties: dict[int, list[int]]) -> bool | None:
    """Set each measured row's ``measuredRank`` and ``agrees`` (``ties``: rank -> the ranks its likely range
    overlaps); whether every measured row agrees (None when fewer than two were measured)."""
    done = sorted(
        (r for r in rows if r["measuredNs"] is not None), key=lambda r: (r["measuredNs"] or 0, r["rank"])
    )
    for position, row in enumerate(done, start=1):
        row["measuredRank"] = position
    for row in done:
        row["agrees"] = all(
            (row["rank"] < other["rank"]) == ((row["measuredRank"] or 0) < (other["measuredRank"] or 0))
            or other["rank"] in ties.get(row["rank"], [])
            for other in done
            if other is not row
        )
    return all(r["agrees"] for r in done) if len(done) > 1 else None
