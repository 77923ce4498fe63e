"""Configured lint of a file or of unsaved text: the project config (``pyproject.toml``) with the explicit
target and NKI version of the settings on top. ``document_config``/``lint_document`` are the language
server's (a broken config becomes the first finding, never an error), shared by its lint feature and the
first diagnostics published before it loaded (``lsp.fastpath``), so both give the same findings;
``lint_text`` and ``lint_files`` are the CLI/MCP ones (a broken config is an error, or its NKI002 finding in a
report of many files)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nki_studio.core.findings import Finding
from nki_studio.service.settings import Settings, project_config

if TYPE_CHECKING:
    from nki_studio.model.analysis import KernelArgs
    from nki_studio.nkilint.config import LintConfig
    from nki_studio.nkilint.incremental import IncrementalLinter


def document_config(path: str, settings: Settings, text: str) -> tuple[LintConfig, Finding | None]:
    """The config of an open document with text ``text``, never raising: ``config_for`` rereads a changed
    pyproject.toml by mtime; a broken one gives defaults plus an NKI002 finding. The settings' explicit
    target/version on top, and the arguments the document's simulate specs give its kernels."""
    from nki_studio.nkilint import api

    config, problem = api.config_for(path)
    if settings.target is not None or settings.nki_version is not None:
        config = config.with_overrides(generation=settings.target, nki_version=settings.nki_version)
    return config.with_kernel_args(_spec_arguments(text, path)), problem


def _spec_arguments(text: str, path: str) -> KernelArgs:
    """What the file's simulate specs say of its kernels' arguments: lint sizes allocations with them as hover
    does (a ``dtype=x.dtype`` buffer is known under the spec)."""
    from nki_studio.verify.spec import spec_arguments

    return spec_arguments(text, path)


def lint_document(
    linter: IncrementalLinter, text: str, config: LintConfig, problem: Finding | None
) -> list[Finding]:
    """The findings of ``text`` under ``config``, the config's own problem first."""
    findings = linter.lint(text, config)
    if problem is not None:
        findings.insert(0, problem)
    return findings


def lint_text(text: str, path: str, settings: Settings) -> tuple[LintConfig, list[Finding]]:
    """The config and findings of ``text`` (a file's content or unsaved text; ``path`` locates the config and
    helper modules, it need not exist). Raises ``nkilint.config.ConfigError`` for a broken pyproject.toml."""
    from nki_studio.nkilint.api import lint_source

    config = project_config(path, settings).with_kernel_args(_spec_arguments(text, path))
    return config, lint_source(text, path, config)


def lint_files(
    paths: Sequence[str],
    settings: Settings,
    *,
    select: tuple[str, ...] | None = None,
    ignore: tuple[str, ...] | None = None,
) -> list[Finding]:
    """Lint files and directories (recursed for ``*.py``), each file under its own project config with the
    settings' explicit target/version and ``select``/``ignore`` on top."""
    from nki_studio.nkilint.api import lint_paths

    def override(config: LintConfig) -> LintConfig:
        return config.with_overrides(
            generation=settings.target, nki_version=settings.nki_version, select=select, ignore=ignore
        )

    return lint_paths(paths, override=override, kernel_args=_spec_arguments)
