"""What ``nki-studio tune`` reports, declared once: one candidate (its values, its verdict, its estimate with the
likely range) and the whole search (``nki-studio tune --json``, the MCP ``tune`` tool).

Every time here is the simulator's *estimate* (``estimate`` section of a simulation result), never a
measurement, except in ``RemoteConfirmation`` (``tune --confirm-remote K``), which holds the top candidates'
times measured on a Trn2 host next to their estimates.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from nki_studio.protocol.calibration import CalibrateResult

Verdict = Literal["ranked", "failed", "pruned"]
TuneValue = int | float | str


class TuneCandidate(TypedDict):
    """One point of the search space and what became of it."""

    values: Annotated[dict[str, TuneValue], "parameter -> value substituted into the source"]
    verdict: Annotated[
        Verdict, "ranked: ran and matched its reference; failed: did not (never ranked); pruned: by lint"
    ]
    reason: Annotated[str, "why failed or pruned: first failing metric, simulation status or lint code"]
    rank: Annotated[int | None, "1 = fastest estimate; null: not ranked (failed or pruned)"]
    tiedWith: Annotated[
        list[int], "ranks whose likely range overlaps this one's (the estimate cannot tell them apart)"
    ]
    estimatedNs: Annotated[int | None, "estimated kernel time"]
    lowNs: Annotated[int | None, "likely low end of the estimate (null: no calibration for the target)"]
    highNs: Annotated[int | None, "likely high end of the estimate"]
    bound: Annotated[str | None, "memory or compute (the estimate's roofline side)"]
    bottleneck: Annotated[str | None, "the busiest engine of the estimated profile"]
    sbufPeakBytes: Annotated[int | None, "simulated SBUF peak per partition"]
    speedup: Annotated[float | None, "baseline's estimate over this one's (> 1: faster than the baseline)"]
    cached: Annotated[bool, "the outcome came from the tune cache, not a new simulation"]
    seconds: Annotated[float, "wall time of the candidate's simulation (0 when cached or pruned)"]


class ConfirmedCandidate(TypedDict):
    """One ranked candidate profiled on the Trn2 host: its estimate next to its measured time."""

    rank: Annotated[int, "its rank by the estimate"]
    values: Annotated[dict[str, TuneValue], "parameter -> value substituted into the source"]
    estimatedNs: Annotated[int | None, "estimated kernel time (the ranking's)"]
    lowNs: Annotated[int | None, "likely low end of the estimate (null: no calibration for the target)"]
    highNs: Annotated[int | None, "likely high end of the estimate"]
    measuredNs: Annotated[int | None, "kernel latency measured on the host (null: the profile failed)"]
    ratio: Annotated[float | None, "estimated / measured (null: not measured)"]
    withinRange: Annotated[
        bool | None, "the measured time lies in the likely range (null: not measured, or no range)"
    ]
    measuredRank: Annotated[int | None, "1 = fastest measured among the confirmed candidates"]
    agrees: Annotated[
        bool | None,
        "the measured order against every other measured candidate is the estimate's (pairs the estimate "
        "cannot tell apart excepted); null: not measured",
    ]
    source: Annotated[str, "the candidate's source as profiled (values substituted; kept for calibrate)"]
    profile: Annotated[str, "the downloaded profile ('' when the profile failed)"]
    error: Annotated[str, "why it could not be measured ('' when measured)"]


class RemoteConfirmation(TypedDict):
    """``tune --confirm-remote K``: the top K ranked candidates profiled on the Trn2 host."""

    host: str
    requested: Annotated[int, "K: ranked candidates asked for"]
    candidates: Annotated[list[ConfirmedCandidate], "by rank"]
    orderAgrees: Annotated[
        bool | None,
        "every measured candidate agrees with the estimated ranking (null: fewer than 2 measured)",
    ]
    tiedNotSent: Annotated[
        list[int], "ranks not profiled whose likely range overlaps a profiled one's (raise K to measure them)"
    ]
    directory: Annotated[str, "where the candidates' sources are kept"]
    calibrateCommand: Annotated[
        str, "the nki-studio calibrate command that fits the estimate to these profiles ('' without one)"
    ]
    calibration: Annotated[
        CalibrateResult | None, "the calibration --calibrate ran (null: not asked, or no profile to fit on)"
    ]


class _TuneReportKeys(TypedDict):
    kernel: str
    path: str
    target: str
    space: Annotated[dict[str, list[TuneValue]], "parameter -> candidate values"]
    constraints: list[str]
    spaceSize: Annotated[int, "points of the space before constraints"]
    strategy: Annotated[Literal["exhaustive", "tpe"], "every point, or Optuna's TPE within the budget"]
    executor: Annotated[str, "local (N workers) or ray (address)"]
    baseline: Annotated[TuneCandidate | None, "the values the source has now"]
    candidates: Annotated[list[TuneCandidate], "ranked by estimate first, then failed, then pruned"]
    winner: Annotated[TuneCandidate | None, "rank 1 (null: nothing passed)"]
    diff: Annotated[str, "unified diff that applies the winner's values to the source ('' without a winner)"]
    rejectedByConstraints: int
    pruned: Annotated[dict[str, int], "lint code -> candidates pruned for it"]
    evaluated: Annotated[int, "candidates simulated in this run"]
    cacheHits: int
    elapsedS: float
    calibration: Annotated[str, "the calibration key the cache entries are keyed by"]
    notes: list[str]


class TuneReport(_TuneReportKeys, total=False):
    """A whole search: the space, how it was searched, every candidate (ranked ones first) and the winner."""

    confirmation: Annotated[
        RemoteConfirmation, "measured on the Trn2 host (only with --confirm-remote / confirm_remote)"
    ]
