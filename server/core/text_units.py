"""Column counting in the code units a consumer asks for: LSP clients negotiate UTF-8, UTF-16 (the default)
or UTF-32; SARIF's default ``columnKind`` is UTF-16 code units. Findings count code points."""

from __future__ import annotations

from typing import Any


def client_units(text: str, encoding: Any) -> int:
    """Length of ``text`` in the negotiated position encoding's code units ("utf-8", "utf-16" (the
    default), "utf-32"; a PositionEncodingKind works too: it is a str enum)."""
    kind = getattr(encoding, "value", encoding)
    if kind == "utf-32":
        return len(text)
    if kind == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)  # astral characters are surrogate pairs
