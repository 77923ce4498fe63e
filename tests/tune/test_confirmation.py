"""``--confirm-remote K`` without a host: the top K ranked candidates are chosen (failed and pruned ones never),
ranks tied with a chosen one but left out are named, the measured order is compared with the ranking (pairs
the estimate cannot tell apart excepted), and the measured table is rendered under the ranked one."""

from __future__ import annotations

from typing import Any

from nki_studio.protocol.tune import ConfirmedCandidate, RemoteConfirmation, TuneCandidate, Verdict
from nki_studio.service.tune_confirm import calibrate_command
from nki_studio.tune.confirmation import compare_order, measured, pending, select
from nki_studio.tune.evaluate import blank
from nki_studio.tune.rank import rank
from nki_studio.tune.report import confirmation_text


def _row(values: dict[str, Any], verdict: Verdict, est: int | None, low: int | None = None) -> TuneCandidate:
    row = blank(values, verdict, "" if verdict == "ranked" else "out: allclose")
    row.update(estimatedNs=est, lowNs=low, highNs=None if low is None else 2 * (est or 0) - low)
    return row


def test_failed_and_pruned_candidates_are_never_sent() -> None:
    rows = rank(
        [
            _row({"T": 1}, "failed", None),
            _row({"T": 2}, "ranked", 900),
            _row({"T": 3}, "pruned", None),
            _row({"T": 4}, "ranked", 500),
        ],
        None,
    )
    chosen = select(rows, 3).chosen  # asks for more than passed: only the two ranked ones
    assert [c["values"] for c in chosen] == [{"T": 4}, {"T": 2}]
    assert [c["rank"] for c in chosen] == [1, 2]
    assert select(rows, 1).chosen == [chosen[0]]


def test_ties_keep_the_ranking_order_and_name_the_ranks_left_out() -> None:
    # likely ranges: 1000 (800-1200) overlaps 1100 (900-1300) and 1150 (1000-1300); 2000 overlaps none
    rows = rank(
        [
            _row({"T": 4}, "ranked", 2000, 1900),
            _row({"T": 2}, "ranked", 1100, 900),
            _row({"T": 3}, "ranked", 1150, 1000),
            _row({"T": 1}, "ranked", 1000, 800),
        ],
        None,
    )
    selection = select(rows, 2)
    assert [c["values"]["T"] for c in selection.chosen] == [1, 2]
    assert selection.tied_not_sent == [3]  # #3 overlaps both chosen ones; #4 overlaps neither
    assert select(rows, 3).tied_not_sent == []
    assert select(rows, 0).chosen == [] and select(rows, 0).tied_not_sent == []


def _confirmed(rank_: int, est: int, low: int | None = None, high: int | None = None) -> ConfirmedCandidate:
    row = pending(_row({"T": rank_}, "ranked", est), f"/k_tune{rank_}.py")
    row.update(rank=rank_, lowNs=low, highNs=high)
    return row


def test_measured_order_against_the_ranking_with_ties_excused() -> None:
    a, b, c = _confirmed(1, 1000, 900, 1100), _confirmed(2, 1050, 1000, 1200), _confirmed(3, 2000)
    measured(a, 1250, "/p1")  # outside its likely range, estimated / measured = 0.8
    measured(b, 1100, "/p2")  # faster than #1 measured: swapped, but #1 and #2 tie
    measured(c, 2500, "/p3")
    assert (a["ratio"], a["withinRange"]) == (0.8, False) and b["withinRange"] is True
    assert c["withinRange"] is None  # no range without a calibration
    assert compare_order([a, b, c], {1: [2], 2: [1], 3: []}) is True
    assert [r["measuredRank"] for r in (a, b, c)] == [2, 1, 3]
    assert [r["agrees"] for r in (a, b, c)] == [True, True, True]

    assert compare_order([a, b, c], {1: [], 2: [], 3: []}) is False  # no ties: #1 and #2 disagree
    assert [r["agrees"] for r in (a, b, c)] == [False, False, True]


def test_a_candidate_not_measured_is_left_out_of_the_order() -> None:
    a, b = _confirmed(1, 1000), _confirmed(2, 2000)
    measured(b, 1500, "/p2")
    a["error"] = "connect: ssh: connect to host 127.0.0.1 port 9: Connection refused"
    assert compare_order([a, b], {}) is None  # one measured: nothing to compare
    assert a["measuredRank"] is None and a["agrees"] is None and b["measuredRank"] == 1

    confirmation: RemoteConfirmation = {
        "host": "trn2",
        "requested": 3,
        "candidates": [a, b],
        "orderAgrees": None,
        "tiedNotSent": [3],
        "directory": "/proj/.nki-studio/tune-confirm/k.kern-1",
        "calibrateCommand": calibrate_command([b]),
        "calibration": None,
    }
    text = "\n".join(confirmation_text(confirmation))
    assert "not measured: connect: ssh: connect to host 127.0.0.1 port 9" in text
    assert "measured #1" in text and "1.33×" in text  # 2000 estimated / 1500 measured
    assert "#3 (raise --confirm-remote)" in text
    assert "nki-studio calibrate /p2 --source /k_tune2.py" in text


def test_the_calibrate_command_quotes_its_paths() -> None:
    row = _confirmed(1, 1000)
    measured(row, 900, "/cache/it's here/profile")
    row["source"] = "/proj/a b/k_tune1.py"
    assert calibrate_command([row]) == (
        "nki-studio calibrate '/cache/it'\"'\"'s here/profile' --source '/proj/a b/k_tune1.py'"
    )
    assert calibrate_command([]) == ""
