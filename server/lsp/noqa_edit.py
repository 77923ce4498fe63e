"""The edit that suppresses one rule on one line with ``# noqa: NKI###`` (added to an existing noqa list
when the line has one). Computed when the user asks for the code action, on the current text."""

from __future__ import annotations

import io
import re
import tokenize
from typing import Any

from lsprotocol import types
from nki_studio.core.text_units import client_units
from nki_studio.lsp.convert import split_lines

_NOQA = re.compile(r"#\s*noqa(?P<colon>:\s*(?P<codes>[A-Z]+\d+(?:[\s,]+[A-Z]+\d+)*))?", re.IGNORECASE)


def _lines_ending_in_strings(text: str) -> set[int]:
    """0-based lines whose end lies inside a multi-line string token (a comment there would be text).

    On a half-typed file tokenize stops early; the lines checked so far are still right.
    """
    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.start[0] != tok.end[0] and tok.type in (
                tokenize.STRING,
                getattr(tokenize, "FSTRING_MIDDLE", -1),
            ):
                inside.update(range(tok.start[0] - 1, tok.end[0] - 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return inside


def noqa_edit(text: str, line: int, code: str, encoding: Any) -> types.TextEdit | None:
    """Edit adding ``code`` to the noqa comment of 0-based ``line`` (columns in the client's position
    ``encoding``); None if impossible or already there."""
    lines = split_lines(text)
    if line >= len(lines):
        return None
    source = lines[line]
    if source.rstrip().endswith("\\") or line in _lines_ending_in_strings(text):
        return None
    match = _NOQA.search(source)
    if match is not None:
        codes = match.group("codes")
        if codes is None:  # a bare noqa comment already silences every rule
            return None
        if code.upper() in re.split(r"[\s,]+", codes.upper()):
            return None
        at, new_text = match.end("codes"), f", {code}"
    else:
        at, new_text = len(source.rstrip()), f"  # noqa: {code}"
    pos = types.Position(line=line, character=client_units(source[:at], encoding))
    return types.TextEdit(range=types.Range(start=pos, end=pos), new_text=new_text)
