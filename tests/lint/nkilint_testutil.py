"""Shared helpers for nkilint tests."""

from __future__ import annotations

import ast

from nki_studio.core.findings import Finding, Fix
from nki_studio.core.text_edits import apply_fixes
from nki_studio.model.targets import Target, parse_nki_version
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig


def lint(
    code: str,
    version: str | None = None,
    *,
    select: tuple[str, ...] | None = None,
    path: str = "/nonexistent/kernel.py",
    generation: str | None = None,
) -> list[Finding]:
    """Lint a snippet against a target NKI version without reading any config file; without ``version``, as the
    newest-version fallback (0.7) that the file's own code may override."""
    target = Target(nki_version=parse_nki_version(version or "0.7"))
    return lint_source(
        code, path, LintConfig(target=target, select=select, nki_version_set=version is not None)
    )


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def apply_fix(code: str, fix: Fix) -> str:
    """Apply one fix's edits (1-based code-point columns, end exclusive) to the text."""
    return apply_fixes(code, [fix])[0]


def parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True
