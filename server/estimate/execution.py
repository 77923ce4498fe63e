"""The per-execution fixed cost around a scheduled trace: what a kernel's execution takes besides its
instructions and transfers (``constants.EXECUTION_OVERHEAD``: the idle time at kernel start and end that the
measured latencies show and no instruction of the schedule covers; inferred, fitted with leave-one-out over the
calibration suite, benchmarks/calibration/README.md).

The estimate adds it in one place: the estimated profile's execution window (``estimate.profile``) starts at 0,
its first instruction ``LEAD_NS`` later, and ends ``TAIL_NS`` after the last one; the profile metrics take the
kernel time, idle time and timeline origin from that window, the bounds their window. How the cost splits
between start and end is not published: half each is inferred.
"""

from __future__ import annotations

from nki_studio.estimate.constants import EXECUTION_OVERHEAD
from nki_studio.protocol.simulation import EngineTrack

FIXED_NS = round(EXECUTION_OVERHEAD.value)
LEAD_NS = FIXED_NS // 2  # before the first instruction (the split is inferred)
TAIL_NS = FIXED_NS - LEAD_NS  # after the last one
TRACK_NAME = "kernel start/end (estimated)"
NOTE = (
    f"includes an estimated per-execution fixed cost of {FIXED_NS / 1e3:g} µs at kernel start and end "
    "(inferred from public measurements; docs/cost-model.md)"
)


def kernel_ns(span_ns: float) -> float:
    """The estimated kernel time of a schedule whose instructions span ``span_ns`` (first start to last end):
    the span and the fixed cost; 0 for an empty schedule (nothing executed)."""
    return span_ns + FIXED_NS if span_ns > 0 else 0.0


def fixed_cost_track(total_ns: int) -> EngineTrack:
    """The timeline track of the fixed cost: ``[0, LEAD_NS]`` and ``[total - TAIL_NS, total]`` of a kernel time
    ``total_ns`` (from the execution window's start, as every track)."""
    return {
        "name": TRACK_NAME,
        "kind": "fixed",
        "intervals": [[0, LEAD_NS], [max(total_ns - TAIL_NS, LEAD_NS), total_ns]],
    }
