"""``convert.conversion_key``: equal keys give equal diagnostics; a change on a line a finding's ranges read
changes the key (the lint feature reuses converted diagnostics by it)."""

from __future__ import annotations

from nki_studio.core.findings import Finding, Related, Severity, Span
from nki_studio.lsp.convert import DocumentPositions, conversion_key, diagnostic_json, split_lines


def _finding(line: int, related_path: str = "/k.py") -> Finding:
    related = (Related(related_path, Span(1, 1, 1, 3), "here"),)
    return Finding("/k.py", Span(line, 5, line, 9), "NKI301", "x", Severity.ERROR, "m", related=related)


def test_equal_keys_mean_equal_diagnostics_and_read_lines_count() -> None:
    text = "é = 1\nx = 2\ny = 3\n"
    before = DocumentPositions(split_lines(text), "utf-16")
    f = _finding(3)
    key = conversion_key(f, before, "/k.py")
    other_line = DocumentPositions(split_lines(text.replace("x = 2", "x = 22")), "utf-16")
    assert conversion_key(f, other_line, "/k.py") == key  # line 2 is not read by this finding
    assert diagnostic_json(
        f, other_line, uri="file:///k.py", doc_path="/k.py", base_url=None
    ) == diagnostic_json(f, before, uri="file:///k.py", doc_path="/k.py", base_url=None)
    read_line = DocumentPositions(split_lines(text.replace("é = 1", "éé = 1")), "utf-16")
    assert conversion_key(f, read_line, "/k.py") != key  # the related span's line moved its columns
    assert conversion_key(_finding(2), before, "/k.py") != key


def test_a_finding_pointing_into_another_file_is_not_reused() -> None:
    positions = DocumentPositions(split_lines("a\nb\nc\n"), "utf-16")
    assert conversion_key(_finding(2, related_path="/other.py"), positions, "/k.py") is None
