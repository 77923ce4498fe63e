"""Leave-one-out fit of the DMA descriptor efficiency curve over the suite's DMA-bound points (issue 27, item 2).

The estimate moves a descriptor row of R bytes at R / (R + C) of a DMA engine's rate, C =
``DMA_DESCRIPTOR_OVERHEAD`` (``nki_studio.estimate.constants``, 512 bytes, shaped after the DMA bandwidth guide).
The issue allows fitting a constant "only with leave-one-out over the suite, and report the held-out error". This
script does that for C:

1. Each kernel of the table is simulated once (``run.simulated_kernel``; traces kept with ``--trace-cache``, see
   trace_cache.py) and estimated once per candidate C.
2. The fitting points are the DMA-bound ones: every ``dma_busy`` point, and every latency point whose kernel is
   DMA-bound in the estimate (roofline "memory" at the documented C) or on the hardware (measured HBM bytes over
   measured latency at least ``MEASURED_DMA_BOUND`` of the generation's DMA peak).
3. For each fitting point, C is fitted on the points of the *other kernels* (a kernel's latency and DMA-time
   points share its transfers, so holding out only the point would leak) by the median |log(est/meas)| over a
   grid, restricted to the C the documented curve allows (``admissible``); the held-out point is estimated with
   it. Printed: the held-out median and shares within 1.5x / 2x against the documented C, the per-fold
   constants (their spread says whether one constant is real), the fit with every point, without rope and
   unconstrained, the whole suite's latency and time figures held out, and every before/after step with the
   fitted C.

Nothing is written: adopting the fitted C is a model change, made by hand with this script's output cited.

``--constant execution`` fits instead a per-execution fixed cost F (µs) in each kernel's latency (the
measured latency's idle time at kernel start and end that no instruction of the estimate covers; no Neuron page
gives a figure: README, "The trn2 points"). F adds to the estimate, so each kernel is estimated once (the model
as it is) and its latency taken with F on a grid of ``FIXED_COST_GRID_US`` in place of the model's
``EXECUTION_OVERHEAD``; the fitting points are every latency point, each held out
with its kernel as above, F fitted by the mean squared log(est/meas) (``fit_fixed_cost``), once over both
generations and once per generation (a trn1 point's F fitted on trn1 points only). Printed: every fold's F, the
held-out figures of both fits per generation, the fit with every point, and every before/after step without F
and with it. Estimates are not kept in the cache for this choice (one per kernel).

Run: ``.venv/bin/python benchmarks/calibration/loo_fit.py --trace-cache .cache/calibration/traces
[--mirror OWNER/NAME=GIT_DIR] [--constant {descriptor,execution}]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from nki_studio.estimate import constants as K
from nki_studio.model.targets import Generation, limits_for

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the suite's own modules, when run as a script

from run import SECTION_KEYS, KernelRun, estimate, parse_mirrors, simulated_kernel, summary
from table import Kernel, Point, Table, load

DOCUMENTED = K.DMA_DESCRIPTOR_OVERHEAD.value
# finer where the documented curve allows the overhead (``admissible``: 256..682 B), coarse outside it
CANDIDATES = (0.0, 256.0, 384.0, 512.0, 640.0, 768.0, 1024.0, 2048.0)
# A kernel whose measured HBM traffic runs at this share of the generation's DMA peak is DMA-bound on the
# hardware (inferred threshold: the measured profiles give bytes and latency, not a bound).
MEASURED_DMA_BOUND = 0.5
# The documented curve ([BW], DMA bandwidth guide, hardware.md §3) in numbers. The guide's words are "< 256 B per
# partition severely overhead-bound", ">= 2 KiB approaches peak", ">= 4 KiB saturates"; the efficiencies they are
# read as here are inferred: at most half the rate at 256 B, at least 75% at 2 KiB and 85% at 4 KiB.
DOCUMENTED_CURVE = ((256, "<=", 0.5), (2048, ">=", 0.75), (4096, ">=", 0.85))
ROPE_KERNELS = ("rope", "rope_optimized")
# per-execution fixed cost candidates, µs: 0-30 in 1 µs steps (the idle times read off the measured profiles are
# 10-15 µs: README, "The trn2 points")
FIXED_COST_GRID_US = tuple(float(f) for f in range(31))
MODEL_FIXED_COST_US = K.EXECUTION_OVERHEAD.value / 1e3  # what the estimate's latencies already hold
GENERATIONS = ("trn1", "trn2")


def efficiency(row_bytes: float, overhead: float) -> float:
    """The estimate's descriptor efficiency of a row of ``row_bytes`` at overhead ``overhead``."""
    return row_bytes / (row_bytes + overhead)


