"""Run one local command (ssh/scp) with a timeout and a cancel check, streaming its output to a log.

Blocking by design: the flow runs in a worker thread (language server) or the CLI's main thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

LogFn = Callable[[str], None]
CancelledFn = Callable[[], bool]

POLL_S = 0.05


@dataclass(frozen=True)
class Completed:
    """How a command ended. ``timed_out``/``cancelled``: we killed it (``returncode`` is then meaningless)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    cancelled: bool = False


def _pump(stream: IO[str], sink: list[str], log: LogFn, prefix: str) -> None:
    for line in stream:
        sink.append(line)
        log(prefix + line.rstrip("\n"))


def run(
    argv: Sequence[str],
    *,
    timeout_s: float,
    cancelled: CancelledFn,
    log: LogFn,
    label: str,
    cwd: str | None = None,
) -> Completed:
    """Run ``argv`` (no shell) in ``cwd``; kill it on timeout or when ``cancelled()`` turns true."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=os.name == "posix",
        cwd=cwd,
    )
    out: list[str] = []
    err: list[str] = []
    assert proc.stdout is not None and proc.stderr is not None
    pumps = [
        threading.Thread(target=_pump, args=(proc.stdout, out, log, f"[{label}] "), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, err, log, f"[{label} stderr] "), daemon=True),
    ]
    for t in pumps:
        t.start()
    deadline = time.monotonic() + timeout_s
    timed_out = was_cancelled = False
    while proc.poll() is None:
        if cancelled():
            was_cancelled = True
        elif time.monotonic() > deadline:
            timed_out = True
        if was_cancelled or timed_out:
            try:  # the whole group: rsync/scp run their own ssh child (Windows: scp only; its ssh sees EOF)
                os.killpg(proc.pid, signal.SIGKILL)
            except (OSError, AttributeError):  # AttributeError: no process groups (Windows)
                proc.kill()
            break
        time.sleep(POLL_S)
    proc.wait()
    for t in pumps:
        t.join(timeout=2)
    return Completed(tuple(argv), proc.returncode, "".join(out), "".join(err), timed_out, was_cancelled)
