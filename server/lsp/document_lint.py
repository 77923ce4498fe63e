"""The lint of one open document as the language server runs it: the project config (``pyproject.toml``)
with the editor's explicit target and NKI version on top, and a broken config reported as the first
finding. Shared by the full server's lint feature and the first diagnostics published before it loaded
(``lsp.fastpath``), so both give the same findings. No lsprotocol here."""

from __future__ import annotations

from typing import Any

from nki_studio.core.findings import Finding
from nki_studio.lsp.settings import Settings
from nki_studio.nkilint.incremental import IncrementalLinter


def document_config(path: str, settings: Settings) -> tuple[Any, Finding | None]:
    """The config for ``path`` (``config_for`` rereads a changed pyproject.toml by mtime; a broken one gives
    defaults plus an NKI002 finding) with the editor's explicit target/version on top."""
    from nki_studio.nkilint import api

    config, problem = api.config_for(path)
    if settings.target is not None or settings.nki_version is not None:
        config = config.with_overrides(generation=settings.target, nki_version=settings.nki_version)
    return config, problem


def lint_document(
    linter: IncrementalLinter, text: str, config: Any, problem: Finding | None
) -> list[Finding]:
    """The findings of ``text`` under ``config``, the config's own problem first."""
    findings = linter.lint(text, config)
    if problem is not None:
        findings.insert(0, problem)
    return findings
