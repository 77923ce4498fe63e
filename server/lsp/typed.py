"""lsprotocol objects from ``lsp.convert``'s JSON, for the full server's handlers (code actions read the
diagnostics they published; pygls sends lsprotocol objects). One conversion, so the diagnostics published
before the full server loaded and those it publishes itself are the same."""

from __future__ import annotations

from functools import cache
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter


@cache
def converter() -> Any:
    """pygls' converter, built once: the server's protocol uses this one too (building one costs ~40 ms)."""
    return default_converter()


def to_diagnostic(data: dict[str, Any]) -> types.Diagnostic:
    """A diagnostic from ``convert.diagnostic_json`` → ``types.Diagnostic``."""
    diagnostic: types.Diagnostic = converter().structure(data, types.Diagnostic)
    return diagnostic


def position(data: dict[str, Any]) -> types.Position:
    """A JSON position → ``types.Position``."""
    return types.Position(line=int(data["line"]), character=int(data["character"]))


def range_from_json(data: Any) -> types.Range:
    """A JSON range (``convert``'s, or one kept in ``Diagnostic.data``) → ``types.Range``."""
    return types.Range(start=position(data["start"]), end=position(data["end"]))
