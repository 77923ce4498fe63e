"""The one reader of configuration: every source gives the same immutable ``Settings``.

Sources: the language server's ``initializationOptions``, ``workspace/didChangeConfiguration`` and
``workspace/configuration`` answers (``merge``: a bad value keeps the previous one and is reported); the MCP
server's ``--settings`` JSON (``read_json``) and the CLI/MCP options (``strict``: a bad value is a usage
error); the file's ``[tool.nki-studio]`` in ``pyproject.toml`` for target and NKI version (``project_config``; the
language server's lenient reading is ``service.lint.document_config``), under the explicit values of the
settings.

Keys are camelCase, as VS Code settings ``nki-studio.<key>`` are spelled; each is declared, with its default
and allowed values, in ``nki_studio.settings.declaration``. Unknown keys are kept in ``extra`` (the ``remote``
object among them: ``Settings.remote``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nki_studio.settings.declaration import SECTION, default, setting

if TYPE_CHECKING:  # the target model is imported when a value names one: start-up reads only the defaults
    from nki_studio.model.targets import Generation, NkiVersion, Target
    from nki_studio.model.version_signals import VersionSignal
    from nki_studio.nkilint.config import LintConfig

HEATMAP_METRICS = setting("heatmapMetric").enum
LOG_LEVELS = setting("logLevel").enum
PERF_SEVERITIES = setting("perfSeverity").enum


@dataclass(frozen=True)
class PathMapping:
    """Rewrite a path prefix from the profiling host (``remote``) to the workspace (``local``)."""

    remote: str
    local: str


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"expected true or false, got {value!r}")


def _positive_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    return float(value)


def _non_negative_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a non-negative integer, got {value!r}")
    return value


def _choice(choices: tuple[str, ...]) -> Any:
    def parse(value: Any) -> str:
        if not isinstance(value, str) or value.lower() not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return value.lower()

    return parse


def _optional_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _target(value: Any) -> Generation | None:
    if value in (None, "", "auto"):
        return None
    from nki_studio.model.targets import parse_generation

    return parse_generation(str(value))


def _nki_version(value: Any) -> NkiVersion | None:
    if value in (None, "", "auto"):
        return None
    from nki_studio.model.targets import parse_nki_version

    return parse_nki_version(str(value))


def _path_mappings(value: Any) -> tuple[PathMapping, ...]:
    """Accept ``{"/remote": "/local"}`` or ``[{"remote": ..., "local": ...}]`` (VS Code array settings)."""
    if isinstance(value, Mapping):
        return tuple(PathMapping(str(k), str(v)) for k, v in value.items())
    if isinstance(value, list):
        out = []
        for item in value:
            if not isinstance(item, Mapping) or "remote" not in item or "local" not in item:
                raise ValueError(f"each path mapping needs 'remote' and 'local', got {item!r}")
            out.append(PathMapping(str(item["remote"]), str(item["local"])))
        return tuple(out)
    raise ValueError(f"expected an object or a list of {{remote, local}}, got {value!r}")


# camelCase client key -> (Settings field, parser); the keys are declared in nki_studio.settings.declaration
_KEYS: dict[str, tuple[str, Any]] = {
    "target": ("target", _target),
    "nkiVersion": ("nki_version", _nki_version),
    "trustedWorkspace": ("trusted_workspace", _bool),
    "lintEnabled": ("lint_enabled", _bool),
    "lintDebounceMs": ("lint_debounce_ms", _non_negative_int),
    "simulateOnSave": ("simulate_on_save", _bool),
    "simulationTimeout": ("simulation_timeout_s", _positive_number),
    "simulationMemoryLimitMb": ("simulation_memory_mb", lambda v: int(_positive_number(v))),
    "heatmapMetric": ("heatmap_metric", _choice(HEATMAP_METRICS)),
    "pathMappings": ("path_mappings", _path_mappings),
    "inlayHints": ("inlay_hints", _bool),
    "perfInvestigations": ("perf_investigations", _bool),
    "perfSeverity": ("perf_severity", _choice(PERF_SEVERITIES)),
    "ruleDocsBaseUrl": ("rule_docs_base_url", _optional_str),
    "logLevel": ("log_level", _choice(LOG_LEVELS)),
    "fastStart": ("fast_start", _bool),
    "calibrationFile": ("calibration_file", _optional_str),
}


def _declared(key: str) -> Any:
    """The declared default of ``key``, parsed as a client's value would be."""
    return _KEYS[key][1](default(key))


