"""Every process a simulated kernel starts ends with its run, however it tried to get away.

A kernel may start processes in a new session (``start_new_session=True``), double-fork and ``setsid`` (a
daemon), or ignore signals. A process group kill misses all of these, so the worker's supervisor (see
``worker.py``) makes itself a *child subreaper* where the platform has one (Linux ``PR_SET_CHILD_SUBREAPER``):
every orphan of the run, daemons included, is re-parented to the supervisor instead of init, and
:meth:`Containment.end` SIGKILLs the supervisor's children until none is left (each kill re-parents the
victim's own children to it, so a tree goes level by level; SIGKILL cannot be ignored).

Elsewhere (macOS, BSD) :class:`ProcessGroup` is the fallback: the run's process group is killed, which ends
everything that stayed in it (not a new session). Windows has neither fork nor process groups: there the
*runner* holds each worker in a job object (``winjob.py``, ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``) and the
worker runs no supervisor. :func:`plan` is the one place that choice is made.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Literal, NamedTuple

_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_END_BUDGET_S = 5.0  # a fork bomb racing the kills is given up on after this (the group kill still runs)


class Containment:
    """How one run's processes are kept and ended. ``start`` runs in the supervisor before the job process is
    forked; ``end`` after the job process has exited (or was killed)."""

    name = "none"

    def start(self) -> None:
        """Prepare the supervisor (before the job process exists)."""

    def end(self) -> int:
        """Kill whatever the run left behind; returns how many processes were killed."""
        return 0


class ProcessGroup(Containment):
    """Fallback: kill the run's process group, sparing the supervisor (which is its leader).

    Processes in a new session escape this; only :class:`Subreaper` catches them."""

    name = "process-group"

    def end(self) -> int:
        """SIGKILL the other members of this process group (the supervisor ignores it for the moment)."""
        previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            # SIGKILL would end the supervisor too; SIGTERM first, then the runner's group SIGKILL after the
            # supervisor exited catches anything that ignored it.
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(0), signal.SIGTERM)
        finally:
            signal.signal(signal.SIGTERM, previous)
        _reap_all()
        return 0


class Subreaper(ProcessGroup):
    """Linux: the supervisor is the child subreaper of everything the run starts."""

    name = "subreaper"

    def start(self) -> None:
        """``prctl(PR_SET_CHILD_SUBREAPER, 1)``: orphans of the run come to this process, not to init."""
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")

    def end(self) -> int:
        """SIGKILL every child, reap it, repeat until the process has no children left."""
        killed = 0
        deadline = time.monotonic() + _END_BUDGET_S
        while time.monotonic() < deadline:
            children = _children(os.getpid())
            if not children:
                _reap_all()
                if not _children(os.getpid()):
                    break
                continue
            for pid in children:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            _reap_all(wait_s=0.05)
        super().end()
        return killed


class Plan(NamedTuple):
    """Who contains a run where: the worker's supervisor, and the runner around the whole worker."""

    supervisor: Literal["subreaper", "process-group", "none"]
    runner: Literal["session", "job-object"]  # session: the worker is a new session, its group is SIGKILLed


def plan(platform: str | None = None) -> Plan:
    """Linux: subreaper + session; Windows: a job object (no supervisor); elsewhere: process group + session."""
    platform = sys.platform if platform is None else platform
    if platform == "win32":
        return Plan("none", "job-object")
    if platform.startswith("linux"):
        return Plan("subreaper", "session")
    return Plan("process-group", "session")


def for_platform(platform: str | None = None) -> Containment:
    """The supervisor's containment of :func:`plan` (a subreaper on Linux, else the process group), started."""
    chosen = plan(platform).supervisor
    if chosen == "none":
        return Containment()
    if chosen == "subreaper":
        subreaper = Subreaper()
        try:
            subreaper.start()
        except OSError:  # e.g. a seccomp profile that forbids prctl: the group kill still ends most escapes
            return ProcessGroup()
        return subreaper
    return ProcessGroup()


def _children(parent: int) -> list[int]:
    """PIDs whose parent is ``parent`` (from /proc; the comm field may contain spaces and parentheses)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stream:
                stat = stream.read()
        except OSError:  # gone meanwhile
            continue
        fields = stat.rsplit(b")", 1)[-1].split()
        # fields[0] is the state: a zombie is already dead, waiting to be reaped
        if len(fields) > 1 and int(fields[1]) == parent and fields[0] != b"Z":
            found.append(int(entry))
    return found


def _reap_all(wait_s: float = 0.0) -> None:
    """Collect every child that has exited (waiting up to ``wait_s`` for the first one)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)
