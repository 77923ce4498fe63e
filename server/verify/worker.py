"""The simulation worker process: ``python -m nki_studio.verify.worker --fd N``.

Never imported by the server. Lifecycle: start, import the simulator and NumPy (timed), send ``ready`` on
the message pipe (fd N), then block until one job arrives on stdin, run it under the job's memory limit,
send ``result`` and exit. One job per process, so no state leaks between runs; the runner keeps a spare
worker warm. The worker dies with its parent (a parent-pid watchdog thread).

The process the runner starts is a small *supervisor* that runs no user code: it starts the job process at
once and, when that ends (a result, a crash, or SIGTERM from the runner on timeout/cancel/release), ends
every process the kernel started (``containment.py``: a child subreaper on Linux, so daemons and new
sessions are caught too) before it exits with the job process's status. The job process is forked, or
spawned as a fresh interpreter (``--job-process``) where that is the platform's default or forced
(``start_method.py``). On Windows the job runs in the started process itself: the runner holds it in a job
object (``winjob.py``), which ends every process it starts.

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
_SEND_LOCK = threading.Lock()  # the memory guard's thread may send the result while the kernel sends progress


def send(message: dict[str, Any]) -> None:
    """Write one JSON line to the runner (whole lines, from any thread)."""
    import json

    if _CHANNEL is None:
        return
    line = json.dumps(message, default=str) + "\n"
    with _SEND_LOCK:
        _CHANNEL.write(line)
        _CHANNEL.flush()


def _die_with_parent() -> None:
    """Kill this process group when the parent (server or CLI) goes away, however it exits (SIGKILL included).

    A watchdog thread notices the re-parenting. PR_SET_PDEATHSIG is not used: it fires when the *thread*
    that started the worker ends, and the pool starts spares from short-lived threads.
    """
    if not hasattr(os, "killpg"):  # Windows: the runner's job object kills the worker when the runner dies
        return
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _supervise(fd: int, method: str) -> int:
    """Start the job process (``method``: fork or spawn), wait for it, end what the run left behind, exit as
    the job process did."""
    from nki_studio.verify.containment import for_platform

    started, started_wall = time.perf_counter(), time.time()
    containment = for_platform()  # before the job process exists: its orphans must come here
    if method == "spawn":
        child = _spawn_job_process(fd, started_wall)
    else:
        child = os.fork()
        if child == 0:
            code = 1
            try:
                code = _job_process(fd, started, started_wall)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
    os.close(fd)  # the runner sees end-of-file when the job process (and its children) are gone
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the job line is for the job process only
    os.close(null)

    def stop(signum: int, frame: Any) -> None:
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:  # already exited, not reaped yet: waitpid below gets it
            pass

    signal.signal(signal.SIGTERM, stop)
    parent = os.getppid()

    def watch() -> None:  # the runner went away (even by SIGKILL): end the run as a SIGTERM would
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans re-parented here are reaped on the way
        if pid == child:
            break
    containment.end()
    if os.WIFSIGNALED(status):  # report a killed job process as killed (the runner names the signal)
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _spawn_job_process(fd: int, started_wall: float) -> int:
    """Start the job process as a fresh interpreter that inherits stdin, stdout/stderr and the message pipe;
    it stays in the supervisor's process group (no new session), so the group kill reaches it too."""
    import subprocess

    command = [sys.executable, "-m", "nki_studio.verify.worker", "--fd", str(fd), "--job-process"]
    proc = subprocess.Popen([*command, "--started-wall", repr(started_wall)], pass_fds=(fd,))
    return proc.pid  # reaped by the supervisor's waitpid(-1) loop, not through ``proc``


def main(argv: list[str] | None = None) -> int:
    """Worker entry point: the supervisor, or (``--job-process``) a spawned job process."""
    from nki_studio.verify.start_method import start_method

    parser = argparse.ArgumentParser()
    channel = parser.add_mutually_exclusive_group(required=True)
    channel.add_argument("--fd", type=int, help="the message pipe's file descriptor (POSIX)")
    channel.add_argument("--handle", type=int, help="the message pipe's inherited handle (Windows)")
    parser.add_argument("--job-process", action="store_true", help="run the job (started by the supervisor)")
    parser.add_argument("--started-wall", type=float, help="when the supervisor started (time.time())")
    args = parser.parse_args(argv)
    if args.handle is not None:
        import msvcrt  # Windows only

        args.fd = msvcrt.open_osfhandle(args.handle, os.O_WRONLY)  # type: ignore[attr-defined,unused-ignore]
    if args.job_process:
        started_wall = time.time() if args.started_wall is None else args.started_wall
        # the import time counts from the supervisor's start, the second interpreter's start-up included
        started = time.perf_counter() - max(0.0, time.time() - started_wall)
        return _job_process(args.fd, started, started_wall)
    if os.name == "posix":
        return _supervise(args.fd, start_method())
    return _job_process(args.fd, time.perf_counter(), time.time())


def _job_process(fd: int, started: float, started_wall: float) -> int:
    """Import the simulator, say ready, run the one job that arrives on stdin."""
    global _CHANNEL
    _CHANNEL = os.fdopen(fd, "w", buffering=1, encoding="utf-8")
    _die_with_parent()
    # The heavy imports happen before a job is known: this is what keeps a warm worker's overhead small.
    from nki_studio.verify import job

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
    from nki_studio.sim.fresh_source import fresh_sources

    with fresh_sources():  # the user's files as they are now, never a stale __pycache__ entry
        result = job.run_json(line, send)
    send({"type": "result", "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
