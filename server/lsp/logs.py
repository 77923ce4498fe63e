"""Server logging: records of the ``nki_studio`` loggers go to the client (``window/logMessage``, shown in the
editor's output panel) and to stderr. Never to stdout: stdout carries the protocol. A traceback already
logged once is not repeated."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Sequence

_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
CLIENT_FORMAT = "%(name)s: %(message)s"  # the client's log shows the level and the time itself


# LSP MessageType values (lsprotocol is not imported here: logging is set up before the server loads it)
ERROR, WARNING, INFO, LOG = 1, 2, 3, 4
LogSender = Callable[[int, str], None]  # (MessageType, text) -> sends window/logMessage


def message_type(levelno: int) -> int:
    """The LSP MessageType of a log level."""
    if levelno >= logging.ERROR:
        return ERROR
    if levelno >= logging.WARNING:
        return WARNING
    if levelno >= logging.INFO:
        return INFO
    return LOG


class RepeatedTracebackFilter(logging.Filter):
    """Drops a traceback seen before: lint runs on every keystroke, so a failing rule would otherwise
    print the same traceback each time. The first occurrence (and every different one) passes."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.exc_info or record.exc_info[1] is None:
            return True
        exc = record.exc_info[1]
        key = (record.name, str(record.msg), f"{type(exc).__name__}: {exc}")
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
        return True

    def reset(self) -> None:
        """Forget the tracebacks seen (a new reader, the client, should see each once)."""
        with self._lock:
            self._seen.clear()


_REPEATS = RepeatedTracebackFilter()


class ClientLogHandler(logging.Handler):
    """Forwards records to the client through ``send`` (which must be safe to call from any thread).

    Attached only to the ``nki_studio`` logger: pygls logs every message it writes, so forwarding its
    records would loop. A thread-local guard stops recursion from anything logged while sending.
    """

    def __init__(self, send: LogSender) -> None:
        super().__init__()
        self._send = send
        self._local = threading.local()
        # The message type carries the level (the editor prints it); repeating it gave "[info] INFO …".
        self.setFormatter(logging.Formatter(CLIENT_FORMAT))
        self.addFilter(_REPEATS)

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            self._send(message_type(record.levelno), self.format(record))
        except Exception:  # the client may be gone; logging must never raise into callers
            self.handleError(record)
        finally:
            self._local.busy = False


def configure_stderr(level: str = "info") -> None:
    """Send ``nki_studio`` records at ``level`` and third-party warnings to stderr (idempotent)."""
    root = logging.getLogger()
    if not any(getattr(h, "_nki_stderr", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler.addFilter(_REPEATS)
        handler._nki_stderr = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    set_level(level)


def set_level(level: str) -> None:
    """Apply the ``logLevel`` setting to the project's loggers."""
    logging.getLogger("nki_studio").setLevel(_LEVELS.get(level, logging.INFO))


def attach_client(send: LogSender, earlier: Sequence[tuple[int, str]] | None = None) -> ClientLogHandler:
    """Attach (once) a handler that forwards ``nki_studio`` records to the client; returns it. ``earlier``: what
    the start-up's early phase logged (``lsp.fastpath``; None: there was none), sent to the client first."""
    logger = logging.getLogger("nki_studio")
    for h in logger.handlers:
        if isinstance(h, ClientLogHandler):
            logger.removeHandler(h)
    handler = ClientLogHandler(send)
    if earlier is None:
        _REPEATS.reset()  # a traceback logged before (to stderr only) may reach the client when it comes again
    for kind, text in earlier or ():
        send(kind, text)  # its tracebacks stay seen: the client gets each once, here
    logger.addHandler(handler)
    return handler


class EarlyRecords(logging.Handler):
    """What the early phase logs at warning level or above, kept for the client (``attach_client``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(logging.Formatter(CLIENT_FORMAT))
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        entry = (message_type(record.levelno), self.format(record))
        if entry not in self.records:  # each once, as the repeats filter lets them through
            self.records.append(entry)
