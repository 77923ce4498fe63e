"""The fast path's own conversation, standard library only until ``initialize`` is answered:

1. ``initialize`` is answered from the answer the full server gave to the same request on an earlier start
   (``initialize_cache``); without one, or with the setting ``fastStart`` false, nothing more happens here;
2. ``initialized`` is let through;
3. the first ``textDocument/didOpen`` of a Python document is linted exactly as the full server lints it
   (``service.lint``, ``lsp.convert``) and its diagnostics are published;
4. keyword-argument completions of NKI calls in that document already waiting when that is done (the user
   typing right after opening it) are answered from the stubs' table (``early_completion``), as the full
   server answers them; the full server's own answers to those requests are dropped (``streams``).

Any other message, or a second or so of silence, ends this phase at once. Needs ``select`` on pipes (POSIX).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from nki_studio.lsp.fastpath import initialize_cache
from nki_studio.lsp.fastpath.handover import EarlyLint, Handover
from nki_studio.lsp.fastpath.wire import PUBLISH, MessageReader, send

log = logging.getLogger(__name__)

IDLE_S = 1.0  # silence after which the early phase ends (e.g. no document open: nothing to lint early)


@dataclass(frozen=True)
class EarlyPhase:
    """What the early phase did: the bytes the full server must be handed, the ``initialize`` request whose
    answer the full server's output is checked against, and the :class:`Handover` (None: nothing was sent)."""

    consumed: bytes  # every byte read from the client, replayed to the full server
    initialize_id: Any = (
        None  # id of the client's initialize request, if it came first and may be answered early
    )
    cache_key: str | None = None  # its initialize_cache key
    handover: Handover | None = None
    answered_ids: tuple[Any, ...] = ()  # ids of the client's requests answered here (completions)


@dataclass
class _Progress:
    """What has been sent so far (kept when a later step fails: the client has it)."""

    initialize_id: Any = None
    cache_key: str | None = None
    answered: dict[str, Any] | None = None
    lints: dict[str, EarlyLint] = field(default_factory=dict)
    requests: list[Any] = field(default_factory=list)  # ids of the requests answered early


def run(fd: int, out: BinaryIO, idle_s: float = IDLE_S) -> EarlyPhase:
    """Run the early phase on input ``fd`` and output ``out`` (see the module docstring)."""
    started = time.perf_counter()
    reader = MessageReader(fd)
    progress = _Progress()
    try:
        _converse(reader, out, progress, idle_s)
    except Exception:  # never let the shortcut stop the server: the full server answers what is left
        log.exception("early start-up phase failed; the full server takes over")
    if progress.lints:
        log.info(
            "first diagnostics published %.0f ms after the server began reading, before the full server loaded",
            (time.perf_counter() - started) * 1000,
        )
    if progress.requests:
        log.info("%d completion(s) answered before the full server loaded", len(progress.requests))
    answered = progress.answered
    return EarlyPhase(
        consumed=bytes(reader.data),
        initialize_id=progress.initialize_id,
        cache_key=progress.cache_key,
        handover=None if answered is None else Handover(initialize_result=answered, lints=progress.lints),
        answered_ids=tuple(progress.requests),
    )


def _converse(reader: MessageReader, out: BinaryIO, progress: _Progress, idle_s: float) -> None:
    message = reader.next(None)
    if message is None or message.get("method") != "initialize" or "id" not in message:
        return
    params = message.get("params") or {}
    # The settings come with initialize; ``fastStart`` must be known before anything is answered.
    from nki_studio.service.settings import Settings, merge

    settings, _ = merge(Settings(), params.get("initializationOptions"))
    if not settings.fast_start:
        log.info("fast start-up path off (setting fastStart): the full server answers everything")
        return
    progress.initialize_id = message["id"]
    progress.cache_key = initialize_cache.request_key(params)
    result = initialize_cache.load(progress.cache_key)
    if result is None:
        return
    send(out, {"jsonrpc": "2.0", "id": message["id"], "result": result})
    progress.answered = result
    # The lint engine and its rules load now, while the client takes in the answer and sends didOpen.
    from nki_studio.nkilint.rule import all_rules

    all_rules()
    encoding = (result.get("capabilities") or {}).get("positionEncoding") or "utf-16"
    while (message := reader.next(idle_s)) is not None:
        method = message.get("method")
        if method == "initialized":
            continue
        if method == "textDocument/didOpen" and "id" not in message:
            _publish_first(out, message.get("params") or {}, settings, encoding, progress)
            _answer_waiting_completions(reader, out, message.get("params") or {}, encoding, progress)
        return


WAITING_S = 0.001  # what "already waiting" means: read what is in the pipe, never wait for the client


def _answer_waiting_completions(
    reader: MessageReader, out: BinaryIO, opened: dict[str, Any], encoding: Any, progress: _Progress
) -> None:
    """Answer the completion requests on the opened document that are already waiting, while each one is a
    keyword argument the stubs' table knows; stop at anything else (the full server answers it)."""
    from nki_studio.lsp.fastpath.early_completion import answer

    doc = opened.get("textDocument") or {}
    uri, text = doc.get("uri"), doc.get("text")
    if doc.get("languageId") != "python" or not isinstance(uri, str) or not isinstance(text, str):
        return
    while (message := reader.next(WAITING_S)) is not None:
        if message.get("method") != "textDocument/completion" or "id" not in message:
            return
        params = message.get("params") or {}
        if (params.get("textDocument") or {}).get("uri") != uri:
            return
        result = answer(text, params.get("position") or {}, encoding)
        if result is None:
            return
        send(out, {"jsonrpc": "2.0", "id": message["id"], "result": result})
        progress.requests.append(message["id"])


def _publish_first(
    out: BinaryIO, params: dict[str, Any], settings: Any, encoding: Any, progress: _Progress
) -> None:
    from nki_studio.lsp.convert import DocumentPositions, diagnostic_json, split_lines
    from nki_studio.nkilint.incremental import IncrementalLinter
    from nki_studio.service.lint import document_config, lint_document
    from pygls.uris import to_fs_path

    doc = params.get("textDocument") or {}
    uri, text = doc.get("uri"), doc.get("text")
    if doc.get("languageId") != "python" or not isinstance(uri, str) or not isinstance(text, str):
        return
    if not settings.lint_enabled:
        return
    path = to_fs_path(uri) or uri
    config, problem = document_config(path, settings, text)
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
    send(out, {"jsonrpc": "2.0", "method": PUBLISH, "params": notification})
    progress.lints[uri] = EarlyLint(published=notification, linter=linter)
