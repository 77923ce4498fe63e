"""The ``target`` and ``nki_version`` arguments every tool takes, over the file's ``[tool.nki-studio]``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from nki_studio.mcp.errors import ToolFailure
from nki_studio.model.targets import Generation, NkiVersion, Target, parse_generation, parse_nki_version
from nki_studio.nkilint.config import ConfigError, LintConfig, load_config


def file_config(path: str, args: dict[str, Any]) -> LintConfig:
    """The lint configuration of ``path`` with the tool's ``target``/``nki_version`` arguments applied."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        raise ToolFailure("bad_spec", f"invalid [tool.nki-studio] configuration: {exc}") from exc
    generation, version = parse_target_args(args)
    if generation is None and version is None:
        return config
    target = Target(generation or config.target.generation, version or config.target.nki_version)
    return replace(config, target=target, nki_version_set=config.nki_version_set or version is not None)


def parse_target_args(args: dict[str, Any]) -> tuple[Generation | None, NkiVersion | None]:
    """The generation and NKI version the arguments name (None: not named)."""
    try:
        generation = parse_generation(args["target"]) if args.get("target") else None
        version = parse_nki_version(args["nki_version"]) if args.get("nki_version") else None
    except ValueError as exc:
        raise ToolFailure("invalid_arguments", str(exc)) from exc
    return generation, version
