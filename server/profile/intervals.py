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


def grouped_islands(
    group: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike, *, sorted_by_start: bool = False
) -> tuple[I64, I64, I64]:
    """Merge the intervals of each group into sorted disjoint islands.

    ``group`` holds small non-negative integers. Returns ``(island_group, island_start, island_end)`` sorted
    by group then start. One sort into (group, start) order, then a running maximum of ends — the groups are
    offset so one global ``maximum.accumulate`` never carries an end across groups. When the rows are already
    ordered by start, a stable sort on the group alone is enough, and for fewer than 65,536 groups NumPy does
    that with a linear-time radix sort.
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
        if sorted_by_start and ngroups <= 1 << 16:
            order = np.argsort(g.astype(np.uint16), kind="stable") if ngroups > 1 else None
        else:
            order = np.argsort(g * span + (s - t0))
        return _islands_ordered(g, s, e, span, t0, order)
    # Times too far apart for a combined key: work on ranks of the distinct timestamps instead.
    times, inverse = np.unique(np.concatenate([s, e]), return_inverse=True)
    rs, re = inverse[: s.size].astype(np.int64), inverse[s.size :].astype(np.int64)
    ig, ia, ib = _islands_ordered(g, rs, re, int(times.size), 0, np.argsort(g * int(times.size) + rs))
    return ig, times[ia], times[ib]


def _islands_ordered(
    g: I64, s: I64, e: I64, span: int, t0: int, order: npt.NDArray[np.intp] | None
) -> tuple[I64, I64, I64]:
    """Islands of rows already in (group, start) order after ``order`` (None: identity). Groups are offset
    by ``span`` so one running maximum serves every group; the offset keys are formed before the (random)
    gather, so each row costs two gathers, not three."""
    base = g * span - t0
    ks = base + s
    ke = base + e
    if order is not None:
        ks, ke = ks[order], ke[order]
    ke = np.maximum.accumulate(ke)
    new = np.empty(ks.size, dtype=bool)
    new[0] = True
    np.greater(ks[1:], ke[:-1], out=new[1:])
    first = np.flatnonzero(new)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = ks.size - 1
    ig = ks[first] // span  # ks = group * span + (start - t0) with 0 <= start - t0 < span
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


# float64 sums of int64 nanoseconds are exact up to 2**53 ns (104 days), far beyond any profile.
_EXACT_FLOAT = 1 << 53


def sum_by_group(group: npt.ArrayLike, values: npt.ArrayLike, ngroups: int) -> I64:
    """Exact int64 sum of ``values`` per group id in ``[0, ngroups)`` (``group`` need not be sorted)."""
    g = _as_i64(group)
    v = _as_i64(values)
    if g.size == 0:
        return np.zeros(ngroups, np.int64)
    if int(np.abs(v).sum()) < _EXACT_FLOAT:
        return np.rint(np.bincount(g, weights=v, minlength=ngroups)).astype(np.int64)
    out = np.zeros(ngroups, dtype=np.int64)
    np.add.at(out, g, v)
    return out


def grouped_union_length(
    group: npt.ArrayLike, start: npt.ArrayLike, end: npt.ArrayLike, ngroups: int, *, sorted_by_start: bool = False
) -> I64:
    """Union length per group id in ``[0, ngroups)``."""
    ig, a, b = grouped_islands(group, start, end, sorted_by_start=sorted_by_start)
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


def exclusive_shares(isl_start: I64, isl_end: I64) -> npt.NDArray[np.float64]:
    """Additive "exclusive time" of intervals that are disjoint within their owner (metrics.md §3): cut the
    timeline at every start and end and split each piece equally among the intervals covering it. Returns each
    interval's share in ns (float); the shares sum to the length of the union of all intervals."""
    m = isl_start.size
    if m == 0:
        return np.zeros(0, np.float64)
    times = np.concatenate([isl_start, isl_end])
    order = np.argsort(times)  # tie order is irrelevant: pieces between equal times have zero length
    t = times[order]
    active = np.cumsum(np.where(order < m, 1, -1))  # intervals covering [t[i], t[i+1])
    rate = np.diff(t) / np.maximum(active[:-1], 1)  # gaps (active 0) lie inside no interval: never read
    cum = np.empty(2 * m, np.float64)  # F(t[i]) = ∫ 1/active up to event i
    cum[0] = 0.0
    np.cumsum(rate, out=cum[1:])
    at = np.empty(2 * m, np.float64)
    at[order] = cum  # F at each interval's own start and end event
    return at[m:] - at[:m]


def overlap_with(isl_start: I64, isl_end: I64, start: npt.ArrayLike, end: npt.ArrayLike) -> I64:
    """Per interval ``[start, end)``, its overlap with the union given as sorted disjoint islands."""
    return coverage(isl_start, isl_end, end) - coverage(isl_start, isl_end, start)


def intersection_length(a_start: npt.ArrayLike, a_end: npt.ArrayLike, b_start: npt.ArrayLike, b_end: npt.ArrayLike) -> int:
    """``len(∪A ∩ ∪B)``."""
    a0, a1 = islands(a_start, a_end)
    b0, b1 = islands(b_start, b_end)
    return int(overlap_with(b0, b1, a0, a1).sum())


def dense_ids(values: npt.NDArray[np.integer]) -> tuple[I64, I64]:
    """Dense ids for non-negative integer keys: (id per row, key per id, ascending). Linear time through a
    presence table when the keys are below 50 million, else a sort."""
    if values.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if int(values.max()) < 50_000_000:
        present = np.bincount(values) > 0
        keys = np.flatnonzero(present)
        lut = np.cumsum(present) - 1
        return lut[values].astype(np.int64), keys.astype(np.int64)
    keys, inv = np.unique(values, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), keys.astype(np.int64)
