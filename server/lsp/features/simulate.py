"""Simulate kernels from the editor: command ``nki-studio.simulate``, simulate-on-save, results as
diagnostics, ``nki/simulationResult``, estimated ``nki/heatmap``, inlay hints and hovers, a "Simulate" code
lens per spec'd kernel, and the "Add simulate spec" code action.

* Running user code is a trust decision: nothing runs (and no worker process is even started) unless the
  client declared the workspace trusted; the command then answers with a refusal, on-save does nothing.
* Workers are killed by the pool's atexit hook and die with the server process anyway.
* On save, every kernel of the file with a spec (comment or pyproject) is simulated, one job per
  (document, kernel): a new save cancels the running job (its worker is killed) and only the newest result
  is published. Simulations run in a worker process via ``nki_studio.simulate.runner`` driven from a
  thread (``asyncio.to_thread``), so the event loop keeps answering requests.
* ``nki/simulationResult`` is the structured result (``nki_studio.simulate.job``) plus ``uri``; the command
  answers with the same object.
* Spec problems (NKI601) are published on open/change/save even in untrusted workspaces: parsing runs no
  user code.
* Diagnostics: LSP has one diagnostics list per document, and lint publishes its own. This module keeps
  the last list every other publisher sent and merges it with ``nki-sim`` diagnostics (see
  ``_DiagnosticsMerger``).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from nki_studio.lsp.convert import DocumentPositions, split_lines, to_diagnostic
from nki_studio.lsp.jobs import CancelToken, JobRunner, progress
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.model.targets import DEFAULT_GENERATION, NEWEST_VERSION
from nki_studio.nkilint.config import ConfigError, load_config
from nki_studio.nkilint.findings import Finding
from nki_studio.profile.heatmap import fmt_ns, hover_markdown, inlay_label
from nki_studio.simulate.heat import estimate_payload
from nki_studio.simulate.job import Job
from nki_studio.simulate.report import findings as result_findings
from nki_studio.simulate.runner import WorkerPool, run_job
from nki_studio.simulate.spec import KernelInfo, comment_findings, find_kernels, inferred_fields, resolve
from pygls.uris import to_fs_path

log = logging.getLogger(__name__)

COMMAND = "nki-studio.simulate"
RESULT_NOTIFICATION = "nki/simulationResult"
HEATMAP_NOTIFICATION = "nki/heatmap"
SOURCE = "nki-sim"
REFUSAL = ("nki-studio does not run kernels in an untrusted workspace: simulating executes the kernel's "
           "Python code. Trust the workspace to enable simulation.")
_DOCS_DIR = Path(__file__).resolve().parents[3] / "docs" / "rules"


class _DiagnosticsMerger:
    """Joins ``nki-sim`` diagnostics with whatever other features publish for the same document.

    It wraps the server's ``text_document_publish_diagnostics`` (instance attribute): a publish from
    another feature is remembered and sent together with the current simulation diagnostics.
    """

    def __init__(self, server: NkiLanguageServer) -> None:
        self._publish = server.text_document_publish_diagnostics
        self._others: dict[str, tuple[list[types.Diagnostic], int | None]] = {}
        self._mine: dict[str, list[types.Diagnostic]] = {}
        server.text_document_publish_diagnostics = self._from_others

    def _from_others(self, params: types.PublishDiagnosticsParams) -> None:
        others = [d for d in params.diagnostics if d.source != SOURCE]
        self._others[params.uri] = (others, params.version)
        self._publish(types.PublishDiagnosticsParams(uri=params.uri, version=params.version,
                                                     diagnostics=others + self._mine.get(params.uri, [])))

    def set(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        """Replace this feature's diagnostics of ``uri`` and publish the union (only when they changed)."""
        if self._mine.get(uri, []) == diagnostics:
            return
        self._mine[uri] = diagnostics
        others, version = self._others.get(uri, ([], None))
        self._publish(types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=others + diagnostics))

    def forget(self, uri: str) -> None:
        """Drop what is known about a closed document."""
        self._mine.pop(uri, None)
        self._others.pop(uri, None)