def admissible(overhead: float) -> bool:
    """Whether the curve at ``overhead`` keeps the documented statements (``DOCUMENTED_CURVE``)."""
    return all(
        (efficiency(r, overhead) <= e) if op == "<=" else (efficiency(r, overhead) >= e)
        for r, op, e in DOCUMENTED_CURVE
    )


@contextmanager
def descriptor_overhead(value: float) -> Iterator[None]:
    """Estimate with ``DMA_DESCRIPTOR_OVERHEAD`` = ``value`` (the scheduler reads the constant per transfer)."""
    saved = K.DMA_DESCRIPTOR_OVERHEAD
    K.DMA_DESCRIPTOR_OVERHEAD = dataclasses.replace(saved, value=value)
    try:
        yield
    finally:
        K.DMA_DESCRIPTOR_OVERHEAD = saved


class Ratios(Protocol):
    """est/meas of a point with a constant at a candidate value."""

    def ratio(self, point: Point, value: float) -> float:
        """est/meas of ``point`` with the constant at ``value``."""
        ...


@dataclasses.dataclass(frozen=True)
class Estimates:
    """Every kernel's estimate per candidate overhead: ``runs[c][kernel id]``."""

    runs: dict[float, dict[str, KernelRun]]

    def ratio(self, point: Point, overhead: float) -> float:
        """est/meas of ``point`` at ``overhead``."""
        assert point.kernel is not None
        return self.runs[overhead][point.kernel].estimated(point) / point.value


@dataclasses.dataclass(frozen=True)
class FixedCost:
    """est/meas with a per-execution fixed cost of F µs in each kernel's latency instead of the model's
    (``EXECUTION_OVERHEAD``, which the estimate adds once to the kernel time; every other quantity unchanged)."""

    base: dict[str, KernelRun]

    def ratio(self, point: Point, value: float) -> float:
        """est/meas of ``point`` with F = ``value`` µs."""
        assert point.kernel is not None and point.unit == "us"
        added = value - MODEL_FIXED_COST_US if point.quantity == "latency" else 0.0
        return (self.base[point.kernel].estimated(point) + added) / point.value


def estimate_all(
    table: Table,
    mirrors: dict[str, Path],
    cache: Path | None,
    only: Sequence[str] = (),
    overheads: Sequence[float] = (*CANDIDATES, DOCUMENTED),
    keep: bool = True,
) -> Estimates:
    """Simulate each kernel with measured points (of ``only``, in its order, when given) once and estimate it at
    every overhead of ``overheads`` (kept in ``cache`` beside its trace when ``keep``)."""
    runs: dict[float, dict[str, KernelRun]] = {c: {} for c in overheads}
    for kid in only or table.kernels:
        kernel = table.kernels[kid]
        points = [p for p in table.points if p.kernel == kid]
        if not points:
            continue
        kept = _estimates(kernel, points[0].generation, list(runs), table, mirrors, cache, keep)
        for overhead, (scale, correct, section) in kept.items():
            runs[overhead][kid] = KernelRun(kernel, scale, correct, section)
        print(f"  {kid:24} estimated at {len(runs)} overheads", flush=True)
    return Estimates(runs)


