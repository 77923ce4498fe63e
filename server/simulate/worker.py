"""The simulation worker process: ``python -m nki_studio.simulate.worker --fd N``.

Never imported by the server. Lifecycle: start, import the simulator and NumPy (timed), send ``ready`` on
the message pipe (fd N), then block until one job arrives on stdin, run it under the job's memory limit,
send ``result`` and exit. One job per process, so no state leaks between runs; the runner keeps a spare
worker warm. The worker dies with its parent (a parent-pid watchdog thread).

Messages are JSON lines: ``{"type": "ready", ...}``, ``{"type": "progress", "message": ...}``,
``{"type": "result", "result": {...}}``. The kernel's own stdout/stderr go wherever the runner pointed them.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from typing import IO, Any

_CHANNEL: IO[str] | None = None


def send(message: dict[str, Any]) -> None:
    """Write one JSON line to the runner."""
    import json

    if _CHANNEL is None:
        return
    _CHANNEL.write(json.dumps(message, default=str) + "\n")
    _CHANNEL.flush()


def _die_with_parent() -> None:
    """Kill this process group when the parent (server or CLI) goes away, however it exits (SIGKILL included).

    A watchdog thread notices the re-parenting. PR_SET_PDEATHSIG is not used: it fires when the *thread*
    that started the worker ends, and the pool starts spares from short-lived threads.
    """
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Worker entry point."""
    global _CHANNEL
    started, started_wall = time.perf_counter(), time.time()
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    args = parser.parse_args(argv)
    _CHANNEL = os.fdopen(args.fd, "w", buffering=1, encoding="utf-8")
    _die_with_parent()
    # The heavy imports happen before a job is known: this is what keeps a warm worker's overhead small.
    from nki_studio.simulate import job

    job.preload()
    send(
        {
            "type": "ready",
            "pid": os.getpid(),
            "startedAt": started_wall,
            "importSeconds": time.perf_counter() - started,
        }
    )
    line = sys.stdin.readline()
    if not line:
        return 0  # the runner closed the pool
    result = job.run_json(line, send)
    send({"type": "result", "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