class SimulateFeature:
    """Owns the simulation jobs, results and the warm worker pool of one server."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self.jobs: JobRunner[dict[str, Any]] = JobRunner(server.executor, name="simulate")
        self.results: dict[str, dict[str, dict[str, Any]]] = {}  # uri -> kernel -> result
        self.diagnostics = _DiagnosticsMerger(server)
        self._pool: WorkerPool | None = None
        self._keys: dict[str, set[str]] = {}  # uri -> job keys ever submitted (cancelled on close)

    # ---- trust and workers -----------------------------------------------------------------------------
    def pool(self) -> WorkerPool:
        """The warm worker pool, started on first trusted use (never in an untrusted workspace)."""
        assert self.server.trusted, "worker pool requested in an untrusted workspace"
        if self._pool is None:
            self._pool = WorkerPool(warm=True)
        return self._pool

    def on_settings_changed(self, old: Any, new: Any) -> None:
        """Gaining trust pre-starts a worker (so the first save is warm); losing it stops everything at once."""
        if new.trusted_workspace and not old.trusted_workspace and new.simulate_on_save:
            self.pool()
        if old.trusted_workspace and not new.trusted_workspace:
            self.jobs.cancel_all()
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    # ---- documents ---------------------------------------------------------------------------------------
    def _text(self, uri: str) -> tuple[str, str] | None:
        doc = self.server.workspace.text_documents.get(uri)
        path = to_fs_path(uri)
        if path is None:
            return None
        if doc is not None:
            return path, doc.source
        try:
            return path, Path(path).read_text(encoding="utf-8")
        except OSError:
            return None

    def refresh_spec_findings(self, uri: str) -> None:
        """Publish NKI601 for the document's spec comments plus the current simulation diagnostics."""
        got = self._text(uri)
        if got is None:
            return
        path, text = got
        self._publish(uri, path, text)

    def _publish(self, uri: str, path: str, text: str) -> None:
        kernels = {k.name: k for k in find_kernels(text, path)}
        found: list[Finding] = list(comment_findings(text, path))
        for name, result in self.results.get(uri, {}).items():
            found.extend(result_findings(result, path, kernels.get(name)))
        positions = DocumentPositions(split_lines(text), self.server.workspace.position_codec)
        diagnostics = [to_diagnostic(f, positions, uri=uri, doc_path=path,
                                     base_url=self.server.settings.rule_docs_base_url, docs_dir=_DOCS_DIR)
                       for f in found]
        self.diagnostics.set(uri, diagnostics)

    def on_close(self, uri: str) -> None:
        """Cancel the document's runs and forget its results."""
        for key in self._keys.pop(uri, set()):
            self.jobs.cancel(key)
        self.results.pop(uri, None)
        self.diagnostics.forget(uri)

    def on_save(self, uri: str) -> None:
        """Simulate every kernel of the document that has a spec (trusted workspaces only)."""
        self.refresh_spec_findings(uri)
        settings = self.server.settings
        if not settings.simulate_on_save:
            return
        if not self.server.trusted:
            log.info("simulate-on-save skipped for %s: the workspace is not trusted", uri)
            return
        got = self._text(uri)
        if got is None:
            return
        path, text = got
        for kernel in find_kernels(text, path):
            resolution = resolve(text, path, kernel.name, infer=False)
            if resolution.spec is not None:
                self.submit(uri, path, kernel.name, resolution.spec.to_json())

    # ---- running -------------------------------------------------------------------------------------------
    def _job(self, path: str, spec: dict[str, Any]) -> Job:
        settings = self.server.settings
        try:
            configured = load_config(path).target
            generation, version = configured.generation, configured.nki_version
        except ConfigError:
            generation, version = DEFAULT_GENERATION, NEWEST_VERSION
        return Job(path=path, spec=spec, target=(settings.target or generation).value,
                   nki_version=str(settings.nki_version or version),
                   memory_bytes=settings.simulation_memory_mb << 20)

    def submit(self, uri: str, path: str, kernel: str, spec: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        """Start (superseding any run of the same kernel) and return a future of the published result."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()
        job = self._job(path, spec)

        async def work(token: CancelToken) -> dict[str, Any]:
            if not self.server.trusted:  # trust was withdrawn while this run waited
                return {"status": "refused", "kernel": kernel, "message": REFUSAL}
            async with progress(self.server, f"Simulating {kernel}", cancel=token) as prog:
                prog.report(f"{kernel}: starting")
                try:
                    return await asyncio.to_thread(
                        run_job, job, pool=self.pool(), timeout_s=self.server.settings.simulation_timeout_s,
                        cancelled=lambda: token.cancelled, on_progress=prog.report)
                except Exception as exc:  # a bug here must not leave the command waiting forever
                    log.exception("simulation of %s failed", kernel)
                    return {"status": "crashed", "kernel": kernel, "path": path,
                            "message": f"nki-studio could not run the simulation: {exc}"}

        def publish(result: dict[str, Any]) -> None:
            self._on_result(uri, path, kernel, result)
            if not done.done():
                done.set_result(result)

        def resolve_cancelled() -> None:
            if not done.done():
                done.set_result({"status": "cancelled", "kernel": kernel,
                                 "message": f"simulation of {kernel} was cancelled"})

        def superseded() -> None:
            loop.call_soon_threadsafe(resolve_cancelled)

        self._keys.setdefault(uri, set()).add(f"{uri}::{kernel}")
        token = self.jobs.submit(f"{uri}::{kernel}", work, on_result=publish)
        token.on_cancel(superseded)
        return done

    def _on_result(self, uri: str, path: str, kernel: str, result: dict[str, Any]) -> None:
        if result.get("status") in ("cancelled", "refused"):
            return
        self.results.setdefault(uri, {})[kernel] = result
        self.server.notify_client(RESULT_NOTIFICATION, {**result, "uri": uri, "kernel": kernel})
        if result.get("cost"):
            self.server.notify_client(HEATMAP_NOTIFICATION, estimate_payload(uri, path, kernel, result["cost"]))
        got = self._text(uri)
        if got is not None:
            self._publish(uri, path, got[1])
        caps = self.server.client_capabilities.workspace
        refresh = caps is not None and caps.inlay_hint is not None and caps.inlay_hint.refresh_support
        if self.server.settings.inlay_hints and refresh:
            self.server.call_soon(lambda: self.server.workspace_inlay_hint_refresh(None))

    async def command(self, *args: Any) -> dict[str, Any]:
        """``nki-studio.simulate`` with ``[uri, kernelName]`` (kernel optional): the structured result."""
        uri = str(args[0]) if args else ""
        kernel = str(args[1]) if len(args) > 1 and args[1] else None
        if not self.server.trusted:
            self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                                    message=REFUSAL))
            return {"status": "refused", "message": REFUSAL}
        got = self._text(uri)
        if got is None:
            return {"status": "error", "message": f"cannot read {uri!r}"}
        path, text = got
        resolution = resolve(text, path, kernel)
        if resolution.spec is None:
            return {"status": "error", "message": "cannot simulate: " + "; ".join(resolution.problems)}
        # Cancel through the run's $/progress (cancellable): pygls 2.1 runs command handlers inside its
        # executeCommand generator, so a $/cancelRequest of the command never reaches this coroutine.
        result = await self.submit(uri, path, resolution.spec.kernel, resolution.spec.to_json())
        try:
            unsaved = Path(path).read_text(encoding="utf-8") != text
        except OSError:
            unsaved = False
        if unsaved:  # the worker runs the file on disk, the way the kernel would be imported
            result.setdefault("warnings", []).append("the document has unsaved changes: the saved file was simulated")
        return result

    # ---- editor extras ---------------------------------------------------------------------------------
    def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        """``⏱ est. 12.3 µs · 14% · dma`` at the end of each costed line, when enabled."""
        if not self.server.settings.inlay_hints:
            return None
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None or not self.results.get(uri):
            return None
        path, text = got
        lines = split_lines(text)
        positions = DocumentPositions(lines, self.server.workspace.position_codec)
        first, last = params.range.start.line, params.range.end.line
        hints = []
        for kernel, result in self.results[uri].items():
            if not result.get("cost"):
                continue
            for heat in estimate_payload(uri, path, kernel, result["cost"])["lines"]:
                line = heat["line"]  # 0-based
                if not first <= line <= last or line >= len(lines):
                    continue
                hints.append(types.InlayHint(
                    position=positions.position(line + 1, len(lines[line]) + 1),
                    label=inlay_label(heat, "estimate"), padding_left=True,
                    tooltip="Estimated by the nki-studio cost model from the simulator trace, not measured."))
        return hints

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        """The estimated cost of the hovered line (engines, top instructions, DMA bytes), labelled estimated."""
        uri = params.text_document.uri
        path = to_fs_path(uri)
        if path is None or not self.results.get(uri):
            return None
        for kernel, result in self.results[uri].items():
            if not result.get("cost"):
                continue
            payload = estimate_payload(uri, path, kernel, result["cost"])
            for line in payload["lines"]:
                if line["line"] == params.position.line:
                    return types.Hover(contents=types.MarkupContent(
                        kind=types.MarkupKind.Markdown, value=hover_markdown(line, payload)))
        return None

    def code_lenses(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        """"Simulate" above every kernel that has a spec, with the last result's status and estimated time."""
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None:
            return None
        path, text = got
        lenses = []
        for kernel in find_kernels(text, path):
            if resolve(text, path, kernel.name, infer=False).spec is None:
                continue
            title = f"▶ Simulate {kernel.name}"
            last = self.results.get(uri, {}).get(kernel.name)
            if last is not None:
                title += f" (last: {last.get('status')}"
                if last.get("cost"):
                    title += f", estimated {fmt_ns(last['cost']['totalNs'])}"
                title += ")"
            at = types.Position(line=kernel.decorator_line - 1, character=0)
            lenses.append(types.CodeLens(range=types.Range(start=at, end=at), command=types.Command(
                title=title, command=COMMAND, arguments=[uri, kernel.name])))
        return lenses or None

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """"Add simulate spec" for a kernel without one, from the value interpreter's inference."""
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None:
            return None
        path, text = got
        line = params.range.start.line + 1
        actions = []
        for kernel in find_kernels(text, path):
            if kernel.spec_line is not None or not kernel.decorator_line - 1 <= line <= kernel.def_line:
                continue
            action = _add_spec_action(uri, text, path, kernel)
            if action is not None:
                actions.append(action)
        return actions or None


def _add_spec_action(uri: str, text: str, path: str, kernel: KernelInfo) -> types.CodeAction | None:
    fields = inferred_fields(text, path, kernel.name)
    resolution = resolve(text, path, kernel.name, inferred=fields, use_pyproject=False)
    if resolution.spec is None:
        return None  # inference does not pin every parameter: nothing honest to offer
    indent = split_lines(text)[kernel.decorator_line - 1]
    indent = indent[: len(indent) - len(indent.lstrip())]
    at = types.Position(line=kernel.decorator_line - 1, character=0)
    edit = types.TextEdit(range=types.Range(start=at, end=at), new_text=f"{indent}{resolution.spec.to_comment()}\n")
    return types.CodeAction(
        title=f"Add simulate spec for {kernel.name} (shapes inferred from its asserts)",
        kind=types.CodeActionKind.RefactorRewrite,
        edit=types.WorkspaceEdit(changes={uri: [edit]}))


def register(server: NkiLanguageServer) -> None:
    """Wire simulation into the server."""
    feature = SimulateFeature(server)
    server.on_document("open", feature.refresh_spec_findings)
    server.on_document("change", feature.refresh_spec_findings)
    server.on_document("save", feature.on_save)
    server.on_document("close", feature.on_close)
    server.on_settings_changed(feature.on_settings_changed)
    server.add_inlay_hint_provider(feature.inlay_hints)
    server.add_code_lens_provider(feature.code_lenses)
    server.add_hover_provider(feature.hover)
    server.add_code_action_provider(feature.code_actions, kinds=[types.CodeActionKind.RefactorRewrite])

    @server.command(COMMAND)
    async def simulate_command(ls: NkiLanguageServer, *args: Any) -> dict[str, Any]:
        return await feature.command(*args)
