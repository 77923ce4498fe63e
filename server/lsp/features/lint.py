"""Lint diagnostics and their code actions.

Lints each document with its own ``nkilint.incremental.IncrementalLinter`` (the findings of
``lint_source``, re-checking only the kernels an edit can affect): on open and save at once, on change after the
``lintDebounceMs`` delay; one job per document, newest wins (``lsp.jobs``), in the job threads. A result
is published only if the document still has the version that was linted. Code actions: every
precomputed fix (``Diagnostic.data["fix"]``, while the text is still the one linted) and
``# noqa: NKI###`` for the diagnostic's line.
The project config (``pyproject.toml``) is reloaded when its mtime moved; a change reported by the client
(watched files) relints every open document. Saving a module relints the open documents importing it.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from nki_studio.core.findings import Finding
from nki_studio.lsp import lint_process
from nki_studio.lsp.convert import DocumentPositions, conversion_key, diagnostic_json, split_lines
from nki_studio.lsp.fastpath.handover import Handover
from nki_studio.lsp.jobs import CancelToken, JobCancelled, JobRunner
from nki_studio.lsp.lint_process import LintProcess
from nki_studio.lsp.noqa_edit import noqa_edit
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.lsp.typed import range_from_json, to_diagnostic
from nki_studio.nkilint.incremental import IncrementalLinter
from nki_studio.service.lint import document_config, lint_document
from nki_studio.service.settings import Settings
from pygls.uris import to_fs_path

log = logging.getLogger(__name__)

SOURCE = "nkilint"
FIX_WAIT_S = 2.0  # longest a code action request waits for the document's lint in flight
_RULE_CODE = re.compile(r"NKI\d{3}")


@dataclass(frozen=True)
class _Snapshot:
    """What one lint run needs, captured on the event loop so the thread never touches the workspace."""

    uri: str
    path: str
    version: int | None
    text: str
    settings: Settings
    encoding: Any
    reuse: bool  # the last result may be reused if text and config are unchanged (a save after an edit)


class LintFeature:
    """Owns the lint jobs of one server."""

    def __init__(self, server: NkiLanguageServer, handover: Handover | None = None) -> None:
        """``handover``: what the fast path sent before the server started (None: started normally)."""
        self.server = server
        self.jobs: JobRunner[list[types.Diagnostic]] = JobRunner(server.executor, name="lint")
        self._reported_errors: dict[str, str] = {}
        # uri -> (what the last run depended on, its diagnostics). Runs of one uri never overlap (JobRunner).
        self._last: dict[str, tuple[tuple[Any, ...], list[types.Diagnostic]]] = {}
        # uri -> its linter (and cache of unchanged kernels), when lint runs in this process (see ``_lint``)
        self._linters: dict[str, IncrementalLinter] = {}
        self.process = LintProcess() if lint_process.enabled() else None
        # uri -> ((docs base url, position encoding), conversion key -> diagnostic) of its last run (``_convert``)
        self._converted: dict[str, tuple[tuple[Any, Any], dict[tuple[Any, ...], types.Diagnostic]]] = {}
        self._closed: list[str] = []  # closed since the last memory release: the worker forgets them then
        # uri -> the last version the fast path linted: the versions before it, replayed to this server, are not
        # linted (their diagnostics would follow the newer ones to the client)
        self._linted_early: dict[str, int] = {}
        # handed-over documents whose lint moves to the worker (``_prime_worker``)
        self._priming: set[str] = set()
        # Take over the early lints: the diagnostics the client already has (kept as this feature's until it
        # publishes its own) and the linters that made them (its first lint of the same text reuses them).
        if handover is not None:
            for uri, early in handover.lints.items():
                diagnostics = [to_diagnostic(d) for d in early.published["diagnostics"]]
                server.seed_diagnostics(uri, SOURCE, diagnostics)
                self._linters[uri] = early.linter
                if early.version is not None:
                    self._linted_early[uri] = early.version

    # ---- scheduling ----------------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float, *, reuse: bool = False) -> None:
        """(Re)lint ``uri`` after ``delay`` seconds, superseding a pending run. ``reuse``: skip the engine
        when the text and config are those of the last run (saving right after the edit was linted)."""
        snap = self._snapshot(uri, reuse)
        if snap is None:
            return
        early = self._linted_early.get(uri)
        if early is not None and isinstance(snap.version, int) and snap.version < early:
            log.debug("lint of %s v%s skipped: the fast path linted v%s", uri, snap.version, early)
            return
        if not snap.settings.lint_enabled:
            self.clear(uri)
            return
        self.jobs.submit(
            uri, lambda token: self.run(snap, token), delay=delay, on_result=lambda d: self._publish(snap, d)
        )

    def relint_all(self) -> None:
        """Lint every open document again (settings or config changed)."""
        for uri in list(self.server.workspace.text_documents):
            self.schedule(uri, 0.0)

    def on_save(self, uri: str) -> None:
        """Lint the saved document, and the open documents importing it: kernels inline helpers from local
        modules, which the engine reads from disk, so their findings depend on the saved text."""
        self.schedule(uri, 0.0, reuse=True)
        stem = Path(to_fs_path(uri) or uri).stem
        if not stem.isidentifier():
            return
        name = re.escape(stem)
        imports = re.compile(
            rf"^[ \t]*(?:(?:from|import)[ \t]+[\w.]*\b{name}\b|from[ \t]+[\w.]+[ \t]+import[ \t].*\b{name}\b)",
            re.MULTILINE,
        )
        for other, doc in list(self.server.workspace.text_documents.items()):
            if other != uri and imports.search(doc.source):
                self.schedule(other, 0.0)

    def clear(self, uri: str) -> None:
        """Cancel the document's job and remove its lint diagnostics."""
        self.jobs.cancel(uri)
        self.server.publish_diagnostics(uri, SOURCE, [])

    def on_close(self, uri: str) -> None:
        """Cancel the job; the server removes a closed document's diagnostics."""
        self.jobs.cancel(uri)
        self._last.pop(uri, None)
        self._linters.pop(uri, None)
        self._linted_early.pop(uri, None)  # reopened, it starts again at its own versions
        self._converted.pop(uri, None)
        self._reported_errors.pop(uri, None)
        self._closed.append(uri)

    def release(self) -> None:
        """After a burst of closes (in a job thread): the worker ends if no document is open any more (all its
        memory goes back to the system), else it forgets the closed documents."""
        closed, self._closed = self._closed, []
        open_now = set(self.server.workspace.text_documents)
        for cache in (self._last, self._converted):  # a run in flight at the close may have stored its result
            for uri in [u for u in cache if u not in open_now]:
                cache.pop(uri, None)
        if self.process is None:
            return
        if not self.server.workspace.text_documents:
            self.process.stop()
        else:
            self.process.close(closed)

    def _snapshot(self, uri: str, reuse: bool) -> _Snapshot | None:
        doc = self.server.workspace.get_text_document(uri)
        path = doc.path or to_fs_path(uri) or uri
        if not (doc.language_id == "python" or (doc.language_id is None and path.endswith(".py"))):
            return None
        return _Snapshot(
            uri=uri,
            path=path,
            version=doc.version,
            text=doc.source,
            settings=self.server.settings,
            encoding=self.server.workspace.position_encoding,
            reuse=reuse,
        )

    def _publish(self, snap: _Snapshot, diagnostics: list[types.Diagnostic]) -> None:
        docs = self.server.workspace.text_documents
        doc = docs.get(snap.uri)
        if doc is None or doc.version != snap.version:
            log.debug("lint of %s v%s dropped: document moved on", snap.uri, snap.version)
            return
        self.server.publish_diagnostics(snap.uri, SOURCE, diagnostics)

    # ---- the job (runs in a pool thread) -------------------------------------------------------------
    def run(self, snap: _Snapshot, token: CancelToken) -> list[types.Diagnostic]:
        """Lint one snapshot and convert the findings; an engine crash becomes one internal-error diagnostic."""
        started = time.perf_counter()
        positions = DocumentPositions(split_lines(snap.text), snap.encoding)
        try:
            config, config_problem = document_config(snap.path, snap.settings, snap.text)
            depends_on = (snap.text, config, config_problem, snap.settings.rule_docs_base_url, snap.encoding)
            last = self._last.get(snap.uri)
            if snap.reuse and last is not None and last[0] == depends_on:
                log.debug("lint %s v%s: unchanged since the last run, reused", snap.uri, snap.version)
                return last[1]
            token.raise_if_cancelled()
            engine_start = time.perf_counter()
            findings, checked = self._lint(snap, config, config_problem, token)
            engine_ms = (time.perf_counter() - engine_start) * 1000
        except JobCancelled:
            raise  # superseded (an edit came in): the runner drops it; not an engine crash
        except Exception as exc:
            return [self._internal_error(snap, exc)]
        self._reported_errors.pop(snap.uri, None)
        token.raise_if_cancelled()
        diagnostics = self._convert(snap, findings, positions)
        self._last[snap.uri] = (depends_on, diagnostics)
        # benchmarks/lsp_bench.py reads this line (engine vs total time) at debug level.
        log.debug(
            "lint %s v%s: %d diagnostics, engine %.1f ms, total %.1f ms, %d kernel groups checked",
            snap.uri,
            snap.version,
            len(diagnostics),
            engine_ms,
            (time.perf_counter() - started) * 1000,
            checked,
        )
        return diagnostics

    def _convert(
        self, snap: _Snapshot, findings: list[Finding], positions: DocumentPositions
    ) -> list[types.Diagnostic]:
        """The findings as diagnostics; those the last run of the document converted on the same lines are
        reused (during typing most findings are unchanged, and converting costs about a third of an incremental
        lint, in this process, which also answers the user's requests)."""
        base_url = snap.settings.rule_docs_base_url
        memo = self._converted.get(snap.uri)
        if memo is None or memo[0] != (base_url, snap.encoding):
            memo = ((base_url, snap.encoding), {})
        reused, fresh = memo[1], {}
        diagnostics = []
        for f in findings:
            key = conversion_key(f, positions, snap.path)
            diagnostic = reused.get(key) if key is not None else None
            if diagnostic is None:
                diagnostic = to_diagnostic(
                    diagnostic_json(f, positions, uri=snap.uri, doc_path=snap.path, base_url=base_url)
                )
            if key is not None:
                fresh[key] = diagnostic
            diagnostics.append(diagnostic)
        self._converted[snap.uri] = (memo[0], fresh)
        return diagnostics

    def _lint(
        self, snap: _Snapshot, config: Any, config_problem: Finding | None, token: CancelToken
    ) -> tuple[list[Finding], int]:
        """The findings and the number of kernel groups checked: in the lint worker process, or in this thread
        with the document's own linter (no worker, or the linter the fast path handed over, whose first lint
        of the same text costs nothing, until the worker has linted the document once: ``_prime_worker``)."""
        linter = self._linters.get(snap.uri)
        if self.process is not None and (linter is None or linter.path != snap.path):
            findings, checked = self.process.lint(snap.uri, snap.path, snap.text, config, token)
            if config_problem is not None:
                findings.insert(0, config_problem)
            return findings, checked
        if linter is None or linter.path != snap.path:
            linter = self._linters[snap.uri] = IncrementalLinter(snap.path)
        findings = lint_document(linter, snap.text, config, config_problem)
        if self.process is not None and snap.uri not in self._priming:
            self._priming.add(snap.uri)
            threading.Thread(
                target=self._prime_worker, args=(snap, config), name="nki-studio-lint-prime", daemon=True
            ).start()
        return findings, linter.last_checked

    def _prime_worker(self, snap: _Snapshot, config: Any) -> None:
        """The handed-over linter served its first lint: start the worker and have it lint the same text (in its
        own process), then let it take over. Until then the handed-over linter goes on linting here: starting the
        worker and its first whole-document lint took ~0.3 s, which the first edit after the start waited for."""
        assert self.process is not None
        try:
            self.process.lint(snap.uri, snap.path, snap.text, config, CancelToken(), logged=False)
        except Exception as exc:  # the next lint asks the worker again and reports what goes wrong there
            log.debug("priming the lint worker failed: %s", exc)
        self._linters.pop(snap.uri, None)
        if snap.uri not in self.server.workspace.text_documents:  # closed meanwhile: the worker forgets it
            self.process.close([snap.uri])

    def _internal_error(self, snap: _Snapshot, exc: Exception) -> types.Diagnostic:
        summary = f"{type(exc).__name__}: {exc}"
        if self._reported_errors.get(snap.uri) != summary:  # full traceback once per distinct error
            self._reported_errors[snap.uri] = summary
            log.exception("nkilint failed on %s", snap.path)
        return _line_one(
            f"nki-studio internal error while linting (see the nki-studio log): {summary}",
            types.DiagnosticSeverity.Error,
        )

    # ---- code actions --------------------------------------------------------------------------------
    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """Quick fixes from ``Diagnostic.data`` and noqa insertions for the diagnostics in the request."""
        only = params.context.only
        if only and not any(
            k == types.CodeActionKind.QuickFix or types.CodeActionKind.QuickFix.startswith(k) for k in only
        ):
            return None
        uri = params.text_document.uri
        # Just after start-up (first diagnostics from the fast path) this server has not linted the document
        # yet: wait for its first lint, whose result tells whether the fixes are for this text. Later a run in
        # flight is not waited for (during fast typing that would be every time): fixes of a stale lint are
        # left out until the new text is linted, and noqa actions are offered at once.
        if uri not in self._last:
            await self.jobs.settled(uri, FIX_WAIT_S)
        doc = self.server.workspace.get_text_document(uri)
        encoding = self.server.workspace.position_encoding
        # Fix edits were computed for the text of the last lint; once the document moved on they could
        # land in the wrong place, so they are offered again only after the new text is linted.
        last = self._last.get(uri)
        fresh = last is not None and last[0][0] == doc.source
        actions: list[types.CodeAction] = []
        noqa_actions: list[types.CodeAction] = []
        seen_noqa: set[tuple[int, str]] = set()
        for diag in params.context.diagnostics:
            if diag.source != SOURCE or not isinstance(diag.code, str):
                continue
            data = diag.data if isinstance(diag.data, dict) else {}
            fix = data.get("fix")
            if isinstance(fix, dict) and fresh:
                edits = [
                    types.TextEdit(range=range_from_json(e["range"]), new_text=e["newText"])
                    for e in fix["edits"]
                ]
                actions.append(
                    self._action(
                        f"{fix['title']} ({diag.code})", uri, doc.version, edits, diag, preferred=True
                    )
                )
            key = (diag.range.start.line, diag.code)
            if key not in seen_noqa and _suppressible(diag.code):
                seen_noqa.add(key)
                edit = noqa_edit(doc.source, diag.range.start.line, diag.code, encoding)
                if edit is not None:
                    title = f"Suppress {diag.code} on this line (# noqa: {diag.code})"
                    noqa_actions.append(self._action(title, uri, doc.version, [edit], diag, preferred=False))
        return (actions + noqa_actions) or None

    def _action(
        self,
        title: str,
        uri: str,
        version: int | None,
        edits: list[types.TextEdit],
        diag: types.Diagnostic,
        *,
        preferred: bool,
    ) -> types.CodeAction:
        caps = self.server.client_capabilities.workspace
        versioned = (
            caps is not None
            and caps.workspace_edit is not None
            and bool(caps.workspace_edit.document_changes)
        )
        if versioned:
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=list(edits),
                    )
                ]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: edits})
        return types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diag],
            edit=edit,
            is_preferred=preferred or None,
        )

    # ---- events --------------------------------------------------------------------------------------
    def on_files_changed(self, changes: Any) -> None:
        """A watched pyproject.toml changed: relint (``load_config`` rereads it by mtime)."""
        if any(c.uri.endswith("pyproject.toml") for c in changes):
            self.relint_all()


