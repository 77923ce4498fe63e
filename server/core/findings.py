"""The result model every analysis produces and every front end (CLI, LSP, tests) consumes.

Positions are 1-based lines and 1-based columns counted in Unicode code points, end exclusive; front ends
convert (LSP: 0-based, UTF-16). No LSP or VS Code types here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    """Diagnostic level; the value is what JSON output and config files use."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Span:
    """A source range: 1-based line and column, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` of the file with ``new_text``."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: a title for the user and the edits that apply it (computed once, at analysis time)."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (a helper call site, the allocation live at a peak ...)."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    """One diagnostic: where, which rule, how severe, what it computed, and an optional fix."""

    path: str
    span: Span
    code: str  # stable rule code, e.g. "NKI101"
    name: str  # rule name, e.g. "deprecated-range-iterator"
    severity: Severity
    message: str
    fix: Fix | None = None
    deprecated: bool = False  # LSP DiagnosticTag.Deprecated
    unnecessary: bool = False  # LSP DiagnosticTag.Unnecessary (e.g. unused suppression)
    related: tuple[Related, ...] = field(default=())
    source: str = "nkilint"
