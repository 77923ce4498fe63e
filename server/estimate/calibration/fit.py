"""The fit: per key (an engine's opcode and dtype, or a DMA descriptor-row bucket) a fixed cost and a cost
per element (per byte per DMA engine), by non-negative least squares over the matched samples; per engine the
ratio measured / built-in for that engine's instructions no key covers.

Each key has two unknowns, so non-negative least squares is solved exactly by its active sets: the unconstrained
``numpy.linalg.lstsq`` solution when both are >= 0, else the better of the two one-unknown fits (scipy's
``nnls`` would do the same; scipy is not a dependency). Samples all of one size cannot separate the two: an
instruction key then scales the built-in cost to its samples (keeping the model's shape in the size); a DMA
bucket takes the median per-byte cost of the separable buckets (0 without one) and the fixed cost that matches
its samples.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from nki_studio.estimate.calibration.matching import Sample
from nki_studio.estimate.calibration.overlay import DMA_ROW_EDGES
from nki_studio.protocol.calibration import CalibrationTable, ComputeCost, DmaCost, HeldOutError

F64 = npt.NDArray[np.float64]


def nnls2(a: F64, b: F64) -> tuple[float, float]:
    """argmin ||a @ (u, v) - b|| over u, v >= 0 for a two-column ``a`` (see the module docstring)."""
    sol = np.linalg.lstsq(a, b, rcond=None)[0]
    if sol[0] >= 0 and sol[1] >= 0:
        return float(sol[0]), float(sol[1])
    fits = []
    for col in (0, 1):
        x = a[:, col]
        denom = float(x @ x)
        value = max(float(x @ b) / denom, 0.0) if denom > 0 else 0.0
        fits.append((float(np.sum((x * value - b) ** 2)), col, value))
    _, col, value = min(fits)
    return (value, 0.0) if col == 0 else (0.0, value)


def separable(samples: list[Sample]) -> bool:
    """Whether the samples' sizes per instruction differ (else fixed and per-size cost are one figure)."""
    return len({round(s.x / s.count, 6) for s in samples}) > 1


def _linear(rows: list[Sample]) -> tuple[float, float]:
    a = np.array([[s.count, s.x] for s in rows], np.float64)
    return nnls2(a, np.array([s.target for s in rows], np.float64))


def fit(samples: Iterable[Sample], target: str) -> CalibrationTable:
    """The calibration table of ``target`` fitted on ``samples`` (provenance and held-out error left empty)."""
    every = list(samples)
    by_key: dict[tuple[object, ...], list[Sample]] = defaultdict(list)
    for s in every:
        by_key[tuple(s.key)].append(s)
    compute: list[ComputeCost] = []
    dma_rows = {key: rows for key, rows in by_key.items() if key[0] == "dma"}
    for key, rows in sorted(by_key.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
        if key[0] == "dma":
            continue
        engine, opcode, dtype = (str(k) for k in key)
        fixed, per, scale = 0.0, 0.0, 0.0
        if separable(rows):
            fixed, per = _linear(rows)
        else:
            builtin = sum(s.builtin for s in rows)
            scale = max(sum(s.target for s in rows), 0.0) / builtin if builtin > 0 else 0.0
            if builtin <= 0:  # the model prices it at nothing: its measured time as a fixed cost
                fixed = max(sum(s.target for s in rows), 0.0) / sum(s.count for s in rows)
        compute.append(
            {
                "engine": engine,
                "opcode": opcode,
                "dtype": dtype,
                "fixed_ns": fixed,
                "per_element_ns": per,
                "builtin_scale": scale,
                "samples": sum(s.count for s in rows),
            }
        )
    return {
        "target": target,
        "compute": compute,
        "engine_scale": engine_scale(every),
        "dma": _dma(dma_rows),
        "held_out": {"kernels": 0, "before": None, "after": None},
        "profiles": [],
    }


def _dma(by_bucket: dict[tuple[object, ...], list[Sample]]) -> list[DmaCost]:
    """The DMA costs per descriptor-row bucket (see the module docstring)."""
    solved = {int(str(key[1])): _linear(rows) for key, rows in by_bucket.items() if separable(rows)}
    per = statistics.median(v[1] for v in solved.values()) if solved else 0.0
    out: list[DmaCost] = []
    for key, rows in by_bucket.items():
        bucket = int(str(key[1]))
        if bucket not in solved:
            fixed = (sum(s.target for s in rows) - per * sum(s.x for s in rows)) / sum(s.count for s in rows)
            solved[bucket] = (max(fixed, 0.0), per)
        fixed, slope = solved[bucket]
        out.append(
            {
                "row_min": DMA_ROW_EDGES[bucket],
                "row_max": DMA_ROW_EDGES[bucket + 1] if bucket + 1 < len(DMA_ROW_EDGES) else None,
                "fixed_ns": fixed,
                "ns_per_byte": slope,
                "samples": sum(s.count for s in rows),
            }
        )
    return sorted(out, key=lambda d: d["row_min"])


def engine_scale(samples: Iterable[Sample]) -> dict[str, float]:
    """Per compute engine: measured / built-in base time over its samples (ratio of sums)."""
    measured: dict[str, float] = defaultdict(float)
    builtin: dict[str, float] = defaultdict(float)
    for s in samples:
        if s.engine != "dma":
            measured[s.engine] += s.target
            builtin[s.engine] += s.builtin
    return {e: max(measured[e], 0.0) / builtin[e] for e in sorted(measured) if builtin[e] > 0}


def held_out(errors_before: list[float], errors_after: list[float]) -> HeldOutError:
    """The held-out figures from each held-out kernel's |estimated / measured - 1| before and after."""
    if not errors_after:
        return {"kernels": 0, "before": None, "after": None}
    return {
        "kernels": len(errors_after),
        "before": statistics.fmean(errors_before),
        "after": statistics.fmean(errors_after),
    }
