"""Simulate kernels from the editor: command ``nki-studio.simulate``, simulate-on-save, results as
diagnostics, ``nki/simulationResult``, estimated ``nki/heatmap``, inlay hints and hovers, a "Simulate" code
lens per spec'd kernel, and the "Add simulate spec" code action.

* Running user code is a trust decision (``nki_studio.service.simulation``, which resolves, builds and runs
  every job): nothing runs (and no worker process is even started) unless the client declared the workspace
  trusted; the command then answers with the service's refusal, on-save does nothing.
* Workers are killed by the pool's atexit hook and die with the server process anyway.
* On save, every kernel of the file with a spec (comment or pyproject) is simulated, one job per
  (document, kernel): a new save cancels the running job (its worker is killed) and only the newest result
  is published. Simulations run in a worker process via ``service.simulation.Simulator`` driven from a
  thread (``asyncio.to_thread``), so the event loop keeps answering requests.
* ``nki/simulationResult`` is the structured result (``nki_studio.protocol.simulation``) plus ``uri``; the command
  answers with the same object.
* Spec problems (NKI601) are published on open/change/save even in untrusted workspaces: parsing runs no
  user code. Parsing a large module takes hundreds of ms, so it never runs on the event loop: a change
  only snapshots the text and submits a debounced job (``lintDebounceMs``) to the server's job pool; a
  document that names no ``nki-studio`` spec and has no results is not parsed at all. The save path parses
  in a job too and submits the simulations from its result.
* Diagnostics go through ``server.publish_diagnostics(uri, "nki-sim", ...)`` (the server publishes the union
  of every feature's lists), only when this feature's list changed.
* The estimate's investigations (the result's ``estimate.investigations``, computed by the worker) are
  published as ``nki-perf`` diagnostics marked estimated, through ``perf_diagnostics`` like a loaded profile's
  (setting ``perfInvestigations``, ``# noqa`` and config apply), under their own owner so a loaded profile's
  findings stay beside them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from nki_studio.lsp.convert import DocumentPositions, diagnostic_json, split_lines
from nki_studio.lsp.jobs import CancelToken, JobRunner, progress
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.lsp.typed import position, to_diagnostic
from nki_studio.nkilint.api import config_for
from nki_studio.nkilint.engine import as_configured
from nki_studio.protocol.commands import SIMULATE
from nki_studio.protocol.notifications import SIMULATION_RESULT
from nki_studio.protocol.simulation import AnyResult, Spec
from nki_studio.service import heat, simulation
from nki_studio.service.simulation import Kernel, KernelInfo, Refused, RunOptions, Simulator, SpecProblem
from pygls.uris import to_fs_path

log = logging.getLogger(__name__)

SOURCE = "nki-sim"
PERF_OWNER = "nki-perf (estimate)"  # publish_diagnostics owner; each diagnostic's source is nki-perf
P = TypeVar("P")
R = TypeVar("R")


@dataclass
class _Parsed:
    """What a diagnostics job found: ``nki-sim`` diagnostics, the estimates' ``nki-perf`` ones, and on save the
    specs to simulate."""

    diagnostics: list[types.Diagnostic]
    perf: list[types.Diagnostic]
    specs: list[Spec]


def _diagnostics(
    uri: str, path: str, text: str, results: dict[str, AnyResult], encoding: Any, base_url: str | None
) -> list[types.Diagnostic]:
    """NKI601 spec problems plus the findings of ``results`` (kernel -> last result), as LSP diagnostics, after
    the project config (``ignore``, ``severity``) and ``# noqa`` comments, like the lint's."""
    found = as_configured(simulation.findings(text, path, results), text, path, config_for(path)[0])
    positions = DocumentPositions(split_lines(text), encoding)
    return [
        to_diagnostic(diagnostic_json(f, positions, uri=uri, doc_path=path, base_url=base_url)) for f in found
    ]


def _perf(
    uri: str, path: str, text: str, results: dict[str, AnyResult], encoding: Any, base_url: str | None
) -> list[types.Diagnostic]:
    """The investigation findings of every result's estimate on this document, as ``nki-perf`` diagnostics."""
    found = heat.estimate_findings(results.values(), path)
    if not found:
        return []
    from nki_studio.lsp.features.perf_diagnostics import perf_diagnostics

    return perf_diagnostics(uri, path, text, found, encoding, base_url, estimated=True)


