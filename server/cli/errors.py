"""How a sub-command fails: one line on stderr, never a traceback.

An exception that escapes a sub-command is an internal error: exit 2 with one line naming it and the log file
that holds the full traceback. Log records of warning level and above (e.g. a lint rule that raised) are shown
the same way. A closed stdout (``nki-studio lint ... | head``) ends the run quietly, as Unix tools do.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from nki_studio.lsp.user_cache import cache_dir

LOG_NAME = "cli-traceback.log"
_LOG_LIMIT = 1 << 20  # the log starts afresh past 1 MiB: it serves the latest reports, not a history
EXIT_INTERNAL = 2
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a tool ended by SIGPIPE
EXIT_INTERRUPTED = 128 + 2  # ... and by SIGINT


def _say(line: str) -> None:
    """Print one line on stderr; a closed stderr is not worth another error."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def one_line(text: str, limit: int = 300) -> str:
    """The first line of ``text``, shortened to ``limit`` characters."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def log_traceback(text: str) -> Path | None:
    """Append ``text`` (a formatted traceback) to the CLI's log file; its path, or None if none is writable.

    The user cache folder first, the temporary folder when that is read-only."""
    entry = f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} nki-studio {' '.join(sys.argv[1:])}\n{text}\n"
    for folder in (cache_dir(), Path(tempfile.gettempdir())):
        path = folder / LOG_NAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fresh = not path.is_file() or path.stat().st_size > _LOG_LIMIT
            with open(path, "w" if fresh else "a", encoding="utf-8") as fh:
                fh.write(entry)
            return path
        except OSError:
            continue
    return None


def _where(text: str) -> str:
    path = log_traceback(text)
    return f"full traceback in {path}" if path else "the traceback could not be logged"


class OneLineHandler(logging.Handler):
    """Warnings and errors logged during a command: one line each on stderr, tracebacks into the log file."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        """Show ``record`` as ``nki-studio: <level>: <message>``."""
        try:
            line = one_line(record.getMessage())
            if record.exc_info:
                line += f" ({_where(logging.Formatter().format(record))})"
            _say(f"nki-studio: {record.levelname.lower()}: {line}")
        except Exception:  # a handler must never raise into the code that logged
            self.handleError(record)


def _silence_stdout() -> None:
    """Point stdout at the null device so the interpreter's final flush does not fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file descriptor (in-process callers): nothing is flushed to a pipe at exit


def run_guarded(
    func: Callable[[argparse.Namespace], int], args: argparse.Namespace, own_logging: bool
) -> int:
    """Run a sub-command; returns its exit code, or the code of how it failed (see the module docstring).

    ``own_logging`` (the language server) keeps the command's own log handlers instead of the one-line one."""
    handler = None if own_logging else OneLineHandler()
    root = logging.getLogger()
    if handler is not None:
        root.addHandler(handler)
    try:
        code = int(func(args))
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _say("nki-studio: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        try:
            where = _where(traceback.format_exc())
        except MemoryError:
            where = "the traceback could not be formatted (out of memory)"
        _say(
            f"nki-studio: internal error: {type(exc).__name__}: {one_line(str(exc))} ({where}; please report it)"
        )
        return EXIT_INTERNAL
    finally:
        if handler is not None:
            root.removeHandler(handler)
