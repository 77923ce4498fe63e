"""The kernel panel's per-engine timeline: when each engine and the DMA queues were busy on the kernel's main
core, as intervals from the kernel start. Built from the busy islands ``metrics.compute_metrics`` computes anyway
(unions per engine and of DMA), merged below the panel's resolution so a million instructions become at most
a few hundred rectangles per engine."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from nki_studio.protocol.simulation import EngineTrack

I64 = npt.NDArray[np.int64]

# The panel's plot is 330 px wide: gaps under half a pixel are closed, and a track keeps at most one interval
# per pixel (only its widest gaps stay open), which also bounds the heatmap payload that carries them.
RESOLUTION = 660
MAX_INTERVALS = 330


def coarse_intervals(start: I64, end: I64, origin: int, length: int) -> list[list[int]]:
    """Disjoint, sorted busy islands → ``[[start, end], ...]`` ns from ``origin``, clipped to ``[0, length]``,
    with gaps below ``length / RESOLUTION`` closed (and all but the MAX_INTERVALS - 1 widest, if more are left)."""
    # np.clip spelt out as its definition (the same integers, without its per-call dispatch)
    s = np.minimum(np.maximum(start - origin, 0), length)
    e = np.minimum(np.maximum(end - origin, 0), length)
    keep = e > s
    s, e = s[keep], e[keep]
    if s.size == 0:
        return []
    gaps = s[1:] - e[:-1]
    gap = max(length // RESOLUTION, 1)
    if gaps.size >= MAX_INTERVALS:  # keep only the MAX_INTERVALS - 1 widest gaps (ties closed too)
        widest_closed = np.partition(gaps, gaps.size - MAX_INTERVALS)[gaps.size - MAX_INTERVALS]
        gap = max(gap, int(widest_closed) + 1)
    breaks = gaps >= gap
    first = np.concatenate(([True], breaks))
    last = np.concatenate((breaks, [True]))
    return [[a, b] for a, b in zip(s[first].tolist(), e[last].tolist(), strict=True)]


def engine_timeline(
    engine_islands: tuple[I64, I64, I64],
    engine_names: list[str],
    ncores: int,
    core: int,
    dma_islands: tuple[I64, I64, I64],
    origin: int,
    length: int,
) -> list[EngineTrack]:
    """Tracks ``{"name", "kind": "dma"|"compute", "intervals"}`` for ``core``: DMA first, then each engine that
    was busy. Engine islands are grouped ``engine * ncores + core`` (``metrics``' group key), DMA ones by core."""
    if length <= 0:
        return []
    tracks: list[EngineTrack] = []
    on_core = dma_islands[0] == core
    dma = coarse_intervals(dma_islands[1][on_core], dma_islands[2][on_core], origin, length)
    if dma:
        tracks.append({"name": "DMA", "kind": "dma", "intervals": dma})
    for e, name in enumerate(engine_names):
        mine = engine_islands[0] == e * ncores + core
        busy = coarse_intervals(engine_islands[1][mine], engine_islands[2][mine], origin, length)
        if busy:
            tracks.append({"name": name, "kind": "compute", "intervals": busy})
    return tracks
