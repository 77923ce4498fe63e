""" "Tune kernel…" from the editor: ``nki-studio.tuneSpace`` (the kernel's declared space, to pre-fill the
question; runs no user code) and ``nki-studio.tune`` (``service.tune`` on the document's text, in a job thread
with ``$/progress`` and cancel). The answer carries the report, the panel's text (table rows, summary, the
scatter SVG, all rendered by ``tune.report`` as for the CLI) and the edit that writes the winner into the text
that was searched; the extension applies it when the user asks, never the server.

Trust: every candidate runs the user's kernel, so ``tune`` is refused (the service's refusal) in an untrusted
workspace. One search at a time per server: a second one while one runs is an error saying so.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types
from nki_studio.lsp.features.profile import REQUEST_FAILED
from nki_studio.lsp.jobs import CancelToken, progress
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.nkilint.config import ConfigError
from nki_studio.protocol.commands import TUNE, TUNE_SPACE, DeclaredSpace, Refusal, TuneResult
from nki_studio.protocol.tune import TuneReport
from nki_studio.service import simulation
from nki_studio.service import tune as service
from nki_studio.service.simulation import SpecProblem
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path


class TuneCommandError(JsonRpcException):
    """An error response whose message says what to change (the space, the spec, the arguments)."""

    CODE = REQUEST_FAILED


class TuneFeature:
    """The two commands of one server."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self._busy = threading.Lock()

    def _text(self, uri: object) -> tuple[str, str]:
        """The path and current text (the open document's, else the file's) of ``uri``."""
        if not isinstance(uri, str) or not uri:
            raise TuneCommandError(f"{TUNE.id} needs the URI of a kernel file")
        path = to_fs_path(uri) if "://" in uri else uri
        if not path:
            raise TuneCommandError(f"not a file: {uri!r}")
        doc = self.server.workspace.text_documents.get(uri)
        if doc is not None:
            return path, doc.source
        try:
            return path, Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise TuneCommandError(f"{path}: {exc.strerror or exc}") from exc

    def declared(self, uri: object, kernel: object) -> DeclaredSpace:
        """``nki-studio.tuneSpace`` with ``[uri, kernel]``."""
        path, text = self._text(uri)
        return service.declared_space(path, text, str(kernel))

    async def tune(self, *args: Any) -> TuneResult | Refusal:
        """``nki-studio.tune`` with ``[{"uri", "kernel", "space"?, "budget"?}]``."""
        spec = args[0] if args and isinstance(args[0], dict) else {}
        if not self.server.trusted:
            refused = simulation.refusal()
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=refused["message"])
            )
            return {"status": "refused", "message": refused["message"]}
        uri = spec.get("uri")
        path, text = self._text(uri)
        kernel, space, budget = spec.get("kernel"), spec.get("space"), spec.get("budget")
        if budget is not None and (not isinstance(budget, int) or budget <= 0):
            raise TuneCommandError(f"budget must be a positive number of points, not {budget!r}")
        options = service.TuneOptions(
            kernel=kernel if isinstance(kernel, str) and kernel else None,
            space=space if isinstance(space, str) and space.strip() else None,
            budget=budget,
        )
        if not self._busy.acquire(blocking=False):
            raise TuneCommandError("a search is already running; cancel it or wait for it")
        try:
            report = await self._run(path, text, options)
        finally:
            self._busy.release()
        self.server.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info if report["winner"] else types.MessageType.Warning,
                message=f"NKI: tune {report['kernel']}: {service.report_winner(report)}",
            )
        )
        return {
            "status": "ok",
            "uri": str(uri),
            "report": report,
            "summary": service.report_summary(report),
            "header": list(service.REPORT_HEADER),
            "rows": service.report_rows(report),
            "outcome": service.report_outcome(report),
            "scatter": service.report_svg(report),
            "edits": service.winner_edits(
                text, report["kernel"], report["winner"]["values"] if report["winner"] else None
            ),
        }

    async def _run(self, path: str, text: str, options: service.TuneOptions) -> TuneReport:
        token = CancelToken()
        name = options.kernel or Path(path).name
        async with progress(self.server, f"Tuning {name}", cancel=token) as prog:

            def on_progress(p: service.Progress) -> None:
                prog.report(p.text, int(100 * min(p.done, p.total) / max(p.total, 1)))

            def work() -> TuneReport:
                return service.tune(
                    path, text, self.server.settings, options, on_progress, cancelled=lambda: token.cancelled
                )

            try:
                return await asyncio.get_running_loop().run_in_executor(self.server.executor, work)
            except (
                SpecProblem,
                ConfigError,
                service.SpaceError,
                service.TuneError,
                service.RayUnavailable,
            ) as exc:
                raise TuneCommandError(str(exc)) from exc


def register(server: NkiLanguageServer) -> None:
    """Add the two commands."""
    feature = TuneFeature(server)

    @server.command(TUNE_SPACE.id)
    async def tune_space(ls: NkiLanguageServer, *args: Any) -> DeclaredSpace:
        uri, kernel = (args[0] if args else None), (args[1] if len(args) > 1 else "")
        # parses the document: off the event loop, in the pool of requests a user waits for
        return await asyncio.get_running_loop().run_in_executor(
            server.request_executor, feature.declared, uri, kernel
        )

    @server.command(TUNE.id)
    async def tune(ls: NkiLanguageServer, *args: Any) -> TuneResult | Refusal:
        return await feature.tune(*args)
