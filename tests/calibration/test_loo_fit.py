"""The leave-one-out fit's parts that decide its figures: the trace cache gives back the trace the estimate was
made from, the overhead under fit reaches the estimate, the documented curve bounds the overhead, and the
per-execution fixed cost moves the latency alone and is found where the points put it."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
from nki_studio.estimate import constants as K
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import Generation
from nki_studio.sim.api import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "calibration"))

import trace_cache
from cases import BUILDERS
from loo_fit import (
    DOCUMENTED,
    MODEL_FIXED_COST_US,
    FixedCost,
    admissible,
    descriptor_overhead,
    efficiency,
    fit_fixed_cost,
)
from run import KernelRun
from table import ROOT, load
from trace_cache import Simulated

TRN2 = Generation("trn2")


@pytest.fixture(scope="module")
def simulated() -> Simulated:
    """The walkthrough kernel at a small shape, simulated with a trace."""
    case = BUILDERS["rmsnorm_residual"]({"N": 256, "D": 512}, np.random.default_rng(7))
    result = simulate(
        str(ROOT / "examples" / "rmsnorm_residual.py"), *case.kernel_args, target=TRN2, trace=True
    )
    assert result.trace is not None
    return Simulated({"N": 256, "D": 512}, 1.0, 0.1, "0.7", "checked", True, "", list(result.trace))


def test_a_cached_trace_estimates_as_the_simulated_one(simulated: Simulated, tmp_path: Path) -> None:
    trace_cache.save(tmp_path, "walkthrough", simulated)
    kept = trace_cache.load(tmp_path, "walkthrough", simulated.shape)
    assert kept is not None
    assert kept.trace == simulated.trace
    assert (kept.correct, kept.nki_version, kept.check) == (True, "0.7", "checked")
    assert estimate_section(kept.trace, TRN2)["totalNs"] == estimate_section(simulated.trace, TRN2)["totalNs"]
    assert trace_cache.load(tmp_path, "walkthrough", {"N": 128, "D": 512}) is None


def test_the_overhead_under_fit_reaches_the_estimate_and_is_restored(simulated: Simulated) -> None:
    documented = estimate_section(simulated.trace, TRN2)["dmaNs"]
    with descriptor_overhead(4 * DOCUMENTED):
        slower = estimate_section(simulated.trace, TRN2)["dmaNs"]
    assert slower > documented
    assert K.DMA_DESCRIPTOR_OVERHEAD.value == DOCUMENTED
    assert estimate_section(simulated.trace, TRN2)["dmaNs"] == documented


def test_the_documented_curve_bounds_the_overhead() -> None:
    assert admissible(DOCUMENTED)
    assert efficiency(2048, DOCUMENTED) == pytest.approx(0.8)
    assert not admissible(128)  # 256 B rows at 67%: not "severely overhead-bound"
    assert not admissible(1024)  # 2 KiB rows at 67%: not "approaches peak"


def test_the_fixed_cost_moves_the_latency_alone_and_is_found_where_the_points_put_it(
    simulated: Simulated,
) -> None:
    table = load()
    section = dict(estimate_section(simulated.trace, TRN2))
    kernels = list(dict.fromkeys(p.kernel for p in table.points if p.quantity == "latency" and p.kernel))[:6]
    # the walkthrough's real estimate at six scales, "measured" 7 µs above its instructions' span (the estimate
    # holds the model's fixed cost, which the fit replaces)
    runs = {k: KernelRun(table.kernels[k], 2.0**i, True, section) for i, k in enumerate(kernels)}
    points = [
        dataclasses.replace(p, value=runs[k].estimated(p) - MODEL_FIXED_COST_US + 7.0)
        for k in kernels
        for p in table.points
        if p.kernel == k and p.quantity == "latency"
    ]
    cost = FixedCost(runs)
    assert fit_fixed_cost(cost, points) == 7.0
    assert cost.ratio(points[0], 7.0) == pytest.approx(1.0)
    assert cost.ratio(points[0], 0.0) < 1.0
    busy = dataclasses.replace(points[0], quantity="dma_busy", value=1.0)
    assert cost.ratio(busy, 7.0) == cost.ratio(busy, 0.0)
