"""Cost of running the two cores of an LNC=2 launch in lockstep, A/B in one process, alternating, on a loop of
trivial instructions (the worst case: the hand-over cost dominates). Three schedules of the same 2 x N
instructions:

- ``one core``: LNC=1 running all 2 x N instructions, no hand-over at all (the floor);
- ``greenlets``: ``launch.run_kernel`` at LNC=2, the simulator's lockstep (``nki_studio.sim.schedule``: both
  cores on the calling thread, a greenlet switch per instruction);
- ``threads``: the lockstep the simulator used before, kept here only as the baseline: one OS thread per core,
  the holder opening the next core's lock at every instruction (``_ThreadBaton``).

Also prints the context switches and CPU time of each run: on a loaded machine the threads' hand-over cost is
the wait for a CPU after each wake-up (wall far above CPU time), not work the simulator does.

Run: .venv/bin/python benchmarks/lnc_lockstep_bench.py [--instructions N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time
from collections.abc import Callable

import nki_studio.sim.isa as nisa
import nki_studio.sim.language as nl
from nki_studio.model.targets import Generation, Target
from nki_studio.sim import context, launch
from nki_studio.sim.context import SimContext, SimOptions


def _kernel(count: int) -> None:
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    for _ in range(count):
        nisa.memset(dst=t, value=1.0)


class _ThreadBaton:
    """The thread-per-core hand-over of ``sim.schedule`` before greenlets (its step/finish path; no rendezvous):
    each core waits on its own lock, the holder opens the next core's lock at every instruction."""

    def __init__(self, instances: int) -> None:
        self.n = instances
        self.mutex = threading.Lock()
        self.gates = [threading.Lock() for _ in range(instances)]
        for gate in self.gates[1:]:
            gate.acquire()
        self.holder: int | None = 0
        self.finished: set[int] = set()

    def _hand_on(self, after: int, running: bool) -> int | None:
        self.holder = None
        for k in range(1, self.n + 1):
            j = (after + k) % self.n
            if j not in self.finished:
                self.holder = j
                if j != after or not running:
                    self.gates[j].release()
                break
        return self.holder

    def acquire(self, i: int) -> None:
        while not self.gates[i].acquire(timeout=0.05):
            pass

    def step(self, i: int) -> None:
        with self.mutex:
            if self.holder != i:
                return
            nxt = self._hand_on(i, running=True)
        if nxt != i:
            self.acquire(i)

    def finish(self, i: int) -> None:
        with self.mutex:
            self.finished.add(i)
            if self.holder == i or self.holder is None:
                self._hand_on(i, running=False)


def _options(lnc: int) -> SimOptions:
    return SimOptions(target=Target(generation=Generation.GEN3), lnc=lnc)


def _one_core(count: int) -> None:
    launch.run_kernel(_kernel, (2 * count,), {}, _options(1), grid=True)


def _greenlets(count: int) -> None:
    launch.run_kernel(_kernel, (count,), {}, _options(2), grid=True)


def _threads(count: int) -> None:
    ctx = SimContext(_options(2))
    baton = _ThreadBaton(2)
    ctx.shared["baton"] = baton  # context.issue calls baton.step(i) at every instruction

    def body(i: int) -> None:
        with context.activate(ctx, ctx.cores[i]):
            baton.acquire(i)
            try:
                _kernel(count)
            finally:
                baton.finish(i)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for core in ctx.cores:
        core.memory.release_all()


def _measure(run: Callable[[int], None], count: int) -> tuple[float, int, float]:
    """Wall seconds, context switches (voluntary + involuntary) and CPU seconds of one launch."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    run(count)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    switches = after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, switches, cpu


def main() -> None:
    """Print the best time of each schedule and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instructions", type=int, default=2000, help="instructions per core")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = {"one core": _one_core, "greenlets": _greenlets, "threads": _threads}
    inf = (float("inf"), 0, 0.0)
    best = dict.fromkeys(runs, inf)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for _ in range(args.repeat):
        for label, run in runs.items():
            best[label] = min(best[label], _measure(run, args.instructions))
    n = 2 * args.instructions
    for label, (seconds, switches, cpu) in best.items():
        print(
            f"{label:9s} {seconds:.3f} s wall, CPU {cpu:.3f} s for 2 x {args.instructions} instructions "
            f"({seconds / n * 1e6:.1f} us each), {switches / n:.2f} context switches per instruction"
        )
    floor, green, thread = (best[k][0] for k in runs)
    print(
        f"greenlets / one core: {green / floor:.2f}x; threads / one core: {thread / floor:.2f}x; "
        f"threads / greenlets: {thread / green:.2f}x; hand-over cost per instruction: greenlets "
        f"{(green - floor) / n * 1e6:.1f} us, threads {(thread - floor) / n * 1e6:.1f} us"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
