"""The fast path's own conversation, standard library only until ``initialize`` is answered:

1. ``initialize`` is answered from the answer the full server gave to the same request on an earlier start
   (``initialize_cache``); without one, or with the setting ``fastStart`` false, nothing more happens here;
2. ``initialized`` is let through;
3. the first ``textDocument/didOpen`` of a Python document is linted exactly as the full server lints it
   (``service.lint``, ``lsp.convert``) and its diagnostics are published;
4. then, while the full server's modules load on a thread (``preload``), the edits of that document are
   followed: each ``didChange`` is applied (``text_sync``) and its diagnostics published, with the linter of
   the open, as the full server would; keyword-argument completions of NKI calls in it are answered from the
   stubs' table (``early_completion``), as the full server answers them. The full server's own answers to
   those requests are dropped, and its lint skips the versions already published (``streams``, ``handover``).

Any other message, the end of the loading, or a second or so of silence before a document opens ends this phase
at once. Needs ``select`` on pipes (POSIX).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from nki_studio.lsp.fastpath import initialize_cache
from nki_studio.lsp.fastpath.handover import EarlyLint, Handover
from nki_studio.lsp.fastpath.preload import Preload
from nki_studio.lsp.fastpath.text_sync import apply_change
from nki_studio.lsp.fastpath.wire import PUBLISH, MessageReader, send
from nki_studio.lsp.logs import EarlyRecords

log = logging.getLogger(__name__)

IDLE_S = 1.0  # silence after which the early phase ends (e.g. no document open: nothing to lint early)
POLL_S = 0.01  # while following the opened document: how often the end of the loading is noticed
INCREMENTAL = 2  # TextDocumentSyncKind.Incremental


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
    # didChange notifications followed (applied; linted unless another came within the debounce)
    edits: int = 0


def run(fd: int, out: BinaryIO, idle_s: float = IDLE_S) -> EarlyPhase:
    """Run the early phase on input ``fd`` and output ``out`` (see the module docstring)."""
    started = time.perf_counter()
    reader = MessageReader(fd)
    progress = _Progress()
    logged = EarlyRecords()
    logging.getLogger("nki_studio").addHandler(logged)
    try:
        _converse(reader, out, progress, idle_s)
    except Exception:  # never let the shortcut stop the server: the full server answers what is left
        log.exception("early start-up phase failed; the full server takes over")
    finally:
        logging.getLogger("nki_studio").removeHandler(logged)
    if progress.lints:
        log.info(
            "first diagnostics published %.0f ms after the server began reading, before the full server loaded",
            (time.perf_counter() - started) * 1000,
        )
    if progress.edits:
        log.info("%d edit(s) of the opened document followed before the full server loaded", progress.edits)
    if progress.requests:
        log.info("%d completion(s) answered before the full server loaded", len(progress.requests))
    answered = progress.answered
    return EarlyPhase(
        consumed=bytes(reader.data),
        initialize_id=progress.initialize_id,
        cache_key=progress.cache_key,
        handover=(
            None
            if answered is None
            else Handover(initialize_result=answered, lints=progress.lints, logged=tuple(logged.records))
        ),
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
    capabilities = result.get("capabilities") or {}
    encoding = capabilities.get("positionEncoding") or "utf-16"
    sync = capabilities.get("textDocumentSync")
    incremental = (sync.get("change") if isinstance(sync, dict) else sync) == INCREMENTAL
    while (message := reader.next(idle_s)) is not None:
        method = message.get("method")
        if method == "initialized":
            continue
        if method == "textDocument/didOpen" and "id" not in message:
            opened = _Opened.of(message.get("params") or {})
            if opened is not None:
                _publish(out, opened, settings, encoding, progress)
            preload = Preload().start()
            try:
                if opened is not None:
                    _follow(reader, out, opened, settings, encoding, incremental, progress, preload)
            finally:
                preload.wait()
        return


@dataclass
class _Opened:
    """The document opened first, as the early phase follows it."""

    uri: str
    text: str
    version: Any
    path: str = ""
    linter: Any = None  # its IncrementalLinter, once linted

    @staticmethod
    def of(params: dict[str, Any]) -> _Opened | None:
        """The opened document, or None when it is not a Python document the early phase can take."""
        doc = params.get("textDocument") or {}
        uri, text = doc.get("uri"), doc.get("text")
        if doc.get("languageId") != "python" or not isinstance(uri, str) or not isinstance(text, str):
            return None
        return _Opened(uri, text, doc.get("version"))


def _follow(
    reader: MessageReader,
    out: BinaryIO,
    doc: _Opened,
    settings: Any,
    encoding: Any,
    incremental: bool,
    progress: _Progress,
    preload: Preload,
) -> None:
    """Until the full server has loaded: publish the diagnostics of ``doc``'s edits, each once no other edit came
    for ``lintDebounceMs`` (as the full server lints them), and answer the keyword completions in it; stop at
    anything else (the full server answers it, and lints an edit left waiting)."""
    from nki_studio.lsp.fastpath.early_completion import answer

    debounce = settings.lint_debounce_ms / 1000.0
    due: float | None = None  # when the waiting edit is linted
    while not preload.done():
        wait = POLL_S if due is None else max(0.0, min(POLL_S, due - time.monotonic()))
        message = reader.next(wait)
        if message is None:
            if reader.ended or reader.unreadable:
                return
            if due is not None and time.monotonic() >= due:
                _publish(out, doc, settings, encoding, progress)
                due = None
            continue
        params = message.get("params") or {}
        target = params.get("textDocument") or {}
        if target.get("uri") != doc.uri:
            return
        method = message.get("method")
        if method == "textDocument/didChange" and "id" not in message:
            if not incremental or doc.uri not in progress.lints:
                return
            for change in params.get("contentChanges") or ():
                doc.text = apply_change(doc.text, change, encoding)
            doc.version = target.get("version")
            progress.edits += 1
            due = time.monotonic() + debounce
            if debounce <= 0:
                _publish(out, doc, settings, encoding, progress)
                due = None
        elif method == "textDocument/completion" and "id" in message:
            result = answer(doc.text, params.get("position") or {}, encoding)
            if result is None:
                return
            send(out, {"jsonrpc": "2.0", "id": message["id"], "result": result})
            progress.requests.append(message["id"])
        else:
            return


def _publish(out: BinaryIO, doc: _Opened, settings: Any, encoding: Any, progress: _Progress) -> None:
    """Lint ``doc`` as the full server does and publish its diagnostics (the first time: a new linter)."""
    from nki_studio.lsp.convert import DocumentPositions, diagnostic_json, split_lines
    from nki_studio.nkilint.incremental import IncrementalLinter
    from nki_studio.service.lint import document_config, lint_document
    from pygls.uris import to_fs_path

    if not settings.lint_enabled:
        return
    if doc.linter is None:
        doc.path = to_fs_path(doc.uri) or doc.uri
        doc.linter = IncrementalLinter(doc.path)
    config, problem = document_config(doc.path, settings, doc.text)
    findings = lint_document(doc.linter, doc.text, config, problem)
    positions = DocumentPositions(split_lines(doc.text), encoding)
    diagnostics = [
        diagnostic_json(f, positions, uri=doc.uri, doc_path=doc.path, base_url=settings.rule_docs_base_url)
        for f in findings
    ]
    version = doc.version if isinstance(doc.version, int) else None
    early = progress.lints.get(doc.uri)
    if early is not None and early.published["diagnostics"] == diagnostics:
        # what the client shows: the full server too holds back an identical publish (it sends it later)
        progress.lints[doc.uri] = EarlyLint(published=early.published, linter=doc.linter, version=version)
        return
    notification: dict[str, Any] = {"uri": doc.uri, "diagnostics": diagnostics}
    if version is not None:
        notification["version"] = version
    send(out, {"jsonrpc": "2.0", "method": PUBLISH, "params": notification})
    progress.lints[doc.uri] = EarlyLint(published=notification, linter=doc.linter, version=version)
