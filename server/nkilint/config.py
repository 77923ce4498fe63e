"""Lint configuration: ``[tool.nki-studio]`` in the nearest ``pyproject.toml`` above a file.

Keys (all optional)::

    [tool.nki-studio]
    target = "trn2"                 # trn1 | trn2 | trn3 (gen2/gen3/gen4 accepted)
    nki-version = "0.6"             # 0.2 ... 0.7 or "legacy"; default: installed `nki`, else the newest
                                    # (an unnamed version is inferred from the code: legacy neuronxcc.nki
                                    # imports mean legacy, 0.6-only APIs and no 0.7-only ones mean 0.6, in
                                    # the linter per file and in the simulator)
    select = ["NKI1", "NKI201"]     # code prefixes; default: every rule
    ignore = ["NKI120"]
    per-file-ignores = { "tests/*" = ["NKI1"] }   # globs relative to the pyproject.toml directory
    severity = { NKI201 = "error" }               # per-code severity override
    sbuf-reserved-bytes = 4096      # SBUF bytes per partition NKI401 keeps free (usable size is unpublished)

The file is found and read by ``nki_studio.core.pyproject`` (cached by mtime: an edit is reloaded on the next lint).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from nki_studio.core.findings import Severity
from nki_studio.core.pyproject import TOOL_TABLE, PyprojectError, find_pyproject, read_pyproject
from nki_studio.model.targets import (
    DEFAULT_GENERATION,
    NEWEST_VERSION,
    Generation,
    NkiVersion,
    Target,
    detect_installed_nki_version,
    parse_generation,
    parse_nki_version,
)
from nki_studio.model.version_signals import VersionSignal

if TYPE_CHECKING:
    from nki_studio.model.analysis import ArgFact

_ALWAYS_SELECTED = frozenset({"NKI000", "NKI999"})


class ConfigError(ValueError):
    """A ``[tool.nki-studio]`` table with a bad value; the message names the file and key."""


@dataclass(frozen=True)
class LintConfig:
    """Everything that changes what the linter reports."""

    target: Target = field(default_factory=Target)
    select: tuple[str, ...] | None = None  # code prefixes; None selects all
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, code prefixes)
    severity: tuple[tuple[str, Severity], ...] = ()  # (code, severity)
    root: str | None = None  # directory the per-file globs are relative to
    source: str | None = None  # the pyproject.toml this came from
    sbuf_reserved_bytes: int = (
        0  # SBUF bytes per partition kept free of the NKI401 budget (usable size unknown)
    )
    # Whether something named target.nki_version (pyproject, a flag or setting, an installed nki/neuronx-cc)
    # rather than the newest-version fallback: only an unnamed version is inferred from the code (the linter
    # per file, ``nkilint.engine``; the simulator per kernel, ``sim.versioning``).
    nki_version_set: bool = False
    # The named version only comes from the installed toolchain (no pyproject key, flag or setting): a file
    # written for the legacy ``neuronxcc.nki`` API is still linted as legacy code (``nkilint.engine``).
    nki_version_detected: bool = False
    # The API use an unnamed version was inferred from (``nkilint.engine.with_code_version``); None otherwise.
    version_signal: VersionSignal | None = None
    # What the file's simulate specs say of its kernels' arguments (kernel, ((parameter, fact), ...)), sorted:
    # the value rules size allocations with them (``x.dtype``, ``x.shape``). Set by the caller that reads specs
    # (``service.lint``), a value so that a changed spec is a changed config (the incremental linter re-checks).
    kernel_args: tuple[tuple[str, tuple[tuple[str, ArgFact], ...]], ...] = ()

    @property
    def version_named_by_user(self) -> bool:
        """A pyproject key, flag or setting named the version (not only the installed toolchain): the file's
        legacy imports then no longer decide it."""
        return self.nki_version_set and not self.nki_version_detected

    @property
    def named_nki_version(self) -> NkiVersion | None:
        """The NKI version a setting or the installed toolchain names; None when it is only the newest-version
        fallback (the simulator then infers it from the kernel's code, ``sim.versioning``)."""
        return self.target.nki_version if self.nki_version_set else None

    def enabled(self, code: str, path: str | None = None) -> bool:
        """Whether ``code`` is reported for ``path`` after select/ignore/per-file-ignores. Syntax and internal
        errors (NKI000, NKI999) are reported even when ``select`` leaves them out, unless ignored explicitly."""
        if (
            self.select is not None
            and not any(code.startswith(p) for p in self.select)
            and code not in _ALWAYS_SELECTED
        ):
            return False
        if any(code.startswith(p) for p in self.ignore):
            return False
        return not (path is not None and any(code.startswith(p) for p in self.ignored_for(path)))

    def ignored_for(self, path: str) -> tuple[str, ...]:
        """Code prefixes ignored for one file by ``per-file-ignores``."""
        if not self.per_file_ignores:
            return ()
        rel = os.path.relpath(os.path.abspath(path), self.root) if self.root else path
        rel = rel.replace(os.sep, "/")
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
                out.extend(codes)
        return tuple(out)

    def severity_for(self, code: str, default: Severity) -> Severity:
        """Configured severity of a code, else ``default``."""
        for c, sev in self.severity:
            if c == code:
                return sev
        return default

    def with_kernel_args(self, args: Mapping[str, Mapping[str, ArgFact]]) -> LintConfig:
        """A copy whose value rules start kernels from these argument facts (kernel -> parameter -> fact)."""
        return replace(
            self, kernel_args=tuple(sorted((k, tuple(sorted(v.items()))) for k, v in args.items()))
        )

    def with_overrides(
        self,
        *,
        generation: Generation | None = None,
        nki_version: NkiVersion | None = None,
        select: tuple[str, ...] | None = None,
        ignore: tuple[str, ...] | None = None,
    ) -> LintConfig:
        """A copy with command-line (or editor setting) overrides applied; None keeps the configured value."""
        target = Target(generation or self.target.generation, nki_version or self.target.nki_version)
        return replace(
            self,
            target=target,
            nki_version_set=self.nki_version_set or nki_version is not None,
            nki_version_detected=self.nki_version_detected and nki_version is None,
            select=select if select is not None else self.select,
            ignore=self.ignore + (ignore or ()),
        )


def _codes(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes")
    return tuple(v.strip().upper() for v in value)


def config_from_table(
    table: dict[str, Any], *, root: str | None = None, source: str | None = None
) -> LintConfig:
    """Build a LintConfig from a ``[tool.nki-studio]`` table; raises ConfigError naming the bad key."""
    where = source or "[tool.nki-studio]"
    try:
        generation = parse_generation(str(table["target"])) if "target" in table else DEFAULT_GENERATION
        named = (
            parse_nki_version(str(table["nki-version"]))
            if "nki-version" in table
            else detect_installed_nki_version()
        )
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    select = _codes(table["select"], f"{where}: select") if "select" in table else None
    ignore = _codes(table.get("ignore", []), f"{where}: ignore")
    pfi_raw = table.get("per-file-ignores", {})
    if not isinstance(pfi_raw, dict):
        raise ConfigError(f"{where}: per-file-ignores must be a table of glob = [codes]")
    pfi = tuple((str(k), _codes(v, f"{where}: per-file-ignores.{k}")) for k, v in pfi_raw.items())
    sev_raw = table.get("severity", {})
    if not isinstance(sev_raw, dict):
        raise ConfigError(f'{where}: severity must be a table of CODE = "error"|"warning"|"info"')
    severity: list[tuple[str, Severity]] = []
    for code, level in sev_raw.items():
        try:
            severity.append((str(code).upper(), Severity(str(level).lower())))
        except ValueError:
            raise ConfigError(
                f"{where}: severity.{code} must be error, warning or info, not {level!r}"
            ) from None
    reserved = table.get("sbuf-reserved-bytes", 0)
    if not isinstance(reserved, int) or isinstance(reserved, bool) or reserved < 0:
        raise ConfigError(f"{where}: sbuf-reserved-bytes must be a non-negative integer")
    # Sub-tables ([tool.nki-studio.simulate] ...) belong to other features; unknown plain keys are typos.
    unknown = {k for k, v in table.items() if not isinstance(v, dict)} - {
        "target",
        "nki-version",
        "select",
        "ignore",
        "sbuf-reserved-bytes",
    }
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    return LintConfig(
        target=Target(generation, named or NEWEST_VERSION),
        nki_version_set=named is not None,
        nki_version_detected=named is not None and "nki-version" not in table,
        select=select,
        ignore=ignore,
        per_file_ignores=pfi,
        severity=tuple(severity),
        root=root,
        source=source,
        sbuf_reserved_bytes=reserved,
    )


def load_config(path: str) -> LintConfig:
    """The configuration that applies to ``path`` (a file or directory): its nearest ``[tool.nki-studio]``,
    else defaults. Raises ConfigError for an unreadable or invalid table (message names file and key)."""
    pyproject = find_pyproject(path)
    if pyproject is None:
        installed = detect_installed_nki_version()
        return LintConfig(
            target=Target(DEFAULT_GENERATION, installed or NEWEST_VERSION),
            nki_version_set=installed is not None,
            nki_version_detected=installed is not None,
        )
    try:
        table = read_pyproject(pyproject)["tool"][TOOL_TABLE]
    except PyprojectError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.nki-studio] must be a table")
    return config_from_table(table, root=os.path.dirname(pyproject), source=pyproject)
