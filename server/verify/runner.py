"""Run a simulation job in a separate worker process with a wall-clock timeout, a memory limit and
cancellation, leaving no process behind.

* Each worker is a new session (its own process group) whose first process supervises the job process
  (``worker.py``): at the end of every run, passed, failed, timed out or cancelled, it kills everything the
  kernel started, new sessions and daemons included (``containment.py``); then the group is SIGKILLed too.
  Workers also die with their parent.
* Memory: the job process sets ``RLIMIT_AS`` to the job's limit before touching the kernel (no cgroups
  needed), or where that does not work (macOS, Windows) watches its resident memory (``memory_guard.py``);
  either way the kernel gets a ``MemoryError``, reported as ``memory_limit``. A worker killed by a signal
  is reported as ``crashed``.
* Windows (``containment.plan``): no sessions or signals to groups; each worker is held in a job object
  (``winjob.py``) that ends it and everything it started at the end of a run, and the message pipe's
  handle is passed instead of a file descriptor.
* Warm start: :class:`WorkerPool` keeps one spare worker that has already imported NumPy and the
  simulator, so a job only pays for the simulation itself. One job per worker; the next spare is started
  when a job ends.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from nki_studio.protocol.simulation import SimulationResult, Status, Timings
from nki_studio.verify import containment
from nki_studio.verify.job import Job, empty_result

Progress = Callable[[str], None]
_OUTPUT_TAIL = 4000  # characters of the kernel's stdout/stderr kept in the result
_SUPERVISOR_GRACE_S = 6.0  # for the supervisor to end a run (its own budget is 5 s) before the group SIGKILL
_SIGKILL = getattr(signal, "SIGKILL", 9)  # absent on Windows


def channel_options(write_fd: int, windows: bool, msvcrt: Any = None) -> tuple[list[str], dict[str, Any]]:
    """The worker's arguments and Popen options that hand it the write end of the message pipe: the file
    descriptor (POSIX ``pass_fds``), or on Windows the inheritable handle, listed in ``handle_list`` so the
    worker inherits that one handle only. ``msvcrt`` is injectable (tests)."""
    if not windows:
        return ["--fd", str(write_fd)], {"pass_fds": (write_fd,), "start_new_session": True}
    if msvcrt is None:
        import msvcrt
    handle = msvcrt.get_osfhandle(write_fd)
    os.set_handle_inheritable(handle, True)  # type: ignore[attr-defined,unused-ignore]
    startupinfo = subprocess.STARTUPINFO(lpAttributeList={"handle_list": [handle]})  # type: ignore[attr-defined,unused-ignore]
    return ["--handle", str(handle)], {"startupinfo": startupinfo, "close_fds": True}


class Worker:
    """One started worker process and its message pipe."""

    def __init__(self) -> None:
        self.spawned_at = time.time()  # wall clock: compared with the worker's own start time
        read_fd, write_fd = os.pipe()
        self.output: IO[bytes] = tempfile.TemporaryFile()
        env = dict(
            os.environ,
            OPENBLAS_NUM_THREADS="1",
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            PYTHONUNBUFFERED="1",
        )
        self.plan = containment.plan()
        channel, options = channel_options(write_fd, windows=self.plan.runner == "job-object")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nki_studio.verify.worker", *channel],
            stdin=subprocess.PIPE,
            stdout=self.output,
            stderr=subprocess.STDOUT,
            env=env,
            **options,
        )
        os.close(write_fd)
        self.job_object: Any = None
        if (
            self.plan.runner == "job-object"
        ):  # before the job is sent: see winjob.py on the assignment's timing
            from nki_studio.verify.winjob import JobObject

            self.job_object = JobObject()
            self.job_object.assign(self.proc.pid)
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        # A thread reads the pipe (select() on pipes is POSIX-only); it owns the read end and closes it at
        # end-of-file, which comes once the worker and everything it started are gone.
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, name="nki-sim-channel", daemon=True).start()
        self.ready: dict[str, Any] | None = None

    def _pump(self) -> None:
        """Split the message pipe into lines for :meth:`next_message`; None marks the end of the pipe."""
        buffer = b""
        try:
            while chunk := self._reader.read(65536):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    self._lines.put(line)
        except (OSError, ValueError):  # closed under us
            pass
        finally:
            self._lines.put(None)
            self._reader.close()

    def next_message(self, deadline: float, should_stop: Callable[[], bool]) -> dict[str, Any] | str:
        """The next JSON message, or "timeout" / "cancelled" / "eof"."""
        while True:
            if should_stop():
                return "cancelled"
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return "timeout"
            try:
                line = self._lines.get(timeout=min(0.05, remaining))
            except queue.Empty:
                continue
            if line is None:
                self._lines.put(None)  # every later call sees the end too
                return "eof"
            message: dict[str, Any] = json.loads(line)
            return message

    def wait_ready(self, deadline: float, should_stop: Callable[[], bool]) -> str | None:
        """Block until the worker has imported everything; returns a failure word or None."""
        if self.ready is not None:
            return None
        message = self.next_message(deadline, should_stop)
        if isinstance(message, str):
            return message
        self.ready = message
        return None

    def send_job(self, job: Job) -> None:
        """Hand the job to the worker (one per worker)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(job.to_json().encode())
        self.proc.stdin.flush()

    def output_tail(self) -> str:
        """The last characters the kernel printed."""
        self.output.seek(0, os.SEEK_END)
        size = self.output.tell()
        self.output.seek(max(0, size - _OUTPUT_TAIL))
        return self.output.read().decode("utf-8", "replace")

    def signal_kill(self) -> None:
        """Ask the worker's supervisor to end the run now, without waiting: it SIGKILLs the job process and
        everything the kernel started (``containment.py``), then exits. (Windows: the job object ends them.)"""
        if self.job_object is not None:
            try:
                self.job_object.terminate()
            except OSError:  # the job's processes are gone already
                pass
            return
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """End the run (see :meth:`signal_kill`) and reap the worker; its process group is SIGKILLed before the
        reap (while the group id cannot be reused), catching what stayed in it where there is no subreaper,
        and at once if the supervisor does not exit in time. The output stays readable."""
        self.signal_kill()
        deadline = time.monotonic() + _SUPERVISOR_GRACE_S
        while not self._exited() and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.plan.runner == "session":
            try:
                os.killpg(self.proc.pid, _SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def _exited(self) -> bool:
        """Whether the worker process has ended, without reaping it."""
        if self.proc.returncode is not None:
            return True
        if not hasattr(os, "waitid"):  # Windows: reaping is harmless there (no group id to keep)
            return self.proc.poll() is not None
        try:
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def close(self) -> None:
        """Kill (if needed) and close the pipes and the output file."""
        self.kill()
        if self.job_object is not None:
            self.job_object.close()
        for stream in (self.proc.stdin, self.output):  # the read end is the pump thread's
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None


class WorkerPool:
    """Hands out workers, keeping one spare warm when ``warm`` is true. Thread-safe."""

    def __init__(self, warm: bool = True) -> None:
        self.warm = warm
        self._spare: Worker | None = None
        self._busy: set[Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._refills: list[threading.Thread] = []
        atexit.register(self.close)
        if warm:
            self._spare = Worker()

    def take(self) -> tuple[Worker, bool]:
        """A worker for one job and whether it was started before the job (warm)."""
        with self._lock:
            spare, self._spare = self._spare, None
        worker = spare if spare is not None and spare.alive() else Worker()
        if spare is not None and spare is not worker:
            spare.close()
        with self._lock:
            self._busy.add(worker)
        return worker, worker is spare

    def _refill(self) -> None:
        worker = Worker()
        with self._lock:
            if not self._closed and self._spare is None:
                self._spare, worker = worker, None  # type: ignore[assignment]
        if worker is not None:
            worker.close()

    def release(self, worker: Worker) -> None:
        """End a worker whose job is over: SIGKILL its process group now; reaping it (tens of ms for a big
        process) and starting the next spare happen in a thread the caller does not wait for. The spare starts
        after the job, not during it, so its imports do not compete with the simulation for the CPU."""
        worker.signal_kill()
        with self._lock:
            self._busy.discard(worker)
            refill = self.warm and not self._closed
            follow_up = threading.Thread(
                target=self._after_job, args=(worker, refill), name="nki-sim-reap", daemon=True
            )
            self._refills = [t for t in self._refills if t.is_alive()] + [follow_up]
        follow_up.start()

    def _after_job(self, worker: Worker, refill: bool) -> None:
        worker.close()
        if refill:
            self._refill()

    def close(self) -> None:
        """Kill every worker (server shutdown, atexit), including a spare still being started; reaps them all."""
        with self._lock:
            self._closed = True
            refills, self._refills = self._refills, []
        for refill in refills:
            refill.join(timeout=10)
        with self._lock:
            workers = [*self._busy, *([self._spare] if self._spare else [])]
            self._spare = None
            self._busy.clear()
        for worker in workers:
            worker.close()

    def pids(self) -> list[int]:
        """PIDs of live workers (tests check nothing is left behind)."""
        with self._lock:
            workers = [*self._busy, *([self._spare] if self._spare else [])]
        return [w.proc.pid for w in workers if w.alive()]


def _never() -> bool:
    return False


def run_job(
    job: Job,
    *,
    pool: WorkerPool | None = None,
    timeout_s: float = 60.0,
    cancelled: Callable[[], bool] = _never,
    on_progress: Progress | None = None,
    source: str | None = None,
) -> SimulationResult:
    """Run ``job`` in a worker and return the structured result (``nki_studio.protocol.simulation``).

    ``timeout_s`` bounds the job from the moment it is handed over (import time of a cold worker is not
    counted); ``cancelled`` is polled every 50 ms. The worker is always gone when this returns. ``source``:
    the kernel file's text when it is not the saved file (``nki_studio.verify.unsaved``: run from a
    private staged copy; the result and the trace name ``job.path``, lines are the text's).
    """
    if source is not None:
        from nki_studio.verify.unsaved import staged

        with staged(job, source) as copy:
            staged_result = run_job(
                copy.job, pool=pool, timeout_s=timeout_s, cancelled=cancelled, on_progress=on_progress
            )
            copy.restore_trace(job.trace_path)
            return copy.restore(staged_result)
    started = time.perf_counter()
    own_pool = pool is None
    pool = pool if pool is not None else WorkerPool(warm=False)
    worker, warm = pool.take()
    result: SimulationResult
    try:
        failure = worker.wait_ready(time.perf_counter() + max(timeout_s, 60.0), cancelled)
        timings: Timings = {"warm": warm, "wait": time.perf_counter() - started}
        if worker.ready is not None:  # both happened before the job when the worker was warm
            timings["processStart"] = max(0.0, float(worker.ready["startedAt"]) - worker.spawned_at)
            timings["import"] = float(worker.ready["importSeconds"])
        if failure is None:
            worker.send_job(job)
            result = _await_result(
                worker, job, time.perf_counter() + timeout_s, timeout_s, cancelled, on_progress
            )
        else:
            result = _failure(job, failure, timeout_s, worker)
        result["timings"].update(timings)
        result["timings"]["total"] = time.perf_counter() - started
        result["output"] = worker.output_tail()
    finally:
        pool.release(worker)
        if own_pool:
            pool.close()
    return result


def _await_result(
    worker: Worker,
    job: Job,
    deadline: float,
    timeout_s: float,
    cancelled: Callable[[], bool],
    on_progress: Progress | None,
) -> SimulationResult:
    while True:
        message = worker.next_message(deadline, cancelled)
        if isinstance(message, str):
            worker.kill()  # first, so a timed-out kernel stops burning CPU at once
            return _failure(job, message, timeout_s, worker)
        if message.get("type") == "progress" and on_progress is not None:
            on_progress(str(message.get("message", "")))
        elif message.get("type") == "result":
            result: SimulationResult = message["result"]  # JSON of what job.run returned
            return result


def _failure(job: Job, what: str, timeout_s: float, worker: Worker) -> SimulationResult:
    """The result of a run that produced none: timeout, cancel or a dead worker."""
    kernel = job.spec.get("kernel", "?")
    status: Status
    if what == "timeout":
        status, message = (
            "timeout",
            (
                f"{kernel} did not finish within {timeout_s:g} s and was stopped "
                "(an infinite loop? if it is just slow, raise --timeout / nki-studio.simulationTimeout)"
            ),
        )
    elif what == "cancelled":
        status, message = "cancelled", f"simulation of {kernel} was cancelled"
    else:
        worker.kill()
        code = worker.proc.returncode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        status, message = "crashed", f"the simulation worker for {kernel} died ({how}) without a result"
        if code == -_SIGKILL:
            message += "; it may have exceeded the memory limit"
    return empty_result(job, kernel, status, message)
