"""Where candidates run: a local pool by default, or Ray tasks on a cluster (``--ray [ADDRESS]``).

Both call ``tune.evaluate.run_task``, so every candidate runs in the sandboxed job runner with the same timeout
and memory limit wherever it runs; a candidate that hangs or eats memory is killed by those limits and comes
back as a failed row, and the search goes on.

* Local: ``workers`` threads, each driving one sandboxed worker process at a time and keeping one warm spare
  (``verify.runner.WorkerPool``), so the next candidate does not wait for NumPy and the simulator to import.
* Ray: one task per candidate (``num_cpus=1``) on the cluster at ``address`` (``auto``: the one ``ray start``
  started on this machine, or ``RAY_ADDRESS``). Every node needs nki-studio installed in the Python that runs
  its Ray workers (docs/tune.md). Ray is an extra (``pip install 'nki-studio[ray]'``): it is imported only here.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

from nki_studio.protocol.tune import TuneCandidate
from nki_studio.tune.evaluate import Task, run_task
from nki_studio.verify.runner import WorkerPool

Done = tuple[Task, TuneCandidate]


class RayUnavailable(RuntimeError):
    """Ray is not installed, or no cluster answers at the address."""


class Executor(Protocol):
    """Runs tasks and yields each with its row as it completes."""

    name: str
    workers: int

    def run(self, tasks: Sequence[Task], stop: Callable[[], bool]) -> Iterator[Done]:
        """Run ``tasks``; once ``stop()`` is true no further task starts (running ones finish)."""
        ...

    def close(self) -> None:
        """Release the workers."""
        ...


class LocalExecutor:
    """``workers`` candidates at a time on this machine, each in its own sandboxed worker process."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self.name = f"local ({self.workers} worker{'s' if self.workers > 1 else ''})"
        self._pools: list[WorkerPool] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def _pool(self) -> WorkerPool:
        pool: WorkerPool | None = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = WorkerPool(warm=True)
            with self._lock:
                self._pools.append(pool)
        return pool

    def _run_one(self, task: Task, stop: Callable[[], bool]) -> TuneCandidate | None:
        return None if stop() else run_task(task, self._pool())

    def run(self, tasks: Sequence[Task], stop: Callable[[], bool]) -> Iterator[Done]:
        """Run ``tasks`` on the threads, yielding each as it completes; those not started before ``stop()``
        are dropped."""
        with ThreadPoolExecutor(self.workers, thread_name_prefix="nki-tune") as threads:
            futures = {threads.submit(self._run_one, t, stop): t for t in tasks}
            for future in _as_completed(futures):
                row = future.result()
                if row is not None:
                    yield futures[future], row

    def close(self) -> None:
        """Kill the warm spares."""
        with self._lock:
            pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()


def _as_completed(futures: dict[Future[Any], Task]) -> Iterator[Future[Any]]:
    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        yield from done


_CONNECT_TIMEOUT_S = 5.0


def _check_reachable(address: str) -> None:
    """Fail fast when ``host:port`` (or ``ray://host:port``) does not accept a connection: ``ray.init``
    itself retries an unreachable GCS for about a minute. ``auto`` is left to Ray, which fails at once when
    no cluster was started on this machine."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise RayUnavailable(
            f"no Ray cluster answers at {address!r} ({exc.strerror or exc}): start one with `ray start --head` "
            "(docs/tune.md), or pass --ray-fallback-local to run on this machine"
        ) from None


def _ray_task(task: Task) -> TuneCandidate:
    """The body of one Ray task: the candidate in a fresh sandboxed worker on the node the task landed on."""
    return run_task(task)


class RayExecutor:
    """One Ray task per candidate on the cluster at ``address``; at most ``in_flight`` submitted at once, so a
    stop (the time budget) is honoured within one round of tasks."""

    def __init__(self, address: str) -> None:
        try:
            import ray
        except ImportError:
            raise RayUnavailable(
                "--ray needs Ray, which is not installed: pip install 'nki-studio[ray]'"
            ) from None
        self._ray = ray
        _check_reachable(address)
        try:
            # log_to_driver off: a worker's logs would interleave with the table on stdout
            ray.init(
                address=address, log_to_driver=False, logging_level=logging.ERROR, ignore_reinit_error=True
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(f"no Ray cluster answers at {address!r}: {exc}".splitlines()[0]) from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.name = f"ray ({address}, {self.workers} CPUs)"
        self._remote = ray.remote(num_cpus=1, max_retries=0)(_ray_task)

    def run(self, tasks: Sequence[Task], stop: Callable[[], bool]) -> Iterator[Done]:
        """Submit ``tasks`` a cluster's worth at a time, yielding each as it completes."""
        queue = list(tasks)
        running: dict[Any, Task] = {}
        while queue or running:
            while queue and len(running) < 2 * self.workers and not stop():
                task = queue.pop(0)
                running[self._remote.remote(task)] = task
            if not running:
                return
            ready, _ = self._ray.wait(list(running), num_returns=1)
            for ref in ready:
                yield running.pop(ref), self._ray.get(ref)

    def close(self) -> None:
        """Disconnect from the cluster (it keeps running)."""
        self._ray.shutdown()


def make_executor(workers: int, ray_address: str | None, fallback_local: bool) -> tuple[Executor, str | None]:
    """The executor a search runs on, and a note when Ray was asked for but could not be reached and the
    search fell back to the local pool (only with ``fallback_local``; otherwise ``RayUnavailable``)."""
    if ray_address is None:
        return LocalExecutor(workers), None
    try:
        return RayExecutor(ray_address), None
    except RayUnavailable as exc:
        if not fallback_local:
            raise
        return LocalExecutor(workers), f"{exc}; ran on the local pool instead (--ray-fallback-local)"
