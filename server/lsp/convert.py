"""Findings (1-based, code-point columns) → LSP diagnostics (0-based, client position encoding, UTF-16 by
default), built as the protocol's JSON. Pure functions of the document text: they run in the job threads,
off the event loop. Standard library only (no lsprotocol): the first diagnostics of a start are published
with them before the full server has loaded (``lsp.fastpath``); the full server turns them into
lsprotocol objects (``lsp.typed``)."""

from __future__ import annotations

import linecache
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from nki_studio.core.distribution import rule_pages_dir
from nki_studio.core.findings import Finding, Fix, Severity, Span
from nki_studio.core.text_units import client_units
from pygls.uris import from_fs_path

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # LSP and Python agree on these three; str.splitlines knows more
_RULE_CODE = re.compile(r"NKI\d{3}")

# The rule pages this installation carries: the wheel's packaged copy or a checkout's docs/rules.
DOCS_DIR = rule_pages_dir()

# LSP's DiagnosticSeverity and DiagnosticTag values.
_SEVERITY = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}
_UNNECESSARY, _DEPRECATED = 1, 2


def split_lines(text: str) -> list[str]:
    """Lines without their terminators, split the way LSP clients count lines."""
    return _LINE_BREAK.split(text)


class DocumentPositions:
    """Converts code-point spans of one document's text into client positions and ranges (JSON)."""

    def __init__(self, lines: Sequence[str], encoding: Any) -> None:
        self.lines = lines
        self.encoding = encoding

    def position(self, line: int, column: int) -> dict[str, int]:
        """1-based line/column (code points) → 0-based client position, clamped to the document."""
        index = min(max(line - 1, 0), len(self.lines))
        if index == len(self.lines):
            return {"line": index, "character": 0}
        text = self.lines[index]
        chars = min(max(column - 1, 0), len(text))
        return {"line": index, "character": client_units(text[:chars], self.encoding)}

    def range(self, span: Span) -> dict[str, Any]:
        """A span → a client range."""
        return {
            "start": self.position(span.line, span.column),
            "end": self.position(span.end_line, span.end_column),
        }


@lru_cache(maxsize=2048)
def rule_docs_link(code: str, base_url: str | None, docs_dir: Path | None) -> str | None:
    """Where the rule's docs page is: ``base_url/CODE.md`` if configured, else the local docs file if present
    (cached: one stat per code and server run)."""
    if not _RULE_CODE.fullmatch(code):
        return None
    if base_url:
        return f"{base_url.rstrip('/')}/{code}.md"
    if docs_dir is not None:
        page = docs_dir / f"{code}.md"
        if page.is_file():
            return from_fs_path(str(page)) or None
    return None


def _edit_json(positions: DocumentPositions, fix: Fix) -> dict[str, Any]:
    return {
        "title": fix.title,
        "edits": [{"range": positions.range(e.span), "newText": e.new_text} for e in fix.edits],
    }


def conversion_key(finding: Finding, positions: DocumentPositions, doc_path: str) -> tuple[Any, ...] | None:
    """What :func:`diagnostic_json` of ``finding`` depends on besides the settings: the finding and the text of
    every line of this document its ranges read. Equal keys give equal diagnostics, so a document re-linted
    after an edit elsewhere need not convert its findings again. None when it also reads another file."""
    spans = [finding.span]
    if finding.fix is not None:
        spans += [e.span for e in finding.fix.edits]
    for rel in finding.related:
        if Path(rel.path) != Path(doc_path):
            return None
        spans.append(rel.span)
    lines = positions.lines
    read = sorted({n for s in spans for n in (s.line, s.end_line)})
    return (finding, tuple(lines[n - 1] if 0 < n <= len(lines) else n for n in read), len(lines))


def diagnostic_json(
    finding: Finding,
    positions: DocumentPositions,
    *,
    uri: str,
    doc_path: str,
    base_url: str | None,
    docs_dir: Path | None = DOCS_DIR,
) -> dict[str, Any]:
    """One finding → one LSP ``Diagnostic`` as JSON; a fix is precomputed in ``data["fix"]`` as client-unit
    edits. Optional fields are left out when empty, as lsprotocol writes them."""
    diagnostic: dict[str, Any] = {
        "range": positions.range(finding.span),
        "message": finding.message,
        "severity": _SEVERITY.get(finding.severity, 2),
        "code": finding.code,
    }
    link = rule_docs_link(finding.code, base_url, docs_dir)
    if link is not None:
        diagnostic["codeDescription"] = {"href": link}
    if finding.source is not None:
        diagnostic["source"] = finding.source
    tags = ([_DEPRECATED] if finding.deprecated else []) + ([_UNNECESSARY] if finding.unnecessary else [])
    if tags:
        diagnostic["tags"] = tags
    related = []
    for rel in finding.related:
        same = rel.path == doc_path
        rel_range = (
            positions.range(rel.span) if same else _other_file_range(rel.path, rel.span, positions.encoding)
        )
        rel_uri = uri if same else (from_fs_path(rel.path) or rel.path)
        related.append({"location": {"uri": rel_uri, "range": rel_range}, "message": rel.message})
    if related:
        diagnostic["relatedInformation"] = related
    data: dict[str, Any] = {"name": finding.name}
    if finding.fix is not None:
        data["fix"] = _edit_json(positions, finding.fix)
    diagnostic["data"] = data
    return diagnostic


def _other_file_range(path: str, span: Span, encoding: Any) -> dict[str, Any]:
    """Range in another file (a helper module), converted with that file's lines as saved on disk."""
    linecache.checkcache(path)
    lines = {n: linecache.getline(path, n).rstrip("\r\n") for n in {span.line, span.end_line}}
    return DocumentPositions(_SparseLines(lines), encoding).range(span)


class _SparseLines(Sequence[str]):
    """The few lines of a file a range needs, indexable like the full list (other lines read as empty)."""

    def __init__(self, lines: dict[int, str]) -> None:
        self._lines = lines  # 1-based line -> text
        self._len = max(lines) if lines else 0

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        return self._lines.get(index + 1, "")
