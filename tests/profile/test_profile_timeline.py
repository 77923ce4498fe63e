"""The kernel panel's engine timeline: busy islands from the kernel start, merged below the panel's resolution."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
from nki_studio.profile import timeline
from nki_studio.profile.metrics import compute_metrics
from nki_studio.profile.readers.detect import load_profile


def _covered(intervals: list[list[int]], s: int, e: int) -> bool:
    return any(a <= s and e <= b for a, b in intervals)


def test_gaps_below_the_resolution_close_and_the_rest_stay() -> None:
    start, end = np.array([100, 110, 112, 500]), np.array([105, 111, 120, 600])
    assert timeline.coarse_intervals(start, end, 100, 800) == [[0, 5], [10, 11], [12, 20], [400, 500]]
    assert timeline.coarse_intervals(start, end, 100, 8000) == [
        [0, 20],
        [400, 500],
    ]  # gaps < 8000 // 660 ns closed
    assert timeline.coarse_intervals(start, end, 300, 250) == [[200, 250]]  # clipped to the kernel
    assert timeline.coarse_intervals(np.zeros(0, np.int64), np.zeros(0, np.int64), 0, 100) == []


def test_many_islands_fit_the_limit_and_stay_covered() -> None:
    rng = np.random.default_rng(3)
    start = np.cumsum(rng.integers(5, 2000, 20_000))
    end = start + rng.integers(1, 4, start.size)
    got = timeline.coarse_intervals(start, end, 0, int(end[-1]))
    assert len(got) <= timeline.MAX_INTERVALS
    assert all(a < b for a, b in got) and all(b < a for (_, b), (a, _) in pairwise(got))
    assert all(_covered(got, int(s), int(e)) for s, e in zip(start[::97], end[::97], strict=True))


def test_tracks_per_engine_of_one_core() -> None:
    # two cores (ncores=2), engines A=0, B=1: groups engine * 2 + core
    engine = (np.array([0, 1, 2, 3]), np.array([0, 10, 20, 30]), np.array([5, 15, 25, 35]))
    dma = (np.array([0, 1]), np.array([2, 40]), np.array([8, 50]))
    tracks = timeline.engine_timeline(engine, ["A", "B"], 2, 1, dma, 0, 100)
    assert tracks == [
        {"name": "DMA", "kind": "dma", "intervals": [[40, 50]]},
        {"name": "A", "kind": "compute", "intervals": [[10, 15]]},
        {"name": "B", "kind": "compute", "intervals": [[30, 35]]},
    ]


def test_walkthrough_timeline_matches_the_busy_unions(walkthrough_files: dict[str, Path]) -> None:
    k = compute_metrics(load_profile(walkthrough_files["parquet"])).kernel
    tracks = {t["name"]: t for t in k.timeline}
    assert tracks["DMA"]["kind"] == "dma" and set(tracks) - {"DMA"} == set(k.engines)
    for name, t in tracks.items():
        busy = sum(b - a for a, b in t["intervals"])
        union = k.dma_union_ns if name == "DMA" else k.engines[name]
        gap = k.latency_ns // timeline.RESOLUTION
        assert union <= busy <= union + gap * len(t["intervals"]), (
            name
        )  # only sub-resolution gaps were closed
        assert all(0 <= a < b <= k.latency_ns for a, b in t["intervals"])
