"""A document's text after ``didChange`` content changes, with the standard library only (the fast path follows
the edits of the opened document while pygls loads, ``early_edits``).

It computes what pygls' ``TextDocument.apply_change`` computes for the same changes, quirks included (a position
past a line's end, a line past the document's end), so the early diagnostics are those of the text the full
server will hold; a test checks the two agree on random edits in every position encoding.
"""

from __future__ import annotations

from typing import Any


def _units(char: str, encoding: str) -> int:
    if encoding == "utf-32":
        return 1
    code = ord(char)
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 2 if code > 0xFFFF else 1


def _position(lines: list[str], position: dict[str, Any], encoding: str) -> tuple[int, int]:
    """(line, column in code points) of a client position, as pygls' ``position_from_client_units``."""
    if not lines:
        return 0, 0
    line_no, character = int(position["line"]), int(position["character"])
    if line_no >= len(lines):
        last = lines[-1]
        return len(lines) - 1, sum(_units(c, encoding) for c in last)  # pygls: client units, as it does
    line = lines[line_no].replace("\r\n", "\n")
    length = sum(_units(c, encoding) for c in line)
    if length == 0:
        return line_no, 0
    if character > length:
        character = length - 1
    units = column = 0
    for c in line:
        if units >= character:
            break
        units += _units(c, encoding)
        column += 1
    if units < character:
        column = len(line)
    return line_no, column


def apply_change(text: str, change: dict[str, Any], encoding: Any) -> str:
    """``text`` after one ``TextDocumentContentChangeEvent`` (JSON): the whole text, or a range replaced.
    ``encoding``: the negotiated position encoding ("utf-8", "utf-16", "utf-32")."""
    new_text = str(change["text"])
    if change.get("range") is None:
        return new_text
    kind = str(getattr(encoding, "value", encoding) or "utf-16")
    lines = text.splitlines(True)
    start_line, start_col = _position(lines, change["range"]["start"], kind)
    end_line, end_col = _position(lines, change["range"]["end"], kind)
    if start_line == len(lines):
        return text + new_text
    parts: list[str] = []
    for i, line in enumerate(lines):
        if i < start_line or i > end_line:
            parts.append(line)
            continue
        if i == start_line:
            parts.append(line[:start_col])
            parts.append(new_text)
        if i == end_line:
            parts.append(line[end_col:])
    return "".join(parts)
