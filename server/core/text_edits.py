"""Applying precomputed fixes to source text (``nki-studio lint --fix``, ``nki-studio migrate``; the same edits
the editor applies)."""

from __future__ import annotations

from collections.abc import Iterable

from nki_studio.core.findings import Fix, TextEdit


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _pos(starts: list[int], line: int, column: int) -> int:
    if line - 1 >= len(starts):
        return starts[-1]
    return starts[line - 1] + column - 1


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, int]:
    """Apply every fix whose edits do not overlap an already accepted fix; returns (new text, fixes applied).

    Spans are 1-based line/column in code points, end exclusive (core/findings.py). Overlapping fixes are left for
    a later pass, as ruff does.
    """
    new, applied = apply_fixes_listed(text, fixes)
    return new, len(applied)


def apply_fixes_listed(text: str, fixes: Iterable[Fix]) -> tuple[str, list[int]]:
    """Like :func:`apply_fixes`, returning the positions (in ``fixes``) of the fixes applied."""
    starts = _offsets(text)
    accepted: list[tuple[int, int, TextEdit]] = []
    applied: list[int] = []
    for index, fix in enumerate(fixes):
        ranges = [
            (_pos(starts, e.span.line, e.span.column), _pos(starts, e.span.end_line, e.span.end_column), e)
            for e in fix.edits
        ]
        if any(
            (a < end and start < b) or a == start == b == end
            for a, b, _ in ranges
            for start, end, _ in accepted
        ):
            continue
        accepted.extend(ranges)
        applied.append(index)
    for start, end, edit in sorted(accepted, key=lambda r: (r[0], r[1]), reverse=True):
        text = text[:start] + edit.new_text + text[end:]
    return text, applied
