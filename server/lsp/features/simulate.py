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
  user code. They wait while the file does not parse (a half-typed line would make every spec look
  misplaced: the last ones stay), and while typing a value at the end of a spec comment is not reported
  before the text is saved; the "Simulate" lens stays on a kernel whose spec comment is being typed, and
  keeps its place while the file does not parse.
* A result is shown (diagnostics, estimate findings, inlay hints, hovers) only while the document has the
  text it was computed on: any change (typing, or a change on disk such as ``git checkout`` that the client
  reloads) drops it at once, and the code lens says the last result is of an earlier text. Parsing a large module takes hundreds of ms, so it never runs on the event loop: a change
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
import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from nki_studio.core.findings import Finding
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
    """What a diagnostics job found: NKI601 spec diagnostics (None: the text does not parse, keep the last),
    the results' ``nki-sim`` diagnostics, the estimates' ``nki-perf`` ones, and on save the specs to simulate."""

    spec: list[types.Diagnostic] | None
    diagnostics: list[types.Diagnostic]
    perf: list[types.Diagnostic]
    specs: list[Spec]


def _digest(text: str) -> str:
    """What identifies the text a result was computed on (results are dropped once the text differs); SHA-256
    because the extension computes the same digest to mark the panel's result stale (``textSha256``)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _diagnostics(
    uri: str, path: str, text: str, found: list[Finding], encoding: Any, base_url: str | None
) -> list[types.Diagnostic]:
    """``found`` as LSP diagnostics, after the project config (``ignore``, ``severity``) and ``# noqa``
    comments, like the lint's."""
    kept = as_configured(found, text, path, config_for(path)[0])
    positions = DocumentPositions(split_lines(text), encoding)
    return [
        to_diagnostic(diagnostic_json(f, positions, uri=uri, doc_path=path, base_url=base_url)) for f in kept
    ]


def _perf(
    uri: str,
    path: str,
    text: str,
    results: dict[str, AnyResult],
    encoding: Any,
    base_url: str | None,
    severity: str,
) -> list[types.Diagnostic]:
    """The investigation findings of every result's estimate on this document, as ``nki-perf`` diagnostics."""
    found = heat.estimate_findings(results.values(), path)
    if not found:
        return []
    from nki_studio.lsp.features.perf_diagnostics import perf_diagnostics

    return perf_diagnostics(uri, path, text, found, encoding, base_url, severity=severity, estimated=True)


