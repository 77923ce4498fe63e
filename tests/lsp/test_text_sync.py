"""The fast path's text sync (``lsp.fastpath.text_sync``) gives the text pygls gives for the same changes, in
every position encoding, quirks included (positions past a line's end or the document's end, CRLF, astral
characters)."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types
from nki_studio.lsp.fastpath.text_sync import apply_change
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

PIECES = ["a", "é", "😀", "中", " ", "\n", "\r\n", "nl.load(x)", "\t", "\U0001f600\U0001f600", "\r"]


def _random_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(PIECES) for _ in range(n))


def _position(rng: random.Random, lines: int) -> dict[str, int]:
    return {"line": rng.randint(0, lines + 1), "character": rng.randint(0, 12)}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_random_edits_give_pygls_text(encoding: str) -> None:
    rng = random.Random(encoding)
    for _ in range(300):
        text = _random_text(rng, rng.randint(0, 30))
        doc = TextDocument(
            "file:///k.py",
            text,
            sync_kind=types.TextDocumentSyncKind.Incremental,
            position_codec=PositionCodec(encoding),  # type: ignore[arg-type]
        )
        mine = text
        for _ in range(rng.randint(1, 4)):
            lines = len(doc.lines)
            start, end = sorted(
                (_position(rng, lines), _position(rng, lines)), key=lambda p: (p["line"], p["character"])
            )
            change: dict[str, object] = {"range": {"start": start, "end": end}, "text": _random_text(rng, 3)}
            if rng.random() < 0.1:
                change = {"text": _random_text(rng, 5)}  # the whole text
            doc.apply_change(_as_pygls(change))
            mine = apply_change(mine, change, encoding)
            assert mine == doc.source, (text, change)


def _as_pygls(change: dict[str, object]) -> types.TextDocumentContentChangeEvent:
    if "range" not in change:
        return types.TextDocumentContentChangeWholeDocument(text=str(change["text"]))
    rng = change["range"]
    assert isinstance(rng, dict)
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(**rng["start"]),
            end=types.Position(**rng["end"]),
        ),
        text=str(change["text"]),
    )
