"""The first diagnostics of a start, published before pygls and lsprotocol have loaded.

Loading them is most of the server's start-up (lsprotocol builds ~550 attrs classes), and an editor that has
just opened a kernel waits for it. So ``nki-studio serve`` first reads the client's messages itself, with the
standard library only:

1. ``initialize`` is answered from the answer the full server gave to the same request on an earlier start
   (``lsp.initialize_cache``); without one, nothing more happens here;
2. ``initialized`` is let through;
3. the first ``textDocument/didOpen`` of a Python document is linted exactly as the full server lints it
   (``lsp.document_lint``, ``lsp.convert``) and its diagnostics are published.

Any other message, or a second or so of silence, ends this phase at once. Then the full server starts and is
handed every byte read so far (:class:`ReplayReader`), so it sees the whole conversation. What it then sends
that the early phase already sent is dropped by :class:`HandoverFilter`: its answer to ``initialize`` (which
is stored for the next start) and its first diagnostics of that document when they are the same. Needs
``select`` on pipes, so POSIX only; elsewhere the full server answers everything.
"""

from __future__ import annotations

import io
import json
import logging
import os
import select
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from nki_studio.lsp import initialize_cache

if TYPE_CHECKING:  # loaded only once a document is linted, after initialize is answered
    from nki_studio.nkilint.incremental import IncrementalLinter

log = logging.getLogger(__name__)

IDLE_S = 1.0  # silence after which the early phase ends (e.g. no document open: nothing to lint early)
# The full server's duplicates come among its first messages; after this many, output is no longer inspected.
CHECKED_MESSAGES = 64
_HEADER_END = b"\r\n\r\n"
PUBLISH = "textDocument/publishDiagnostics"


def supported() -> bool:
    """Whether this platform can wait on a pipe with a timeout (``select`` on pipes: POSIX)."""
    return os.name == "posix"


