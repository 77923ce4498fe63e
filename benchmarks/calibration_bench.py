"""Calibration: the estimated timeline next to published Trn2 measurements of the same kernels.

The only published Trn2 measurements of a kernel we can reproduce are the residual-add RMSNorm walkthrough's
(shared/profile-formats/metrics.md §6.1, metrics-oracle.json ``walkthrough``: a [1024, 4096] BF16 input on
one Trn2 NeuronCore, profiled with Neuron Explorer). examples/rmsnorm_residual.py (plain) and
examples/rmsnorm_residual_fused.py (fused) are our own kernels written after that walkthrough's description,
so the comparison is of the same algorithm, not of the same instruction stream. No constant of the model was
fitted to these numbers (docs/cost-model.md, "Calibration"); the ratios are printed to show how far off the
model is, nothing is asserted.

Run: ``.venv/bin/python benchmarks/calibration_bench.py``
"""

from __future__ import annotations

import time
from pathlib import Path

import ml_dtypes
import numpy as np
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import Generation
from nki_studio.sim.api import simulate

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "published Trn2 RMSNorm walkthrough (shared/profile-formats/metrics.md §6.1)"
# (kernel file, quantity, measured µs, section key of the estimate)
MEASURED = [
    ("rmsnorm_residual.py", "latency", 218.666, "totalNs"),
    ("rmsnorm_residual.py", "DMA busy (union)", 69.841, "dmaNs"),
    ("rmsnorm_residual.py", "compute busy (union)", 190.251, "computeNs"),
    ("rmsnorm_residual.py", "DMA/compute overlap", 56.336, "overlapNs"),
    ("rmsnorm_residual_fused.py", "latency", 119.547, "totalNs"),
]


def _estimate(name: str) -> dict[str, float]:
    rng = np.random.default_rng(7)
    bf = ml_dtypes.bfloat16
    x, r, w = (rng.standard_normal(s).astype(bf) for s in ((1024, 4096), (1024, 4096), (4096,)))
    result = simulate(str(ROOT / "examples" / name), x, r, w, trace=True)
    assert result.trace is not None
    section = estimate_section(result.trace, Generation.GEN3)
    return {k: float(v) for k, v in section.items() if isinstance(v, (int, float))}


def main() -> int:
    """Print the calibration table."""
    t0 = time.perf_counter()
    estimates = {name: _estimate(name) for name in dict.fromkeys(m[0] for m in MEASURED)}
    print(
        f"calibration against the {SOURCE}; trn2, [1024, 4096] BF16 (simulated in {time.perf_counter() - t0:.0f} s)"
    )
    print(f"  {'kernel':28} {'quantity':22} {'measured':>10} {'estimated':>10} {'est/meas':>9}")
    for name, quantity, measured_us, key in MEASURED:
        est_us = estimates[name].get(key, float("nan")) / 1e3
        print(f"  {name:28} {quantity:22} {measured_us:8.1f}us {est_us:8.1f}us {est_us / measured_us:9.2f}")
    plain, fused = (
        estimates["rmsnorm_residual.py"]["totalNs"],
        estimates["rmsnorm_residual_fused.py"]["totalNs"],
    )
    print(f"  fused speed-up: measured {218.666 / 119.547:.2f}x, estimated {plain / fused:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
