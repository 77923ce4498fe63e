"""Findings (1-based, code-point columns) → LSP diagnostics (0-based, client position encoding, UTF-16 by
default). Pure functions of the document text: they run in the job threads, off the event loop."""

from __future__ import annotations

import linecache
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsprotocol import types
from nki_studio.nkilint.findings import Finding, Fix, Severity, Span
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # LSP and Python agree on these three; str.splitlines knows more
_RULE_CODE = re.compile(r"NKI\d{3}")

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def split_lines(text: str) -> list[str]:
    """Lines without their terminators, split the way LSP clients count lines."""
    return _LINE_BREAK.split(text)


class DocumentPositions:
    """Converts code-point spans of one document's text into client ranges."""

    def __init__(self, lines: Sequence[str], codec: PositionCodec) -> None:
        self.lines = lines
        self.codec = codec

    def position(self, line: int, column: int) -> types.Position:
        """1-based line/column (code points) → 0-based client position, clamped to the document."""
        index = min(max(line - 1, 0), len(self.lines))
        if index == len(self.lines):
            return types.Position(line=index, character=0)
        text = self.lines[index]
        chars = min(max(column - 1, 0), len(text))
        return types.Position(line=index, character=self.codec.client_num_units(text[:chars]))

    def range(self, span: Span) -> types.Range:
        """A span → a client range."""
        return types.Range(start=self.position(span.line, span.column), end=self.position(span.end_line, span.end_column))


@lru_cache(maxsize=2048)
def rule_docs_link(code: str, base_url: str | None, docs_dir: Path | None) -> types.CodeDescription | None:
    """Where the rule's docs page is: ``base_url/CODE.md`` if configured, else the local docs file if present
    (cached: one stat per code and server run)."""
    if not _RULE_CODE.fullmatch(code):
        return None
    if base_url:
        return types.CodeDescription(href=f"{base_url.rstrip('/')}/{code}.md")
    if docs_dir is not None:
        page = docs_dir / f"{code}.md"
        if page.is_file():
            uri = from_fs_path(str(page))
            if uri:
                return types.CodeDescription(href=uri)
    return None


def _edit_json(positions: DocumentPositions, fix: Fix) -> dict[str, Any]:
    return {
        "title": fix.title,
        "edits": [
            {"range": _range_json(positions.range(e.span)), "newText": e.new_text} for e in fix.edits
        ],
    }


def _range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def range_from_json(data: Any) -> types.Range:
    """Inverse of the range encoding used in ``Diagnostic.data``."""
    return types.Range(
        start=types.Position(line=int(data["start"]["line"]), character=int(data["start"]["character"])),
        end=types.Position(line=int(data["end"]["line"]), character=int(data["end"]["character"])),
    )


def to_diagnostic(
    finding: Finding,
    positions: DocumentPositions,
    *,
    uri: str,
    doc_path: str,
    base_url: str | None,
    docs_dir: Path | None,
) -> types.Diagnostic:
    """One finding → one diagnostic; a fix is precomputed in ``data["fix"]`` as client-unit edits."""
    tags = []
    if finding.deprecated:
        tags.append(types.DiagnosticTag.Deprecated)
    if finding.unnecessary:
        tags.append(types.DiagnosticTag.Unnecessary)
    related = []
    for rel in finding.related:
        same = rel.path == doc_path
        rel_range = positions.range(rel.span) if same else _other_file_range(rel.path, rel.span, positions.codec)
        rel_uri = uri if same else (from_fs_path(rel.path) or rel.path)
        related.append(
            types.DiagnosticRelatedInformation(location=types.Location(uri=rel_uri, range=rel_range), message=rel.message)
        )
    data: dict[str, Any] = {"name": finding.name}
    if finding.fix is not None:
        data["fix"] = _edit_json(positions, finding.fix)
    return types.Diagnostic(
        range=positions.range(finding.span),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=rule_docs_link(finding.code, base_url, docs_dir),
        source=finding.source,
        tags=tags or None,
        related_information=related or None,
        data=data,
    )


def _other_file_range(path: str, span: Span, codec: PositionCodec) -> types.Range:
    """Range in another file (a helper module), converted with that file's lines as saved on disk."""
    linecache.checkcache(path)
    lines = {n: linecache.getline(path, n).rstrip("\r\n") for n in {span.line, span.end_line}}
    return DocumentPositions(_SparseLines(lines), codec).range(span)


class _SparseLines(Sequence[str]):
    """The few lines of a file a range needs, indexable like the full list (other lines read as empty)."""

    def __init__(self, lines: dict[int, str]) -> None:
        self._lines = lines  # 1-based line -> text
        self._len = max(lines) if lines else 0

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        return self._lines.get(index + 1, "")
