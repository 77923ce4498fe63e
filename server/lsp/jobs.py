"""Shared job helpers for feature modules: "one job per key, newest wins" and ``$/progress`` reporting.

``JobRunner.submit(key, work, delay=..., on_result=...)`` is how lint runs per document (debounced on
change) and how simulate-on-save runs per document/kernel: a new submit for the same key cancels the
pending one (if still in its debounce delay or queued) and marks a running one superseded, so its result
is dropped. Sync ``work`` runs in the server's job thread pool, never on the event loop; a superseded sync
run still on its thread is waited for before the next run of its key starts (threads cannot be
interrupted, and two at once would only split the CPU). Async ``work`` runs on the loop (use it to drive
subprocesses). ``work`` receives a :class:`CancelToken` to poll (or wait on) so long jobs can stop early,
e.g. kill their worker process.

``progress(server, title)`` is an async context manager around ``window/workDoneProgress/create`` +
``$/progress`` begin/report/end; when the client cancels, its token is cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Executor, Future
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lsprotocol import types

if TYPE_CHECKING:
    from nki_studio.lsp.server import NkiLanguageServer

log = logging.getLogger(__name__)

T = TypeVar("T")


class JobCancelled(Exception):
    """Raised by :meth:`CancelToken.raise_if_cancelled` when a job was superseded or cancelled."""


class CancelToken:
    """Thread-safe cancellation flag handed to every job; cheap to poll."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        """True once the job was superseded or cancelled."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Cancel; runs the registered callbacks once (in the cancelling thread)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:
                log.exception("cancel callback failed")

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when cancelled (at once if already cancelled), e.g. to kill a subprocess."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def raise_if_cancelled(self) -> None:
        """Raise :class:`JobCancelled` if cancelled."""
        if self._event.is_set():
            raise JobCancelled()

    def wait(self, timeout: float | None = None) -> bool:
        """Block (in a worker thread) until cancelled or ``timeout``; returns whether cancelled."""
        return self._event.wait(timeout)


@dataclass
class _Job:
    token: CancelToken
    task: asyncio.Task[Any] | None = None


