"""Dependencies through allocations the scheduler need not track access by access, found in whole-array
steps before it runs (``trace_plan``):

* an allocation a core only reads (a kernel input): no access of it waits for another;
* an allocation with few distinct footprints (allocation, bytes x partitions) that overlap each other little
  -- a tile used whole, a tile and a slice of it, a big HBM tensor accessed tile by tile. An access of
  footprint u conflicts with the earlier accesses of every footprint v overlapping u that write, or that read
  when it writes; of those it waits, per v, only for the last write of v before it and, when it writes, the
  reads of v since both that write and the last write of u. Every other conflict ends before one of these
  starts (a write of v waited for the writes and reads of v before it; the last write of u for the reads of v
  before it, and this access waits for it) and the semaphore latency obeys the triangle inequality, so the
  latest of these is the latest of all: the start the quadratic statement of the model gives
  (``tests/estimate/test_schedule_reference.py``).

Every dependency is kept, those on the waiter's own engine included: an engine does not run its instructions
in issue order (the scheduler moves an instruction ahead into a gap its engine left, as the compiler's
scheduler reorders independent instructions), so neither the queue nor the last of another engine's
instructions stands for the others. Each dependency is (earlier event, semaphore latency or 0: another
engine's result), listed once.

Every other allocation is left to the scheduler's footprint index. The timeline is the same either way.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

# An allocation is listed here when its footprints, sorted by first byte, each meet on average at most this
# many footprints starting inside them (the dependencies listed grow with it; beyond, the footprint index of
# the scheduler costs less). A cost trade-off, not a model constant: results are the same either way.
OVERLAPS_PER_FOOTPRINT = 16
# Access rows per batch of whole allocations (allocations are independent): bounds the temporaries' memory,
# a few dozen arrays of this length, on traces of millions of rows.
BATCH_ROWS = 1 << 19


@dataclass
class TileDeps:
    """``static[r]``: access row r needs no footprint tracking; event i waits for ``event[offsets[i]:offsets[i +
    1]]``, each plus the matching ``add`` (ns)."""

    static: B
    offsets: I64
    event: I64
    add: F64


def _ranges(lo: I64, hi: I64) -> tuple[I64, I64]:
    """(owner, value) of every integer of the ranges [lo[i], hi[i]): ``owner`` the range's index."""
    lens = np.maximum(hi - lo, 0)
    starts = np.zeros(len(lo) + 1, np.int64)
    np.cumsum(lens, out=starts[1:])
    owner = np.repeat(np.arange(len(lo), dtype=np.int64), lens)
    return owner, np.arange(int(starts[-1]), dtype=np.int64) - (starts[:-1] - lo)[owner]


def tile_deps(
    key: I64,
    owner: I64,
    write: B,
    rect: list[npt.NDArray[np.int64]],
    engine: npt.NDArray[np.int32],
    sem: float,
    n: int,
) -> TileDeps:
    """The dependencies above for the access rows given by ``key`` (core x allocation, dense: 0 <= key <
    a few times the rows), ``owner`` (event, non-decreasing), ``write`` and ``rect`` (b0, b1, p0, p1
    columns); ``engine`` per event (code); ``n`` events."""
    offsets = np.zeros(n + 1, np.int64)
    static = np.ones(key.size, bool)
    none = TileDeps(static, offsets, np.zeros(0, np.int64), np.zeros(0, np.float64))
    if not key.size:
        return none
    written = np.zeros(int(key.max()) + 1, bool)
    written[key[write]] = True
    sel = np.flatnonzero(written[key])  # read-only allocations: nothing waits
    if not sel.size:
        return none
    # rows by allocation (a stable sort of nearly sorted numbers, as allocations are numbered in order of
    # creation), in event order within one; then batches of whole allocations
    order = sel[np.argsort(key[sel], kind="stable")]
    del sel
    k = key[order]
    cuts = [0]
    while cuts[-1] < k.size:
        at = cuts[-1] + BATCH_ROWS
        if at >= k.size:
            cuts.append(k.size)
            continue
        cut = int(np.searchsorted(k, k[at], "left"))  # the first row of the allocation at ``at``
        cuts.append(cut if cut > cuts[-1] else int(np.searchsorted(k, k[at], "right")))
    del k
    found = [_batch(order[a:b], key, owner, write, rect, static, n) for a, b in itertools.pairwise(cuts)]
    waiter = np.concatenate([w for w, _ in found])
    dep = np.concatenate([d for _, d in found])
    del found
    if not waiter.size:
        return none

    # sorted by waiter, then source; each pair once
    by = np.argsort(waiter * np.int64(n) + dep)
    waiter, dep = waiter[by], dep[by]
    del by
    distinct = np.ones(waiter.size, bool)
    distinct[1:] = (waiter[1:] != waiter[:-1]) | (dep[1:] != dep[:-1])
    waiter, dep = waiter[distinct], dep[distinct]
    add = np.where(engine[dep] != engine[waiter], sem, 0.0)
    np.cumsum(np.bincount(waiter, minlength=n), out=offsets[1:])
    return TileDeps(static, offsets, dep, add)


