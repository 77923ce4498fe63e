"""The full server's input and output after the early phase: the input replays what the early phase read, the
output drops what it already sent."""

from __future__ import annotations

import io
import logging
from typing import Any, BinaryIO

from nki_studio.lsp.fastpath import initialize_cache
from nki_studio.lsp.fastpath.early_phase import EarlyPhase
from nki_studio.lsp.fastpath.wire import PUBLISH, written_message

log = logging.getLogger(__name__)

# The full server's duplicates come among its first messages; after this many, output is no longer inspected.
CHECKED_MESSAGES = 64


class ReplayReader:
    """The client's input for the full server: the bytes the early phase read, then the rest of the stream
    (pygls reads with ``readline`` and ``read(n)``)."""

    def __init__(self, consumed: bytes, stream: BinaryIO) -> None:
        self._replay = io.BytesIO(consumed)
        self._left = len(consumed)
        self._stream = stream

    def readline(self) -> bytes:
        """One line (``\\n``-terminated unless the input ended)."""
        if self._left:
            line = self._replay.readline()
            self._left -= len(line)
            if line.endswith(b"\n") or self._left:
                return line
            return line + self._stream.readline()  # a line the early phase read only the start of
        return self._stream.readline()

    def read(self, n: int) -> bytes:
        """``n`` bytes (fewer only at the end of the input)."""
        data = b""
        if self._left:
            data = self._replay.read(n)
            self._left -= len(data)
        if len(data) < n:
            data += self._stream.read(n - len(data))
        return data


class AlreadySentFilter:
    """The full server's output, without what the early phase already sent: its answer to ``initialize``
    (stored for the next start; if it differs from the one sent, a warning: the client runs with the stored
    capabilities until the next start), its first diagnostics of each document published early when they
    are the same, and its answers to the requests answered early (completions). Everything else passes
    through."""

    def __init__(self, out: BinaryIO, early: EarlyPhase) -> None:
        self._out = out
        self._initialize_id = early.initialize_id
        self._cache_key = early.cache_key
        self._initialize_pending = early.initialize_id is not None
        handover = early.handover
        self._answered = None if handover is None else handover.initialize_result
        # uri -> early params, until the full server publishes it
        self._published = {} if handover is None else {u: e.published for u, e in handover.lints.items()}
        self._left = CHECKED_MESSAGES
        self._answered_ids = set(early.answered_ids)  # requests answered early: the full server's answers go

    def write(self, data: bytes) -> None:
        """One message as pygls writes it (headers and body in one call)."""
        if self._left > 0 and (self._initialize_pending or self._published or self._answered_ids):
            self._left -= 1
            if self._already_sent(data):
                return
        self._out.write(data)

    def flush(self) -> None:
        """Flush the real output."""
        self._out.flush()

    def close(self) -> None:
        """Close the real output."""
        self._out.close()

    def _already_sent(self, data: bytes) -> bool:
        message = written_message(data)
        if message is None:
            return False
        if message.get("method") == PUBLISH:
            params = message.get("params") or {}
            early = self._published.pop(str(params.get("uri")), None)
            return early is not None and early == params
        if "method" not in message and message.get("id") in self._answered_ids:
            self._answered_ids.discard(message.get("id"))
            return True
        if self._initialize_pending and "method" not in message and message.get("id") == self._initialize_id:
            self._initialize_pending = False
            return self._initialize_answered(message.get("result"))
        return False

    def _initialize_answered(self, result: Any) -> bool:
        if isinstance(result, dict) and self._cache_key is not None and result != self._answered:
            initialize_cache.store(self._cache_key, result)
            if self._answered is not None:
                log.warning(
                    "the server's capabilities differ from those remembered and sent at start-up; "
                    "they apply from the next start (restart the server to use them now)"
                )
        return self._answered is not None
