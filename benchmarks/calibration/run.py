"""Calibration suite: the estimate next to every public Trainium measurement we can reproduce (issue 27, item 1).

For each kernel of measurements.toml that has measured points: build its inputs at the measured shape (or the
smaller ``--quick`` one), simulate it with a trace, check its output against its NumPy reference (fetched from
the measured benchmark's repository at the pinned commit, see fetch.py), estimate the trace, and print per point
the estimated and measured value and their ratio; then, per generation, the median |log(est/meas)| and the share
of latencies within 1.5x and 2x; then, for each published before/after step, whether the estimate ranks it the
right way and its estimated against its measured speed-up. Nothing is fitted and nothing is asserted: the figures
are for the model work of issue 27 (README.md lists what they point at).

With ``--write-residuals`` it also writes the estimate's residual table (``nki_studio/estimate/
calibration_residuals.json``: per latency point measured / estimated, generation and kernel class), from which
every estimate takes its likely range (``estimate.likely_range``). Refresh it after changing the model; no CI test
checks it (the suite fetches files and runs for minutes), its ``source`` names the model commit it was made with.

Run: ``.venv/bin/python benchmarks/calibration/run.py [--quick] [--only KERNEL ...] [--mirror OWNER/NAME=GIT_DIR]
[--write-residuals]``
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from nki_studio.estimate.likely_range import RESIDUALS_PATH, Residual, kernel_class, residuals_json
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import Generation
from nki_studio.sim.api import simulate

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the suite's own modules, when run as a script

import published
import trace_cache
from cases import BUILDERS, Case
from fetch import FetchError, fetch
from table import Kernel, Pair, Point, Table, load
from trace_cache import Simulated

# quantity -> key of the estimate section (active_time reads ``engineNs[engine]``)
SECTION_KEYS = {
    "latency": "totalNs",
    "dma_busy": "dmaNs",
    "compute_busy": "computeNs",
    "overlap": "overlapNs",
    "dma_bytes": "dmaBytes",
}
SIZED_RIGHT = math.log(1.25)  # a step's estimated speed-up within 25% of the measured one (issue 27 target)


def estimate(trace: Any, generation: Generation) -> dict[str, Any]:
    """The estimate of one simulated trace: the suite's only call into the model (``estimate/`` is being
    restructured; if the entry point moves, this is the line to change)."""
    return dict(estimate_section(trace, generation))


@dataclass(frozen=True)
class KernelRun:
    """One kernel simulated and estimated."""

    kernel: Kernel
    scale: float  # measured / simulated size along the kernel's scale_dim
    correct: bool  # whether its output matched its reference (points of a wrong one are left out)
    section: dict[str, Any]

    def estimated(self, point: Point) -> float:
        """The estimate of ``point``'s quantity, scaled to the measured shape, in the point's unit."""
        if point.quantity == "active_time":
            value = float(self.section["engineNs"].get(point.engine, 0))
        else:
            value = float(self.section[SECTION_KEYS[point.quantity]])
        value *= self.scale
        return value / 1e3 if point.unit == "us" else value


def _reference_module(kernel: Kernel, table: Table, mirrors: dict[str, Path]) -> types.ModuleType:
    """The kernel's NumPy reference module, fetched at the table's commit."""
    assert kernel.reference is not None
    return published.load_module(
        f"calibration_reference_{kernel.id}", _fetched(kernel.reference, table, mirrors)
    )


def _fetched(ref: dict[str, str], table: Table, mirrors: dict[str, Path]) -> Path:
    """The local copy of a table file reference (``{source, path}``) at its source's commit."""
    source = table.sources[ref["source"]]
    assert source.repo is not None and source.commit is not None
    return fetch(source.repo, source.commit, ref["path"], mirrors)


