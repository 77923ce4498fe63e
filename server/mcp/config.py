"""What an MCP server may do, fixed when it starts: its workspace roots, whether it may run kernels, the
simulation limits and the remote-profiling host (used only when also enabled).

Values come from ``nki-studio mcp`` options and an optional settings file with the keys of the settings
table (``nki_studio.settings.declaration``: ``simulationTimeout``, ``remote: {host: ...}`` ...); options win.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nki_studio.settings.declaration import default


@dataclass(frozen=True)
class McpConfig:
    """The server's configuration (see the module docstring)."""

    roots: tuple[Path, ...]
    trusted: bool = True  # False: lint, explain and profile analysis only; nothing runs the workspace's code
    timeout_s: float = float(default("simulationTimeout"))
    memory_mb: int = int(default("simulationMemoryLimitMb"))
    remote: Mapping[str, Any] = field(default_factory=dict)  # the settings' ``remote`` object
    remote_enabled: bool = False  # profile_remote exists only when this is true and remote.host is set

    @property
    def remote_available(self) -> bool:
        """Whether ``profile_remote`` is offered: configured (a host) and enabled, in a trusted server."""
        host = self.remote.get("host")
        return self.trusted and self.remote_enabled and isinstance(host, str) and bool(host.strip())


def read_settings(text: str) -> dict[str, Any]:
    """The settings object of ``--settings``: inline JSON (``{...}``, as the VS Code extension passes it) or a
    JSON file; either nested (``{"remote": {"host": ...}}``) or VS Code's flat ``nki-studio.*`` keys.
    Raises ValueError naming what is wrong."""
    inline = text.lstrip().startswith("{")
    what = "--settings (inline JSON)" if inline else f"--settings {text}"
    try:
        raw = json.loads(text if inline else Path(text).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{what}: not readable JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise ValueError(f"{what}: expected a JSON object")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        key = key.removeprefix("nki-studio.")
        if key.startswith("remote."):
            out.setdefault("remote", {})[key.removeprefix("remote.")] = value
        elif key == "remote" and isinstance(value, dict):
            out.setdefault("remote", {}).update(value)
        else:
            out[key] = value
    return out


def _positive(settings: Mapping[str, Any], key: str, given: float | None) -> float:
    value = given if given is not None else settings.get(key, default(key))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{key}: expected a positive number, got {value!r}")
    return float(value)


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
    s = dict(settings or {})
    remote = dict(s.get("remote") or {})
    if remote_host is not None:
        remote["host"] = remote_host
    enabled = remote_enabled if remote_enabled is not None else bool(s.get("mcp.remoteProfiling", False))
    return McpConfig(
        roots=tuple(Path(r).expanduser().resolve() for r in roots),
        trusted=trusted and s.get("trustedWorkspace", True) is not False,
        timeout_s=_positive(s, "simulationTimeout", timeout_s),
        memory_mb=int(_positive(s, "simulationMemoryLimitMb", memory_mb)),
        remote=remote,
        remote_enabled=enabled,
    )
