"""The lint worker process: the language server's background lint runs here, not in the server process.

Why a process: lint is pure Python, and in the server's own threads it held the GIL for long stretches, so a
hover or code action (a few ms of work) waited behind it for hundreds of ms during fast typing
(benchmarks/lsp_storm_bench.py). In a process of its own it shares only the CPU, which the OS divides fairly.
It also takes its memory with it: the server stops the worker once no document is open, and every page the
lint caches used goes back to the system (CPython's allocator keeps freed arenas otherwise; see lsp.memory).

Protocol (``lsp.lint_process`` is the other end): frames of a 4-byte big-endian length and a pickle, over the
worker's stdin and a duplicate of its original stdout. Stdout itself is pointed at stderr, so a rule that prints
cannot corrupt the frames (stderr is the server's, which the editor shows in its log). Requests:

* ``("lint", uri, path, text, config, log_level)`` -> ``("ok", findings, kernel_groups_checked, logs)``: the
  findings of ``IncrementalLinter.lint`` (one linter per uri, kept between requests), and the log records of at
  least ``log_level`` the lint emitted, as ``(level, logger name, text with traceback)``, for the server to log.
* ``("close", uris)`` -> ``("ok",)``: forget those documents' linters and give freed memory back.

Rules registered outside nki_studio in the server process (a test's extra rule, a user's plugin) are registered
here too: the server passes their source files as arguments, and each is run once at start.
"""

from __future__ import annotations

import logging
import os
import pickle
import runpy
import struct
import sys
from typing import IO, Any

_HEADER = struct.Struct(">I")


def write_frame(stream: IO[bytes], message: Any) -> None:
    """Send one pickled message."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """Receive one message; raises EOFError when the other end closed (or died)."""
    header = _read_exactly(stream, _HEADER.size)
    return pickle.loads(_read_exactly(stream, _HEADER.unpack(header)[0]))


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError("lint worker pipe closed")
        data += chunk
    return data


class _Capture(logging.Handler):
    """Collects the records of one request, formatted with their tracebacks, for the server to log."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[tuple[int, str, str]] = []
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.records.append((record.levelno, record.name, self.format(record)))
        except Exception:  # a record that cannot be formatted is not worth failing a lint for
            self.handleError(record)


class _Worker:
    """The worker's state: one incremental linter per open document, and the log capture."""

    def __init__(self) -> None:
        from nki_studio.lsp.logs import RepeatedTracebackFilter
        from nki_studio.nkilint.incremental import IncrementalLinter
        from nki_studio.nkilint.rule import all_rules

        all_rules()
        self.linters: dict[str, IncrementalLinter] = {}
        self.capture = _Capture()
        self.capture.addFilter(
            RepeatedTracebackFilter()
        )  # a failing rule's traceback once, not every keystroke
        self.root = logging.getLogger("nki_studio")
        self.root.addHandler(self.capture)
        self.root.propagate = False  # only the server reports (stderr would get a second copy otherwise)

    def answer(self, request: tuple[Any, ...]) -> tuple[Any, ...]:
        """The reply to one request."""
        from nki_studio.lsp.memory import release_memory
        from nki_studio.nkilint.incremental import IncrementalLinter

        if request[0] == "lint":
            _, uri, path, text, config, level = request
            linter = self.linters.get(uri)
            if linter is None or linter.path != path:
                linter = self.linters[uri] = IncrementalLinter(path)
            self.root.setLevel(level)
            self.capture.records = []
            findings = linter.lint(text, config)  # never raises
            return ("ok", findings, linter.last_checked, self.capture.records)
        if request[0] == "close":
            for uri in request[1]:
                self.linters.pop(uri, None)
            release_memory()
            return ("ok",)
        return ("error", f"unknown request {request[0]!r}")


def serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """Answer requests until the server closes the pipe (or exits)."""
    worker = _Worker()
    while True:
        try:
            write_frame(replies, worker.answer(read_frame(requests)))
        except (EOFError, BrokenPipeError):
            return


def main(argv: list[str]) -> int:
    """Entry point: ``python -m nki_studio.lsp.lint_worker [RULE_FILE ...]``."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints (a rule's) go to stderr, not the frames
    sys.stdout = sys.stderr
    for path in argv:
        runpy.run_path(path, run_name="nki_studio_rule_plugin")  # registers its rules; not its __main__ part
    serve(sys.stdin.buffer, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
