"""The project configuration lookup: the nearest ``pyproject.toml`` with a ``[tool.nki-studio]`` table.

Shared by the linter (``nki_studio.nkilint.config``: the lint keys) and the simulator's specs
(``nki_studio.verify.spec``: ``[tool.nki-studio.simulate]``). Parsed files are cached by path and file stamp (``core.file_stamp``), so
an edited ``pyproject.toml`` is reread on the next lookup.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from nki_studio.core.file_stamp import Stamp, file_stamp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TOOL_TABLE = "nki-studio"


class PyprojectError(ValueError):
    """A ``pyproject.toml`` that cannot be read or parsed; the message names the file."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def find_pyproject(path: str) -> str | None:
    """The nearest ``pyproject.toml`` with a ``[tool.nki-studio]`` table, walking up from ``path``."""
    current = os.path.abspath(path)
    if not os.path.isdir(current):
        current = os.path.dirname(current)
    while True:
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


_cache: dict[str, tuple[Stamp, dict[str, Any]]] = {}


def _read_toml(path: str) -> dict[str, Any]:
    stamp = file_stamp(path)
    hit = _cache.get(path)
    if hit is not None and hit[0] == stamp:
        return dict(hit[1])
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    _cache[path] = (stamp, data)
    return dict(data)


def _has_table(path: str) -> bool:
    try:
        return TOOL_TABLE in _read_toml(path).get("tool", {})
    except OSError:
        return False
    except tomllib.TOMLDecodeError:
        # A broken file that is meant for us must surface as an error, not be skipped silently.
        with open(path, encoding="utf-8", errors="replace") as fh:
            return f"tool.{TOOL_TABLE}" in fh.read()


def read_pyproject(path: str) -> dict[str, Any]:
    """The parsed document (a copy of the cached one); raises PyprojectError when it cannot be read or parsed."""
    try:
        return _read_toml(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PyprojectError(path, str(exc)) from None
