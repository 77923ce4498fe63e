"""Public entry points of nkilint, used by the CLI and the language server.

``lint_source`` and ``lint_paths`` never raise on any input: unparsable text, a broken config or a failing rule
all come back as findings (NKI000, NKI002, NKI999).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from nki_studio.core.findings import Finding, Severity, Span
from nki_studio.core.gc_pause import gc_paused
from nki_studio.model.kernels import KernelDiscovery
from nki_studio.model.targets import NkiVersion, Target
from nki_studio.nkilint.config import ConfigError, LintConfig, load_config
from nki_studio.nkilint.engine import (
    CONFIG_ERROR,
    discover_safely,
    dispose_discovery,
    lint_module,
    meta_finding,
    parse,
)

if TYPE_CHECKING:
    from nki_studio.model.analysis import ArgFact

__all__ = [
    "ConfigError",
    "LintConfig",
    "check_python_subset",
    "config_for",
    "iter_python_files",
    "lint_paths",
    "lint_source",
    "load_config",
]

log = logging.getLogger("nki_studio.nkilint")

_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "build",
        "dist",
        ".tox",
    }
)


def config_for(path: str) -> tuple[LintConfig, Finding | None]:
    """The configuration for ``path`` and, if its ``pyproject.toml`` is invalid, an NKI002 finding
    (defaults are then used, so linting still happens)."""
    try:
        return load_config(path or os.getcwd()), None
    except ConfigError as exc:
        log.warning("%s", exc)
        return LintConfig(), meta_finding(CONFIG_ERROR, path, Span(1, 1, 1, 1), str(exc))


def lint_source(text: str, path: str, config: LintConfig | None = None) -> list[Finding]:
    """Lint one file's text (possibly unsaved). ``path`` locates the config and local helper modules;
    ``config`` (when given) is used as is. Never raises."""
    text = text.removeprefix("\ufeff")  # editors do not count a byte-order mark as a column
    extra: list[Finding] = []
    if config is None:
        config, problem = config_for(path)
        extra = [problem] if problem is not None else []
    try:
        return extra + lint_module(text, path, config)
    except Exception as exc:  # last line of defence: the engine already isolates rules
        log.exception("lint failed on %s", path)
        return [*extra, meta_finding("NKI999", path, Span(1, 1, 1, 1), f"internal error: {exc}")]


def check_python_subset(path: str, nki_version: NkiVersion) -> list[Finding]:
    """The findings that reject the file for ``nki_version``: its NKI1xx (Python subset) findings of severity
    error or warning under the file's config with that version. Empty when the target compiles it. Passed to
    ``nki_studio.sim.simulate(python_subset=...)``."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    config, _ = config_for(path)
    config = replace(config, target=Target(config.target.generation, nki_version))
    # The subset rules are warnings (their basis is partly inferred); in this mode any of them rejects.
    return [
        f
        for f in lint_source(text, path, config)
        if f.code.startswith("NKI1") and f.severity in (Severity.ERROR, Severity.WARNING)
    ]


def iter_python_files(paths: Iterable[str]) -> Iterator[str]:
    """The ``.py`` files named by ``paths``, directories recursed (skipping VCS, venv and cache dirs)."""
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield os.path.join(root, name)
        else:
            yield p


@dataclass
class _Parsed:
    path: str
    text: str
    config: LintConfig
    discovery: KernelDiscovery | None
    early: list[Finding]  # read/parse/config problems


def lint_paths(
    paths: Iterable[str],
    config: LintConfig | None = None,
    *,
    override: Callable[[LintConfig], LintConfig] | None = None,
    kernel_args: Callable[[str, str], Mapping[str, Mapping[str, ArgFact]]] | None = None,
) -> list[Finding]:
    """Lint files and directories. Helpers that kernels in *other* linted files call are checked as kernel
    code too. ``config=None`` loads each file's nearest ``[tool.nki-studio]``; ``override`` (e.g. command-line
    options) is applied to every file's config; ``kernel_args(text, path)`` says what a file's simulate specs
    give its kernels' arguments (``LintConfig.kernel_args``). Never raises."""
    # Every file's tree and discovery stay alive until the last file's findings are out (the cross-file pass):
    # with the collector on, its first pass after parsing traversed all of them for nothing (0.2 s of CPU on a
    # 50,000-line module; core.gc_pause). Cycles made meanwhile are broken by the disposals below.
    with gc_paused():
        parsed = [_prepare(path, config, override, kernel_args) for path in iter_python_files(paths)]
        try:
            return _lint_prepared(parsed)
        finally:  # after every file's findings: another file's lint may read a discovery
            _dispose(parsed)


def _dispose(parsed: list[_Parsed]) -> None:
    """Break the cycles of every file's discovery and drop the files, so that their trees are freed by
    reference counting now, not traversed by the collector's first pass once the pause ends."""
    for item in parsed:
        if item.discovery is not None:
            dispose_discovery(item.discovery)
    parsed.clear()


def _lint_prepared(parsed: list[_Parsed]) -> list[Finding]:
    # Cross-file pass: functions reached from kernels of other files become extra roots of their own file.
    reached: dict[str, set[str]] = {}
    for item in parsed:
        if item.discovery is None:
            continue
        for func in item.discovery.reachable:
            if func.module is not item.discovery.module:
                reached.setdefault(func.path, set()).add(func.qualname)
    findings: list[Finding] = []
    for item in parsed:
        findings.extend(item.early)
        if item.discovery is None:
            continue
        discovery = item.discovery
        roots = reached.get(os.path.abspath(item.path), set())
        if roots - {f.qualname for f in discovery.in_this_module()}:
            redo = discover_safely(item.text, item.path, discovery.module.tree, extra_roots=sorted(roots))
            if isinstance(redo, Finding):
                findings.append(redo)
                continue
            discovery = redo
        try:
            findings.extend(
                lint_module(
                    item.text, item.path, item.config, tree=discovery.module.tree, discovery=discovery
                )
            )
        except Exception as exc:
            log.exception("lint failed on %s", item.path)
            findings.append(meta_finding("NKI999", item.path, Span(1, 1, 1, 1), f"internal error: {exc}"))
    return findings


def _prepare(
    path: str,
    config: LintConfig | None,
    override: Callable[[LintConfig], LintConfig] | None,
    kernel_args: Callable[[str, str], Mapping[str, Mapping[str, ArgFact]]] | None,
) -> _Parsed:
    early: list[Finding] = []
    if config is None:
        cfg, problem = config_for(path)
        early += [problem] if problem is not None else []
    else:
        cfg = config
    if override is not None:
        cfg = override(cfg)
    try:
        with open(path, encoding="utf-8-sig") as fh:  # a BOM is not part of the code (nor of editor columns)
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        early.append(meta_finding("NKI000", path, Span(1, 1, 1, 1), f"cannot read file: {exc}"))
        return _Parsed(path, "", cfg, None, early)
    if kernel_args is not None:
        cfg = cfg.with_kernel_args(kernel_args(text, path))
    tree = parse(text, path)  # with the collector paused by lint_paths
    found = tree if isinstance(tree, Finding) else discover_safely(text, path, tree)
    if isinstance(tree, Finding):
        if cfg.enabled(tree.code, path):
            early.append(tree)
        return _Parsed(path, text, cfg, None, early)
    if isinstance(found, Finding):
        early.append(found)
        return _Parsed(path, text, cfg, None, early)
    return _Parsed(path, text, cfg, found, early)