def _estimates(
    kernel: Kernel,
    generation: str,
    overheads: list[float],
    table: Table,
    mirrors: dict[str, Path],
    cache: Path | None,
    keep: bool,
) -> dict[float, tuple[float, bool, dict[str, Any]]]:
    """overhead -> (scale, output correct, the estimate's figures) of one kernel; kept beside its trace in
    ``cache`` (``<kernel>.estimates.json``, for these overheads), so several runs can share the work and the
    report can be printed again without estimating. Unlike the traces, these are only valid for the model that
    made them: delete them after changing the estimate."""
    kept_path = cache / f"{kernel.id}.estimates.json" if cache is not None and keep else None
    if kept_path is not None and kept_path.is_file():
        kept = json.loads(kept_path.read_text(encoding="utf-8"))
        if kept["overheads"] == overheads:
            return {
                c: (kept["scale"], kept["correct"], section)
                for c, section in zip(overheads, kept["sections"], strict=True)
            }
    sim = simulated_kernel(kernel, generation, False, table, mirrors, cache)
    sections = []
    for overhead in overheads:
        with descriptor_overhead(overhead):
            section = estimate(sim.trace, Generation(generation))
        sections.append({k: section[k] for k in (*SECTION_KEYS.values(), "engineNs", "roofline")})
    if kept_path is not None:
        fields = {"overheads": overheads, "scale": sim.scale, "correct": sim.correct, "sections": sections}
        kept_path.write_text(json.dumps(fields), encoding="utf-8")
    return {c: (sim.scale, sim.correct, section) for c, section in zip(overheads, sections, strict=True)}


def usable(table: Table, est: Estimates) -> list[Point]:
    """Time points of kernels that ran correctly with a nonzero estimate."""
    base = est.runs[DOCUMENTED]
    return [
        p
        for p in table.points
        if p.kernel in base and p.unit == "us" and base[p.kernel].correct and base[p.kernel].estimated(p) > 0
    ]


def dma_bound(table: Table, est: Estimates, points: list[Point]) -> list[Point]:
    """The fitting points (module docstring, step 2)."""
    base = est.runs[DOCUMENTED]
    out: list[Point] = []
    for p in points:
        if p.quantity == "dma_busy":
            out.append(p)
            continue
        if p.quantity != "latency":
            continue
        assert p.kernel is not None
        roofline = base[p.kernel].section["roofline"] or {}
        hbm = next((q.value for q in table.points if q.kernel == p.kernel and q.quantity == "dma_bytes"), 0.0)
        peak = limits_for(Generation(p.generation)).dma_bytes_per_ns  # bytes per ns
        measured_rate = hbm / (p.value * 1e3)
        if roofline.get("bound") == "memory" or measured_rate >= MEASURED_DMA_BOUND * peak:
            out.append(p)
    return out


def median_log(est: Ratios, points: Sequence[Point], value: float) -> float:
    """Median |log(est/meas)| of ``points`` with the constant at ``value``."""
    return statistics.median(abs(math.log(est.ratio(p, value))) for p in points)


def mean_square_log(est: Ratios, points: Sequence[Point], value: float) -> float:
    """Mean log(est/meas)^2 of ``points`` with the constant at ``value``."""
    return statistics.fmean(math.log(est.ratio(p, value)) ** 2 for p in points)


Loss = Callable[[Ratios, Sequence[Point], float], float]


def best(
    est: Ratios, points: Sequence[Point], grid: Sequence[float], near: float, loss: Loss = median_log
) -> float:
    """The value of ``grid`` with the least ``loss`` over ``points`` (ties: nearest ``near``)."""
    return min(grid, key=lambda c: (round(loss(est, points, c), 6), abs(c - near)))


def fit(est: Estimates, points: Sequence[Point], only_admissible: bool = True) -> float:
    """The candidate overhead with the least median |log(est/meas)| over ``points`` (ties: nearest the
    documented one)."""
    return best(est, points, [c for c in CANDIDATES if admissible(c) or not only_admissible], DOCUMENTED)


def fit_fixed_cost(est: FixedCost, points: Sequence[Point]) -> float:
    """The per-execution fixed cost (µs) of ``FIXED_COST_GRID_US`` with the least mean squared log(est/meas)
    over ``points`` (ties: the least). Not the median: F moves every latency, and the median |log| of points
    mostly far longer than F is flat over a wide range of F, so its minimum is a plateau's edge."""
    return best(est, points, FIXED_COST_GRID_US, 0.0, mean_square_log)


