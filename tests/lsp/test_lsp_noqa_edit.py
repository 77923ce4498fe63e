"""Unit tests of the noqa insertion edit (no server process)."""

from __future__ import annotations

from lsp_harness import apply_edits
from nki_studio.lsp.noqa_edit import noqa_edit

CODEC = "utf-16"


def _apply(text: str, line: int, code: str) -> str | None:
    edit = noqa_edit(text, line, code, CODEC)
    return None if edit is None else apply_edits(text, [edit])


def test_appends_comment() -> None:
    assert _apply("a = 1\nb = 2   \n", 1, "NKI101") == "a = 1\nb = 2  # noqa: NKI101   \n"


def test_extends_existing_list_and_skips_duplicates() -> None:
    assert _apply("x = 1  # noqa: NKI120\n", 0, "NKI101") == "x = 1  # noqa: NKI120, NKI101\n"
    assert _apply("x = 1  # noqa: NKI120, NKI101\n", 0, "NKI101") is None
    assert _apply("x = 1  # noqa\n", 0, "NKI101") is None


def test_keeps_other_comment() -> None:
    assert _apply("x = 1  # why\n", 0, "NKI101") == "x = 1  # why  # noqa: NKI101\n"


def test_refuses_where_a_comment_would_change_code() -> None:
    assert _apply("x = 1 + \\\n    2\n", 0, "NKI101") is None
    assert _apply('s = f("""\nabc\n""")\n', 0, "NKI101") is None
    assert _apply("a = 1\n", 5, "NKI101") is None


def test_utf16_position_after_astral_character() -> None:
    edit = noqa_edit("s = '😀'\n", 0, "NKI101", CODEC)
    assert edit is not None and edit.range.start.character == len("s = '😀'") + 1
