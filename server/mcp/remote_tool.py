"""The ``profile_remote`` tool, offered only when the server was given a host and remote profiling was
enabled (``McpConfig.remote_available``): compile, capture and download a profile on the Trn2 host
(``nki_studio.remote``), then view it like ``analyze_profile``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nki_studio.mcp.config import McpConfig
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.jobs import prepare
from nki_studio.mcp.profile_tools import headline, local_paths
from nki_studio.mcp.workspace import Workspace
from nki_studio.service import remote_profile, views
from nki_studio.service.remote_profile import RemoteConfigError, RemoteError


def profile_remote(ws: Workspace, config: McpConfig, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Profile the kernel on the configured host; the log of the remote stages comes back too."""
    if not config.remote_available:
        raise ToolFailure("refused", "remote profiling is not configured and enabled for this server")
    job = prepare(ws, config.settings, args)
    kernel_file = Path(job.path)
    root = next((r for r in ws.roots if kernel_file.is_relative_to(r)), kernel_file.parent)
    try:
        remote = remote_profile.job_for(job, config.settings, root)
    except RemoteConfigError as exc:
        raise ToolFailure("invalid_arguments", str(exc)) from exc
    log: list[str] = []
    try:
        profile = remote_profile.run(
            remote, log=log.append, progress=lambda stage, message: log.append(f"[{stage}] {message}")
        )
        report = remote_profile.load(profile)
    except RemoteError as exc:
        raise ToolFailure("remote_failed", str(exc), log=log[-40:]) from exc

    seen = views.view(report, local_paths(ws, report))
    out = {
        **seen,
        "kernel": job.spec.kernel,
        "host": profile.host,
        "downloaded": str(profile.path),
        "log": log[-40:],
    }
    return out, headline(f"{job.spec.kernel} on {profile.host}", seen)
