"""A fixed execution order for the instances (LNC cores, collective ranks) of one launch.

All instances of a launch run on the launching thread, each in its own greenlet (a coroutine with its own
stack and its own ``contextvars`` context, so ``context.current_core()`` is per instance). Only one runs at a
time. Instance 0 starts; at every instruction it issues (``context.issue``) the running instance hands over to
the next instance (round robin) that can make progress, and an instance waiting in a rendezvous
(``nisa.core_barrier``, ``nisa.sendrecv``, a collective: ``isa.multicore.Mailbox.wait_for``) is skipped until
it can continue. So the instances advance in lockstep, one instruction each in turn, as cores running the same
program do on hardware; unsynchronised writes of two cores to the same bytes resolve the same way on every run
(``races.py`` still reports them). Inferred design choice: hardware gives no order; lockstep is reproducible and
keeps the program-position order that hides such races on hardware (both cores' early zero-fills before either's
results).

Why greenlets and not one OS thread per instance: a hand-over is then a stack switch in the same thread (about a
microsecond) instead of waking another thread and waiting for a CPU (about 2.8 OS context switches per
instruction, most of an LNC=2 simulation's time; ``benchmarks/lnc_lockstep_bench.py``). Because nothing runs
concurrently, a deadlock is known the moment no instance can continue, and is reported at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from greenlet import greenlet
from nki_studio.sim.errors import SimulationError


class InstanceAborted(BaseException):
    """Raised in the instances still running when another one failed: they stop where they are. A
    ``BaseException``, so a kernel's ``except Exception`` cannot swallow it; the launcher reports the failure
    that caused it, not this echo."""


class Baton:
    """Which instance of a launch runs. :meth:`run` starts the instances; the running one calls :meth:`step` at
    every instruction and :meth:`block` when it must wait for others; a failed one calls :meth:`abort`."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = list(labels)  # how errors name each instance ("core 1", "rank 2 core 0")
        self.n = len(self.labels)
        self.greenlets: list[greenlet] = []
        self.finished = [False] * self.n
        self.waiting: dict[int, tuple[Callable[[], bool], str]] = {}  # instance -> (can it continue?, where)
        self.current = 0  # the running instance
        self.aborted = False

    def run(self, bodies: Sequence[Callable[[], None]]) -> None:
        """Run ``bodies[i]`` as instance ``i`` until every instance has returned, instance 0 first. A body
        catches its own failures and calls :meth:`abort`; the instances still running then stop with
        :class:`InstanceAborted`."""
        self.greenlets = [greenlet(self._instance(i, body)) for i, body in enumerate(bodies)]
        try:
            last = self.n - 1  # so that instance 0 starts
            while not self.aborted:
                nxt = self._next(last)
                # Nobody can continue: resume a waiting one, whose block() reports the deadlock.
                if nxt is None:
                    order = ((last + k) % self.n for k in range(1, self.n + 1))
                    nxt = next((j for j in order if j in self.waiting), None)
                    if nxt is None:
                        return  # all returned
                self._switch(nxt)  # back here when an instance returns
                last = self.current
        finally:
            self.aborted = True  # an instance being stopped hands over to nobody
            for i, g in enumerate(self.greenlets):
                if g:  # started and suspended at a hand-over
                    self.current = i
                    g.throw(InstanceAborted(f"{self.labels[i]} stopped: another instance failed"))

    def step(self, i: int) -> None:
        """Instance ``i`` (the running one) issues an instruction: let the next instance run one, then continue."""
        if self.aborted:
            raise InstanceAborted(f"{self.labels[i]} stopped: another instance failed")
        nxt = self._next(i)
        if nxt is not None and nxt != i:
            self._switch(nxt)

    def block(self, i: int, ready: Callable[[], bool], what: str) -> None:
        """Instance ``i`` must wait in the rendezvous ``what`` until ``ready()``: the others run meanwhile.
        Raises ``SimulationError`` at the caller's line when no instance can continue (a deadlock)."""
        if self.aborted:
            raise InstanceAborted(f"{self.labels[i]} stopped: another instance failed")
        self.waiting[i] = (ready, what)
        try:
            nxt = self._next(i)
            if nxt is not None:
                self._switch(nxt)
            if nxt is None or not ready():  # resumed although not ready: nothing else could run
                raise SimulationError(self._deadlock())
        finally:
            del self.waiting[i]

    def abort(self) -> None:
        """The running instance failed: stop the others (the launcher reports its failure)."""
        self.aborted = True

    def _instance(self, i: int, body: Callable[[], None]) -> Callable[[], None]:
        def main() -> None:
            try:
                body()
            finally:
                self.finished[i] = True  # its greenlet returns to run()

        return main

    def _next(self, after: int) -> int | None:
        """The first instance after ``after`` (itself last) that has not returned and is not stuck waiting."""
        for k in range(1, self.n + 1):
            j = (after + k) % self.n
            if self.finished[j]:
                continue
            wait = self.waiting.get(j)
            if wait is None or wait[0]():
                return j
        return None

    def _switch(self, j: int) -> None:
        self.current = j
        self.greenlets[j].switch()

    def _deadlock(self) -> str:
        states = [
            f"{label} waits in {self.waiting[i][1]}" if i in self.waiting else f"{label} has returned"
            for i, label in enumerate(self.labels)
            if i in self.waiting or self.finished[i]
        ]
        return (
            f"deadlock: no kernel instance can continue ({', '.join(states)}); every instance must reach "
            "the same rendezvous"
        )