class _MessageReader:
    """LSP messages from a file descriptor, keeping every byte read (for the replay)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()
        self._pos = 0  # start of the first message not returned yet

    def next(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message; None on timeout, end of input or anything that is not a JSON-RPC object."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._parse()
            if message is not None:
                return message if isinstance(message, dict) else None
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.data += chunk

    def _parse(self) -> Any:
        end = self.data.find(_HEADER_END, self._pos)
        if end < 0:
            return None
        length = None
        for line in bytes(self.data[self._pos : end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip()) if value.strip().isdigit() else None
        if length is None:
            return False  # not a message this phase understands: hand over
        start = end + len(_HEADER_END)
        if len(self.data) < start + length:
            return None
        body = bytes(self.data[start : start + length])
        self._pos = start + length
        try:
            return json.loads(body)
        except ValueError:
            return False


@dataclass
class EarlyStart:
    """What the early phase did: what the full server must be handed, and the ``initialize`` it answered."""

    consumed: bytes = b""  # every byte read from the client, replayed to the full server
    initialize_id: Any = None  # id of the client's initialize request, if that came first
    key: str | None = None  # its cache key
    answered: dict[str, Any] | None = None  # the result already sent for it (None: the full server answers)
    published: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # uri -> the publishDiagnostics params sent
    # uri -> the linter that produced them: the full server's lint feature adopts it, so its first lint of the
    # same text reuses every kernel group instead of checking the document again.
    linters: dict[str, IncrementalLinter] = field(default_factory=dict)


def run(fd: int, out: BinaryIO, idle_s: float = IDLE_S) -> EarlyStart:
    """Run the early phase on input ``fd`` and output ``out`` (see the module docstring)."""
    started = time.perf_counter()
    reader = _MessageReader(fd)
    early = EarlyStart()
    try:
        _converse(reader, out, early, idle_s)
    except Exception:  # never let the shortcut stop the server: the full server answers what is left
        log.exception("early start-up phase failed; the full server takes over")
    early.consumed = bytes(reader.data)
    if early.published:
        log.info(
            "first diagnostics published %.0f ms after the server began reading, before the full server loaded",
            (time.perf_counter() - started) * 1000,
        )
    return early


def _converse(reader: _MessageReader, out: BinaryIO, early: EarlyStart, idle_s: float) -> None:
    message = reader.next(None)
    if message is None or message.get("method") != "initialize" or "id" not in message:
        return
    params = message.get("params") or {}
    early.initialize_id = message["id"]
    early.key = initialize_cache.request_key(params)
    result = initialize_cache.load(early.key)
    if result is None:
        return
    _send(out, {"jsonrpc": "2.0", "id": message["id"], "result": result})
    early.answered = result
    # The lint engine and its rules load now, while the client takes in the answer and sends didOpen.
    from nki_studio.lsp.settings import Settings, merge
    from nki_studio.nkilint.rule import all_rules

    all_rules()
    settings, _ = merge(Settings(), params.get("initializationOptions"))
    encoding = (result.get("capabilities") or {}).get("positionEncoding") or "utf-16"
    while (message := reader.next(idle_s)) is not None:
        method = message.get("method")
        if method == "initialized":
            continue
        if method == "textDocument/didOpen" and "id" not in message:
            _publish_first(out, message.get("params") or {}, settings, encoding, early)
        return


def _publish_first(
    out: BinaryIO, params: dict[str, Any], settings: Any, encoding: Any, early: EarlyStart
) -> None:
    from nki_studio.lsp.convert import DocumentPositions, diagnostic_json, split_lines
    from nki_studio.lsp.document_lint import document_config, lint_document
    from nki_studio.nkilint.incremental import IncrementalLinter
    from pygls.uris import to_fs_path

    doc = params.get("textDocument") or {}
    uri, text = doc.get("uri"), doc.get("text")
    if doc.get("languageId") != "python" or not isinstance(uri, str) or not isinstance(text, str):
        return
    if not settings.lint_enabled:
        return
    path = to_fs_path(uri) or uri
    config, problem = document_config(path, settings)
    linter = IncrementalLinter(path)
    findings = lint_document(linter, text, config, problem)
    positions = DocumentPositions(split_lines(text), encoding)
    diagnostics = [
        diagnostic_json(f, positions, uri=uri, doc_path=path, base_url=settings.rule_docs_base_url)
        for f in findings
    ]
    notification: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
    if isinstance(doc.get("version"), int):
        notification["version"] = doc["version"]
    _send(out, {"jsonrpc": "2.0", "method": PUBLISH, "params": notification})
    early.published[uri] = notification
    early.linters[uri] = linter


def _send(out: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()  # ASCII (json escapes the rest): length in bytes = in characters
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


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


class HandoverFilter:
    """The full server's output, without what the early phase already sent: its answer to ``initialize``
    (stored for the next start; if it differs from the one sent, a warning: the client runs with the stored
    capabilities until the next start) and its first diagnostics of each document published early when they
    are the same. Everything else passes through."""

    def __init__(self, out: BinaryIO, early: EarlyStart) -> None:
        self._out = out
        self._early = early
        self._initialize_pending = early.initialize_id is not None
        self._published = dict(early.published)  # uri -> early params, until the full server publishes it
        self._left = CHECKED_MESSAGES

    def write(self, data: bytes) -> None:
        """One message as pygls writes it (headers and body in one call)."""
        if self._left > 0 and (self._initialize_pending or self._published):
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
        try:
            message = json.loads(data[data.index(_HEADER_END) + len(_HEADER_END) :])
        except ValueError:
            return False
        if not isinstance(message, dict):
            return False
        if message.get("method") == PUBLISH:
            params = message.get("params") or {}
            early = self._published.pop(str(params.get("uri")), None)
            return early is not None and early == params
        if (
            self._initialize_pending
            and "method" not in message
            and message.get("id") == self._early.initialize_id
        ):
            self._initialize_pending = False
            return self._initialize_answered(message.get("result"))
        return False

    def _initialize_answered(self, result: Any) -> bool:
        early = self._early
        if isinstance(result, dict) and early.key is not None and result != early.answered:
            initialize_cache.store(early.key, result)
            if early.answered is not None:
                log.warning(
                    "the server's capabilities differ from those remembered and sent at start-up; "
                    "they apply from the next start (restart the server to use them now)"
                )
        return early.answered is not None