def _batch(
    order: I64,
    key: I64,
    owner: I64,
    write: B,
    rect: list[npt.NDArray[np.int64]],
    static: B,
    n: int,
) -> tuple[I64, I64]:
    """(waiter, dependency) events of the rows ``order`` (whole allocations, sorted by allocation and event),
    possibly repeated; marks the rows left to the footprint index in ``static``."""
    k = key[order]
    k -= k[0]  # allocations of the batch, from 0
    nkeys = int(k[-1]) + 1
    cols = [c[order] for c in rect]
    # the rows of allocations with several footprints by footprint (bytes, partitions), in event order within
    same_key = k[1:] == k[:-1]
    moved = same_key & np.logical_or.reduce([c[1:] != c[:-1] for c in cols])
    several = np.zeros(nkeys, bool)
    several[k[1:][moved]] = True
    sub = np.flatnonzero(several[k])
    del moved, several
    if sub.size:
        lex = np.lexsort(
            (*(c[sub] for c in reversed(cols)), k[sub])
        )  # stable: event order within a footprint
        order[sub] = order[sub][lex]
        # only the rows of ``sub`` moved, and within runs of one allocation (``k`` leads the sort): ``k`` is
        # unchanged, the rectangle columns are permuted there alone (no full re-gather)
        for c in cols:
            c[sub] = c[sub][lex]
        del lex
    del sub
    new = np.empty(k.size, bool)
    new[0] = True
    new[1:] = ~same_key | np.logical_or.reduce([c[1:] != c[:-1] for c in cols])
    del same_key
    unit = np.cumsum(new) - 1  # footprint of each sorted row
    first = np.flatnonzero(new)
    del new
    ukey, ub0, ub1, up0, up1 = k[first], *(c[first] for c in cols)
    del cols, first, k
    nu = ukey.size

    # footprints overlapping each footprint: within an allocation, sorted by first byte, the footprints that
    # start inside u (u itself included) are the pairs (u, v) of overlapping bytes, each once
    span = int(max(ub1.max(), 0)) + 1
    ok = np.zeros(nu, bool)
    pu = pv = np.zeros(0, np.int64)
    if nkeys * span < 2**62:  # else the combined sort key would overflow: all left to the index
        at = ukey * span + ub0
        end = np.searchsorted(at, ukey * span + ub1, "left")
        starting = end - np.arange(nu) - 1  # footprints other than u starting inside u
        several_units = np.flatnonzero(starting)
        per_key = np.bincount(ukey[several_units], weights=starting[several_units], minlength=nkeys)
        ok = (per_key <= OVERLAPS_PER_FOOTPRINT * np.bincount(ukey, minlength=nkeys))[ukey]
        cand = several_units[ok[several_units]]
        pu, pv = _ranges(cand + 1, end[cand])
        pu = cand[pu]
        meet = (up0[pv] < up1[pu]) & (up0[pu] < up1[pv])
        pu, pv = pu[meet], pv[meet]
    rows_ok = ok[unit]
    static[order[~rows_ok]] = False
    if not rows_ok.any():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # each other footprint v overlapping a footprint u, as (u, v) and (v, u), by u
    cross_u, cross_v = np.concatenate([pu, pv]), np.concatenate([pv, pu])
    by = np.argsort(cross_u, kind="stable")
    cross_u, cross_v = cross_u[by], cross_v[by]
    cross_at = np.zeros(nu + 1, np.int64)
    np.cumsum(np.bincount(cross_u, minlength=nu), out=cross_at[1:])

    # one group per (footprint, event): a write when any of the event's accesses writes
    gu_rows, e_rows, w_rows = unit, owner[order], write[order]
    if not rows_ok.all():
        gu_rows, e_rows, w_rows = gu_rows[rows_ok], e_rows[rows_ok], w_rows[rows_ok]
    gfirst = np.empty(gu_rows.size, bool)
    gfirst[0] = True
    gfirst[1:] = (gu_rows[1:] != gu_rows[:-1]) | (e_rows[1:] != e_rows[:-1])
    gid = np.cumsum(gfirst) - 1
    gu, ge = gu_rows[gfirst], e_rows[gfirst]
    gw = np.bincount(gid, weights=w_rows, minlength=gu.size) > 0
    g = gu.size

    # within its own footprint (the group sequence in event order, no search): a read waits for the last write
    # before it, a write for it and the reads since
    pos = np.arange(g, dtype=np.int64)
    seg = np.maximum.accumulate(np.where(np.concatenate(([True], gu[1:] != gu[:-1])), pos, 0))
    last_write = np.maximum.accumulate(np.where(gw, pos, -1))
    prev = np.concatenate(([-1], last_write[:-1]))
    prev = np.where(prev >= seg, prev, -1)  # the last write before, within the footprint
    lo = np.where(gw, np.where(prev >= 0, prev, seg), np.maximum(prev, 0))
    hi = np.where(gw, pos, np.where(prev >= 0, prev + 1, 0))
    own_w, own_d = _ranges(lo, hi)
    waiters, deps = [ge[own_w]], [ge[own_d]]

    # against each other footprint v overlapping its own: the last write of v before it, and for a write the
    # reads of v since that write and since its own footprint's last write
    qg = np.flatnonzero(cross_at[gu + 1] > cross_at[gu])
    if qg.size:
        stride = np.int64(n + 1)
        gkey = gu * stride + ge  # sorted: by footprint, then event
        wkey, we = gkey[gw], ge[gw]
        rkey, re = gkey[~gw], ge[~gw]
        qo, qp = _ranges(cross_at[gu[qg]], cross_at[gu[qg] + 1])
        qg, qv = qg[qo], cross_v[qp]
        qe = ge[qg]
        i = np.searchsorted(wkey, qv * stride + qe, "left") - 1
        found = i >= 0
        found[found] = wkey[i[found]] // stride == qv[found]
        lw = np.where(found, we[np.maximum(i, 0)], -1)
        waiters.append(qe[found])
        deps.append(lw[found])
        wq = np.flatnonzero(gw[qg])
        since = np.maximum(lw[wq], np.where(prev[qg[wq]] >= 0, ge[prev[qg[wq]]], -1))
        r_lo = np.searchsorted(rkey, qv[wq] * stride + since, "right")
        r_hi = np.searchsorted(rkey, qv[wq] * stride + qe[wq], "left")
        ro, rr = _ranges(r_lo, r_hi)
        waiters.append(qe[wq][ro])
        deps.append(re[rr])
    return np.concatenate(waiters), np.concatenate(deps)
