"""LSP base-protocol framing with the standard library: what the fast path reads and writes before pygls."""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any, BinaryIO

HEADER_END = b"\r\n\r\n"
PUBLISH = "textDocument/publishDiagnostics"


class MessageReader:
    """LSP messages from a file descriptor, keeping every byte read (for the replay)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()
        self._pos = 0  # start of the first message not returned yet
        self.ended = False  # the input has ended (the client closed it)
        self.unreadable = False  # the last message read is not a JSON-RPC object (the full server answers it)

    def next(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message; None on timeout, end of input or anything that is not a JSON-RPC object."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._parse()
            if message is not None:
                self.unreadable = not isinstance(message, dict)
                return None if self.unreadable else message
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.ended = True
                return None
            self.data += chunk

    def _parse(self) -> Any:
        end = self.data.find(HEADER_END, self._pos)
        if end < 0:
            return None
        length = None
        for line in bytes(self.data[self._pos : end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip()) if value.strip().isdigit() else None
        if length is None:
            return False  # not a message the fast path understands: hand over
        start = end + len(HEADER_END)
        if len(self.data) < start + length:
            return None
        body = bytes(self.data[start : start + length])
        self._pos = start + length
        try:
            return json.loads(body)
        except ValueError:
            return False


def send(out: BinaryIO, message: dict[str, Any]) -> None:
    """Write one message and flush."""
    body = json.dumps(message).encode()  # ASCII (json escapes the rest): length in bytes = in characters
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def written_message(data: bytes) -> dict[str, Any] | None:
    """The JSON-RPC object of one message as pygls writes it (headers and body in one chunk), or None."""
    try:
        message = json.loads(data[data.index(HEADER_END) + len(HEADER_END) :])
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
