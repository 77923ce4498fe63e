"""Lint helpers for value-rule tests: target generation/version and config in one call."""

from __future__ import annotations

from nki_studio.core.findings import Finding
from nki_studio.model.targets import Target, parse_generation, parse_nki_version
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig

HEADER = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n"


def run(
    code: str,
    *,
    target: str = "trn2",
    version: str = "0.7",
    select: str = "NKI3,NKI4,NKI5",
    path: str = "/nonexistent/kernel.py",
    reserved: int = 0,
) -> list[Finding]:
    """Findings of the value rules for ``HEADER + code``."""
    config = LintConfig(
        target=Target(parse_generation(target), parse_nki_version(version)),
        select=tuple(select.split(",")),
        sbuf_reserved_bytes=reserved,
    )
    return lint_source(HEADER + code, path, config)


def only(findings: list[Finding], code: str) -> list[Finding]:
    """The findings of one rule."""
    return [f for f in findings if f.code == code]
