"""Interval-union maths on integer nanoseconds, vectorised with NumPy (metrics.md §1).

Every interval is half-open ``[start, end)``; zero-length intervals contribute nothing. Busy time is always
the length of a union, never a sum of durations: rows of one engine overlap, and engines overlap each other.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

# Combined (group, time) sort keys must stay below this to avoid int64 overflow.
_KEY_LIMIT = 1 << 62


def _as_i64(a: npt.ArrayLike) -> I64:
    return np.asarray(a, dtype=np.int64)


def clip(start: npt.ArrayLike, end: npt.ArrayLike, w0: int, w1: int) -> tuple[I64, I64, npt.NDArray[np.bool_]]:
    """Clip intervals to the window ``[w0, w1)``; returns clipped starts, ends and the mask of survivors."""
    s = np.maximum(_as_i64(start), w0)
    e = np.minimum(_as_i64(end), w1)
    keep = s < e
    return s, e, keep


def grouped_islands(group: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike) -> tuple[I64, I64, I64]:
    """Merge the intervals of each group into sorted disjoint islands.

    ``group`` holds small non-negative integers. Returns ``(island_group, island_start, island_end)`` sorted
    by group then start. One sort of a combined (group, start) key, then a running maximum of ends — the
    groups are offset so one global ``maximum.accumulate`` never carries an end across groups.
    """
    g = _as_i64(group)
    s = _as_i64(start)
    e = _as_i64(end)
    keep = e > s
    if not keep.all():
        g, s, e = g[keep], s[keep], e[keep]
    if s.size == 0:
        z = np.zeros(0, np.int64)
        return z, z, z
    t0 = int(s.min())
    span = int(e.max()) - t0 + 1
    ngroups = int(g.max()) + 1
    if ngroups * span < _KEY_LIMIT:
        return _islands_shifted(g, s - t0, e - t0, span, t0)
    # Times too far apart for a combined key: work on ranks of the distinct timestamps instead.
    times, inverse = np.unique(np.concatenate([s, e]), return_inverse=True)
    rs, re = inverse[: s.size], inverse[s.size :]
    ig, ia, ib = _islands_shifted(g, rs.astype(np.int64), re.astype(np.int64), int(times.size), 0)
    return ig, times[ia], times[ib]


def _islands_shifted(g: I64, s: I64, e: I64, span: int, t0: int) -> tuple[I64, I64, I64]:
    base = g * span
    key_s = base + s
    order = np.argsort(key_s)
    ks = key_s[order]
    ke = np.maximum.accumulate((base + e)[order])
    new = np.empty(ks.size, dtype=bool)
    new[0] = True
    np.greater(ks[1:], ke[:-1], out=new[1:])
    first = np.flatnonzero(new)
    last = np.append(first[1:], ks.size) - 1
    ig = g[order][first]
    offset = ig * span - t0
    return ig, ks[first] - offset, ke[last] - offset


def islands(start: npt.ArrayLike, end: npt.ArrayLike) -> tuple[I64, I64]:
    """Sorted disjoint islands of one set of intervals."""
    s = _as_i64(start)
    _, a, b = grouped_islands(np.zeros(s.size, np.int64), s, end)
    return a, b


def union_length(start: npt.ArrayLike, end: npt.ArrayLike) -> int:
    """``len(∪ [start, end))``."""
    a, b = islands(start, end)
    return int((b - a).sum())


def sum_by_group(group: I64, values: I64, ngroups: int) -> I64:
    """Exact int64 sum of ``values`` per group id in ``[0, ngroups)`` (``group`` need not be sorted)."""
    out = np.zeros(ngroups, dtype=np.int64)
    if group.size >= 4096:
        _sorted_sum(out, group, values)
    elif group.size:
        np.add.at(out, group, values)
    return out


def _sorted_sum(out: I64, group: I64, values: I64) -> None:
    # reduceat is much faster than add.at on large inputs; it needs contiguous runs, hence the sort.
    if group.size > 1 and bool((group[1:] < group[:-1]).any()):
        order = np.argsort(group, kind="stable")
        group, values = group[order], values[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    out[group[starts]] = np.add.reduceat(values, starts)


def grouped_union_length(group: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike, ngroups: int) -> I64:
    """Union length per group id in ``[0, ngroups)``."""
    ig, a, b = grouped_islands(group, start, end)
    return sum_by_group(ig, b - a, ngroups)


def coverage(isl_start: I64, isl_end: I64, t: npt.ArrayLike) -> I64:
    """For sorted disjoint islands, the covered length inside ``(-inf, t)`` for every ``t``."""
    tt = _as_i64(t)
    if isl_start.size == 0:
        return np.zeros(tt.shape, np.int64)
    before = np.concatenate([[0], np.cumsum(isl_end - isl_start)])
    k = np.searchsorted(isl_start, tt, side="right") - 1
    kc = np.maximum(k, 0)
    inside = np.clip(tt - isl_start[kc], 0, isl_end[kc] - isl_start[kc])
    return np.where(k >= 0, before[kc] + inside, 0)


def overlap_with(isl_start: I64, isl_end: I64, start: npt.ArrayLike, end: npt.ArrayLike) -> I64:
    """Per interval ``[start, end)``, its overlap with the union given as sorted disjoint islands."""
    return coverage(isl_start, isl_end, end) - coverage(isl_start, isl_end, start)


def intersection_length(a_start: npt.ArrayLike, a_end: npt.ArrayLike, b_start: npt.ArrayLike, b_end: npt.ArrayLike) -> int:
    """``len(∪A ∩ ∪B)``."""
    a0, a1 = islands(a_start, a_end)
    b0, b1 = islands(b_start, b_end)
    return int(overlap_with(b0, b1, a0, a1).sum())
