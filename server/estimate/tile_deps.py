"""Dependencies through allocations the scheduler need not track access by access, found in whole-array
steps before it runs (``trace_plan``):

* an allocation a core only reads (a kernel input): no access of it waits for another;
* an allocation whose footprints on a core are each either the same as or byte-disjoint from the others (a
  tile used whole, the common case; a big HBM tensor accessed tile by tile): the footprint index of
  ``schedule._Footprints`` would hold one entry per footprint, each met only by accesses of exactly that
  footprint, so an access waits for the last write of its footprint before it, and a write also for every
  read since that write -- known from the order of accesses alone. Each such dependency is listed as
  (earlier event, semaphore latency or 0: another engine's result).

Every other allocation is left to the scheduler's footprint index. The timeline is the same either way
(``tests/estimate/test_schedule_reference.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]


@dataclass
class TileDeps:
    """``static[r]``: access row r needs no footprint tracking; event i waits for ``event[offsets[i]:offsets[i +
    1]]``, each plus the matching ``add`` (ns)."""

    static: B
    offsets: I64
    event: I64
    add: F64


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
    columns); ``engine`` per event; ``n`` events."""
    offsets = np.zeros(n + 1, np.int64)
    m = key.size
    if not m:
        return TileDeps(np.zeros(0, bool), offsets, np.zeros(0, np.int64), np.zeros(0, np.float64))
    nkeys = int(key.max()) + 1
    written = np.zeros(nkeys, bool)
    written[key[write]] = True
    # rows by footprint (allocation, bytes, partitions), in event order within one: by allocation first (a
    # stable sort of nearly sorted numbers, as allocations are numbered in order of creation), then the rows
    # of allocations with several footprints by footprint
    order = np.argsort(key, kind="stable")
    k = key[order]
    cols = [c[order] for c in rect]
    same_key = k[1:] == k[:-1]
    moved = same_key & np.logical_or.reduce([c[1:] != c[:-1] for c in cols])
    several = np.zeros(nkeys, bool)
    several[k[1:][moved]] = True
    sub = np.flatnonzero(several[k])
    bad = np.zeros(nkeys, bool)
    if sub.size:
        sk = k[sub]
        lex = np.lexsort((*(c[sub] for c in reversed(cols)), sk))  # stable: event order within a footprint
        order[sub] = order[sub][lex]
        # only the rows of ``sub`` moved, and within runs of one allocation (``sk`` leads the sort): ``k`` is
        # unchanged, the rectangle columns are permuted there alone (no full re-gather)
        for c in cols:
            c[sub] = c[sub][lex]
        # allocations whose distinct footprints are disjoint byte ranges: sorted by first byte, each ends
        # before the next begins (then each footprint is a tile of its own)
        sk, sb0, sb1 = k[sub], cols[0][sub], cols[1][sub]
        same = sk[1:] == sk[:-1]
        distinct = same & np.logical_or.reduce([c[sub][1:] != c[sub][:-1] for c in cols])
        bad[sk[1:][distinct & (sb0[1:] < sb1[:-1])]] = True
    new = np.empty(m, bool)
    new[0] = True
    new[1:] = (k[1:] != k[:-1]) | np.logical_or.reduce([c[1:] != c[:-1] for c in cols])
    static = ~bad[key] | ~written[key]
    keep = static[order] & written[k]  # rows whose dependencies are listed here
    unit = (np.cumsum(new) - 1)[keep]
    e, w = owner[order][keep], write[order][keep]
    if not e.size:
        return TileDeps(static, offsets, np.zeros(0, np.int64), np.zeros(0, np.float64))
    # one group per (footprint, event): a write when any of the event's accesses writes
    first = np.empty(e.size, bool)
    first[0] = True
    first[1:] = (unit[1:] != unit[:-1]) | (e[1:] != e[:-1])
    gid = np.cumsum(first) - 1
    gk, ge = unit[first], e[first]
    gw = np.bincount(gid, weights=w, minlength=len(gk)) > 0
    g = len(gk)
    pos = np.arange(g, dtype=np.int64)
    seg = np.maximum.accumulate(np.where(np.r_[True, gk[1:] != gk[:-1]], pos, 0))
    last_write = np.maximum.accumulate(np.where(gw, pos, -1))
    prev = np.r_[-1, last_write[:-1]]
    prev = np.where(prev >= seg, prev, -1)  # the last write before, within the footprint
    lo = np.where(gw, np.where(prev >= 0, prev, seg), np.maximum(prev, 0))
    hi = np.where(gw, pos, np.where(prev >= 0, prev + 1, 0))
    lens = np.maximum(hi - lo, 0)
    total = int(lens.sum())
    starts = np.zeros(g + 1, np.int64)
    np.cumsum(lens, out=starts[1:])
    dep_pos = np.arange(total, dtype=np.int64) - np.repeat(starts[:-1] - lo, lens)
    waiter = np.repeat(ge, lens)
    dep = ge[dep_pos]
    add = np.where(engine[dep] != engine[waiter], sem, 0.0)
    by = np.argsort(waiter)  # any order within an event: it waits for the latest
    np.cumsum(np.bincount(waiter, minlength=n), out=offsets[1:])
    return TileDeps(static, offsets, dep[by], add[by])