def _suppressible(code: str) -> bool:
    """Whether ``# noqa: CODE`` makes sense: a real rule, not the engine's own syntax/config/internal/noqa codes."""
    from nki_studio.nkilint.rule import all_rules

    rule = all_rules().get(code) if _RULE_CODE.fullmatch(code) else None
    return rule is not None and rule.check is not None


def _line_one(message: str, severity: types.DiagnosticSeverity) -> types.Diagnostic:
    """A diagnostic about the whole file (config problem, internal error), on line 1."""
    start = types.Position(line=0, character=0)
    return types.Diagnostic(
        range=types.Range(start=start, end=start), message=message, severity=severity, source=SOURCE
    )


def register(server: NkiLanguageServer) -> None:
    """Wire lint into the server's document, settings and file events."""
    # Import the engine and every rule now, in the main thread: the first lint needs them anyway, and a
    # first import racing between a job thread and the event loop (code actions, other features importing
    # the shared model modules) can deadlock on module locks and leave the rule registry half-filled.
    from nki_studio.nkilint.rule import all_rules

    importlib.import_module("nki_studio.nkilint.api")
    all_rules()
    feature = LintFeature(server, server.handover)

    def debounce() -> float:
        return server.settings.lint_debounce_ms / 1000.0

    server.on_document("open", lambda uri: feature.schedule(uri, 0.0))
    server.on_document("change", lambda uri: feature.schedule(uri, debounce()))
    server.on_document("save", feature.on_save)
    server.on_document("close", feature.on_close)
    server.on_release(feature.release)
    server.on_settings_changed(lambda old, new: feature.relint_all())
    server.watch_files("**/pyproject.toml")
    server.on_files_changed(feature.on_files_changed)
    server.add_code_action_provider(feature.code_actions, kinds=[types.CodeActionKind.QuickFix])
