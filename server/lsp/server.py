"""The nki-studio language server: settings, logging, document events and the feature registry.

Feature modules live in ``nki_studio.lsp.features``; each exposes ``register(server)``. Because pygls
allows one handler per LSP method, the server owns the shared ones and fans them out:

* document events: ``server.on_document("open"|"change"|"save"|"close", callback(uri))``; callbacks run on
  the event loop and must return within a few ms (schedule analysis with ``jobs.JobRunner``); slower ones
  are logged as warnings
* settings: ``server.on_settings_changed(callback(old, new))``; read ``server.settings`` any time
* watched files: ``server.watch_files(glob)`` + ``server.on_files_changed(callback(changes))``
* merged requests: ``add_code_action_provider``, ``add_hover_provider``, ``add_inlay_hint_provider``,
  ``add_code_lens_provider`` (each provider may be sync or async and return None)
* background warm-ups: ``server.after_startup(callback())`` runs once the first diagnostics are out and the
  edits pause (or ``STARTUP_GRACE_S`` after ``initialized`` at the latest), so they never compete with them
* diagnostics: ``server.publish_diagnostics(uri, owner, diagnostics)``; each feature (owner, e.g. its
  diagnostic ``source``) replaces its own list and the client gets the union (LSP keeps one list per
  document, so publishing directly would erase the other features' diagnostics)
* everything else (commands, completion, ...) is registered directly with ``server.feature``/``command``.

Long work goes through ``nki_studio.lsp.jobs`` (per-document newest-wins jobs, ``$/progress``).
Custom notifications use the ``nki/`` prefix, each declared in ``nki_studio.protocol.notifications``:
``server.notify_client(HEATMAP, payload)`` (the payload type-checked against the declaration).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from lsprotocol import types
from nki_studio import __version__
from nki_studio.lsp import logs
from nki_studio.lsp.fastpath.handover import Handover
from nki_studio.lsp.heat_layers import HeatLayers
from nki_studio.lsp.measured_estimated import MeasuredAndEstimated
from nki_studio.lsp.protocol import NkiProtocol
from nki_studio.lsp.typed import converter
from nki_studio.protocol.notifications import HEAT_LAYER, HEATMAP
from nki_studio.service.settings import SECTION, Settings, merge, section_of
from pygls.lsp.server import LanguageServer

if TYPE_CHECKING:  # the declarations are only read by type checkers here
    from nki_studio.protocol.heatmap import HeatmapParams
    from nki_studio.protocol.notifications import Notification

P = TypeVar("P")  # a notification's payload type

log = logging.getLogger(__name__)

STARTUP_GRACE_S = 3.0  # without an open document, warm-ups start this long after ``initialized``
# After the first diagnostics, warm-ups also wait for a pause this long in the edits: the user typing right after
# the open would otherwise wait for jedi's warm-up on the GIL (one edit of the benchmark ~100 ms instead of ~10).
WARM_UP_QUIET_S = 0.3

# Feature modules under nki_studio.lsp.features, registered in this order.
FEATURES: tuple[str, ...] = (
    "lint",
    "simulate",
    "profile",
    "layers",
    "intelligence",
    "remote",
    "calibrate",
    "migrate",
    "tune",
)

# Listeners run on the event loop: anything slower than this delays every request and is logged.
SLOW_LISTENER_MS = 50.0

# While a user request is answered, background job threads pause at their next yield point
# (``core.yielding``), at most this long per pause, so a stream of requests cannot starve them for good.
USER_PRIORITY_MAX_PAUSE_S = 0.5

RELEASE_AFTER_CLOSE_S = 2.0  # memory is given back this long after the last of a burst of didClose

# A publish identical to what the client already shows (typing that moves no finding) is sent only once the
# document stayed on that version this long: during fast typing every lint used to re-send every diagnostic,
# and serialising and writing those lists was the largest cost on the event loop (measured with
# benchmarks/lsp_storm_bench.py), which delayed hovers. The client still gets the final version's publish.
UNCHANGED_PUBLISH_DELAY_S = 0.75

DocumentEvent = Literal["open", "change", "save", "close"]
DocumentListener = Callable[[str], None]
SettingsListener = Callable[[Settings, Settings], None]
FilesListener = Callable[[Sequence[types.FileEvent]], None]
Provider = Callable[[Any], Any]


class NkiLanguageServer(LanguageServer):
    """pygls 2 server with nki-studio settings and fan-out of shared LSP events to feature modules."""

    def __init__(self) -> None:
        super().__init__(
            name="nki-studio",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            converter_factory=converter,
            protocol_cls=NkiProtocol,
        )
        self.settings = Settings()
        # Analysis jobs run here, not in pygls' pool (its stdin reader holds one of those threads).
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="nki-job")
        # Work a user is waiting for (code actions and other requests that parse the document) runs here, so
        # it never queues behind background lint, spec diagnostics or simulation jobs in ``executor``.
        self.request_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="nki-request")
        # The loaded profile and the estimates, shared by the profile and simulate features (heat payloads).
        self.measured_estimated = MeasuredAndEstimated()
        # Which layer of each document's heat every view shows (measured, estimate, compare).
        self.heat_layers = HeatLayers(lambda params: self.notify_client(HEAT_LAYER, params))
        self.loaded_features: list[str] = []
        self.failed_features: dict[
            str, str
        ] = {}  # module name -> error, reported to the client at initialize
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._doc_listeners: dict[str, list[DocumentListener]] = {
            e: [] for e in ("open", "change", "save", "close")
        }
        self._settings_listeners: list[SettingsListener] = []
        self._release_listeners: list[Callable[[], None]] = []
        self._files_listeners: list[FilesListener] = []
        self._watch_globs: list[str] = []
        self._providers: dict[str, list[Provider]] = {}
        self._code_action_options = types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
        self._diagnostics: dict[str, dict[str, list[types.Diagnostic]]] = {}  # uri -> owner -> list
        self._sent: dict[str, list[types.Diagnostic]] = {}  # uri -> the union the client last received
        self._unchanged: dict[str, asyncio.TimerHandle] = {}  # uri -> its delayed identical publish
        self._after_startup: list[Callable[[], Any]] | None = []  # None once start-up is over
        self._quiet: asyncio.TimerHandle | None = None  # ends start-up after a pause in the edits
        # What the client received before this server started (lsp.fastpath), for the lint feature to take
        # over at registration; None: started normally.
        self.handover: Handover | None = None
        self._release: asyncio.TimerHandle | None = None
        self._user_requests = 0  # user requests being answered (event loop only)
        self._user_idle = threading.Event()  # set while none is: background job threads run
        self._user_idle.set()
        self._register_core_handlers()

    # ---- hooks for feature modules -------------------------------------------------------------------
    def on_document(self, event: DocumentEvent, callback: DocumentListener) -> None:
        """Call ``callback(uri)`` after the workspace applied a didOpen/didChange/didSave/didClose."""
        self._doc_listeners[event].append(callback)

    def on_release(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` in a job thread once a burst of didClose is over, before this process gives its
        free memory back (``lsp.memory``): features drop what the closed documents kept."""
        self._release_listeners.append(callback)

    def on_settings_changed(self, callback: SettingsListener) -> None:
        """Call ``callback(old, new)`` whenever the client changes settings (only if they differ)."""
        self._settings_listeners.append(callback)

    def watch_files(self, glob: str) -> None:
        """Ask the client to report changes of files matching ``glob`` (register before initialization)."""
        if glob not in self._watch_globs:
            self._watch_globs.append(glob)

    def on_files_changed(self, callback: FilesListener) -> None:
        """Call ``callback(changes)`` on workspace/didChangeWatchedFiles."""
        self._files_listeners.append(callback)

    def add_code_action_provider(self, provider: Provider, kinds: Sequence[str] = ()) -> None:
        """Add a ``provider(CodeActionParams) -> list[CodeAction] | None``; results of all providers are joined."""
        known = list(self._code_action_options.code_action_kinds or [])
        known.extend(k for k in kinds if k not in known)
        self._code_action_options.code_action_kinds = known
        self._aggregate(types.TEXT_DOCUMENT_CODE_ACTION, provider, self._code_action_options, _join_lists)

    def add_hover_provider(self, provider: Provider) -> None:
        """Add a ``provider(HoverParams) -> Hover | None``; several hovers are joined with a rule."""
        self._aggregate(types.TEXT_DOCUMENT_HOVER, provider, None, _join_hovers)

    def add_inlay_hint_provider(self, provider: Provider) -> None:
        """Add a ``provider(InlayHintParams) -> list[InlayHint] | None``."""
        self._aggregate(
            types.TEXT_DOCUMENT_INLAY_HINT,
            provider,
            types.InlayHintOptions(resolve_provider=False),
            _join_lists,
        )

    def add_code_lens_provider(self, provider: Provider) -> None:
        """Add a ``provider(CodeLensParams) -> list[CodeLens] | None``."""
        self._aggregate(
            types.TEXT_DOCUMENT_CODE_LENS,
            provider,
            types.CodeLensOptions(resolve_provider=False),
            _join_lists,
        )

    # ---- helpers for feature modules -----------------------------------------------------------------
    def user_request(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap an async request handler a user waits for (hover, completion, code action, signature help):
        while it runs, background jobs give way (``core.yielding``; jobs in ``executor`` pause at their next
        yield point). Requests run in ``request_executor`` or their own threads, never behind those jobs."""

        async def run(*args: Any) -> Any:
            self._user_requests += 1
            self._user_idle.clear()
            try:
                return await handler(*args)
            finally:
                self._user_requests -= 1
                if not self._user_requests:
                    self._user_idle.set()

        run.__name__ = getattr(handler, "__name__", "user_request")
        return run

    def _yield_to_user(self) -> None:
        """The yield point of this server's background threads (installed in ``core.yielding``)."""
        if not self._user_idle.is_set() and threading.current_thread().name.startswith("nki-job"):
            self._user_idle.wait(USER_PRIORITY_MAX_PAUSE_S)

    def after_startup(self, callback: Callable[[], Any]) -> None:
        """Run ``callback()`` on the event loop once start-up is over: the first diagnostics were published, or
        ``STARTUP_GRACE_S`` passed after ``initialized``. Warm-ups (jedi, simulator workers) wait for it: on a
        2-core machine they would otherwise delay the first diagnostics. After the first diagnostics they also
        wait for a pause in the edits (``WARM_UP_QUIET_S``). Runs it now if start-up is over."""
        if self._after_startup is None:
            self.call_soon(callback)
        else:
            self._after_startup.append(callback)

    def _startup_over(self) -> None:
        callbacks, self._after_startup = self._after_startup, None
        for callback in callbacks or ():
            try:
                callback()
            except Exception:
                log.exception("start-up callback %r failed", callback)

    def call_soon(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the event loop thread (now if already there); use it to talk to the client from threads."""
        loop = self._loop
        if loop is None or threading.get_ident() == self._loop_thread:
            fn()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(fn)

    def publish_diagnostics(self, uri: str, owner: str, diagnostics: Sequence[types.Diagnostic]) -> None:
        """Replace ``owner``'s diagnostics of ``uri`` and publish the union of every owner's (event loop only)."""
        owners = self._diagnostics.setdefault(uri, {})
        owners[owner] = list(diagnostics)
        doc = self.workspace.text_documents.get(uri)
        version = doc.version if doc else None
        union = _one_per_problem(d for owned in owners.values() for d in owned)
        pending = self._unchanged.pop(uri, None)
        if pending is not None:
            pending.cancel()
        # Features reuse unchanged Diagnostic objects, so this comparison is mostly identity checks.
        if self._loop is not None and self._sent.get(uri) == union:
            self._unchanged[uri] = self._loop.call_later(
                UNCHANGED_PUBLISH_DELAY_S, self._publish_unchanged, uri, version
            )
        else:
            self._send_diagnostics(uri, union, version)
        if self._after_startup is not None:
            self._startup_over_when_quiet()

    def _startup_over_when_quiet(self) -> None:
        """End start-up once no edit or publish came for ``WARM_UP_QUIET_S`` (at once without an event loop)."""
        if self._loop is None:
            self._startup_over()
            return
        if self._quiet is not None:
            self._quiet.cancel()
        self._quiet = self._loop.call_later(
            WARM_UP_QUIET_S, lambda: self._startup_over() if self._after_startup is not None else None
        )

    def _publish_unchanged(self, uri: str, version: int | None) -> None:
        """The delayed identical publish: only if the document is still on the version it was made for (a newer
        version gets its own publish) and nothing else was sent meanwhile."""
        self._unchanged.pop(uri, None)
        doc = self.workspace.text_documents.get(uri)
        owners = self._diagnostics.get(uri)
        if doc is None or owners is None or doc.version != version:
            return
        self._send_diagnostics(uri, _one_per_problem(d for owned in owners.values() for d in owned), version)

    def _send_diagnostics(self, uri: str, union: list[types.Diagnostic], version: int | None) -> None:
        self._sent[uri] = union
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=union, version=version)
        )

    def seed_diagnostics(self, uri: str, owner: str, diagnostics: Sequence[types.Diagnostic]) -> None:
        """Diagnostics the client already shows that this server did not publish (sent before it started):
        ``owner``'s list until it publishes its own, so another feature's publish meanwhile does not erase them."""
        self._diagnostics.setdefault(uri, {}).setdefault(owner, list(diagnostics))

    def notify_client(self, notification: Notification[P], payload: P) -> None:
        """Send a custom notification (declared in ``nki_studio.protocol.notifications``) from any thread."""
        self.call_soon(lambda: self.protocol.notify(notification.method, payload))

    def refresh_inlay_hints(self) -> None:
        """Ask the client to fetch inlay hints again (when enabled and the client supports it)."""
        if not self.settings.inlay_hints:
            return
        caps = self.client_capabilities.workspace
        if caps is not None and caps.inlay_hint is not None and caps.inlay_hint.refresh_support:
            self.call_soon(lambda: self.workspace_inlay_hint_refresh(None))

    def send_heat(self, payload: HeatmapParams) -> None:
        """Send a document's heat (``nki/heatmap``) and record it as that source's layer (``heat_layers``)."""
        self.notify_client(HEATMAP, payload)
        self.heat_layers.sent(payload)

    @property
    def trusted(self) -> bool:
        """Whether the client declared the workspace trusted (required to run user code)."""
        return self.settings.trusted_workspace

    def apply_settings(self, options: Any, origin: str) -> None:
        """Merge a settings payload, log bad values, and notify listeners if anything changed."""
        old = self.settings
        new, problems = merge(old, options)
        for problem in problems:
            log.warning("%s: %s", origin, problem)
        if new == old:
            return
        self.settings = new
        logs.set_level(new.log_level)
        log.info(
            "settings from %s: target=%s nki-version=%s trusted=%s",
            origin,
            new.target,
            new.nki_version,
            new.trusted_workspace,
        )
        for listener in self._settings_listeners:
            try:
                listener(old, new)
            except Exception:
                log.exception("settings listener %r failed", listener)

    # ---- internals -----------------------------------------------------------------------------------
    def _aggregate(
        self, method: str, provider: Provider, options: Any, join: Callable[[list[Any]], Any]
    ) -> None:
        providers = self._providers.get(method)
        if providers is not None:
            providers.append(provider)
            return
        providers = self._providers[method] = [provider]

        async def handler(params: Any) -> Any:
            if method in _USER_METHODS:
                return await self.user_request(answer)(params)
            return await answer(params)

        async def answer(params: Any) -> Any:
            results = []
            for p in list(providers):
                try:
                    r = p(params)
                    if inspect.isawaitable(r):
                        r = await r
                except Exception:
                    log.exception("%s provider %r failed", method, p)
                    continue
                if r is not None:
                    results.append(r)
            return join(results)

        self.feature(method, options)(handler)

    def _emit_document(self, event: str, uri: str) -> None:
        for listener in self._doc_listeners[event]:
            started = time.perf_counter()
            try:
                listener(uri)
            except Exception:
                log.exception("%s listener %r failed for %s", event, listener, uri)
            elapsed_ms = (time.perf_counter() - started) * 1000
            if elapsed_ms > SLOW_LISTENER_MS:
                log.warning(
                    "%s listener %s took %.0f ms on the event loop (every request waited); "
                    "run analysis in a JobRunner job",
                    event,
                    getattr(listener, "__qualname__", listener),
                    elapsed_ms,
                )

    def _register_core_handlers(self) -> None:
        @self.feature(types.INITIALIZE)
        def initialize(ls: NkiLanguageServer, params: types.InitializeParams) -> None:
            ls._loop = asyncio.get_running_loop()
            ls._loop_thread = threading.get_ident()
            logs.attach_client(
                lambda kind, text: ls.call_soon(
                    lambda: ls.window_log_message(
                        types.LogMessageParams(type=types.MessageType(kind), message=text)
                    )
                ),
                None if ls.handover is None else ls.handover.logged,
            )
            ls.apply_settings(params.initialization_options, "initializationOptions")
            log.info(
                "nki-studio %s language server initialised (features: %s)",
                __version__,
                ", ".join(ls.loaded_features),
            )
            for name, error in ls.failed_features.items():
                log.error("feature %s is unavailable: it failed to load (%s)", name, error)

        @self.feature(types.INITIALIZED)
        async def initialized(ls: NkiLanguageServer, params: types.InitializedParams) -> None:
            asyncio.get_running_loop().call_later(
                STARTUP_GRACE_S, lambda: ls._startup_over() if ls._after_startup is not None else None
            )
            await ls._register_watchers()
            await ls._pull_configuration()

        @self.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
        async def did_change_configuration(
            ls: NkiLanguageServer, params: types.DidChangeConfigurationParams
        ) -> None:
            if section_of(params.settings):
                ls.apply_settings(params.settings, "didChangeConfiguration")
            else:  # VS Code sends null settings: pull them
                await ls._pull_configuration()

        @self.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
        def did_change_watched_files(
            ls: NkiLanguageServer, params: types.DidChangeWatchedFilesParams
        ) -> None:
            for listener in ls._files_listeners:
                try:
                    listener(params.changes)
                except Exception:
                    log.exception("files listener %r failed", listener)

        @self.feature(types.TEXT_DOCUMENT_DID_OPEN)
        def did_open(ls: NkiLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
            ls._emit_document("open", params.text_document.uri)

        @self.feature(types.TEXT_DOCUMENT_DID_CHANGE)
        def did_change(ls: NkiLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
            ls._emit_document("change", params.text_document.uri)
            if ls._after_startup is not None and ls._quiet is not None:
                ls._startup_over_when_quiet()  # still typing: the warm-ups wait on

        @self.feature(types.TEXT_DOCUMENT_DID_SAVE)
        def did_save(ls: NkiLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
            ls._emit_document("save", params.text_document.uri)

        @self.feature(types.TEXT_DOCUMENT_DID_CLOSE)
        def did_close(ls: NkiLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
            uri = params.text_document.uri
            ls._emit_document("close", uri)
            ls._sent.pop(uri, None)
            pending = ls._unchanged.pop(uri, None)
            if pending is not None:
                pending.cancel()
            if ls._diagnostics.pop(uri, None):  # a closed document shows no diagnostics of ours
                ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            ls._release_memory_later()

        @self.feature(types.SHUTDOWN)
        def shutdown(ls: NkiLanguageServer, params: None) -> None:
            ls.executor.shutdown(wait=False, cancel_futures=True)
            ls.request_executor.shutdown(wait=False, cancel_futures=True)

    def _release_memory_later(self) -> None:
        """Give memory back once a burst of closes is over (``lsp.memory``), in the job pool."""
        if self._release is not None:
            self._release.cancel()
        from nki_studio.lsp.memory import release_memory

        def release() -> None:
            self._release = None
            self.executor.submit(self._release_now, release_memory)

        self._release = asyncio.get_running_loop().call_later(RELEASE_AFTER_CLOSE_S, release)

    def _release_now(self, release_memory: Callable[[], None]) -> None:
        for listener in self._release_listeners:
            try:
                listener()
            except Exception:
                log.exception("release listener %r failed", listener)
        release_memory()

    async def _register_watchers(self) -> None:
        caps = self.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps is not None else None
        if not self._watch_globs or watched is None or not watched.dynamic_registration:
            return  # features fall back to mtime checks
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=g) for g in self._watch_globs]
        )
        registration = types.Registration(
            id="nki-studio-watchers",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await self.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:
            log.info("file watchers not registered (%s); config changes are found by mtime", exc)

    async def _pull_configuration(self) -> None:
        caps = self.client_capabilities.workspace
        if caps is None or not caps.configuration:
            return
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                ),
                timeout=5,
            )
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        if result and isinstance(result[0], dict):
            self.apply_settings(result[0], "workspace/configuration")


# Merged requests a user waits for (the others, inlay hints and code lenses, are redrawn in the background).
_USER_METHODS = frozenset({types.TEXT_DOCUMENT_HOVER, types.TEXT_DOCUMENT_CODE_ACTION})


def _one_per_problem(diagnostics: Iterable[types.Diagnostic]) -> list[types.Diagnostic]:
    """The diagnostics without repeats: the same code and message on the same range is one problem, whichever
    features found it (two kernels failing in one shared helper, a run of each kernel of the file)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for d in diagnostics:
        r = d.range
        key = (r.start.line, r.start.character, r.end.line, r.end.character, d.code, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _join_lists(results: list[Any]) -> list[Any] | None:
    joined = [item for r in results for item in r]
    return joined or None


def _markdown(contents: Any) -> str:
    if isinstance(contents, types.MarkupContent):
        return contents.value
    if isinstance(contents, str):
        return contents
    if isinstance(contents, types.MarkedStringWithLanguage):
        return f"```{contents.language}\n{contents.value}\n```"
    if isinstance(contents, list):
        return "\n\n".join(_markdown(c) for c in contents)
    return str(contents)


def _join_hovers(results: list[types.Hover]) -> types.Hover | None:
    if not results:
        return None
    if len(results) == 1:
        return results[0]
    text = "\n\n---\n\n".join(_markdown(h.contents) for h in results)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=next((h.range for h in results if h.range is not None), None),
    )


def create_server(features: Sequence[str] = FEATURES, handover: Handover | None = None) -> NkiLanguageServer:
    """Build the server and register each feature module (a broken module is logged and skipped). ``handover``:
    what the fast path already sent, for the features to take over (None: started normally)."""
    server = NkiLanguageServer()
    server.handover = handover
    from nki_studio.core import yielding

    yielding.install(server._yield_to_user)
    for name in features:
        try:
            importlib.import_module(f"nki_studio.lsp.features.{name}").register(server)
        except Exception as exc:
            log.exception("feature %s failed to load; continuing without it", name)
            server.failed_features[name] = f"{type(exc).__name__}: {exc}"
            continue
        server.loaded_features.append(name)
    return server