def _held_out(
    est: Any, fitting: list[Point], point: Point, fitter: Callable[[Any, list[Point]], float] = fit
) -> float:
    """The constant fitted by ``fitter`` without ``point``'s kernel."""
    return fitter(est, [q for q in fitting if q.kernel != point.kernel])


def report(table: Table, est: Estimates) -> None:
    """Print the fit (module docstring, step 3)."""
    points = usable(table, est)
    fitting = dma_bound(table, est, points)
    print(
        f"\n  documented curve as read here: {DOCUMENTED_CURVE}; admissible overheads on the grid: ", end=""
    )
    ok = [c for c in CANDIDATES if admissible(c)]
    print(f"{ok[0]:.0f}..{ok[-1]:.0f} B (documented {DOCUMENTED:.0f} B)")
    print(f"\n  est/meas of the {len(fitting)} DMA-bound points per overhead C (B):")
    print(f"  {'point':50} " + " ".join(f"{c:5.0f}" for c in CANDIDATES))
    for p in fitting:
        print(f"  {p.id:50} " + " ".join(f"{est.ratio(p, c):5.2f}" for c in CANDIDATES))
    print("\n  leave-one-kernel-out folds:")
    print(f"  {'held-out point':50} {'C fitted':>8} {'est/meas at 512':>16} {'held out':>9}")
    held: dict[str, float] = {}
    for p in fitting:
        c = _held_out(est, fitting, p)
        held[p.id] = est.ratio(p, c)
        print(f"  {p.id:50} {c:8.0f} {est.ratio(p, DOCUMENTED):16.2f} {held[p.id]:9.2f}")
    folds = [_held_out(est, fitting, p) for p in fitting]
    print(
        f"  per-fold C: min {min(folds):.0f}, median {statistics.median(folds):.0f}, max {max(folds):.0f} B"
    )
    print(
        f"\n  {'DMA-bound points at the documented C:':56} {summary([est.ratio(p, DOCUMENTED) for p in fitting])}"
    )
    print(f"  {'DMA-bound points held out:':56} {summary(list(held.values()))}")
    every = fit(est, fitting)
    free = fit(est, fitting, only_admissible=False)
    no_rope = fit(est, [p for p in fitting if p.kernel not in ROPE_KERNELS])
    print(
        f"\n  C fitted on every DMA-bound point: {every:.0f} B (median {median_log(est, fitting, every):.3f}); "
        f"without rope: {no_rope:.0f} B; unconstrained by the documented curve: {free:.0f} B "
        f"(median {median_log(est, fitting, free):.3f})"
    )
    fitted_ids = {p.id for p in fitting}
    for label, chosen in (("latency", [p for p in points if p.quantity == "latency"]), ("all times", points)):
        # a point outside the fitting set is held out of every fold already: the fit on every point applies to it
        held_out = [held[p.id] if p.id in fitted_ids else est.ratio(p, every) for p in chosen]
        print()
        for what, ratios in (
            (f"at the documented C = {DOCUMENTED:.0f} B", [est.ratio(p, DOCUMENTED) for p in chosen]),
            ("held out", held_out),
            (f"at C = {every:.0f} B (fitted on every point)", [est.ratio(p, every) for p in chosen]),
        ):
            print(f"  {f'suite {label} {what}:':56} {summary(ratios)}")
    latency = [p for p in points if p.quantity == "latency"]
    print(f"\n  {'before/after step':40} {'measured':>9} {'at 512':>8} {f'at {every:.0f}':>8}")
    for line in _steps(table, est, latency, (DOCUMENTED, every)):
        print(line)


def _steps(table: Table, est: Ratios, latency: list[Point], values: Sequence[float]) -> Iterator[str]:
    """One line per before/after step of two ``latency`` points: measured, and estimated at each of ``values``."""
    for pair in table.pairs:
        before, after = table.point(pair.before), table.point(pair.after)
        if before in latency and after in latency:
            steps = [
                est.ratio(before, c) * before.value / (est.ratio(after, c) * after.value) for c in values
            ]
            yield f"  {pair.id:40} {before.value / after.value:8.2f}x " + " ".join(
                f"{s:7.2f}x" for s in steps
            )


