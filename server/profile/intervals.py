"""Interval-union maths on integer nanoseconds, vectorised with NumPy (metrics.md §1).

Every interval is half-open ``[start, end)``; zero-length intervals contribute nothing. Busy time is always
the length of a union, never a sum of durations: rows of one engine overlap, and engines overlap each other.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

# Combined (group, time) sort keys must stay below this to avoid int64 overflow.
_KEY_LIMIT = 1 << 62


def _as_i64(a: npt.ArrayLike) -> I64:
    return np.asarray(a, dtype=np.int64)


def clip(
    start: npt.ArrayLike, end: npt.ArrayLike, w0: int, w1: int
) -> tuple[I64, I64, npt.NDArray[np.bool_]]:
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
    ordered by start, ``islands_by_group`` needs only a stable sort on the group.
    """
    g = _as_i64(group)
    s = _as_i64(start)
    e = _as_i64(end)
    if s.size == 0:
        z = np.zeros(0, np.int64)
        return z, z, z
    keep = e > s
    if sorted_by_start:
        ngroups = int(g.max()) + 1
        return islands_by_group(g if keep.all() else np.where(keep, g, ngroups), s, e, ngroups)
    if not keep.all():
        g, s, e = g[keep], s[keep], e[keep]
    if s.size == 0:
        z = np.zeros(0, np.int64)
        return z, z, z
    t0 = int(s.min())
    span = int(e.max()) - t0 + 1
    ngroups = int(g.max()) + 1
    if ngroups * span < _KEY_LIMIT:
        base = g * span - t0
        order = np.argsort(base + s)
        return _islands_sorted((base + s)[order], (base + e)[order], span, t0)
    return _rank_islands(g, s, e)


class Scratch:
    """One int64 work buffer shared by the passes of one computation: each union pass gathers the start and end
    times of its rows into its two halves, and the exclusive-time sort keys its events in it, instead of new
    arrays each time — a million-row profile touches that memory once, not once per pass (fresh pages are the
    dominant cost of a cold run on a VM). Contents are valid until the next pass."""

    def __init__(self) -> None:
        self._buf = np.zeros(0, np.int64)

    def flat(self, n: int) -> I64:
        """A buffer view of ``n`` int64 elements."""
        if self._buf.size < n:
            self._buf = np.empty(n, np.int64)
        return self._buf[:n]

    def pair(self, n: int) -> tuple[I64, I64]:
        """Two buffer views of ``n`` int64 elements each."""
        buf = self.flat(2 * n)
        return buf[:n], buf[n:]


def islands_by_group(
    group: npt.NDArray[np.integer], start: I64, end: I64, ngroups: int, scratch: Scratch | None = None
) -> tuple[I64, I64, I64]:
    """``grouped_islands`` for rows already in start order, without copying the rows out first.

    ``group`` values lie in ``[0, ngroups]``; rows of group ``ngroups`` are ignored (out of scope, waits, empty),
    so callers mark rows instead of compressing three arrays. Every other row must have ``end > start``.
    Only a stable sort on the group is needed (linear-time radix sort below 65,536 groups); the group offsets are
    added to the gathered times in place, so the group column itself is never gathered.
    """
    z = np.zeros(0, np.int64)
    grouped = _group_rows(group, start, end, ngroups, scratch)
    if grouped is None:
        return z, z, z
    s, e, counts = grouped
    t0 = int(s.min())
    span = int(e.max()) - t0 + 1
    if ngroups * span >= _KEY_LIMIT:
        return _rank_islands(np.repeat(np.arange(ngroups, dtype=np.int64), counts), s, e)
    _add_group_offsets(s, e, counts, span, t0)
    return _islands_sorted(s, e, span, t0)


def union_by_group(
    group: npt.NDArray[np.integer], start: I64, end: I64, ngroups: int, scratch: Scratch | None = None
) -> I64:
    """Union length per group for rows already in start order (same ``group`` convention as
    ``islands_by_group``), without building the islands: sorted by start, a row adds
    ``max_end_so_far - max(previous max_end_so_far, its start)``."""
    out = np.zeros(ngroups, np.int64)
    grouped = _group_rows(group, start, end, ngroups, scratch)
    if grouped is None:
        return out
    s, e, counts = grouped
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    t0 = int(s.min())
    span = int(e.max()) - t0 + 1
    if ngroups * span < _KEY_LIMIT:
        # Offset keys: one running maximum for all groups, never carried across a group boundary.
        _add_group_offsets(s, e, counts, span, t0)
        np.maximum.accumulate(e, out=e)
        np.maximum(s[1:], e[:-1], out=s[1:])
    else:
        for lo, n in zip(first[counts > 0].tolist(), counts[counts > 0].tolist(), strict=True):
            np.maximum.accumulate(e[lo : lo + n], out=e[lo : lo + n])
            np.maximum(s[lo + 1 : lo + n], e[lo : lo + n - 1], out=s[lo + 1 : lo + n])
    e -= s  # each row's addition to its group's union
    out[counts > 0] = np.add.reduceat(e, first[counts > 0])
    return out


