"""The job process's memory limit: ``RLIMIT_AS`` where it works, else a watcher of the resident set (RSS).

* ``rlimit`` (Linux, other POSIX systems that enforce it): the address space is capped before the kernel
  runs; an allocation beyond it raises ``MemoryError`` in the kernel (inherited by processes it starts).
* ``rss`` (Windows: no ``resource`` module; macOS: ``RLIMIT_AS`` is accepted but not enforced): a thread
  samples the resident memory of the job process every 10 ms, and of its descendants every 0.5 s (psutil). At
  the limit it raises :class:`MemoryLimitExceeded` (a ``MemoryError``) in the main thread, so the kernel
  sees what the ``rlimit`` path gives it and the run ends with the same ``memory_limit`` result. A kernel
  stuck in one huge C call (the exception waits for the next bytecode) or that swallows the error is
  stopped hard once it grows past ``_HARD_FACTOR`` times the limit or stays above it for
  ``_HARD_AFTER_S``: ``on_hard_stop`` reports the result and the process exits.

Sampling means the process can overshoot the limit by what it allocates between two samples (tens of MiB
at most at memory bandwidth); the hard stop bounds the rest. ``NKI_STUDIO_SIM_MEMORY_GUARD=rss`` forces the
watcher on Linux (tests), ``=rlimit`` the address-space cap.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

ENV = "NKI_STUDIO_SIM_MEMORY_GUARD"
Method = Literal["rlimit", "rss"]
_INTERVAL_S = 0.01  # between samples of the job process's own RSS (microseconds each)
_TREE_EVERY_S = 0.5  # between listings of the processes the kernel started (milliseconds each)
_HARD_FACTOR = 1.25  # the kernel did not stop at the MemoryError: end the process past this
_HARD_AFTER_S = 2.0  # ... or this long after it, still above the limit


class MemoryLimitExceeded(MemoryError):
    """Raised in the kernel by the RSS watcher: the job's resident memory reached its limit."""

    detail = "resident memory reached the limit"

    def __str__(self) -> str:
        return self.detail


def method(platform: str | None = None, environ: Mapping[str, str] | None = None) -> Method:
    """``rss`` on Windows and macOS (or when forced by ``ENV``), else ``rlimit``."""
    platform = sys.platform if platform is None else platform
    environ = os.environ if environ is None else environ
    forced = environ.get(ENV, "").strip().lower()
    if forced in ("rss", "rlimit"):
        return "rss" if forced == "rss" or platform == "win32" else "rlimit"
    return "rss" if platform in ("win32", "darwin") else "rlimit"


class Guard:
    """The limit of one run; :meth:`stop` it when the kernel is done, then :meth:`raise_if_exceeded`."""

    method: Method = "rlimit"

    def stop(self) -> None:
        """End the watching (nothing to do for the address-space cap)."""

    def raise_if_exceeded(self) -> None:
        """Raise :class:`MemoryLimitExceeded` if the limit was reached, even if the kernel caught it."""


def limit(nbytes: int, on_hard_stop: Callable[[str], None], chosen: Method | None = None) -> Guard:
    """Put this process under a memory limit of ``nbytes`` (the method of :func:`method` unless ``chosen``).

    ``on_hard_stop(message)`` runs in the watcher thread just before it ends a process that did not stop
    at the limit; it must report the result (the process exits right after)."""
    chosen = method() if chosen is None else chosen
    if chosen == "rlimit":
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
            return Guard()
        except (ImportError, ValueError, OSError):  # no such limit here: watch the RSS instead
            pass
    guard = RssGuard(nbytes, on_hard_stop)
    guard.start()
    return guard


class _TreeSampler:
    """Resident bytes of this process (every call) plus its descendants (re-listed every ``_TREE_EVERY_S``):
    listing the process table costs milliseconds (~4.5 ms with 130 processes), one's own RSS microseconds."""

    def __init__(self) -> None:
        import psutil

        self._me = psutil.Process()
        self._children_rss = 0
        self._listed_at = -_TREE_EVERY_S

    def __call__(self) -> int:
        import psutil

        now = time.monotonic()
        if now - self._listed_at >= _TREE_EVERY_S:
            self._listed_at, total = now, 0
            for child in self._me.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
            self._children_rss = total
        return int(self._me.memory_info().rss) + self._children_rss


def _raise_in(thread_id: int, exc_type: type[BaseException] | None) -> None:
    """Schedule ``exc_type`` in the thread (at its next bytecode); None clears a pending one."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type is not None else None
    )


class RssGuard(Guard):
    """Watches the resident memory of this process and its descendants from a thread."""

    method: Method = "rss"

    def __init__(
        self,
        nbytes: int,
        on_hard_stop: Callable[[str], None],
        sample: Callable[[], int] | None = None,
        exit_process: Callable[[int], Any] = os._exit,
    ) -> None:
        self.nbytes = nbytes
        self.on_hard_stop = on_hard_stop
        self._sample = sample
        self._exit = exit_process
        self._main = threading.main_thread().ident or threading.get_ident()
        self._done = threading.Event()
        self._lock = threading.Lock()  # stop() and a raise in the main thread do not interleave
        self.exceeded_at: float | None = None
        self.peak = 0
        self._thread = threading.Thread(target=self._watch, name="nki-sim-memory-guard", daemon=True)

    def start(self) -> None:
        """Start watching (the first sample is taken at once)."""
        if self._sample is None:
            self._sample = _TreeSampler()
        self._thread.start()

    def message(self, rss: int) -> str:
        """What the kernel is told: the resident memory against the limit."""
        return f"resident memory {rss / (1 << 20):.0f} MiB reached the limit of {self.nbytes / (1 << 20):.0f} MiB"

    def _watch(self) -> None:
        assert self._sample is not None
        while not self._done.is_set():
            try:
                rss = self._sample()
            except Exception:  # the process table is unreadable for a moment: sample again
                rss = 0
            self.peak = max(self.peak, rss)
            if rss >= self.nbytes:
                with self._lock:
                    if self._done.is_set():
                        return
                    if self.exceeded_at is None:
                        self.exceeded_at = time.monotonic()
                        MemoryLimitExceeded.detail = self.message(rss)
                        _raise_in(self._main, MemoryLimitExceeded)
                    elif (
                        rss >= self.nbytes * _HARD_FACTOR
                        or time.monotonic() - self.exceeded_at > _HARD_AFTER_S
                    ):
                        self.on_hard_stop(self.message(rss))
                        self._exit(0)
                        return
            self._done.wait(_INTERVAL_S)

    def stop(self) -> None:
        """Stop watching; a MemoryLimitExceeded scheduled but not yet raised is cancelled
        (:meth:`raise_if_exceeded` raises it at a known place instead)."""
        self._done.set()  # first: the watcher raises nothing after this
        with self._lock:
            if self.exceeded_at is not None and threading.get_ident() == self._main:
                _raise_in(self._main, None)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=1.0)

    def raise_if_exceeded(self) -> None:
        """Raise :class:`MemoryLimitExceeded` if the limit was reached during the run."""
        if self.exceeded_at is not None:
            raise MemoryLimitExceeded()


def peak_rss_bytes() -> int:
    """This process's peak resident set in bytes (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    try:
        import resource
    except ImportError:  # Windows
        import psutil

        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)