def report_fixed_cost(table: Table, est: FixedCost) -> None:
    """Print the per-execution fixed cost fit (module docstring, ``--constant execution``)."""
    latency = [p for p in usable(table, Estimates({DOCUMENTED: est.base})) if p.quantity == "latency"]
    gens = [g for g in GENERATIONS if any(p.generation == g for p in latency)]
    by_gen = {g: [p for p in latency if p.generation == g] for g in gens}
    one = {p.id: _held_out(est, latency, p, fit_fixed_cost) for p in latency}
    per_gen = {p.id: _held_out(est, by_gen[p.generation], p, fit_fixed_cost) for p in latency}
    print(f"\n  leave-one-kernel-out folds over the {len(latency)} latency points (F in µs):")
    print(
        f"  {'held-out point':50} {'gen':4} {'est/meas F=0':>12} "
        f"{'F one':>6} {'held out':>9} {'F gen':>6} {'held out':>9}"
    )
    for p in latency:
        print(
            f"  {p.id:50} {p.generation:4} {est.ratio(p, 0.0):12.2f} {one[p.id]:6.0f} "
            f"{est.ratio(p, one[p.id]):9.2f} {per_gen[p.id]:6.0f} {est.ratio(p, per_gen[p.id]):9.2f}"
        )
    for label, folds in (("one constant", one), ("per generation", per_gen)):
        for gen in (None, *gens):
            values = [f for i, f in folds.items() if gen in (None, table.point(i).generation)]
            print(
                f"  per-fold F, {label:14} {gen or 'both':5}: min {min(values):.0f}, "
                f"median {statistics.median(values):.0f}, max {max(values):.0f} µs"
            )
    every = fit_fixed_cost(est, latency)
    gen_every = {g: fit_fixed_cost(est, by_gen[g]) for g in gens}
    print(
        f"\n  F fitted on every latency point: {every:.0f} µs; per generation: "
        + ", ".join(f"{g} {f:.0f} µs" for g, f in gen_every.items())
    )
    for gen in (None, *gens):
        chosen = [p for p in latency if gen in (None, p.generation)]
        name = gen or "both"
        print()
        for what, ratios in (
            ("without F (the model)", [est.ratio(p, 0.0) for p in chosen]),
            ("held out, one constant", [est.ratio(p, one[p.id]) for p in chosen]),
            ("held out, per generation", [est.ratio(p, per_gen[p.id]) for p in chosen]),
            (f"F = {every:.0f} µs (fitted on every point)", [est.ratio(p, every) for p in chosen]),
        ):
            print(f"  {f'latency {name} {what}:':56} {summary(ratios)}")
    print(f"\n  {'before/after step':40} {'measured':>9} {'F = 0':>8} {f'F = {every:.0f}':>8}")
    for line in _steps(table, est, latency, (0.0, every)):
        print(line)


def main(argv: Sequence[str] | None = None) -> int:
    """Estimate every kernel at every candidate overhead and print the leave-one-out fit."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], metavar="OWNER/NAME=GIT_DIR")
    parser.add_argument(
        "--only",
        nargs="+",
        default=(),
        metavar="KERNEL",
        help="fit on these kernels only, estimated in this order",
    )
    parser.add_argument("--trace-cache", type=Path, metavar="DIR", help="trace_cache.py directory")
    parser.add_argument(
        "--constant",
        choices=("descriptor", "execution"),
        default="descriptor",
        help="fit DMA_DESCRIPTOR_OVERHEAD (default) or a per-execution fixed cost (module docstring)",
    )
    args = parser.parse_args(argv)
    table = load()
    mirrors = parse_mirrors(args.mirror)
    if args.constant == "execution":
        base = estimate_all(table, mirrors, args.trace_cache, args.only, (DOCUMENTED,), keep=False)
        report_fixed_cost(table, FixedCost(base.runs[DOCUMENTED]))
        return 0
    report(table, estimate_all(table, mirrors, args.trace_cache, args.only))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