@dataclass(frozen=True)
class Settings:
    """Everything a feature may read. ``None`` for target/nki_version means "not set in the editor":
    the project's ``[tool.nki-studio]`` (or auto-detection) decides. Defaults are the declared ones, parsed."""

    # Both parse "auto" to None (immutable, so a shared default is safe).
    target: Generation | None = _declared("target")  # noqa: RUF009
    nki_version: NkiVersion | None = _declared("nkiVersion")  # noqa: RUF009
    # Running user code is a trust decision: only a client that says so makes the workspace trusted.
    trusted_workspace: bool = _declared("trustedWorkspace")
    lint_enabled: bool = _declared("lintEnabled")
    lint_debounce_ms: int = _declared("lintDebounceMs")
    simulate_on_save: bool = _declared("simulateOnSave")  # effective only in a trusted workspace
    simulation_timeout_s: float = _declared("simulationTimeout")
    simulation_memory_mb: int = _declared("simulationMemoryLimitMb")
    heatmap_metric: str = _declared("heatmapMetric")
    path_mappings: tuple[PathMapping, ...] = _declared("pathMappings")
    inlay_hints: bool = _declared("inlayHints")
    perf_investigations: bool = _declared("perfInvestigations")
    perf_severity: str = _declared("perfSeverity")
    rule_docs_base_url: str | None = _declared("ruleDocsBaseUrl")  # None: local file URI
    log_level: str = _declared("logLevel")
    # Read only by the start-up fast path (lsp.fastpath), from initializationOptions: applies from the next start.
    fast_start: bool = _declared("fastStart")
    calibration_file: str | None = _declared(
        "calibrationFile"
    )  # None: the project's (service.calibration_file)
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown keys, kept for feature modules

    @property
    def remote(self) -> Mapping[str, Any]:
        """The ``remote`` object (the ``remote.*`` settings, ``nki_studio.remote.config`` parses them)."""
        raw = self.extra.get("remote", {})
        return raw if isinstance(raw, Mapping) else {}


def section_of(options: Any) -> Mapping[str, Any]:
    """The ``nki-studio`` part of an options/settings payload; accepts it nested or already flat."""
    if not isinstance(options, Mapping):
        return {}
    nested = options.get(SECTION)
    if isinstance(nested, Mapping):
        return nested
    return options


def _apply(base: Settings, options: Any) -> tuple[Settings, list[tuple[str, str, Exception]]]:
    """``base`` updated with the valid keys of ``options``, and (key, field, error) of every bad value."""
    values = section_of(options)
    changes: dict[str, Any] = {}
    extra = dict(base.extra)
    bad: list[tuple[str, str, Exception]] = []
    for key, value in values.items():
        spec = _KEYS.get(key)
        if spec is None:
            extra[key] = value
            continue
        name, parse = spec
        try:
            changes[name] = parse(value)
        except (ValueError, TypeError) as exc:
            bad.append((key, name, exc))
    return dataclasses.replace(base, extra=extra, **changes), bad


def merge(base: Settings, options: Any) -> tuple[Settings, list[str]]:
    """Return ``base`` updated with the keys present in ``options`` and a list of problems (bad values, each
    keeping the previous value): an editor's settings, where a typo must not stop the server."""
    settings, bad = _apply(base, options)
    problems = [f"setting {SECTION}.{key}: {exc}; keeping {getattr(base, name)!r}" for key, name, exc in bad]
    return settings, problems


def strict(base: Settings, options: Any) -> Settings:
    """``base`` updated with ``options`` from a command line, a settings file or a tool's arguments, which
    have no previous value to keep: a bad value raises ValueError naming each (``key: problem``)."""
    settings, bad = _apply(base, options)
    if bad:
        raise ValueError("; ".join(f"{key}: {exc}" for key, _, exc in bad))
    return settings


def read_json(text: str) -> dict[str, Any]:
    """A settings object given on a command line (``--settings``): inline JSON (``{...}``, as the VS Code
    extension passes it) or a JSON file; either nested (``{"remote": {"host": ...}}``) or VS Code's flat
    ``nki-studio.*`` keys, returned nested as the server receives them. Raises ValueError naming what is wrong."""
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
        key = key.removeprefix(f"{SECTION}.")
        if key.startswith("remote."):
            out.setdefault("remote", {})[key.removeprefix("remote.")] = value
        elif key == "remote" and isinstance(value, dict):
            out.setdefault("remote", {}).update(value)
        else:
            out[key] = value
    return out


def project_config(path: str, settings: Settings) -> LintConfig:
    """The ``[tool.nki-studio]`` configuration of ``path`` with the settings' explicit target and NKI version
    on top. Raises ``nkilint.config.ConfigError`` for a broken ``pyproject.toml``."""
    from nki_studio.nkilint.config import load_config

    return load_config(path).with_overrides(generation=settings.target, nki_version=settings.nki_version)


def file_target(path: str | None, settings: Settings) -> Target:
    """The target of ``path`` for the editor's features (completion, hovers): ``project_config``'s, or the
    settings' over the defaults when there is no path or its ``pyproject.toml`` is broken (lint reports it)."""
    from nki_studio.model.targets import DEFAULT_GENERATION, NEWEST_VERSION, Target
    from nki_studio.nkilint.config import ConfigError

    try:
        if path:
            return project_config(path, settings).target
    except ConfigError:
        pass
    return Target(settings.target or DEFAULT_GENERATION, settings.nki_version or NEWEST_VERSION)


def code_target(path: str | None, settings: Settings, text: str) -> tuple[Target, VersionSignal | None]:
    """``file_target`` for a file's ``text``: when no setting names the NKI version, the version its code is
    written for as the linter infers it (legacy ``neuronxcc.nki`` imports, 0.6-only APIs), returned with the use
    it was inferred from (None: nothing was inferred)."""
    from nki_studio.model.targets import DEFAULT_GENERATION, NEWEST_VERSION, Target
    from nki_studio.nkilint.config import ConfigError, LintConfig, load_config
    from nki_studio.nkilint.engine import with_code_version

    try:
        config = load_config(path) if path else LintConfig()
    except ConfigError:
        config = LintConfig(target=Target(DEFAULT_GENERATION, NEWEST_VERSION))
    if settings.nki_version is None:
        config = with_code_version(config, text)
    configured = config.target
    target = Target(settings.target or configured.generation, settings.nki_version or configured.nki_version)
    return target, config.version_signal