def _check(
    kernel: Kernel, case: Case, output: np.ndarray, table: Table, mirrors: dict[str, Path]
) -> tuple[str, bool]:
    """(what the output check found, whether the output may be trusted)."""
    reference = case.reference
    if kernel.reference is not None and kernel.origin != "published":  # a published case has it already
        try:
            reference = _reference_module(kernel, table, mirrors).forward
        except FetchError as exc:
            return f"output unchecked: reference not fetched ({exc})", True
    if reference is None:
        return "output checked by the example's own simulate spec", True
    expected = np.asarray(reference(*case.reference_args), dtype=np.float32)
    got = output.astype(np.float32).reshape(expected.shape)
    error = float(np.max(np.abs(got - expected)) / max(float(np.max(np.abs(expected))), 1e-30))
    ok = error <= case.tolerance
    return (
        f"output {'matches' if ok else 'DOES NOT MATCH'} its NumPy reference (max rel. error {error:.1e})",
        ok,
    )


def simulate_kernel(
    kernel: Kernel, generation: str, quick: bool, table: Table, mirrors: dict[str, Path]
) -> Simulated:
    """Simulate one kernel with a trace and check its output."""
    shape = kernel.quick if quick else kernel.shape
    if kernel.origin == "published" and kernel.reference is not None:  # AccelOpt's benchmark protocol
        path = published.runnable(kernel.id, _fetched(kernel.original, table, mirrors))
        case = published.case(_reference_module(kernel, table, mirrors))
    else:  # our own file, or a published file run with its own imports: inputs from cases.py
        path = kernel.path or _fetched(kernel.original, table, mirrors)
        case = BUILDERS[kernel.inputs](shape, np.random.default_rng(7))
    t0 = time.perf_counter()
    # capacity="warn": a legacy block tensor ([B, par_dim(128), F] in SBUF) is accounted as a whole, so the
    # compiler-generated NKIBench kernels would stop at the operand check (README.md, "Kernels and their fidelity")
    result = simulate(
        str(path),
        *case.kernel_args,
        kernel_name=kernel.name,
        target=Generation(generation),
        trace=True,
        capacity="warn",
    )
    seconds = time.perf_counter() - t0
    assert result.trace is not None
    check, correct = _check(kernel, case, result.outputs[0], table, mirrors)
    # the program-order peak over capacity is where the compiler spills (README.md, cause 6)
    capacity = next(
        (str(w).split(": ", 1)[1] for w in result.report.warnings if "capacity exceeded" in str(w)), ""
    )
    return Simulated(
        shape,
        kernel.shape[kernel.scale_dim] / shape[kernel.scale_dim],
        seconds,
        result.report.nki_version,
        check,
        correct,
        capacity.split(" when ")[0],
        list(result.trace),
    )


def simulated_kernel(
    kernel: Kernel,
    generation: str,
    quick: bool,
    table: Table,
    mirrors: dict[str, Path],
    cache: Path | None = None,
) -> Simulated:
    """The kernel's simulation: from ``cache`` (a ``trace_cache`` directory) when it holds it, else simulated (and
    kept there when ``cache`` is given)."""
    shape = kernel.quick if quick else kernel.shape
    if cache is not None and (kept := trace_cache.load(cache, kernel.id, shape)) is not None:
        return kept
    simulated = simulate_kernel(kernel, generation, quick, table, mirrors)
    if cache is not None:
        trace_cache.save(cache, kernel.id, simulated)
    return simulated


def _by_opcode(run: KernelRun) -> str:
    """The estimate's busy time per opcode (summed over source lines): count, mean per instruction, total."""
    totals: dict[str, list[float]] = {}
    for line in run.section["lines"]:
        for top in line["topOpcodes"]:
            count_sum = totals.setdefault(top["opcode"], [0, 0.0])
            count_sum[0] += top["count"]
            count_sum[1] += top["sumNs"]
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][1])
    return "; ".join(
        f"{op} {int(n):,} x {t / n:,.0f} ns = {t * run.scale / 1e3:,.0f} us" for op, (n, t) in ranked
    )


