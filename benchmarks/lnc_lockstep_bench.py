"""Cost of running LNC=2 cores in lockstep (``nki_studio.sim.schedule``) against free-running threads, A/B in
one process, alternating, on a loop of trivial instructions (the worst case: hand-over cost dominates).

Run: .venv/bin/python benchmarks/lnc_lockstep_bench.py [--instructions N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time

import nki_studio.sim.isa as nisa
import nki_studio.sim.language as nl
import nki_studio.sim.launch as launch
from nki_studio.model.targets import Generation, Target
from nki_studio.sim.context import SimOptions


def _kernel(count: int) -> None:
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    for _ in range(count):
        nisa.memset(dst=t, value=1.0)


def _run(count: int) -> float:
    opts = SimOptions(target=Target(generation=Generation.GEN3), lnc=2)
    start = time.perf_counter()
    launch.run_kernel(_kernel, (count,), {}, opts, grid=True)
    return time.perf_counter() - start


def main() -> None:
    """Print the best time of each schedule and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instructions", type=int, default=2000, help="instructions per core")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    real = launch.Baton
    best = {"lockstep": float("inf"), "free threads": float("inf")}
    try:
        for _ in range(args.repeat):
            for label in best:
                launch.Baton = real if label == "lockstep" else (lambda n: None)  # type: ignore[assignment,misc]
                best[label] = min(best[label], _run(args.instructions))
    finally:
        launch.Baton = real  # type: ignore[misc]
    for label, seconds in best.items():
        per = seconds / (2 * args.instructions) * 1e6
        print(f"{label:13s} {seconds:.3f} s for 2 x {args.instructions} instructions ({per:.0f} us each)")
    print(f"lockstep / free threads: {best['lockstep'] / best['free threads']:.2f}x")


if __name__ == "__main__":
    main()