class SimulateFeature:
    """Owns the simulation jobs, results and the warm worker pool of one server."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self.jobs: JobRunner[AnyResult] = JobRunner(server.executor, name="simulate")
        self.results: dict[str, dict[str, AnyResult]] = {}  # uri -> kernel -> result
        # Spec/result diagnostics per document, computed in the job pool; key uri (edits) or uri::save.
        self.spec_jobs: JobRunner[_Parsed] = JobRunner(server.executor, name="simulate diagnostics")
        self._published: dict[str, list[types.Diagnostic]] = {}  # uri -> nki-sim diagnostics last published
        self._published_perf: dict[str, list[types.Diagnostic]] = {}  # uri -> nki-perf (estimate) ones
        self.simulator = Simulator()
        self._keys: dict[str, set[str]] = {}  # uri -> job keys ever submitted (cancelled on close)

    # ---- trust and workers -----------------------------------------------------------------------------
    def on_settings_changed(self, old: Any, new: Any) -> None:
        """Gaining trust pre-starts a worker (so the first save is warm); losing it stops everything at once."""
        if new.trusted_workspace and not old.trusted_workspace and new.simulate_on_save:
            self.server.after_startup(self._prestart)
        if old.perf_investigations != new.perf_investigations:
            for uri in list(self.results):
                self.refresh_spec_findings(uri)
        if old.trusted_workspace and not new.trusted_workspace:
            self.jobs.cancel_all()
            self.simulator.close()

    def _prestart(self) -> None:
        if self.server.settings.simulate_on_save:  # warm_up starts nothing once trust is gone
            self.simulator.warm_up(self.server.settings)

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

    def refresh_spec_findings(self, uri: str, delay: float = 0.0, *, simulate: bool = False) -> None:
        """Publish NKI601 for the document's spec comments plus the current simulation diagnostics.

        Runs on the event loop for every keystroke, so it only snapshots the text and submits a job (after
        ``delay`` s); ``simulate``: the job also resolves the specs and their kernels are simulated."""
        got = self._text(uri)
        if got is None:
            return
        path, text = got
        results = dict(self.results.get(uri, {}))
        key = f"{uri}::save" if simulate else uri
        if not simulate and not results and not self._published.get(uri) and "nki-studio" not in text:
            self.spec_jobs.cancel(key)  # every spec comment names nki-studio: nothing to find or clear
            return
        doc = self.server.workspace.text_documents.get(uri)
        version = doc.version if doc is not None else None
        encoding = self.server.workspace.position_encoding
        base_url = self.server.settings.rule_docs_base_url
        perf = self.server.settings.perf_investigations

        def work(token: CancelToken) -> _Parsed:
            specs = simulation.saved_specs(text, path, token.raise_if_cancelled) if simulate else []
            return _Parsed(
                _diagnostics(uri, path, text, results, encoding, base_url),
                _perf(uri, path, text, results, encoding, base_url) if perf else [],
                specs,
            )

        def done(parsed: _Parsed) -> None:
            current = self.server.workspace.text_documents.get(uri)
            if current is None or current.version == version:  # a newer edit has its own job
                self._set_diagnostics(uri, parsed.diagnostics)
                self._set_perf(uri, parsed.perf)
            if simulate and self.server.trusted:
                for spec in parsed.specs:
                    self.submit(uri, simulation.from_spec(path, spec, self.server.settings))

        self.spec_jobs.submit(key, work, delay=delay, on_result=done)

    def _set_diagnostics(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        if self._published.get(uri, []) == diagnostics:
            return
        self._published[uri] = diagnostics
        self.server.publish_diagnostics(uri, SOURCE, diagnostics)

    def _set_perf(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        if self._published_perf.get(uri, []) == diagnostics:
            return
        self._published_perf[uri] = diagnostics
        self.server.publish_diagnostics(uri, PERF_OWNER, diagnostics)

    def on_close(self, uri: str) -> None:
        """Cancel the document's runs and forget its results."""
        for key in self._keys.pop(uri, set()):
            self.jobs.cancel(key)
        for key in (uri, f"{uri}::save"):
            self.spec_jobs.cancel(key)
        self.results.pop(uri, None)
        self._published.pop(uri, None)
        self._published_perf.pop(uri, None)

    def on_save(self, uri: str) -> None:
        """Simulate every kernel of the document that has a spec (trusted workspaces only)."""
        if not self.server.settings.simulate_on_save:
            self.refresh_spec_findings(uri)
        elif not self.server.trusted:
            log.info("simulate-on-save skipped for %s: the workspace is not trusted", uri)
            self.refresh_spec_findings(uri)
        else:
            self.refresh_spec_findings(uri, simulate=True)

    # ---- running -------------------------------------------------------------------------------------------
    def submit(self, uri: str, job: Kernel) -> asyncio.Future[AnyResult]:
        """Start (superseding any run of the same kernel) and return a future of the published result.
        ``job.source``: the document's text when it differs from the saved file (run from a staged copy)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[AnyResult] = loop.create_future()
        kernel, path = job.spec.kernel, job.path

        async def work(token: CancelToken) -> AnyResult:
            settings = self.server.settings
            if not settings.trusted_workspace:  # trust was withdrawn while this run waited
                return simulation.refusal(kernel)
            async with progress(self.server, f"Simulating {kernel}", cancel=token) as prog:
                prog.report(f"{kernel}: starting")
                options = RunOptions(cancelled=lambda: token.cancelled, on_progress=prog.report)
                try:
                    return await asyncio.to_thread(self.simulator.run, job, settings, options)
                except Refused:
                    return simulation.refusal(kernel)
                except Exception as exc:  # a bug here must not leave the command waiting forever
                    log.exception("simulation of %s failed", kernel)
                    return {
                        "status": "crashed",
                        "kernel": kernel,
                        "path": path,
                        "message": f"nki-studio could not run the simulation: {exc}",
                    }

        def publish(result: AnyResult) -> None:
            self._on_result(uri, path, kernel, result)
            if not done.done():
                done.set_result(result)

        def resolve_cancelled() -> None:
            if not done.done():
                done.set_result(
                    {
                        "status": "cancelled",
                        "kernel": kernel,
                        "message": f"simulation of {kernel} was cancelled",
                    }
                )

        def superseded() -> None:
            loop.call_soon_threadsafe(resolve_cancelled)

        self._keys.setdefault(uri, set()).add(f"{uri}::{kernel}")
        token = self.jobs.submit(f"{uri}::{kernel}", work, on_result=publish)
        token.on_cancel(superseded)
        return done

    def _on_result(self, uri: str, path: str, kernel: str, result: AnyResult) -> None:
        if result.get("status") in ("cancelled", "refused"):
            return
        self.results.setdefault(uri, {})[kernel] = result
        sent = result.copy()
        sent["uri"], sent["kernel"] = uri, kernel
        self.server.notify_client(SIMULATION_RESULT, sent)
        payload = heat.estimate_payload(uri, path, kernel, result)
        if payload:
            estimate, got = heat.estimate_of(result), self._text(uri)
            if estimate and got:  # the document's text as simulated: the estimate's lines are its lines
                self.server.measured_estimated.estimated(uri, path, kernel, estimate, got[1])
            self.server.send_heat(self.server.measured_estimated.attach(payload))
        self.refresh_spec_findings(uri)
        self.server.refresh_inlay_hints()

    async def command(self, *args: Any) -> AnyResult:
        """``nki-studio.simulate`` with ``[uri, kernelName]`` (kernel optional): the structured result."""
        uri = str(args[0]) if args else ""
        kernel = str(args[1]) if len(args) > 1 and args[1] else None
        if not self.server.trusted:
            refused = simulation.refusal()
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=refused["message"])
            )
            return refused
        got = self._text(uri)
        if got is None:
            return {"status": "error", "message": f"cannot read {uri!r}"}
        path, text = got
        try:
            unsaved = Path(path).read_text(encoding="utf-8") != text
        except OSError:  # never saved (or unreadable): the text is all there is
            unsaved = True
        # Unsaved changes: the worker runs the document's text from a private staged copy, so results and
        # their lines are the editor's.
        try:
            job = simulation.prepare(
                path, text, self.server.settings, kernel=kernel, unsaved=unsaved, lenient=True
            )
        except SpecProblem as exc:
            return {"status": "error", "message": str(exc)}
        # Cancel through the run's $/progress (cancellable): pygls 2.1 runs command handlers inside its
        # executeCommand generator, so a $/cancelRequest of the command never reaches this coroutine.
        return await self.submit(uri, job)

    # ---- editor extras ---------------------------------------------------------------------------------
    def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        """``⏱ est. 12.3 µs · 14% · dma`` at the end of each costed line, when enabled."""
        if not self.server.settings.inlay_hints:
            return None
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None or not self.results.get(uri) or self.server.heat_layers.shown(uri) != "estimate":
            return None  # another layer is shown: its hints speak
        path, text = got
        lines = split_lines(text)
        positions = DocumentPositions(lines, self.server.workspace.position_encoding)
        first, last = params.range.start.line, params.range.end.line
        hints = []
        for kernel, result in self.results[uri].items():
            payload = heat.estimate_payload(uri, path, kernel, result)
            if not payload:
                continue
            for line_heat in payload["lines"]:
                line = line_heat["line"]  # 0-based
                if not first <= line <= last or line >= len(lines):
                    continue
                hints.append(
                    types.InlayHint(
                        position=position(positions.position(line + 1, len(lines[line]) + 1)),
                        label=heat.inlay_label(line_heat, payload),
                        padding_left=True,
                        tooltip=heat.layer_label("estimate", {"estimate": payload}),
                    )
                )
        return hints

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        """The estimated cost of the hovered line (engines, top instructions, DMA bytes) and the estimate's
        findings there, labelled estimated."""
        uri = params.text_document.uri
        path = to_fs_path(uri)
        if (
            path is None
            or not self.results.get(uri)
            or self.server.heat_layers.shown(uri) not in ("estimate", "compare")
        ):
            return None  # the measured layer is shown: its hover speaks
        for kernel, result in self.results[uri].items():
            payload = heat.estimate_payload(uri, path, kernel, result)
            text = heat.line_hover_markdown(payload, params.position.line) if payload else None
            if text is not None:
                return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
        return None

    def code_lenses(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        """ "Simulate" above every kernel that has a spec, with the last result's status and estimated time."""
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None:
            return None
        path, text = got
        lenses = []
        for kernel in simulation.specified_kernels(text, path):
            title = f"▶ Simulate {kernel.name}"
            last = self.results.get(uri, {}).get(kernel.name)
            if last is not None:
                title += f" (last: {last.get('status')}"
                estimate = heat.estimate_of(last)
                if estimate:
                    title += f", estimated {heat.estimate_label(estimate)}"
                title += ")"
            at = types.Position(line=kernel.decorator_line - 1, character=0)
            lenses.append(
                types.CodeLens(
                    range=types.Range(start=at, end=at),
                    command=types.Command(title=title, command=SIMULATE.id, arguments=[uri, kernel.name]),
                )
            )
        return lenses or None

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """ "Add simulate spec" for a kernel without one, from the value interpreter's inference."""
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None:
            return None
        path, text = got
        line = params.range.start.line + 1
        actions = []
        for kernel in simulation.kernels(text, path):
            if kernel.spec_line is not None or not kernel.decorator_line - 1 <= line <= kernel.def_line:
                continue
            action = _add_spec_action(uri, text, path, kernel)
            if action is not None:
                actions.append(action)
        return actions or None


