"""Fixtures of the estimate tests."""

from __future__ import annotations

import pytest
from nki_studio.estimate import tile_deps


@pytest.fixture(params=["listed", "batches", "index"])
def tracking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of following footprints: dependencies listed before scheduling where ``tile_deps`` can, or
    every written allocation left to the scheduler's footprint index (a negative limit lists none); listed
    also in batches of a few allocations."""
    if request.param == "batches":
        monkeypatch.setattr(tile_deps, "BATCH_ROWS", 5)
    if request.param == "index":
        monkeypatch.setattr(tile_deps, "OVERLAPS_PER_FOOTPRINT", -1)
    return str(request.param)
