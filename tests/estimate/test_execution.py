"""The per-execution fixed cost (``EXECUTION_OVERHEAD``) in the estimate: one kernel time, one window, for the
section, the estimated profile's metrics and its bounds; a measured profile's bounds keep their own window."""

from __future__ import annotations

import dataclasses
import math

from nki_studio.estimate import constants as K
from nki_studio.estimate.cost import instruction_cost
from nki_studio.estimate.execution import LEAD_NS, TAIL_NS, TRACK_NAME
from nki_studio.estimate.profile import estimate_profile
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.bounds import compute_bounds
from nki_studio.profile.metrics import compute_metrics
from trace_events import event, load

FIXED = int(K.EXECUTION_OVERHEAD.value)
GEN = Generation.GEN3


def test_a_one_instruction_kernel_takes_its_instruction_and_the_fixed_cost() -> None:
    ev = event("nisa.activation", "scalar", line=7)
    section = estimate_section([ev], GEN)
    cost = math.ceil(instruction_cost(ev, Target(GEN).limits).ns)
    assert section["totalNs"] == cost + FIXED
    # the fixed cost is idle time and no engine's: every bound and figure of the time holds it once
    assert section["engineNs"] == {"Scalar": cost} and section["idleNs"] == FIXED
    assert section["perfectPipelineNs"] == cost + FIXED == section["serialNs"]
    assert section["serializationGapNs"] == 0
    assert any("fixed cost" in n for n in section.get("notes", []))
    # the timeline: the fixed cost before and after the instruction, which starts LEAD_NS after the kernel
    fixed, scalar = section["timeline"]
    assert fixed == {
        "name": TRACK_NAME,
        "kind": "fixed",
        "intervals": [[0, LEAD_NS], [LEAD_NS + cost, cost + FIXED]],
    }
    assert scalar["kind"] == "compute" and scalar["intervals"] == [[LEAD_NS, LEAD_NS + cost]]
    assert LEAD_NS + TAIL_NS == FIXED


def test_the_idle_time_holds_the_fixed_cost() -> None:
    section = estimate_section([load(), event("nisa.activation", "scalar", line=7)], GEN)
    overlap = section["overlapNs"]
    assert overlap is not None and section["idleNs"] is not None
    busy = section["dmaNs"] + section["computeNs"] - overlap
    assert section["idleNs"] == section["totalNs"] - busy >= FIXED


def test_the_estimated_profile_window_and_bounds_hold_the_fixed_cost() -> None:
    trace = [load(), event("nisa.activation", "scalar", line=7), load(9)]
    profile = estimate_profile(trace, Target(GEN))
    first = min(int(profile.instructions.start.min()), int(profile.dma.start.min()))
    last = max(int(profile.instructions.end.max()), int(profile.dma.end.max()))
    assert first == LEAD_NS
    (window,) = profile.executions
    assert (window.start, window.end) == (0, last + TAIL_NS)
    latency = compute_metrics(profile).kernel.latency_ns
    assert latency == last - first + FIXED == estimate_section(trace, GEN)["totalNs"]
    bounds = compute_bounds(profile, GEN.value)
    assert bounds.window == (0, latency) and bounds.total_ns == latency
    # a measured profile's bounds keep their window, first to last kernel DMA transfer, whatever its
    # ExecutionInfo says
    measured = compute_bounds(dataclasses.replace(profile, provenance="measured"), GEN.value)
    assert measured.window == (int(profile.dma.start.min()), int(profile.dma.end.max()))
    assert measured.total_ns < latency - FIXED // 2
