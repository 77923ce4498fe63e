"""``# noqa`` handling: per-line ``# noqa: NKI101,NKI2`` / bare ``# noqa``, file-level ``# nki-studio: noqa``.

Comments are found with ``tokenize`` so a ``# noqa`` inside a string literal does not count. Codes that are not
``NKI`` codes (``# noqa: E501``) belong to other tools and are ignored here, also by the unused-suppression rule.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from nki_studio.core.findings import Finding, Fix, Span, TextEdit

_NOQA = re.compile(
    r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE
)
_FILE_NOQA = re.compile(r"#\s*nki-studio\s*:\s*noqa(?:\s*:\s*(?P<codes>[A-Za-z0-9,\s]+))?\s*$", re.IGNORECASE)


@dataclass
class LineNoqa:
    """One ``# noqa`` comment: its line, the NKI codes it names (empty = bare) and where the codes are."""

    line: int
    codes: tuple[str, ...]
    comment_span: Span  # the whole noqa-comment match, for removal fixes
    comment_text: str
    used: set[str] = field(default_factory=set)


@dataclass
class Suppressions:
    """All suppression comments of a file."""

    lines: dict[int, LineNoqa] = field(default_factory=dict)
    file_all: bool = False
    file_codes: tuple[str, ...] = ()

    def suppresses(self, finding: Finding) -> bool:
        """True if a comment suppresses the finding (and records that the comment was used)."""
        code = finding.code
        if self.file_all or any(code.startswith(c) for c in self.file_codes):
            return True
        noqa = self.lines.get(finding.span.line)
        if noqa is None:
            return False
        if not noqa.codes:
            noqa.used.add(code)
            return True
        for c in noqa.codes:
            if code.startswith(c):
                noqa.used.add(c)
                return True
        return False


def parse_suppressions(source: str) -> Suppressions:
    """Collect the suppression comments of a (parsable) file."""
    out = Suppressions()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        whole = _FILE_NOQA.match(tok.string)
        if whole:
            codes = _split(whole.group("codes"))
            if codes:
                out.file_codes += codes
            else:
                out.file_all = True
            continue
        m = _NOQA.search(tok.string)
        if m is None:
            continue
        line, col = tok.start
        all_codes = _split(m.group("codes"))
        nki_codes = tuple(c for c in all_codes if c.startswith("NKI"))
        if all_codes and not nki_codes:
            continue  # only other tools' codes: not ours to honour or to report
        start = col + m.start()
        span = Span(line, start + 1, line, col + m.end() + 1)
        out.lines[line] = LineNoqa(line=line, codes=nki_codes, comment_span=span, comment_text=m.group(0))
    return out


def _split(codes: str | None) -> tuple[str, ...]:
    if not codes:
        return ()
    return tuple(c.strip().upper() for c in re.split(r"[,\s]+", codes) if c.strip())


def unused_fix(noqa: LineNoqa, unused: tuple[str, ...], line_text: str) -> Fix:
    """Remove the unused codes from a ``# noqa`` comment, or the whole comment when none stays used."""
    remaining = [c for c in noqa.codes if c not in unused]
    if remaining:
        new = f"# noqa: {', '.join(remaining)}"
        return Fix(title="Remove unused code(s) from noqa", edits=(TextEdit(noqa.comment_span, new),))
    start = noqa.comment_span.column
    # Also drop the whitespace before the comment so no trailing blanks remain.
    prefix = line_text[: start - 1]
    stripped = len(prefix.rstrip())
    span = Span(noqa.line, stripped + 1, noqa.line, noqa.comment_span.end_column)
    return Fix(title="Remove unused noqa comment", edits=(TextEdit(span, ""),))