def _shape(shape: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


def summary(ratios: Sequence[float]) -> str:
    """Median |log(est/meas)| (and as a factor) and the shares within 1.5x and 2x."""
    logs = [abs(math.log(r)) for r in ratios]
    median = statistics.median(logs)
    within = [sum(v <= math.log(f) for v in logs) / len(logs) for f in (1.5, 2.0)]
    return (
        f"n={len(logs):2}  median |log(est/meas)| {median:.3f} (x{math.exp(median):.2f})  "
        f"within 1.5x {within[0]:4.0%}  within 2x {within[1]:4.0%}"
    )


def _print_points(points: list[Point], runs: dict[str, KernelRun]) -> dict[str, float]:
    """Print each estimated point; return est/meas per point id (points of kernels whose output was wrong are
    printed but left out)."""
    ratios: dict[str, float] = {}
    print(f"\n  {'point':50} {'quantity':20} {'measured':>14} {'estimated':>14} {'est/meas':>8}")
    for p in points:
        run = runs.get(p.kernel or "")
        if run is None:
            continue
        est = run.estimated(p)
        what = p.quantity + (f" {p.engine}" if p.engine else "")
        ratio = est / p.value if p.value and est else float("nan")
        flag = "" if run.correct else "  (kernel output wrong: left out)"
        print(f"  {p.id:50} {what:20} {p.value:14,.1f} {est:14,.1f} {ratio:8.2f}{flag}")
        if run.correct and est > 0:
            ratios[p.id] = ratio
    return ratios


def _print_accuracy(table: Table, ratios: dict[str, float]) -> None:
    by_id = {p.id: p for p in table.points}
    times = {i: r for i, r in ratios.items() if by_id[i].unit == "us"}
    for label, quantity in (("latency", {"latency"}), ("all times (latency, engine and union busy)", None)):
        print(f"\n  {label}:")
        for gen in (None, "trn1", "trn2"):
            sel = [
                r
                for i, r in times.items()
                if (quantity is None or by_id[i].quantity in quantity) and gen in (None, by_id[i].generation)
            ]
            if sel:
                print(f"    {gen or 'both':5} {summary(sel)}")


def _print_pairs(pairs: list[Pair], table: Table, runs: dict[str, KernelRun]) -> None:
    print(f"\n  {'before/after step':40} {'measured':>9} {'estimated':>9}  ranked  sized (±25%)")
    for pair in pairs:
        before, after = table.point(pair.before), table.point(pair.after)
        rb, ra = runs.get(before.kernel or ""), runs.get(after.kernel or "")
        measured = before.value / after.value
        if rb is None or ra is None:
            ends = " and ".join(end for end, r in (("before", rb), ("after", ra)) if r is None)
            print(f"  {pair.id:40} {measured:8.2f}x {'':>9}  not reproducible: no kernel run for {ends}")
            continue
        if not (rb.correct and ra.correct):
            print(f"  {pair.id:40} {measured:8.2f}x {'':>9}  left out: a kernel's output is wrong")
            continue
        estimated = rb.estimated(before) / ra.estimated(after)
        ranked = (estimated > 1) == (measured > 1)
        sized = abs(math.log(estimated / measured)) <= SIZED_RIGHT
        print(
            f"  {pair.id:40} {measured:8.2f}x {estimated:8.2f}x  {'yes' if ranked else 'NO':6}  {'yes' if sized else 'no'}"
        )


def _write_residuals(table: Table, runs: dict[str, KernelRun], ratios: dict[str, float]) -> None:
    """Write the latency residuals (measured / estimated) with each kernel's class to ``RESIDUALS_PATH``."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
    ).stdout.strip()
    points = [
        Residual(p.id, p.generation, kernel_class(runs[p.kernel].section["roofline"]), 1 / ratios[p.id])
        for p in table.points
        if p.quantity == "latency" and p.id in ratios and p.kernel
    ]
    source = (
        f"calibration suite (benchmarks/calibration), public measurements, model at {commit or 'unknown'}"
    )
    note = "generated by benchmarks/calibration/run.py --write-residuals; refresh after changing the model"
    RESIDUALS_PATH.write_text(
        json.dumps(residuals_json(source, points, note), indent=1) + "\n", encoding="utf-8"
    )
    print(f"\n  wrote {len(points)} latency residuals to {RESIDUALS_PATH}")


def parse_mirrors(specs: Sequence[str]) -> dict[str, Path]:
    """``--mirror OWNER/NAME=GIT_DIR`` values as repository -> git directory."""
    out: dict[str, Path] = {}
    for spec in specs:
        repo, _, git_dir = spec.partition("=")
        if not git_dir:
            raise SystemExit(f"--mirror wants OWNER/NAME=GIT_DIR, got {spec!r}")
        out[repo] = Path(git_dir)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="run each kernel at its smaller `quick` shape")
    parser.add_argument("--only", nargs="+", metavar="KERNEL", help="run only these kernels of the table")
    parser.add_argument("--mirror", action="append", default=[], metavar="OWNER/NAME=GIT_DIR")
    parser.add_argument(
        "--trace-cache",
        type=Path,
        metavar="DIR",
        help="keep each kernel's trace in DIR and re-estimate a kept one instead of simulating it again "
        "(clear DIR after changing the simulator; trace_cache.py)",
    )
    parser.add_argument(
        "--by-opcode", action="store_true", help="also print each kernel's estimate per opcode"
    )
    parser.add_argument(
        "--write-residuals",
        action="store_true",
        help="write the estimate's residual table (every kernel at its measured shape: not with --quick/--only)",
    )
    args = parser.parse_args(argv)
    if args.write_residuals and (args.quick or args.only):
        parser.error("--write-residuals needs every kernel at its measured shape: drop --quick and --only")
    table = load()
    mirrors = parse_mirrors(args.mirror)
    with_kernel = [p for p in table.points if p.kernel]
    print(
        f"calibration suite: {len(table.points)} measured points ({len(with_kernel)} with a kernel here), "
        f"{len(table.pairs)} before/after steps, {len(table.constants)} documented constants; no constant fitted"
    )
    if args.quick:
        print(
            "--quick: kernels run at smaller shapes; estimates scaled by measured/simulated size (README.md)"
        )
    runs: dict[str, KernelRun] = {}
    for kid, kernel in table.kernels.items():
        points = [p for p in with_kernel if p.kernel == kid]
        if not points or (args.only and kid not in args.only):
            continue
        try:
            sim = simulated_kernel(kernel, points[0].generation, args.quick, table, mirrors, args.trace_cache)
        except Exception as exc:  # a kernel the simulator cannot run: say why, go on with the others
            why = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"
            print(f"  {kid:24} {points[0].generation}  {kernel.origin:17} CANNOT RUN: {why}")
            continue

        runs[kid] = KernelRun(
            kernel, sim.scale, sim.correct, estimate(sim.trace, Generation(points[0].generation))
        )
        scaled = f", estimates x{sim.scale:g}" if sim.scale != 1 else ""
        print(
            f"  {kid:24} {points[0].generation}  {_shape(sim.shape):28} {kernel.origin:17} NKI {sim.nki_version:6} "
            f"{len(sim.trace):7,} instructions, simulated in {sim.seconds:5.1f} s{scaled}; {sim.check}"
        )
        if sim.capacity:
            print(f"    simulator: {sim.capacity}")
        if args.by_opcode:
            print(f"    estimated per opcode: {_by_opcode(runs[kid])}")
    unreproduced = sorted(
        {p.workload for p in table.points if p.kernel is None and "best plan" not in p.workload}
    )
    print(f"  no kernel here: {', '.join(unreproduced) or 'none'}")
    ratios = _print_points(table.points, runs)
    _print_accuracy(table, ratios)
    _print_pairs(table.pairs, table, runs)
    if args.write_residuals:
        _write_residuals(table, runs, ratios)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
