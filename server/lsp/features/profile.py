"""Measured heat from Neuron Explorer profiles: commands ``nki-studio.loadProfile`` / ``nki-studio.clearProfile``,
the ``nki/heatmap`` notification (``source: "measured"``), hovers and optional inlay hints.

Loading (with its size and format checks) is the service's (``service.profiles``), the heat's labels, hovers and
line remapping too (``service.heat``); this module only moves data between the client and those functions.

Trust: loading a profile reads data files and runs no user code, so it is allowed in untrusted workspaces too
(the brief's trust rule covers simulating and profiling, i.e. executing kernels). Nothing here executes
anything (``.pftrace`` files are decoded offline, never through ``trace_processor_shell``).

Edits: the text each painted document had when the profile was loaded is kept; on every change the lines are
carried to the new text (``remap_lines``) and the payload is re-sent with ``stale: true``. Clearing sends an
``nki/heatmap`` with ``lines: []`` and ``cleared: true`` for every painted document.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.lsp.uris import ByUri, canonical, find_document
from nki_studio.protocol.commands import CLEAR_PROFILE, LOAD_PROFILE, ClearProfileResult, LoadProfileResult
from nki_studio.protocol.heatmap import HeatmapParams
from nki_studio.service import heat, profiles
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

log = logging.getLogger(__name__)

PERF_SOURCE = "nki-perf"  # owner of the investigation diagnostics (features.perf_diagnostics)
REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed


class ProfileLoadError(JsonRpcException):
    """Sent to the client as an error response with the reader's message."""

    CODE = REQUEST_FAILED


def _internal(path: str, exc: BaseException) -> str:
    """The one-line message of an unexpected failure while loading ``path``."""
    text = str(exc).strip().splitlines()
    first = text[0][:200] if text else ""
    return f"{path}: internal error reading the profile: {type(exc).__name__}: {first} (details in the output panel)"


@dataclass
class _Painted:
    payload: HeatmapParams
    text: str  # document text the current line numbers refer to
    profiled_text: str  # text when the profile was loaded (stale = differs from this)


