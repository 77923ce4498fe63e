"""``nki-studio.profileRemote`` (issue 7): profile a kernel on a remote Trn2 host and paint the measured heat.

Arguments ``[uri, kernel?]`` (or ``[{"uri", "kernel"?}]``). The service (``service.simulation``,
``service.remote_profile``) resolves the kernel's simulate spec (the same inputs "Simulate kernel" uses) and
the job from the ``remote`` settings object (VS Code ``nki-studio.remote.*``; ``cacheDir`` overrides the local
profile cache); this module runs the flow in a worker thread with ``$/progress`` stages and cancel, sends ssh
and remote output to the log, and hands the downloaded profile to ``nki-studio.loadProfile`` (profile
feature) so hovers, stale tracking and clearing work as for any profile.

Trust: this executes the user's kernel on their host, so it is refused (the service's refusal) in an
untrusted workspace.
Failures come back as an error response whose message says what to do; a compile error that names a kernel
line is also published as a diagnostic on that line (owner ``remote``), cleared by the next run.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from nki_studio.lsp.features.profile import REQUEST_FAILED
from nki_studio.lsp.jobs import CancelToken, progress
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.lsp.uris import canonical
from nki_studio.protocol.commands import (
    LOAD_PROFILE,
    PROFILE_REMOTE,
    LoadProfileResult,
    Refusal,
    RemoteProfileResult,
)
from nki_studio.service import remote_profile, simulation
from nki_studio.service.remote_profile import RemoteConfigError, RemoteError
from nki_studio.service.simulation import SpecProblem
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

if TYPE_CHECKING:
    from nki_studio.service.remote_profile import RemoteJob, RemoteProfile

log = logging.getLogger(__name__)

DIAGNOSTIC_OWNER = "remote"


class RemoteProfileError(JsonRpcException):
    """Sent to the client as an error response with the flow's message."""

    CODE = REQUEST_FAILED


class RemoteFeature:
    """One remote run at a time per server (a second request while one runs is refused with a message)."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self._busy = threading.Lock()

    async def profile(self, *args: Any) -> RemoteProfileResult | Refusal:
        """Run the round trip for the kernel named by ``args``; returns the loadProfile summary plus the cache path."""
        first = args[0] if args else None
        uri, kernel = (
            (first.get("uri"), first.get("kernel"))
            if isinstance(first, dict)
            else (first, args[1] if len(args) > 1 else None)
        )
        if not self.server.trusted:
            refused = simulation.refusal()
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=refused["message"])
            )
            return {"status": "refused", "message": refused["message"]}
        path = to_fs_path(uri) if isinstance(uri, str) and "://" in uri else uri
        if not isinstance(path, str) or not path:
            raise RemoteProfileError(f"{PROFILE_REMOTE.id} needs the URI of a kernel file")
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise RemoteProfileError(f"{path}: {exc.strerror or exc}") from exc
        settings = self.server.settings
        try:
            job = simulation.prepare(
                path,
                text,
                settings,
                kernel=kernel if isinstance(kernel, str) and kernel else None,
                lenient=True,
            )
        except SpecProblem as exc:
            raise RemoteProfileError(
                "cannot profile: "
                + "; ".join(exc.problems)
                + " (add a `# nki-studio: simulate` spec comment with the kernel's inputs)"
            ) from exc
        kernel_file = Path(path).resolve()
        try:
            remote = remote_profile.job_for(job, settings, self._folder_of(kernel_file))
        except RemoteConfigError as exc:
            raise RemoteProfileError(str(exc)) from exc
        if not self._busy.acquire(blocking=False):
            raise RemoteProfileError("a remote profiling run is already in progress; cancel it or wait")
        doc_uri = canonical(kernel_file.as_uri())  # the spelling the profile feature keys by
        self.server.publish_diagnostics(doc_uri, DIAGNOSTIC_OWNER, [])
        try:
            profile = await self._run(remote)
        except RemoteError as exc:
            if exc.line:
                self._compile_diagnostic(doc_uri, exc)
            raise RemoteProfileError(str(exc)) from exc
        finally:
            self._busy.release()
        load = self.server.protocol.fm.commands.get(
            LOAD_PROFILE.id
        )  # the profile feature's registered handler
        if load is None:
            raise RemoteProfileError(
                f"profile downloaded to {profile.path}, but the profile feature is not enabled"
            )
        summary: LoadProfileResult = await load({"uri": profile.path.as_uri(), "format": profile.format})
        result: RemoteProfileResult = {
            "status": "ok",
            "profile": str(profile.path),
            "host": profile.host,
            **summary,
        }
        doc = self.server.workspace.text_documents.get(uri) if isinstance(uri, str) else None
        if doc is not None and doc.source != text:  # the host ran the file as saved
            result["warnings"] = ["the document has unsaved changes: the saved file was profiled"]
        return result

    async def _run(self, job: RemoteJob) -> RemoteProfile:
        token = CancelToken()
        title = f"Profiling {job.spec.kernel} on {job.settings.host}"
        async with progress(self.server, title, cancel=token) as prog:

            def stage(name: str, message: str) -> None:
                log.info("remote %s: %s", name, message)
                prog.report(message, remote_profile.stage_share(name))

            def work() -> RemoteProfile:
                return remote_profile.run(
                    job,
                    log=lambda line: log.info("%s", line),
                    progress=stage,
                    cancelled=lambda: token.cancelled,
                )

            loop = asyncio.get_running_loop()
            profile = await loop.run_in_executor(self.server.executor, work)
            prog.report("loading the profile", remote_profile.stage_share("load"))
            return profile

    def _folder_of(self, kernel_file: Path) -> Path | None:
        """The workspace folder holding the kernel (its layout is mirrored on the host), if any."""
        for folder in self.server.workspace.folders.values():
            root = to_fs_path(folder.uri)
            if root and kernel_file.is_relative_to(Path(root).resolve()):
                return Path(root).resolve()
        return None

    def _compile_diagnostic(self, uri: str, exc: RemoteError) -> None:
        line = max((exc.line or 1) - 1, 0)
        diag = types.Diagnostic(
            range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line + 1, character=0)
            ),
            message=str(exc),
            severity=types.DiagnosticSeverity.Error,
            source="nki-studio remote",
        )
        self.server.publish_diagnostics(uri, DIAGNOSTIC_OWNER, [diag])


def register(server: NkiLanguageServer) -> None:
    """Add the ``profileRemote`` command."""
    feature = RemoteFeature(server)

    @server.command(PROFILE_REMOTE.id)
    async def profile_remote(ls: NkiLanguageServer, *args: Any) -> RemoteProfileResult | Refusal:
        return await feature.profile(*args)