def _group_rows(
    group: npt.NDArray[np.integer], start: I64, end: I64, ngroups: int, scratch: Scratch | None
) -> tuple[I64, I64, I64] | None:
    """Start and end of the rows of groups ``[0, ngroups)`` gathered in (group, start) order — a stable sort on
    the group only, rows of group ``ngroups`` left out — and the row count per group; None when no row is left.
    With ``scratch`` the gathered times live in its buffers (valid until the next pass)."""
    if group.size == 0:
        return None
    key = group.astype(np.uint16, copy=False) if ngroups < 1 << 16 else _as_i64(group)
    order = np.argsort(key, kind="stable")
    # Rows per group from the sorted keys (no row-sized bincount temporaries).
    bounds = np.searchsorted(np.take(key, order), np.arange(ngroups + 1, dtype=key.dtype), "left")
    del key
    nv = int(bounds[-1])
    if nv == 0:
        return None
    order = order[:nv]  # ignored rows sort last
    # np.take: the same gather as start[order], on a faster path than fancy indexing.
    if scratch is None:
        return np.take(start, order), np.take(end, order), np.diff(bounds)
    s, e = scratch.pair(nv)
    np.take(start, order, out=s, mode="clip")  # indices are in range; "clip" avoids a buffered copy
    np.take(end, order, out=e, mode="clip")
    return s, e, np.diff(bounds)


def group_key(
    first: npt.NDArray[np.integer[Any]], *digits: tuple[int, npt.NDArray[Any] | None], size: int
) -> npt.NDArray[np.integer[Any]]:
    """Mixed-radix group number ``((first * r1 + d1) * r2 + d2) ...`` (a ``None`` digit is 0), computed in place
    in the narrowest integer type that holds ``size`` values — uint16 below 65,536, which the radix sort of
    ``islands_by_group`` then uses without a copy."""
    dtype = np.uint16 if size <= 1 << 16 else np.int32 if size < 1 << 31 else np.int64
    key = first.astype(dtype)
    for radix, digit in digits:
        if radix > 1:
            key *= dtype(radix)
        if digit is not None:
            key += digit.astype(dtype, copy=False)
    return key


def _add_group_offsets(s: I64, e: I64, counts: I64, span: int, t0: int) -> None:
    """Turn times of rows in group order into offset keys ``group * span + (time - t0)``, in place. With few
    groups a slice per group does it without the row-sized array a ``repeat`` of the offsets would take; when the
    rows are not many more than the groups (a small profile's per-line groups) that array is small and the
    loop over the groups would cost more than the rows."""
    if counts.size > 4096 or s.size < 64 * counts.size:
        off = np.repeat(np.arange(counts.size, dtype=np.int64) * span - t0, counts)
        s += off
        e += off
        return
    bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
    for k in range(counts.size):
        lo, hi = bounds[k], bounds[k + 1]
        if hi > lo:
            s[lo:hi] += k * span - t0
            e[lo:hi] += k * span - t0


def _rank_islands(g: I64, s: I64, e: I64) -> tuple[I64, I64, I64]:
    """Islands when times are too far apart for a combined (group, time) key: work on ranks of the distinct
    timestamps instead."""
    times, inverse = np.unique(np.concatenate([s, e]), return_inverse=True)
    rs, re = inverse[: s.size].astype(np.int64), inverse[s.size :].astype(np.int64)
    span = int(times.size)
    key = g * span + rs
    o = np.argsort(key, kind="stable")
    ig, ia, ib = _islands_sorted(key[o], (g * span + re)[o], span, 0)
    return ig, times[ia], times[ib]


def _islands_sorted(ks: I64, ke: I64, span: int, t0: int) -> tuple[I64, I64, I64]:
    """Islands of rows in (group, start) order given as offset keys ``group * span + (time - t0)``; the offset
    keeps one running maximum from carrying an end across groups. ``ke`` is overwritten."""
    np.maximum.accumulate(ke, out=ke)
    new = np.empty(ks.size, dtype=bool)
    new[0] = True
    np.greater(ks[1:], ke[:-1], out=new[1:])
    first = np.flatnonzero(new)
    del new
    a = np.take(ks, first)
    first -= 1  # each island ends on the row before the next island's first row
    b = np.empty_like(a)
    np.take(ke, first[1:], out=b[:-1], mode="clip")  # in range; "clip" avoids the buffered out of "raise"
    b[-1] = ke[-1]
    del first
    # a = group * span + (start - t0) with 0 <= start - t0 < span, and likewise for b: split in place.
    ig = np.empty_like(a)
    np.divmod(a, span, out=(ig, a))
    np.remainder(b, span, out=b)
    a += t0
    b += t0
    return ig, a, b


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
    g = np.asarray(group)
    if g.dtype.kind not in "iu" or g.dtype == np.uint64:
        g = _as_i64(g)  # narrower integer groups (uint16 keys) are used as they are: no row-sized copy
    v = _as_i64(values)
    if g.size == 0:
        return np.zeros(ngroups, np.int64)
    if max(int(v.max()), -int(v.min())) * v.size < _EXACT_FLOAT:  # a bound on Σ|v| without a temporary
        return np.rint(np.bincount(g, weights=v, minlength=ngroups)).astype(np.int64)
    out = np.zeros(ngroups, dtype=np.int64)
    np.add.at(out, g, v)
    return out