class ProfileFeature:
    """The loaded profile's heat, per document."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self.painted: ByUri[_Painted] = ByUri()  # any spelling of a document's URI finds it (lsp.uris)

    # ---- commands --------------------------------------------------------------------------------------
    async def load(self, *args: Any) -> LoadProfileResult:
        """``loadProfile`` with ``[uri]`` or ``[{"uri", "format"?, "execution"?, "trace"?}]`` (``trace``: URI of
        the simulator's JSON Lines trace of the same kernel, for the roofline FLOPs): paint, return a summary."""
        spec = args[0] if args else None
        trace_uri = None
        if isinstance(spec, dict):
            uri, fmt, execution, trace_uri = (
                spec.get("uri"),
                spec.get("format"),
                spec.get("execution"),
                spec.get("trace"),
            )
        else:
            uri, fmt, execution = spec, None, None
        if not isinstance(uri, str) or not uri:
            raise ProfileLoadError(
                f"{LOAD_PROFILE.id} needs the URI of a profile directory or file as its argument"
            )
        path = to_fs_path(uri) if "://" in uri else uri
        if path is None:
            raise ProfileLoadError(f"{uri}: not a file URI")
        settings = self.server.settings
        roots = self._roots()
        mappings = {m.remote: m.local for m in settings.path_mappings}
        trace_path = (
            (to_fs_path(trace_uri) if "://" in trace_uri else trace_uri)
            if isinstance(trace_uri, str)
            else None
        )
        options = profiles.LoadOptions(
            fmt=fmt if isinstance(fmt, str) else None,
            roots=roots,
            mappings=mappings,
            execution=execution if isinstance(execution, int) else None,
            trace=trace_path,
            ignore_schema_version=bool(settings.extra.get("profileIgnoreSchemaVersion", False)),
        )
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(self.server.executor, profiles.load, path, options)
        except profiles.ProfileError as exc:
            raise ProfileLoadError(str(exc)) from exc
        except MemoryError as exc:
            raise ProfileLoadError(f"{path}: the profile is too large to load in memory") from exc
        except Exception as exc:  # a reader bug: one line for the user, the traceback in the output panel
            log.exception("loading profile %s failed", path)
            raise ProfileLoadError(_internal(path, exc)) from exc
        problem = report.problem()
        if problem:
            raise ProfileLoadError(problem)
        try:
            payloads = profiles.payloads(
                report, lambda local: canonical(from_fs_path(local) or Path(local).as_uri())
            )
        except profiles.ProfileError as exc:
            raise ProfileLoadError(str(exc)) from exc
        self.clear()
        pairing = self.server.measured_estimated
        pairing.measured(report, str(path), [p["uri"] for p in payloads])
        for payload in map(pairing.attach, payloads):
            doc_uri = payload["uri"]
            text = self._text(doc_uri)
            self.painted[doc_uri] = _Painted(payload, text, text)
            self._sync(doc_uri)  # the open document may already differ from the file on disk
            self.server.send_heat(self.painted[doc_uri].payload)
            self._publish_findings(doc_uri)
        self.server.refresh_inlay_hints()
        k = report.metrics.kernel
        return {
            "files": [p["uri"] for p in payloads],
            "format": report.profile.format,
            "latency_ns": k.latency_ns,
            "latency_source": k.latency_source,
            "unattributed_instr": k.unattributed_instr,
            "unmapped_files": [m.to_dict() for m in report.unmapped],
            "mapping": [m.to_dict() for m in report.mapping.values()],
            "notes": k.notes,
        }

    def clear(self, *args: Any) -> ClearProfileResult:
        """``clearProfile``: remove the heat from every painted document."""
        cleared = list(self.painted)
        for uri in cleared:
            empty: HeatmapParams = {**self.painted[uri].payload, "lines": [], "findings": [], "cleared": True}
            self.server.send_heat(empty)
            self.server.publish_diagnostics(uri, PERF_SOURCE, [])
        self.painted.clear()
        self.server.measured_estimated.measured(None)
        if cleared:
            self.server.refresh_inlay_hints()
        return {"cleared": cleared}

    # ---- document events ---------------------------------------------------------------------------------
    def on_change(self, uri: str) -> None:
        """Move the heat with the edit and mark it stale."""
        if uri in self.painted and self._sync(uri):
            self.server.send_heat(self.painted[uri].payload)
            self._publish_findings(uri)

    def _sync(self, uri: str) -> bool:
        """Bring the painted lines in line with the current document text; True when the payload changed."""
        painted = self.painted[uri]
        doc = find_document(self.server.workspace.text_documents, uri)
        if doc is None:
            return False
        current = doc.source
        lines, changed = heat.remap_lines(painted.payload["lines"], painted.text, current)
        findings, _ = heat.remap_lines(painted.payload.get("findings", []), painted.text, current)
        stale = current != painted.profiled_text
        if not changed and stale == painted.payload["stale"]:
            return False
        painted.payload = {**painted.payload, "lines": lines, "findings": findings, "stale": stale}
        painted.text = current
        return True

    # ---- editor extras -------------------------------------------------------------------------------------
    def hover(self, params: types.HoverParams) -> types.Hover | None:
        """Breakdown of the measured line under the cursor."""
        painted = self.painted.get(params.text_document.uri)
        if painted is None or self.server.heat_layers.shown(params.text_document.uri) not in (
            "measured",
            "compare",
        ):
            return None  # another layer is shown: its hover speaks
        text = heat.line_hover_markdown(painted.payload, params.position.line)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        """``⏱ 12.3 µs · 18% · Vector`` at the end of measured lines (setting ``inlayHints``)."""
        painted = self.painted.get(params.text_document.uri)
        shown = self.server.heat_layers.shown(params.text_document.uri)
        if painted is None or not self.server.settings.inlay_hints or shown != "measured":
            return None
        text_lines = painted.text.splitlines()
        hints = []
        for ln in painted.payload["lines"]:
            n = ln["line"]
            if params.range.start.line <= n <= params.range.end.line and n < len(text_lines):
                # Character offset in UTF-16 units, the LSP default encoding.
                col = len(text_lines[n].encode("utf-16-le")) // 2
                tip = heat.layer_label("measured", {"measured": painted.payload}) + (
                    " — file edited since, may be stale" if painted.payload["stale"] else ""
                )
                hints.append(
                    types.InlayHint(
                        position=types.Position(line=n, character=col),
                        label=heat.inlay_label(ln, painted.payload),
                        padding_left=True,
                        tooltip=tip,
                    )
                )
        return hints or None

    # ---- helpers -------------------------------------------------------------------------------------------
    def _publish_findings(self, uri: str) -> None:
        """The painted document's investigation findings as ``nki-perf`` diagnostics (none when switched off)."""
        from nki_studio.lsp.features.perf_diagnostics import perf_diagnostics

        painted = self.painted.get(uri)
        path = to_fs_path(uri)
        if painted is None or path is None:
            return
        found = painted.payload.get("findings", []) if self.server.settings.perf_investigations else []
        settings = self.server.settings
        diagnostics = perf_diagnostics(
            uri,
            path,
            painted.text,
            found,
            self.server.workspace.position_encoding,
            settings.rule_docs_base_url,
            severity=settings.perf_severity,
        )
        self.server.publish_diagnostics(uri, PERF_SOURCE, diagnostics)

    def on_settings_changed(self, old: Any, new: Any) -> None:
        """Show or hide the ``nki-perf`` diagnostics when ``perfInvestigations`` or ``perfSeverity`` changes."""
        if (old.perf_investigations, old.perf_severity) != (new.perf_investigations, new.perf_severity):
            for uri in self.painted:
                self._publish_findings(uri)

    def _roots(self) -> list[Path]:
        ws = self.server.workspace
        roots = [Path(p) for f in ws.folders.values() if (p := to_fs_path(f.uri))]
        if not roots and ws.root_path:
            roots = [Path(ws.root_path)]
        return roots

    def _text(self, uri: str) -> str:
        doc = find_document(self.server.workspace.text_documents, uri)
        if doc is not None:
            return doc.source
        path = to_fs_path(uri)
        try:
            return Path(path).read_text(encoding="utf-8") if path else ""
        except OSError:
            return ""


def register(server: NkiLanguageServer) -> None:
    """Wire the profile heat into the server."""
    feature = ProfileFeature(server)
    server.on_settings_changed(feature.on_settings_changed)
    server.on_document("change", feature.on_change)
    server.on_document("open", feature.on_change)
    server.add_hover_provider(feature.hover)
    server.add_inlay_hint_provider(feature.inlay_hints)

    @server.command(LOAD_PROFILE.id)
    async def load_profile(ls: NkiLanguageServer, *args: Any) -> LoadProfileResult:
        return await feature.load(*args)

    @server.command(CLEAR_PROFILE.id)
    def clear_profile(ls: NkiLanguageServer, *args: Any) -> ClearProfileResult:
        return feature.clear(*args)
