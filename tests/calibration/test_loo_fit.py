"""The leave-one-out fit's parts that decide its figures: the trace cache gives back the trace the estimate was
made from, the overhead under fit reaches the estimate, and the documented curve bounds the overhead."""

from __future__ import annotations

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
from loo_fit import DOCUMENTED, admissible, descriptor_overhead, efficiency
from table import ROOT
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
