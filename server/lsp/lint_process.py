"""The server's end of the lint worker process (``lsp.lint_worker`` says why lint runs there).

One worker, started on the first lint and stopped when no document is open any more (``stop``), so its memory
goes back to the system whole. Requests are answered one at a time: a job thread waiting its turn gives up at
once if its lint was superseded meanwhile (the newer one is queued behind it), so only the newest text of a
document reaches the worker. A worker that dies (a crash, or killed because a superseded lint did not end
within ``HUNG_AFTER_S``) is started again for the next request; the request it died on is retried once.

``NKI_STUDIO_LINT_PROCESS=0`` in the server's environment lints in the server's own job threads instead (as
before this existed; benchmarks/lsp_storm_bench.py compares the two).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from typing import IO, Any

from nki_studio.core.findings import Finding
from nki_studio.lsp.jobs import CancelToken, JobCancelled
from nki_studio.lsp.lint_worker import read_frame, write_frame
from nki_studio.nkilint.config import LintConfig

log = logging.getLogger(__name__)

ENV = "NKI_STUDIO_LINT_PROCESS"
HUNG_AFTER_S = 10.0  # a superseded lint still running this long after its cancel: the worker is killed


def enabled() -> bool:
    """Whether lint runs in the worker process (the default) rather than in the server's threads."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "off", "no")


def plugin_rule_files() -> list[str]:
    """Source files of the rules registered in this process from outside nki_studio, for the worker to load."""
    from nki_studio.nkilint.rule import all_rules

    files: list[str] = []
    for registered in all_rules().values():
        module = sys.modules.get(getattr(registered.check, "__module__", "") or "")
        path = getattr(module, "__file__", None)
        if module is None or module.__name__.startswith("nki_studio.") or not path:
            continue
        if path not in files:
            files.append(path)
    return files


class LintProcess:
    """A lint worker process, shared by the server's job threads (thread-safe)."""

    def __init__(self, rule_files: list[str] | None = None) -> None:
        self._rule_files = plugin_rule_files() if rule_files is None else rule_files
        self._lock = threading.Lock()  # one request at a time
        self._proc: subprocess.Popen[bytes] | None = None

    def lint(
        self, uri: str, path: str, text: str, config: LintConfig, token: CancelToken, *, logged: bool = True
    ) -> tuple[list[Finding], int]:
        """The findings of ``text`` (as ``IncrementalLinter.lint`` gives them) and the number of kernel groups
        checked. Raises :class:`JobCancelled` if superseded before the worker took it. ``logged``: log what the
        worker logged (False: a text already linted and reported here)."""
        with self._lock:
            token.raise_if_cancelled()  # superseded while queued: the newer lint of the uri follows
            request = ("lint", uri, path, text, config, logging.getLogger("nki_studio").getEffectiveLevel())
            reply = self._ask(request, token)
        _, findings, checked, records = reply
        for level, name, message in records if logged else ():
            logging.getLogger(name).log(level, "%s", message)
        return findings, checked

    def close(self, uris: list[str]) -> None:
        """Forget closed documents in the worker (and give its freed memory back); nothing if none runs."""
        with self._lock:
            if self._proc is not None and uris:
                self._ask(("close", uris), None)

    def stop(self) -> None:
        """End the worker (no document open); the next lint starts a new one."""
        with self._lock:
            self._end()

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    # ---- internals (lock held) -----------------------------------------------------------------------------
    def _ask(self, request: tuple[Any, ...], token: CancelToken | None) -> Any:
        for attempt in (1, 2):
            proc = self._started()
            watchdog = self._watch(proc, token)
            try:
                assert proc.stdin is not None and proc.stdout is not None
                write_frame(proc.stdin, request)
                reply = read_frame(proc.stdout)
            except (EOFError, OSError) as exc:
                self._end()
                if token is not None and token.cancelled:
                    raise JobCancelled() from exc  # killed by the watchdog: superseded and hung
                if attempt == 2:
                    raise RuntimeError(f"the lint worker process exited ({exc})") from exc
                log.warning("the lint worker process exited (%s); starting a new one", exc)
                continue
            finally:
                if watchdog is not None:
                    watchdog.cancel()
            if reply[0] != "ok":
                raise RuntimeError(f"lint worker: {reply[1]}")
            return reply
        raise AssertionError("unreachable")

    def _watch(self, proc: subprocess.Popen[bytes], token: CancelToken | None) -> threading.Timer | None:
        """Kill the worker if the request is cancelled and still not answered ``HUNG_AFTER_S`` later."""
        if token is None:
            return None
        timer = threading.Timer(HUNG_AFTER_S, lambda: _kill_hung(proc))
        timer.daemon = True
        token.on_cancel(timer.start)
        return timer

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "nki_studio.lsp.lint_worker", *self._rule_files],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the server's stderr: the editor's log shows what a rule printed
        )
        log.debug("lint worker process %d started", self._proc.pid)
        return self._proc

    def _end(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            _close(stream)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.debug("lint worker process %d ended", proc.pid)


def _kill_hung(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        log.warning(
            "a superseded lint still ran %.0f s after it was cancelled; its worker is restarted", HUNG_AFTER_S
        )
        proc.kill()


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass
