"""What an MCP server may do, fixed when it starts: its workspace roots, its settings (whether it may run
kernels, the simulation limits, the remote-profiling host, used only when also enabled).

The settings are read by the one reader (``nki_studio.service.settings``): the ``nki-studio mcp`` options
over the optional ``--settings`` object over the declared defaults; this module only names the options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nki_studio.service.settings import Settings, strict

# An MCP server runs the workspace's kernels unless started --untrusted (or told so by its settings): the
# user who starts it decides, unlike an editor, which asks the workspace.
_BASE = Settings(trusted_workspace=True)


@dataclass(frozen=True)
class McpConfig:
    """The server's configuration (see the module docstring)."""

    roots: tuple[Path, ...]
    settings: Settings = _BASE
    remote_enabled: bool = False  # profile_remote exists only when this is true and remote.host is set

    @property
    def trusted(self) -> bool:
        """False: lint, explain and profile analysis only; nothing runs the workspace's code."""
        return self.settings.trusted_workspace

    @property
    def remote_available(self) -> bool:
        """Whether ``profile_remote`` is offered: configured (a host) and enabled, in a trusted server."""
        host = self.settings.remote.get("host")
        return self.trusted and self.remote_enabled and isinstance(host, str) and bool(host.strip())


def build_config(
    roots: Sequence[str],
    *,
    settings: Mapping[str, Any] | None = None,
    trusted: bool = True,
    timeout_s: float | None = None,
    memory_mb: int | None = None,
    remote_host: str | None = None,
    remote_enabled: bool | None = None,
) -> McpConfig:
    """The configuration from options over settings over the declared defaults. Raises ValueError."""
    given = strict(_BASE, settings or {})
    options: dict[str, Any] = {"simulationTimeout": timeout_s, "simulationMemoryLimitMb": memory_mb}
    if remote_host is not None:
        options["remote"] = {**given.remote, "host": remote_host}
    if not trusted:
        options["trustedWorkspace"] = False
    merged = strict(given, {k: v for k, v in options.items() if v is not None})
    enabled = (
        remote_enabled if remote_enabled is not None else bool(merged.extra.get("mcp.remoteProfiling", False))
    )
    return McpConfig(
        roots=tuple(Path(r).expanduser().resolve() for r in roots),
        settings=merged,
        remote_enabled=enabled,
    )
