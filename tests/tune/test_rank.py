"""Ranking: only passing candidates get a rank, ties inside the likely range are said, speed-ups are over
the baseline's estimate."""

from __future__ import annotations

from nki_studio.protocol.tune import TuneCandidate
from nki_studio.tune.evaluate import blank
from nki_studio.tune.rank import rank


def ranked(n: int, ns: int, low: int | None, high: int | None) -> TuneCandidate:
    row = blank({"N": n})
    row.update({"verdict": "ranked", "reason": ""})
    row["estimatedNs"], row["lowNs"], row["highNs"] = ns, low, high
    return row


def test_order_ties_and_speedup() -> None:
    a = ranked(1, 100, 90, 130)
    b = ranked(2, 120, 110, 150)  # overlaps a
    c = ranked(3, 300, 280, 390)  # overlaps nobody
    failed = blank({"N": 4}, "failed", "out: allclose = 12 (needs 0)")
    failed["estimatedNs"] = 1  # a failing candidate's estimate never ranks it, however fast
    pruned = blank({"N": 5}, "pruned", "NKI401 ...")
    rows = rank([c, pruned, failed, b, a], baseline=c)
    assert [r["values"]["N"] for r in rows] == [1, 2, 3, 4, 5]
    assert [r["rank"] for r in rows] == [1, 2, 3, None, None]
    assert a["tiedWith"] == [2] and b["tiedWith"] == [1] and c["tiedWith"] == []
    assert a["speedup"] == 3.0 and c["speedup"] == 1.0
    assert failed["speedup"] is None and failed["tiedWith"] == []


def test_without_a_range_only_equal_estimates_tie() -> None:
    a, b, c = ranked(1, 100, None, None), ranked(2, 100, None, None), ranked(3, 101, None, None)
    rank([a, b, c], baseline=None)
    assert a["tiedWith"] == [2] and c["tiedWith"] == [] and a["speedup"] is None
