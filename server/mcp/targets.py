"""The ``target`` and ``nki_version`` arguments every tool takes, over the server's settings."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp.errors import ToolFailure
from nki_studio.nkilint.config import ConfigError
from nki_studio.service.settings import Settings, strict


def tool_settings(base: Settings, args: dict[str, Any]) -> Settings:
    """The server's settings with the tool's ``target``/``nki_version`` arguments (when given) on top; the
    file's ``[tool.nki-studio]`` applies under them (``service.settings.project_config``)."""
    given = {
        key: args[arg] for key, arg in (("target", "target"), ("nkiVersion", "nki_version")) if args.get(arg)
    }
    try:
        return strict(base, given)
    except ValueError as exc:
        raise ToolFailure("invalid_arguments", str(exc)) from exc


def config_failure(exc: ConfigError) -> ToolFailure:
    """A broken ``[tool.nki-studio]`` as the tool error."""
    return ToolFailure("bad_spec", f"invalid [tool.nki-studio] configuration: {exc}")
