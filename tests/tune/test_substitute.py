"""Substituting values into module constants and keyword defaults, and the diff of a winner."""

from __future__ import annotations

import pytest
from nki_studio.tune.substitute import SubstitutionError, current_values, sites, substitute, unified_diff

SOURCE = """import nki
TILE_N = 128  # free size
BUFS: int = 2
AGAIN = 1
AGAIN = 2
NOTE = "é"  # non-ASCII before a site on the same line must not shift columns


@nki.jit
def k(x, y, scale=1.0, *, mode="fast"):
    return x


def other(unrelated=3):
    return unrelated
"""


def test_sites_are_constants_and_the_kernels_keyword_defaults() -> None:
    found = sites(SOURCE, "k")
    assert set(found) == {"TILE_N", "BUFS", "NOTE", "scale", "mode"}  # AGAIN is assigned twice
    assert current_values(SOURCE, "k", ["TILE_N", "BUFS", "scale", "mode"]) == {
        "TILE_N": 128,
        "BUFS": 2,
        "scale": 1.0,
        "mode": "fast",
    }


def test_substitute_changes_only_the_values() -> None:
    out = substitute(SOURCE, "k", {"TILE_N": 512, "BUFS": 4, "scale": 0.5, "mode": "slow", "NOTE": "ü"})
    assert "TILE_N = 512  # free size" in out and "BUFS: int = 4" in out
    assert "def k(x, y, scale=0.5, *, mode='slow'):" in out
    assert "NOTE = 'ü'  # non-ASCII" in out
    assert out.count("\n") == SOURCE.count("\n")  # lines stay where they were
    assert "def other(unrelated=3)" in out


def test_unknown_parameter_is_named() -> None:
    with pytest.raises(SubstitutionError, match="AGAIN"):
        substitute(SOURCE, "k", {"AGAIN": 3})


def test_diff() -> None:
    diff = unified_diff(SOURCE, substitute(SOURCE, "k", {"TILE_N": 256}), "k.py")
    assert "-TILE_N = 128  # free size" in diff and "+TILE_N = 256  # free size" in diff
    assert unified_diff(SOURCE, SOURCE, "k.py") == ""