def _add_spec_action(uri: str, text: str, path: str, kernel: KernelInfo) -> types.CodeAction | None:
    comment = simulation.inferred_spec_comment(text, path, kernel.name)
    if comment is None:
        return None  # inference does not pin every parameter: nothing honest to offer
    indent = split_lines(text)[kernel.decorator_line - 1]
    indent = indent[: len(indent) - len(indent.lstrip())]
    at = types.Position(line=kernel.decorator_line - 1, character=0)
    edit = types.TextEdit(range=types.Range(start=at, end=at), new_text=f"{indent}{comment}\n")
    return types.CodeAction(
        title=f"Add simulate spec for {kernel.name} (shapes inferred from its asserts)",
        kind=types.CodeActionKind.RefactorRewrite,
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def _in_pool(
    server: NkiLanguageServer, provider: Callable[[P], R], *, user: bool = False
) -> Callable[[P], Awaitable[R]]:
    """Run a provider that parses the document off the event loop: code lenses and actions are asked for after
    every edit and cursor move, and parsing a large module must not hold the loop. ``user``: a request the
    user waits for (code actions), run in the request pool so it never queues behind background jobs."""

    async def run(params: P) -> R:
        pool = server.request_executor if user else server.executor
        return await asyncio.get_running_loop().run_in_executor(pool, provider, params)

    return run


def register(server: NkiLanguageServer) -> None:
    """Wire simulation into the server."""
    feature = SimulateFeature(server)
    server.on_document("open", feature.refresh_spec_findings)
    server.on_document(
        "change", lambda uri: feature.refresh_spec_findings(uri, server.settings.lint_debounce_ms / 1000.0)
    )
    server.on_document("save", feature.on_save)
    server.on_document("close", feature.on_close)
    server.on_settings_changed(feature.on_settings_changed)
    server.add_inlay_hint_provider(feature.inlay_hints)
    server.add_code_lens_provider(_in_pool(server, feature.code_lenses))
    server.add_hover_provider(feature.hover)
    server.add_code_action_provider(
        _in_pool(server, feature.code_actions, user=True), kinds=[types.CodeActionKind.RefactorRewrite]
    )

    @server.command(SIMULATE.id)
    async def simulate_command(ls: NkiLanguageServer, *args: Any) -> AnyResult:
        return await feature.command(*args)
