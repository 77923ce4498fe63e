"""Cost of running LNC=2 cores in lockstep (``nki_studio.sim.schedule``) against free-running threads, A/B in
one process, alternating, on a loop of trivial instructions (the worst case: hand-over cost dominates).
Also prints the context switches and CPU time of each run: on a loaded machine the hand-over cost is the wait
for a CPU after each wake-up (wall far above CPU time), not work the simulator does.

Run: .venv/bin/python benchmarks/lnc_lockstep_bench.py [--instructions N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _run(count: int) -> tuple[float, int, float]:
    """Wall seconds, context switches (voluntary + involuntary) and CPU seconds of one launch."""
    opts = SimOptions(target=Target(generation=Generation.GEN3), lnc=2)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    launch.run_kernel(_kernel, (count,), {}, opts, grid=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    switches = after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, switches, cpu


def main() -> None:
    """Print the best time of each schedule and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instructions", type=int, default=2000, help="instructions per core")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    real = launch.Baton
    inf = (float("inf"), 0, 0.0)
    best = {"lockstep": inf, "free threads": inf}
    try:
        for _ in range(args.repeat):
            for label in best:
                launch.Baton = real if label == "lockstep" else (lambda n: None)  # type: ignore[assignment,misc,return-value]
                best[label] = min(best[label], _run(args.instructions))
    finally:
        launch.Baton = real  # type: ignore[misc]
    n = 2 * args.instructions
    for label, (seconds, switches, cpu) in best.items():
        print(
            f"{label:13s} {seconds:.3f} s for 2 x {args.instructions} instructions ({seconds / n * 1e6:.0f} us each), "
            f"{switches / n:.1f} context switches per instruction, CPU {cpu:.3f} s"
        )
    print(f"lockstep / free threads: {best['lockstep'][0] / best['free threads'][0]:.2f}x")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
