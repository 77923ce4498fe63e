"""The estimate's likely range: the spread of the model's error on public hardware measurements of the same
generation and kernel class (issue 27, item 3), applied to one estimate.

The residuals are data, ``calibration_residuals.json``, written by the calibration suite
(``benchmarks/calibration/run.py --write-residuals``): per measured latency, its generation, its kernel class
and measured / estimated. The range of an estimate ``t`` is ``t * q10`` to ``t * q90`` of those ratios (10th and
90th percentiles, linear interpolation; the standard library's, so the language server need not load NumPy).
Nothing is fitted to any point: the model has no constant tuned to the suite, so each point's residual does not
depend on the point itself and the spread is held-out-style. It is an estimate's likely range, not a bound.
With the suite's 5 trn2 and 13 trn1 latency points the percentiles are coarse.

Kernel class: the side of the estimate's own roofline (memory-bound when the HBM floor is the larger floor,
compute-bound otherwise). Chosen over a size split because the model's known errors differ by side (DMA
efficiency per descriptor size against engine rates and throttling, benchmarks/calibration/README.md) while every
measured kernel in the suite is over 100 µs, so a size split would leave one class empty. A class with fewer
than ``MIN_CLASS_POINTS`` points falls back to all the generation's points; a generation with none gives no range.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nki_studio.protocol.calibration import CalibrationNote
from nki_studio.protocol.simulation import EstimateRange, KernelClass, Roofline

RESIDUALS_PATH = Path(__file__).with_name("calibration_residuals.json")
MIN_CLASS_POINTS = 4  # fewer and a 10th/90th percentile is one point's residual; use the generation's all
ALL: KernelClass = "all"


@dataclass(frozen=True)
class Residual:
    """One calibration point: a measured latency against the estimate of the same kernel."""

    id: str
    generation: str
    kernel_class: KernelClass
    ratio: float  # measured / estimated


@dataclass(frozen=True)
class Residuals:
    """The residual table and where it came from (shown with every range)."""

    source: str
    points: tuple[Residual, ...]


@functools.cache
def load_residuals(path: Path = RESIDUALS_PATH) -> Residuals:
    """Read a residual table written by ``run.py --write-residuals`` (once per process and path)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return Residuals(
        source=data["source"],
        points=tuple(
            Residual(p["id"], p["generation"], p["kernelClass"], float(p["measuredOverEstimated"]))
            for p in data["points"]
        ),
    )


def residuals_json(source: str, points: Sequence[Residual], note: str) -> dict[str, Any]:
    """The JSON ``load_residuals`` reads (the calibration suite writes it)."""
    return {
        "note": note,
        "source": source,
        "points": [
            {
                "id": p.id,
                "generation": p.generation,
                "kernelClass": p.kernel_class,
                "measuredOverEstimated": round(p.ratio, 4),
            }
            for p in sorted(points, key=lambda p: (p.generation, p.id))
        ],
    }


def kernel_class(roofline: Roofline | Mapping[str, Any] | None) -> KernelClass:
    """The kernel class of an estimate from its roofline point: ``memory`` or ``compute`` bound, ``all`` when
    the roofline cannot tell (no instructions, no FLOPs)."""
    bound = roofline["bound"] if roofline else "unknown"
    return bound if bound in ("memory", "compute") else ALL


def likely_range(
    total_ns: float, generation: str, klass: KernelClass, residuals: Residuals
) -> EstimateRange | None:
    """The likely range of an estimate of ``total_ns`` on ``generation`` for a kernel of ``klass``; None when the
    table has no point of that generation."""
    of_generation = [p for p in residuals.points if p.generation == generation]
    if not of_generation:
        return None
    of_class = [p for p in of_generation if p.kernel_class == klass]
    used, used_class = (of_class, klass) if len(of_class) >= MIN_CLASS_POINTS else (of_generation, ALL)
    ratios = [p.ratio for p in used]
    # deciles with linear interpolation between points (NumPy's default); the 1st and 9th are the 10th/90th
    deciles = statistics.quantiles(ratios, n=10, method="inclusive") if len(ratios) > 1 else ratios * 9
    low, high = deciles[0], deciles[8]
    return {
        "lowNs": round(total_ns * float(low)),
        "highNs": round(total_ns * float(high)),
        "points": len(used),
        "generation": generation,
        "kernelClass": used_class,
        "source": residuals.source,
    }


def short(total_ns: float, rng: EstimateRange | None, fmt: Callable[[float], str]) -> str:
    """ "≈ 170 µs, likely 140 µs–210 µs" (just "≈ 170 µs" without a range), where there is no room for more."""
    return f"≈ {fmt(total_ns)}" + (f", likely {fmt(rng['lowNs'])}–{fmt(rng['highNs'])}" if rng else "")


def describe(
    total_ns: float,
    rng: EstimateRange | None,
    generation: str,
    fmt: Callable[[float], str],
    calibration: CalibrationNote | None = None,
) -> str:
    """The estimate with its range in words, e.g. "≈ 170 µs, likely 140 µs–210 µs; calibrated on 5 public
    measurements (trn2, all kernel classes; ...; source)" (``fmt`` formats nanoseconds), then what the user's
    own ``calibration`` says ("calibrated on 5 of your profiles, held-out error 4%", or why it was ignored)."""
    if rng is None:
        text = f"{short(total_ns, rng, fmt)}; no calibration for {generation}: its error is unknown"
    else:
        klass = "all kernel classes" if rng["kernelClass"] == ALL else f"{rng['kernelClass']}-bound kernels"
        text = (
            f"{short(total_ns, rng, fmt)}; calibrated on {rng['points']} public measurements ({rng['generation']}, "
            f"{klass}; 10th–90th percentile of measured/estimated; {rng['source']})"
        )
    return text if calibration is None else f"{text}; {calibration['message']}"
