"""The attrs bytecode cache serves the code attrs generates from the second use on, and never breaks a class."""

from __future__ import annotations

from pathlib import Path

import attr._make
import attrs
from nki_studio.lsp.attrs_code_cache import AttrsCodeCache


def _define(cache: AttrsCodeCache) -> type:
    attr._make.compile = cache.compile  # type: ignore[attr-defined]
    try:

        @attrs.define
        class Point:
            x: int
            y: int = 0

        return Point
    finally:
        del attr._make.compile  # type: ignore[attr-defined]


def test_generated_code_is_cached_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "cache.marshal"
    first = AttrsCodeCache(path)
    point = _define(first)
    assert first.added > 0 and point(1, 2) == point(1, 2) and repr(point(3)) == "Point(x=3, y=0)"
    first.save()
    second = AttrsCodeCache(path)
    point = _define(second)
    assert second.added == 0 and len(second.codes) == len(first.codes)  # nothing compiled this time
    assert point(1, 2) != point(1, 3) and point(4).y == 0


def test_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "cache.marshal"
    path.write_bytes(b"\x00not marshal")
    cache = AttrsCodeCache(path)
    point = _define(cache)
    assert cache.added > 0 and point(5).x == 5
    cache.save()
    assert AttrsCodeCache(path).codes.keys() == cache.codes.keys()