class SimulateFeature:
    """Owns the simulation jobs, results and the warm worker pool of one server."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self.jobs: JobRunner[AnyResult] = JobRunner(server.executor, name="simulate")
        self.results: dict[str, dict[str, AnyResult]] = {}  # uri -> kernel -> result
        self._ran_on: dict[str, dict[str, str]] = {}  # uri -> kernel -> digest of the text it was computed on
        # Spec/result diagnostics per document, computed in the job pool; key uri (edits) or uri::save.
        self.spec_jobs: JobRunner[_Parsed] = JobRunner(server.executor, name="simulate diagnostics")
        self._published: dict[str, list[types.Diagnostic]] = {}  # uri -> nki-sim diagnostics last published
        self._published_spec: dict[str, list[types.Diagnostic]] = {}  # uri -> the NKI601 part of those
        self._lenses: dict[str, list[types.CodeLens]] = {}  # uri -> lenses of the last text that parsed
        self._published_perf: dict[str, list[types.Diagnostic]] = {}  # uri -> nki-perf (estimate) ones
        self.simulator = Simulator()
        self._keys: dict[str, set[str]] = {}  # uri -> job keys ever submitted (cancelled on close)
        # job key -> (digest of the text its run is of, that submission), while it runs
        self._in_flight: dict[str, tuple[str, object]] = {}

    # ---- trust and workers -----------------------------------------------------------------------------
    def on_settings_changed(self, old: Any, new: Any) -> None:
        """Gaining trust pre-starts a worker (so the first save is warm); losing it stops everything at once."""
        if new.trusted_workspace and not old.trusted_workspace and new.simulate_on_save:
            self.server.after_startup(self._prestart)
        if (old.perf_investigations, old.perf_severity) != (new.perf_investigations, new.perf_severity):
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

    def current(self, uri: str, text: str) -> dict[str, AnyResult]:
        """The document's results computed on ``text`` (kernel -> result); those of an earlier text are left out."""
        ran_on, digest = self._ran_on.get(uri, {}), _digest(text)
        return {k: r for k, r in self.results.get(uri, {}).items() if ran_on.get(k) == digest}

    def _current(self, uri: str) -> tuple[str, str, dict[str, AnyResult]] | None:
        """The document's path, text and the results computed on that text; None when there are none."""
        got = self._text(uri)
        if got is None:
            return None
        path, text = got
        results = self.current(uri, text)
        return (path, text, results) if results else None

    def last_args(self, uri: str, kernel: str) -> dict[str, str]:
        """The argument values (as the spec comment writes them) of the kernel's last run in this document."""
        last: Mapping[str, Any] = self.results.get(uri, {}).get(kernel) or {}
        spec = last.get("spec")
        return {str(n): str(v) for n, v in spec["args"]} if isinstance(spec, dict) else {}

    def refresh_spec_findings(
        self, uri: str, delay: float = 0.0, *, simulate: bool = False, typing: bool = False
    ) -> None:
        """Publish NKI601 for the document's spec comments plus the diagnostics of the results computed on its
        current text.

        Runs on the event loop for every keystroke, so it only snapshots the text and submits a job (after
        ``delay`` s); ``simulate``: the job also resolves the specs and their kernels are simulated;
        ``typing``: called for an edit (a value still being typed at a spec's end is not reported yet)."""
        got = self._text(uri)
        if got is None:
            return
        path, text = got
        results = self.current(uri, text)
        key = f"{uri}::save" if simulate else uri
        if (
            not simulate
            and not results
            and not self._published.get(uri)
            and not self._published_perf.get(uri)
            and "nki-studio" not in text
        ):
            self.spec_jobs.cancel(key)  # every spec comment names nki-studio: nothing to find or clear
            return
        doc = self.server.workspace.text_documents.get(uri)
        version = doc.version if doc is not None else None
        encoding = self.server.workspace.position_encoding
        base_url = self.server.settings.rule_docs_base_url
        perf = self.server.settings.perf_investigations
        severity = self.server.settings.perf_severity

        def work(token: CancelToken) -> _Parsed:
            specs = simulation.saved_specs(text, path, token.raise_if_cancelled) if simulate else []
            spec = simulation.spec_findings(text, path, typing=typing)
            return _Parsed(
                None if spec is None else _diagnostics(uri, path, text, spec, encoding, base_url),
                _diagnostics(uri, path, text, simulation.findings(text, path, results), encoding, base_url),
                _perf(uri, path, text, results, encoding, base_url, severity) if perf else [],
                specs,
            )

        def done(parsed: _Parsed) -> None:
            current = self.server.workspace.text_documents.get(uri)
            if current is None or current.version == version:  # a newer edit has its own job
                if parsed.spec is not None:
                    self._published_spec[uri] = parsed.spec
                self._set_diagnostics(uri, self._published_spec.get(uri, []) + parsed.diagnostics)
                self._set_perf(uri, parsed.perf)
            if simulate and self.server.trusted:
                digest = _digest(text)
                for spec in parsed.specs:
                    # A run of this text is under way (Simulate Kernel saved the document, then ran): it stays.
                    running = self._in_flight.get(f"{uri}::{spec['kernel']}")
                    if running is not None and running[0] == digest:
                        continue
                    self.submit(uri, simulation.from_spec(path, spec, self.server.settings), text)

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
        self._ran_on.pop(uri, None)
        self._published.pop(uri, None)
        self._published_spec.pop(uri, None)
        self._published_perf.pop(uri, None)
        self._lenses.pop(uri, None)

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
    def submit(self, uri: str, job: Kernel, text: str) -> asyncio.Future[AnyResult]:
        """Start (superseding any run of the same kernel) and return a future of the published result.
        ``job.source``: the document's text when it differs from the saved file (run from a staged copy);
        ``text``: the document's text the run is of (its result is shown only while the document has it)."""
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

        key, running = f"{uri}::{kernel}", (_digest(text), object())

        def finished() -> None:
            if self._in_flight.get(key) is running:  # not a later submission's
                del self._in_flight[key]

        def publish(result: AnyResult) -> None:
            finished()
            result["textSha256"] = running[0]  # the client's panel marks it stale once the text differs
            self._on_result(uri, path, kernel, result, text)
            if not done.done():
                done.set_result(result)

        def resolve_cancelled() -> None:
            finished()
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

        self._keys.setdefault(uri, set()).add(key)
        self._in_flight[key] = running
        token = self.jobs.submit(key, work, on_result=publish)
        token.on_cancel(superseded)
        return done

    def _on_result(self, uri: str, path: str, kernel: str, result: AnyResult, text: str) -> None:
        if result.get("status") in ("cancelled", "refused"):
            return
        self.results.setdefault(uri, {})[kernel] = result
        self._ran_on.setdefault(uri, {})[kernel] = _digest(text)
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
        # The lens title carries the last result: clients ask for lenses on edits only, so say it changed.
        caps = self.server.client_capabilities.workspace
        if caps is not None and caps.code_lens is not None and caps.code_lens.refresh_support:
            self.server.call_soon(lambda: self.server.workspace_code_lens_refresh(None))

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
        return await self.submit(uri, job, text)

    # ---- editor extras ---------------------------------------------------------------------------------
    def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        """``⏱ est. 12.3 µs · 14% · dma`` at the end of each costed line, when enabled."""
        if not self.server.settings.inlay_hints:
            return None
        uri = params.text_document.uri
        got = self._current(uri)
        if got is None or self.server.heat_layers.shown(uri) != "estimate":
            return None  # no results on this text, or another layer is shown: its hints speak
        path, text, results = got
        lines = split_lines(text)
        positions = DocumentPositions(lines, self.server.workspace.position_encoding)
        first, last = params.range.start.line, params.range.end.line
        hints = []
        for kernel, result in results.items():
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
        findings there, labelled estimated; on the allocation that reached an SBUF/PSUM peak, the peak."""
        uri = params.text_document.uri
        got = self._current(uri)
        if got is None:
            return None
        path, _, results = got
        parts = [
            f"**{note}**" for note in simulation.peak_notes(results, path).get(params.position.line + 1, [])
        ]
        # The estimate's line cost only when its layer is shown (the measured layer's hover speaks otherwise).
        estimated = self.server.heat_layers.shown(uri) in ("estimate", "compare")
        for kernel, result in results.items() if estimated else ():
            payload = heat.estimate_payload(uri, path, kernel, result)
            markdown = heat.line_hover_markdown(payload, params.position.line) if payload else None
            if markdown is not None:
                parts.append(markdown)
                break
        if not parts:
            return None
        value = "\n\n".join(parts)
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))

    def code_lenses(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        """ "Simulate" above every kernel that has a spec (given, or a spec comment being typed), with the last
        result's status and estimated time; while the file does not parse, the lenses of the last text that did."""
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None:
            return None
        path, text = got
        if not simulation.parses(text, path):
            return self._lenses.get(uri) or None
        current = self.current(uri, text)
        commented = {k.name for k in simulation.kernels(text, path) if k.spec_line is not None}
        specified = {k.name for k in simulation.specified_kernels(text, path)}
        lenses = []
        for kernel in simulation.kernels(text, path):
            if kernel.name not in commented | specified:
                continue
            title = f"▶ Simulate {kernel.name}"
            last = self.results.get(uri, {}).get(kernel.name)
            if last is not None:
                title += f" (last: {last.get('status')}"
                estimate = heat.estimate_of(last)
                if estimate:
                    title += f", estimated {heat.estimate_label(estimate)}"
                if kernel.name not in current:
                    title += ", of an earlier text"
                title += ")"
            at = types.Position(line=kernel.decorator_line - 1, character=0)
            lenses.append(
                types.CodeLens(
                    range=types.Range(start=at, end=at),
                    command=types.Command(title=title, command=SIMULATE.id, arguments=[uri, kernel.name]),
                )
            )
        self._lenses[uri] = lenses
        return lenses or None

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """ "Add simulate spec" for every kernel without one: inferred from its asserts, else a template."""
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
            actions.append(_add_spec_action(uri, text, path, kernel))
        return actions or None


def _add_spec_action(uri: str, text: str, path: str, kernel: KernelInfo) -> types.CodeAction:
    comment = simulation.inferred_spec_comment(text, path, kernel.name)
    title = f"Add simulate spec for {kernel.name} (shapes inferred from its asserts)"
    if comment is None:  # inference does not pin every parameter: a template whose placeholders say so
        comment = simulation.template_spec_comment(text, path, kernel)
        title = f"Add simulate spec for {kernel.name} (example shapes: edit them)"
    indent = split_lines(text)[kernel.decorator_line - 1]
    indent = indent[: len(indent) - len(indent.lstrip())]
    at = types.Position(line=kernel.decorator_line - 1, character=0)
    edit = types.TextEdit(range=types.Range(start=at, end=at), new_text=f"{indent}{comment}\n")
    return types.CodeAction(
        title=title,
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
        "change",
        lambda uri: feature.refresh_spec_findings(
            uri, server.settings.lint_debounce_ms / 1000.0, typing=True
        ),
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

    from nki_studio.lsp.features import first_run

    first_run.register(server, feature.last_args)
