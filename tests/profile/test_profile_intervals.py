"""Interval maths against a brute-force oracle (every covered nanosecond counted) and metrics.md identities."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from nki_studio.profile import intervals as iv

interval = st.tuples(st.integers(0, 60), st.integers(0, 25)).map(lambda t: (t[0], t[0] + t[1]))
interval_lists = st.lists(interval, max_size=30)


def covered(items: list[tuple[int, int]]) -> set[int]:
    return {t for s, e in items for t in range(s, e)}


@settings(max_examples=120, deadline=None)
@given(interval_lists)
def test_union_matches_brute_force(items: list[tuple[int, int]]) -> None:
    s = np.array([a for a, _ in items], np.int64)
    e = np.array([b for _, b in items], np.int64)
    assert iv.union_length(s, e) == len(covered(items))
    a, b = iv.islands(s, e)
    assert (b > a).all() and (a[1:] > b[:-1]).all()  # sorted, disjoint, not touching


@settings(max_examples=120, deadline=None)
@given(interval_lists, interval_lists)
def test_intersection_and_inclusion_exclusion(xs: list[tuple[int, int]], ys: list[tuple[int, int]]) -> None:
    def arr(items: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        return np.array([a for a, _ in items], np.int64), np.array([b for _, b in items], np.int64)

    (xa, xb), (ya, yb) = arr(xs), arr(ys)
    inter = iv.intersection_length(xa, xb, ya, yb)
    assert inter == len(covered(xs) & covered(ys))
    both = iv.union_length(np.r_[xa, ya], np.r_[xb, yb])
    assert both == iv.union_length(xa, xb) + iv.union_length(ya, yb) - inter


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), interval), max_size=40))
def test_grouped_union_matches_per_group_brute_force(rows: list[tuple[int, tuple[int, int]]]) -> None:
    g = np.array([r[0] for r in rows], np.int64)
    s = np.array([r[1][0] for r in rows], np.int64)
    e = np.array([r[1][1] for r in rows], np.int64)
    got = iv.grouped_union_length(g, s, e, 5)
    for k in range(5):
        assert got[k] == len(covered([r[1] for r in rows if r[0] == k]))


def test_grouped_union_with_huge_time_range_uses_rank_fallback() -> None:
    g = np.array([0, 0, 3000, 3000], np.int64)
    s = np.array([0, 5, 2**61, 2**61 + 10], np.int64)
    e = np.array([10, 20, 2**61 + 5, 2**61 + 30], np.int64)
    assert list(iv.grouped_union_length(g, s, e, 3001)[[0, 3000]]) == [20, 25]
    assert list(iv.grouped_union_length(g, s, e, 3001, sorted_by_start=True)[[0, 3000]]) == [20, 25]


@settings(max_examples=100, deadline=None)
@given(interval_lists, interval)
def test_clip_then_union_equals_covered_points_in_window(
    items: list[tuple[int, int]], window: tuple[int, int]
) -> None:
    s = np.array([a for a, _ in items], np.int64)
    e = np.array([b for _, b in items], np.int64)
    cs, ce, keep = iv.clip(s, e, *window)
    assert iv.union_length(cs[keep], ce[keep]) == len(covered(items) & set(range(*window)))


def test_zero_length_rows_contribute_nothing() -> None:
    assert iv.union_length([5, 7], [5, 7]) == 0
    assert iv.grouped_union_length([0, 1], [5, 7], [5, 9], 2).tolist() == [0, 2]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), interval), max_size=25))
def test_exclusive_shares_match_brute_force(rows: list[tuple[int, tuple[int, int]]]) -> None:
    # Owners' intervals are made disjoint first (as the per-line islands are).
    g = np.array([r[0] for r in rows], np.int64)
    s = np.array([r[1][0] for r in rows], np.int64)
    e = np.array([r[1][1] for r in rows], np.int64)
    ig, a, b = iv.grouped_islands(g, s, e)
    got = np.bincount(ig, weights=iv.exclusive_shares(a, b), minlength=4)
    owners_at = {t: {int(k) for k, x, y in zip(ig, a, b, strict=True) if x <= t < y} for t in range(0, 90)}
    for k in range(4):
        expected = sum(1 / len(o) for o in owners_at.values() if k in o)
        assert abs(got[k] - expected) < 1e-6
    assert abs(got.sum() - iv.union_length(s, e)) < 1e-6


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), interval), max_size=40))
def test_islands_by_group_ignores_the_extra_group(rows: list[tuple[int, tuple[int, int]]]) -> None:
    # Rows in start order (as the metrics pass them); group 5 marks rows to ignore.
    rows = sorted(rows, key=lambda r: r[1][0])
    g = np.array([r[0] for r in rows], np.int64)
    s = np.array([r[1][0] for r in rows], np.int64)
    e = np.array([r[1][1] for r in rows], np.int64)
    g = np.where(e > s, g, 5)  # the function requires non-empty rows outside the ignored group
    ig, a, b = iv.islands_by_group(g, s, e, 5)
    assert (ig < 5).all() and (b > a).all()
    for k in range(5):
        mine = [(int(x), int(y)) for q, x, y in zip(ig, a, b, strict=True) if q == k]
        assert mine == [tuple(p) for p in zip(*iv.islands(s[g == k], e[g == k]), strict=True)]
        assert sum(y - x for x, y in mine) == len(covered([r[1] for r in rows if r[0] == k]))
    lengths = iv.union_by_group(g, s, e, 5)  # the same unions without building islands
    assert lengths.tolist() == [
        len(covered([r[1] for r in rows if r[0] == k and r[1][1] > r[1][0]])) for k in range(5)
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**40), min_size=1, max_size=60))
def test_argsort_times_orders_like_argsort(times: list[int]) -> None:
    t = np.array(times, np.int64)
    order, st_ = iv.argsort_times(t.copy())
    assert (st_ == np.sort(t)).all() and (t[order] == st_).all()
    assert sorted(order.tolist()) == list(range(t.size))


def test_argsort_times_falls_back_when_times_span_too_much_to_pack() -> None:
    t = np.array([2**62, 0, 5, 2**62 - 1], np.int64)
    order, st_ = iv.argsort_times(t.copy())
    assert order.tolist() == [1, 2, 3, 0] and st_.tolist() == sorted(t.tolist())


def test_passes_sharing_a_scratch_buffer_return_their_own_arrays() -> None:
    rng = np.random.default_rng(3)
    s = np.sort(rng.integers(0, 10_000, 500))
    e = s + rng.integers(1, 300, 500)
    g = rng.integers(0, 7, 500)
    scratch = iv.Scratch()
    isl = iv.islands_by_group(g, s, e, 7, scratch)
    kept = [a.copy() for a in isl]
    lengths = iv.union_by_group(g % 3, s, e, 3, scratch)  # reuses (overwrites) the same buffer
    shares = iv.exclusive_shares(isl[1], isl[2], scratch)
    for got, before in zip(isl, kept, strict=True):
        assert (got == before).all()
    assert [a.tolist() for a in isl] == [a.tolist() for a in iv.islands_by_group(g, s, e, 7)]
    assert lengths.tolist() == iv.union_by_group(g % 3, s, e, 3).tolist()
    assert np.allclose(shares, iv.exclusive_shares(isl[1], isl[2]))


def test_exclusive_shares_keep_ns_precision_across_a_huge_gap() -> None:
    """Found by the fuzzer: a gap of ~2^60 ns before two overlapping intervals made the float running sum lose
    its ns precision (768 and 1024 ns instead of 883 and 1117; a line's exclusive time then exceeded its busy
    union). Gaps add nothing to the running sum now."""
    far = 1274872965286302008  # float64 ulp 256 ns here
    a = np.array([0, 100, far, far + 333], np.int64)
    b = np.array([50, 1100, far + 1433, far + 2000], np.int64)
    assert iv.exclusive_shares(a, b).tolist() == [50.0, 1000.0, 333 + 550, 550 + 567]
