"""Keyword-argument completions answered by the fast path, before the full server has loaded.

The user who types ``nisa.tensor_scalar(dst=a, op|`` right after opening a kernel would otherwise wait for
pygls, lsprotocol and the features to load. The answer is the full server's (``features.intelligence``: the
stubs' table of ``features.stub_keywords`` gives the same items there), as LSP JSON, built without lsprotocol;
``tests/lsp/test_fastpath.py`` compares the two answers.
"""

from __future__ import annotations

from typing import Any

from nki_studio.core.text_units import client_units
from nki_studio.lsp.features.nki_jedi import imports_nki
from nki_studio.lsp.features.stub_keywords import keyword_completions

# LSP CompletionItemKind.Variable: what ``features.intelligence`` gives a parameter completion ("param").
_VARIABLE = 6


def answer(text: str, position: dict[str, Any], encoding: Any) -> dict[str, Any] | None:
    """The CompletionList JSON for ``position`` (LSP, in the client's ``encoding``) in ``text``, or None when
    the stubs' table does not answer it (the full server does)."""
    line, character = position.get("line"), position.get("character")
    if not isinstance(line, int) or not isinstance(character, int) or not imports_nki(text):
        return None
    lines = text.split("\n")
    if not 0 <= line < len(lines):
        return None
    column = _code_points(lines[line], character, encoding)
    items = keyword_completions(text, line + 1, column)
    if not items:
        return None
    return {
        "isIncomplete": False,
        "items": [
            {"label": p.name_with_symbols, "kind": _VARIABLE, "detail": p.module_name, "sortText": f"{i:04d}"}
            for i, p in enumerate(items)
        ],
    }


def _code_points(row: str, units: int, encoding: Any) -> int:
    """The code-point column of ``units`` client code units into ``row`` (past the end: the end)."""
    for i in range(len(row) + 1):
        if client_units(row[:i], encoding) >= units:
            return i
    return len(row)
