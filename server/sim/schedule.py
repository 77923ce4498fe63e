"""A fixed execution order for the instances (LNC cores, collective ranks) of one launch.

Instances run on threads, but only the holder of the baton executes kernel code. Instance 0 starts; at every
instruction it issues (``context.issue``) the holder hands the baton to the next instance (round robin) that can
make progress, and an instance waiting in a rendezvous (``nisa.core_barrier``, ``nisa.sendrecv``, a collective:
``isa.multicore.Mailbox.wait_for``) passes it on until it can continue. So the instances advance in lockstep,
one instruction each in turn, as cores running the same program do on hardware; unsynchronised writes of two
cores to the same bytes resolve the same way on every run instead of depending on thread timing (``races.py``
still reports them). Inferred design choice: hardware gives no order; lockstep is reproducible and keeps the
program-position order that hides such races on hardware (both cores' early zero-fills before either's results).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_POLL_S = 0.05


class Baton:
    """Which instance of a launch may run. Each instance waits on its own gate (a plain lock, the cheapest
    hand-over CPython has); the holder opens the next instance's gate when it hands the baton on."""

    def __init__(self, instances: int) -> None:
        self.n = instances
        self.mutex = threading.Lock()  # guards holder / finished / waiting
        self.gates = [threading.Lock() for _ in range(instances)]
        for gate in self.gates[1:]:
            gate.acquire()  # closed: only instance 0 may start
        self.holder: int | None = 0
        self.finished: set[int] = set()
        self.waiting: dict[int, Callable[[], bool]] = {}  # blocked instance -> "can it continue?"

    def _hand_on(self, after: int, running: bool) -> int | None:
        """Give the baton to the first instance after ``after`` that is not finished and not stuck waiting
        (``after`` itself last); open its gate unless it is the caller and keeps running. Mutex held."""
        self.holder = None
        for k in range(1, self.n + 1):
            j = (after + k) % self.n
            if j in self.finished:
                continue
            ready = self.waiting.get(j)
            if ready is None or ready():
                self.holder = j
                if j != after or not running:
                    self.gates[j].release()
                break
        return self.holder

    def acquire(self, i: int, poll: Callable[[], None]) -> None:
        """Wait until instance ``i`` holds the baton; ``poll`` runs between waits (may raise to abort)."""
        while not self.gates[i].acquire(timeout=_POLL_S):
            poll()
        with self.mutex:
            self.waiting.pop(i, None)

    def step(self, i: int, poll: Callable[[], None]) -> None:
        """Instance ``i`` (the holder) issues an instruction: let the next instance run one, then continue."""
        with self.mutex:
            if self.holder != i:
                return
            nxt = self._hand_on(i, running=True)
        if nxt != i:
            self.acquire(i, poll)

    def block(self, i: int, ready: Callable[[], bool]) -> None:
        """Instance ``i`` must wait for others: pass the baton on (``ready`` says when ``i`` can continue)."""
        with self.mutex:
            self.waiting[i] = ready
            if self.holder == i:
                self._hand_on(i, running=False)

    def finish(self, i: int) -> None:
        """Instance ``i`` is done (or failed): it never runs again."""
        with self.mutex:
            self.finished.add(i)
            self.waiting.pop(i, None)
            if self.holder == i or self.holder is None:
                self._hand_on(i, running=False)


def abort_poll(
    barrier: threading.Barrier | None, checkin: Callable[[], None] | None, what: str
) -> Callable[[], None]:
    """What a waiting instance runs between waits: stop when another instance failed (its launcher aborted the
    barrier), and let the caller's check-in hook (cancellation) run."""

    def poll() -> None:
        if barrier is not None and barrier.broken:
            # The launcher reports the other instance's failure in preference to this echo.
            raise threading.BrokenBarrierError(f"{what}: another core failed while this one waited")
        if checkin is not None:
            checkin()

    return poll