def grouped_union_length(
    group: npt.ArrayLike,
    start: npt.ArrayLike,
    end: npt.ArrayLike,
    ngroups: int,
    *,
    sorted_by_start: bool = False,
) -> I64:
    """Union length per group id in ``[0, ngroups)``."""
    if sorted_by_start:
        g = _as_i64(group)
        s, e = _as_i64(start), _as_i64(end)
        if s.size == 0:
            return np.zeros(ngroups, np.int64)
        keep = e > s
        return union_by_group(g if keep.all() else np.where(keep, g, ngroups), s, e, ngroups)
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
    # np.clip's definition, minimum(maximum(.)), spelt out: the same integers without np.clip's per-call
    # dispatch, which costs more than the arithmetic on a small profile's few islands
    inside = np.minimum(np.maximum(tt - isl_start[kc], 0), isl_end[kc] - isl_start[kc])
    return np.where(k >= 0, before[kc] + inside, 0)


def argsort_times(times: I64) -> tuple[npt.NDArray[np.integer[Any]], I64]:
    """``(order, times[order])`` for integer times. When time and row index fit together in 63 bits they are
    packed into one key and sorted with ``np.sort`` (a SIMD sort, several times faster than ``np.argsort``);
    ties come out in index order. ``times`` is overwritten (it becomes the sorted key buffer)."""
    n = times.size
    if n == 0:
        return np.zeros(0, np.intp), times
    bits = max((n - 1).bit_length(), 1)
    t0 = int(times.min())
    if int(times.max()) - t0 >= 1 << (63 - bits):
        order = np.argsort(times, kind="stable")
        return order, times[order]
    key = times
    key -= t0
    key <<= bits
    key |= np.arange(n, dtype=np.int64)
    key.sort()
    order = np.bitwise_and(key, (1 << bits) - 1, dtype=np.int32 if bits < 32 else np.int64)  # half the memory
    key >>= bits
    key += t0
    return order, key


def exclusive_shares(isl_start: I64, isl_end: I64, scratch: Scratch | None = None) -> npt.NDArray[np.float64]:
    """Additive "exclusive time" of intervals that are disjoint within their owner (metrics.md §3): cut the
    timeline at every start and end and split each piece equally among the intervals covering it. Returns each
    interval's share in ns (float); the shares sum to the length of the union of all intervals."""
    m = isl_start.size
    if m == 0:
        return np.zeros(0, np.float64)
    # Tie order is irrelevant: pieces between equal times have zero length.
    events = np.empty(2 * m, np.int64) if scratch is None else scratch.flat(2 * m)
    np.concatenate([isl_start, isl_end], out=events)
    order, t = argsort_times(events)
    sign = (order < m).view(np.int8) * np.int8(2)
    sign -= 1  # +1 at a start, -1 at an end
    active = np.cumsum(sign, dtype=np.int32)  # intervals covering [t[i], t[i+1])
    del sign
    cum = np.empty(2 * m, np.float64)  # F(t[i]) = ∫ 1/active up to event i
    cum[0] = 0.0
    np.subtract(t[1:], t[:-1], out=cum[1:])
    # Gaps (active 0) lie inside no interval: they add nothing to F, so F stays within the union's length
    # and float64 keeps ns precision even when the intervals lie 2^60 ns apart.
    gap = active[:-1] == 0
    np.maximum(active, 1, out=active)
    cum[1:] /= active[:-1]
    cum[1:][gap] = 0.0
    del active, gap
    np.cumsum(cum[1:], out=cum[1:])
    at = t.view(np.float64)  # the sorted times are no longer needed: their buffer takes F per event
    np.put(at, order, cum)  # F at each interval's own start and end event (at[order] = cum, faster path)
    return at[m:] - at[:m]


def overlap_with(isl_start: I64, isl_end: I64, start: npt.ArrayLike, end: npt.ArrayLike) -> I64:
    """Per interval ``[start, end)``, its overlap with the union given as sorted disjoint islands."""
    return coverage(isl_start, isl_end, end) - coverage(isl_start, isl_end, start)


def intersection_length(
    a_start: npt.ArrayLike, a_end: npt.ArrayLike, b_start: npt.ArrayLike, b_end: npt.ArrayLike
) -> int:
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
