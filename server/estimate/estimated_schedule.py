"""The estimated timeline of a simulator trace, the one entry every estimate goes through (the result's
``estimate`` section, the estimated profile, ``calibrate`` and the benchmarks): the trace as its compiler runs
it (``merged_loads``: a legacy kernel's repeated loads merged, their readers reading the kept copy), then the
SBUF spills that program needs (``spills``: the merged copies' longer liveness included), then scheduled
(``schedule``). A path that scheduled the trace itself would price another program than the estimate shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nki_studio.estimate.merged_loads import as_compiled
from nki_studio.estimate.schedule import Schedule, schedule
from nki_studio.estimate.spills import with_spills
from nki_studio.model.targets import TargetLimits
from nki_studio.sim.trace import TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, as_compact

if TYPE_CHECKING:
    from nki_studio.estimate.calibration.overlay import Overlay


def as_run(trace: Sequence[TraceEvent], limits: TargetLimits) -> CompactTrace:
    """``trace`` as the hardware of ``limits`` runs it: compiled (merged loads), with its spill transfers."""
    return with_spills(as_compiled(as_compact(trace)), limits)


def estimated_schedule(
    trace: Sequence[TraceEvent], limits: TargetLimits, overlay: Overlay | None = None
) -> Schedule:
    """The estimated timeline of ``trace`` on ``limits`` (module docstring); its ``events`` are the trace as
    run. ``overlay``: a calibration of the per-instruction costs (``estimate.calibration``)."""
    return schedule(as_run(trace, limits), limits, overlay)
