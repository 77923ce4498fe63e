"""Language-server settings: one immutable object, filled from the client's ``initializationOptions`` and
``workspace/didChangeConfiguration`` (section ``nki-studio``).

Keys are camelCase, as VS Code settings ``nki-studio.<key>`` are spelled; each is declared, with its default
and allowed values, in ``nki_studio.settings.declaration``. Unknown keys are kept in ``extra``; a bad value keeps
the previous value and is reported (returned as a problem string), never fatal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nki_studio.model.targets import Generation, NkiVersion, parse_generation, parse_nki_version
from nki_studio.settings.declaration import SECTION, default, setting

HEATMAP_METRICS = setting("heatmapMetric").enum
LOG_LEVELS = setting("logLevel").enum


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
    return parse_generation(str(value))


def _nki_version(value: Any) -> NkiVersion | None:
    if value in (None, "", "auto"):
        return None
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
    "ruleDocsBaseUrl": ("rule_docs_base_url", _optional_str),
    "logLevel": ("log_level", _choice(LOG_LEVELS)),
    "fastStart": ("fast_start", _bool),
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
    rule_docs_base_url: str | None = _declared("ruleDocsBaseUrl")  # None: local file URI
    log_level: str = _declared("logLevel")
    # Read only by the start-up fast path (lsp.fastpath), from initializationOptions: applies from the next start.
    fast_start: bool = _declared("fastStart")
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown keys, kept for feature modules


def section_of(options: Any) -> Mapping[str, Any]:
    """The ``nki-studio`` part of an options/settings payload; accepts it nested or already flat."""
    if not isinstance(options, Mapping):
        return {}
    nested = options.get(SECTION)
    if isinstance(nested, Mapping):
        return nested
    return options


def merge(base: Settings, options: Any) -> tuple[Settings, list[str]]:
    """Return ``base`` updated with the keys present in ``options`` and a list of problems (bad values)."""
    values = section_of(options)
    changes: dict[str, Any] = {}
    extra = dict(base.extra)
    problems: list[str] = []
    for key, value in values.items():
        spec = _KEYS.get(key)
        if spec is None:
            extra[key] = value
            continue
        name, parse = spec
        try:
            changes[name] = parse(value)
        except (ValueError, TypeError) as exc:
            problems.append(f"setting {SECTION}.{key}: {exc}; keeping {getattr(base, name)!r}")
    return dataclasses.replace(base, extra=extra, **changes), problems
