"""Prune candidates before simulating them: the value rules of the linter (NKI3xx-NKI5xx: shapes, partitions,
SBUF/PSUM capacity, instruction limits) run on the substituted source, and a candidate with a finding of
severity error or warning the baseline does not have is not simulated (its code is the reason, counted).

Findings the baseline already has are left out: a rule that misfires on the kernel as written would
otherwise prune every candidate."""

from __future__ import annotations

import dataclasses

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.targets import Generation
from nki_studio.nkilint.api import config_for, lint_source
from nki_studio.nkilint.config import LintConfig

_VALUE_RULES = ("NKI3", "NKI4", "NKI5")  # the value interpreter's rules (docs/value-interpreter.md)
_BLOCKING = (Severity.ERROR, Severity.WARNING)


def lint_config(path: str, generation: Generation) -> LintConfig:
    """The file's lint configuration for the generation the search targets."""
    config, _ = config_for(path)
    return dataclasses.replace(config, target=dataclasses.replace(config.target, generation=generation))


def blocking(source: str, path: str, config: LintConfig) -> list[Finding]:
    """The value-rule findings that would prune ``source``, in line order."""
    return [
        f
        for f in lint_source(source, path, config)
        if f.code.startswith(_VALUE_RULES) and f.severity in _BLOCKING
    ]


def prune_finding(
    source: str, path: str, config: LintConfig, baseline_codes: frozenset[str]
) -> Finding | None:
    """The first finding that prunes ``source``, or None to simulate it."""
    return next((f for f in blocking(source, path, config) if f.code not in baseline_codes), None)