@dataclass
class JobRunner(Generic[T]):
    """Runs at most one live job per key; the newest submit wins (see the module docstring).

    Must be used from the event loop thread (LSP handlers are). ``on_result`` is called on the loop, only
    for the newest job of its key, and only if it was not cancelled meanwhile.
    """

    executor: Executor
    name: str = "job"
    overlap_wait_s: float = 10.0  # longest wait for a superseded sync run of the same key
    _jobs: dict[str, _Job] = field(default_factory=dict)
    # Sync work still on a pool thread, per key. A thread cannot be interrupted, so a superseded run goes on
    # until it returns; the next run of its key waits for it instead of splitting the CPU (and the GIL) with it.
    _threads: dict[str, Future[Any]] = field(default_factory=dict)

    def submit(
        self,
        key: str,
        work: Callable[[CancelToken], T] | Callable[[CancelToken], Awaitable[T]],
        *,
        delay: float = 0.0,
        on_result: Callable[[T], Any] | None = None,
    ) -> CancelToken:
        """Schedule ``work`` for ``key`` after ``delay`` seconds, superseding any earlier job of that key."""
        self.cancel(key)
        job = _Job(token=CancelToken())
        self._jobs[key] = job
        job.task = asyncio.get_running_loop().create_task(self._run(key, job, work, delay, on_result))
        return job.token

    async def _run(
        self,
        key: str,
        job: _Job,
        work: Callable[[CancelToken], Any],
        delay: float,
        on_result: Callable[[T], Any] | None,
    ) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            if job.token.cancelled:
                return
            if inspect.iscoroutinefunction(work):
                result = await work(job.token)
            else:
                result = await self._in_thread(key, work, job.token)
            if job.token.cancelled or self._jobs.get(key) is not job:
                log.debug("%s %s: result of superseded run dropped", self.name, key)
                return
            if on_result is not None:
                outcome = on_result(result)
                if inspect.isawaitable(outcome):
                    await outcome
        except (asyncio.CancelledError, JobCancelled):
            log.debug("%s %s: cancelled (superseded or closed)", self.name, key)
        except Exception:
            log.exception("%s for %s failed", self.name, key)
        finally:
            if self._jobs.get(key) is job:
                del self._jobs[key]

    async def _in_thread(self, key: str, work: Callable[[CancelToken], Any], token: CancelToken) -> Any:
        previous = self._threads.get(key)
        if previous is not None and not previous.done():
            waited = asyncio.wrap_future(previous)
            # The superseded run usually ends in JobCancelled: retrieve it here, or asyncio logs an ERROR
            # ("exception was never retrieved") with its traceback once the future is collected.
            waited.add_done_callback(_retrieve)
            finished, _ = await asyncio.wait([waited], timeout=self.overlap_wait_s)
            if not finished:  # a run that never ends (an analysis bug) must not block its key for good
                log.warning(
                    "%s %s: a superseded run is still busy after %.0f s; starting the new one anyway",
                    self.name,
                    key,
                    self.overlap_wait_s,
                )
            token.raise_if_cancelled()
        future = self.executor.submit(_guarded, work, token)
        self._threads[key] = future
        loop = asyncio.get_running_loop()

        def done(f: Future[Any]) -> None:  # runs on the pool thread
            if not loop.is_closed():
                loop.call_soon_threadsafe(self._thread_done, key, f)

        future.add_done_callback(done)
        return await asyncio.wrap_future(future)

    def _thread_done(self, key: str, future: Future[Any]) -> None:
        if self._threads.get(key) is future:
            del self._threads[key]

    def cancel(self, key: str) -> None:
        """Cancel the job of ``key`` if any: its token is set; a job still waiting is not started."""
        job = self._jobs.pop(key, None)
        if job is None:
            return
        job.token.cancel()
        if job.task is not None:
            job.task.cancel()

    def cancel_all(self) -> None:
        """Cancel every job (server shutdown)."""
        for key in list(self._jobs):
            self.cancel(key)

    def pending(self, key: str) -> bool:
        """Whether a job for ``key`` is waiting or running."""
        return key in self._jobs

    async def settled(self, key: str, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until ``key`` has no job waiting or running; False if one still is."""
        deadline = asyncio.get_running_loop().time() + timeout
        while (job := self._jobs.get(key)) is not None and job.task is not None:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            await asyncio.wait([job.task], timeout=left)  # a newer submit replaces the job: wait for that one
        return True


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's outcome as seen (its run was superseded: nobody wants it)."""
    if not future.cancelled():
        future.exception()


def _guarded(work: Callable[[CancelToken], Any], token: CancelToken) -> Any:
    """Run ``work`` in a pool thread unless it was cancelled while queued."""
    token.raise_if_cancelled()
    return work(token)


class WorkProgress:
    """A handle on one ``$/progress`` sequence; ``report`` is a no-op when the client has no progress UI."""

    def __init__(
        self, server: NkiLanguageServer, token: types.ProgressToken | None, cancel: CancelToken
    ) -> None:
        self._server = server
        self.token = token
        self.cancel_token = cancel

    @property
    def cancelled(self) -> bool:
        """True once the user pressed cancel (or the job was superseded)."""
        return self.cancel_token.cancelled

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        """Send a ``report`` step (safe to call from any thread)."""
        if self.token is None:
            return
        value = types.WorkDoneProgressReport(message=message, percentage=percentage)
        token = self.token
        self._server.call_soon(lambda: self._server.work_done_progress.report(token, value))


@asynccontextmanager
async def progress(
    server: NkiLanguageServer,
    title: str,
    *,
    message: str | None = None,
    cancellable: bool = True,
    cancel: CancelToken | None = None,
    token: types.ProgressToken | None = None,
) -> AsyncIterator[WorkProgress]:
    """Report work to the client as ``$/progress`` begin ... end.

    ``token``: a client-supplied ``workDoneToken`` (e.g. from executeCommand params); otherwise a server
    token is created when the client supports ``window.workDoneProgress``. ``cancel``: the job's token,
    so a user cancel reaches the job (a fresh one is made if omitted).
    """
    cancel = cancel or CancelToken()
    caps = server.client_capabilities.window
    if token is None and caps is not None and caps.work_done_progress:
        token = f"nki-{uuid.uuid4().hex}"
        try:
            await asyncio.wait_for(server.work_done_progress.create_async(token), timeout=5)
        except Exception as exc:  # a client that cannot create progress still gets the work done
            log.debug("progress create failed: %s", exc)
            token = None
    handle = WorkProgress(server, token, cancel)
    if token is None:
        yield handle
        return
    server.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(title=title, message=message, cancellable=cancellable, percentage=0),
    )
    client_cancel = server.work_done_progress.tokens.get(token)
    if client_cancel is not None:
        client_cancel.add_done_callback(lambda f: cancel.cancel() if f.cancelled() else None)
    try:
        yield handle
    finally:
        end_message = "cancelled" if cancel.cancelled else None
        server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=end_message))
        server.work_done_progress.tokens.pop(token, None)
