"""Per-line metrics (metrics.md §3): busy and wait unions, per-engine busy, counts, DMA overlap, exclusive time,
top opcodes, attributed DMA and loop iterations for every recorded source location, plus the unattributed bucket.

Rows are instructions in start order (the invariant ``sort_by_start`` establishes). In the usual case every
instruction has at most one location, and the work happens directly on the instruction columns: each row gets
a small group number (line, core, engine or wait flag) and one radix sort per union groups them, with no gather
of the time columns beforehand. Rows a union must not see (out of scope, empty, waits for busy time) get the
group number just past the last one instead of being copied out. Fused instructions (several locations) take
the general route: one row per (instruction, location) gathered first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from nki_studio.profile import intervals as iv
from nki_studio.profile.model import Locations, Profile
from nki_studio.protocol.profile import IterationJson

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

# How many iterations / opcodes a line keeps (hover and payload size stay bounded).
MAX_ITERATIONS_PER_LINE = 256
TOP_OPCODES = 5


@dataclass
class LineMetrics:
    """Measured numbers of one recorded source location (``file`` as the profile spells it)."""

    file: str
    line: int
    instr: int
    work_instr: int
    busy_ns: int
    wait_ns: int
    share: float  # busy / kernel latency
    share_of_compute: float  # busy / compute union
    engines: dict[str, int]  # engine -> busy union ns
    dma_overlap_ns: int  # len(busy set ∩ DMA union)
    exclusive_ns: int  # additive view: concurrent lines split each moment equally (sums to the compute union)
    dma_bytes: int  # attributed through Flow
    dma_ns: int  # union of the attributed transfers
    fused_instr: int  # instructions of this line that also belong to other lines
    top_opcodes: list[tuple[str, int, int]]  # (opcode, count, summed duration ns)
    per_core_busy_ns: dict[int, int]
    iterations: list[IterationJson] | None = None


@dataclass(frozen=True)
class Rows:
    """The rows the per-line unions run over, each with its line (``nl``: unattributed, ``nl + 1``: out of
    scope) — the instructions themselves, or one row per (instruction, location) when some are fused."""

    line: npt.NDArray[np.int32]
    start: I64
    end: I64
    wait: Mask
    empty: Mask | None  # rows with end <= start (None: there are none)
    engine: npt.NDArray[np.int32]  # engine code, rows without one count as the first engine
    opcode: npt.NDArray[np.int32]
    core: npt.NDArray[np.int64] | None  # dense core index (None: a single core)


def line_metrics(
    profile: Profile,
    dma_rows: tuple[Mask, I64, I64],
    start: I64,
    end: I64,
    scope: Mask | None,
    is_wait: Mask,
    core_idx: npt.NDArray[np.int64] | None,
    nc: int,
    d_isl: tuple[I64, I64, I64],
    latency: int,
    cunion: int,
    exclusive_time: bool,
    scratch: iv.Scratch | None = None,
) -> tuple[list[LineMetrics], tuple[int, int, int, int]]:
    """Per-line rows, hottest first, and the unattributed bucket (count, work count, busy ns, wait ns).

    ``start``/``end`` are the instructions' times clipped to the execution window, ``scope`` the instructions
    of that window (None: all), ``core_idx`` each instruction's dense core index (None: one core), ``dma_rows``
    the DMA rows the kernel counts (mask, start and end clipped to the window)."""
    ins, loc = profile.instructions, profile.locations
    keep = scope[loc.instr] if scope is not None and loc.instr.size else None
    if keep is not None and keep.all():
        keep = None
    li = loc.instr if keep is None else loc.instr[keep]
    lid, lkeys, maxline = _line_ids(loc, keep)
    nl = int(lkeys.size)
    rows, fused = _rows(profile, start, end, scope, is_wait, core_idx, li, lid, nl)

    # Instruction and work counts per line in one bincount: (line, wait flag).
    lw = iv.group_key(rows.line, (2, rows.wait), size=2 * (nl + 2))
    both = np.bincount(lw, minlength=2 * (nl + 2))[: 2 * (nl + 1)].reshape(nl + 1, 2)
    del lw
    count, wcount = both.sum(axis=1), both[:, 0]

    # Busy (work) and wait unions per (line, core): the wait flag is the lowest group bit.
    skip_out = rows.line > nl
    dead = skip_out if rows.empty is None else skip_out | rows.empty
    n2 = (nl + 1) * nc * 2
    g2 = iv.group_key(rows.line, (nc, rows.core), (2, rows.wait), size=n2 + 1)
    g2[dead] = n2
    w_ig, w_a, w_b = iv.islands_by_group(g2, rows.start, rows.end, n2, scratch)
    del g2
    # Work islands of attributed lines (even group numbers below the unattributed line's), for the DMA overlap
    # and the exclusive view only.
    b_ig = b_a = b_b = np.zeros(0, np.int64)
    if exclusive_time or d_isl[0].size:
        sel = (w_ig & 1) == 0
        sel &= w_ig < nl * nc * 2
        b_ig, b_a, b_b = w_ig[sel], w_a[sel], w_b[sel]
        b_ig >>= 1
        del sel
    w_b -= w_a  # island lengths, in place
    both_t = iv.sum_by_group(w_ig, w_b, n2).reshape(nl + 1, nc, 2)
    del w_ig, w_a, w_b
    busy, wait = both_t[:, :, 0], both_t[:, :, 1]
    unattr = (int(count[nl]), int(wcount[nl]), int(busy[nl].max(initial=0)), int(wait[nl].max(initial=0)))
    if nl == 0:
        return [], unattr
    best = np.argmax(busy[:nl], axis=1) if nc > 1 else np.zeros(nl, np.int64)

    # DMA overlap: each line-core island against that core's DMA union (cumulative coverage, no loop per line).
    overlap = np.zeros(nl * nc, np.int64)
    for c in range(nc if d_isl[0].size else 0):
        m = (b_ig % nc) == c
        dm = d_isl[0] == c
        ov = iv.overlap_with(d_isl[1][dm], d_isl[2][dm], b_a[m], b_b[m])
        overlap += iv.sum_by_group(b_ig[m], ov, nl * nc)
    overlap2 = overlap.reshape(nl, nc)

    # Exclusive (additive) time: each moment of a core's attributed compute split equally among its busy lines.
    exclusive = np.zeros(nl * nc, np.float64)
    for c in range(nc if exclusive_time else 0):
        m = (b_ig % nc) == c if nc > 1 else slice(None)
        exclusive += np.bincount(
            b_ig[m], weights=iv.exclusive_shares(b_a[m], b_b[m], scratch), minlength=nl * nc
        )
    exclusive2 = np.rint(exclusive).astype(np.int64).reshape(nl, nc)
    del b_ig, b_a, b_b

    # Per-engine busy per (line, engine, core), work rows only.
    ne = max(len(ins.engine.values), 1)
    n3 = (nl + 1) * ne * nc
    g3 = iv.group_key(rows.line, (ne, rows.engine), (nc, rows.core), size=n3 + 1)
    g3[dead | rows.wait] = n3
    eng = iv.union_by_group(g3, rows.start, rows.end, n3, scratch).reshape(nl + 1, ne, nc)
    del g3

    tops = _top_opcodes(rows, ins.opcode.values, nl)
    dma_bytes, dma_ns = _dma_attributed(profile, dma_rows, li, lid, nl)
    iters = None
    if (loc.iteration.codes >= 0).any():
        iters = _iterations(loc, keep, lid, nl, start[li], end[li], ~is_wait[li])

    names = ins.engine.values
    # Python ints of the small per-line tables, read element by element below (NumPy scalar reads cost more)
    best_l, count_l, wcount_l, lkeys_l = best.tolist(), count.tolist(), wcount.tolist(), lkeys.tolist()
    busy_l, wait_l, eng_l = busy.tolist(), wait.tolist(), eng.tolist()
    overlap_l, exclusive_l = overlap2.tolist(), exclusive2.tolist()
    dma_bytes_l, dma_ns_l, fused_l = dma_bytes.tolist(), dma_ns.tolist(), fused.tolist()
    out: list[LineMetrics] = []
    for k in range(nl):
        c = best_l[k]
        b = busy_l[k][c]
        eng_k = eng_l[k]
        out.append(
            LineMetrics(
                file=loc.file.values[lkeys_l[k] // maxline],
                line=lkeys_l[k] % maxline,
                instr=count_l[k],
                work_instr=wcount_l[k],
                busy_ns=b,
                wait_ns=wait_l[k][c],
                share=b / latency if latency else 0.0,
                share_of_compute=b / cunion if cunion else 0.0,
                engines={names[x]: eng_k[x][c] for x in range(len(names)) if eng_k[x][c]},
                dma_overlap_ns=overlap_l[k][c],
                # The float shares can round a few ns past the line's own union at huge timestamps; never past it.
                exclusive_ns=min(exclusive_l[k][c], b),
                dma_bytes=dma_bytes_l[k],
                dma_ns=dma_ns_l[k],
                fused_instr=fused_l[k],
                top_opcodes=tops[k],
                per_core_busy_ns={} if nc == 1 else dict(enumerate(busy_l[k])),
                iterations=iters[k] if iters is not None else None,
            )
        )
    out.sort(key=lambda m: (-m.busy_ns, -m.instr, m.file, m.line))
    return out, unattr


def _line_ids(loc: Locations, keep: Mask | None) -> tuple[I64, I64, int]:
    """Dense line id per kept location row, the (file code × maxline + line) key of each id, and maxline."""
    fcode = loc.file.codes if keep is None else loc.file.codes[keep]
    lines = loc.line if keep is None else loc.line[keep]
    if lines.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 1
    maxline = int(lines.max()) + 1
    key = fcode.astype(np.int64)
    key *= maxline  # in place: one row-sized key, not three
    key += lines
    lid, lkeys = iv.dense_ids(key)
    return lid, lkeys, maxline


def _rows(
    profile: Profile,
    start: I64,
    end: I64,
    scope: Mask | None,
    is_wait: Mask,
    core_idx: npt.NDArray[np.int64] | None,
    li: I64,
    lid: I64,
    nl: int,
) -> tuple[Rows, I64]:
    """The union rows and the fused-instruction count per line."""
    ins = profile.instructions
    n = len(ins)
    engine = np.maximum(ins.engine.codes, 0)
    if li.size < 2 or bool((li[1:] > li[:-1]).all()):
        # At most one location per instruction: the rows are the instructions, no gather of any column.
        line = np.full(n, nl, np.int32)
        line[li] = lid
        if scope is not None:
            line[~scope] = nl + 1
        empty = end <= start
        return Rows(
            line, start, end, is_wait, empty if empty.any() else None, engine, ins.opcode.codes, core_idx
        ), np.zeros(nl, np.int64)
    # Fused instructions: one row per (instruction, location), then the unattributed instructions. Both parts
    # are in start order, and a group never spans the two, so each group's rows stay in start order.
    per_instr = np.bincount(li, minlength=n)
    fused = np.bincount(lid[per_instr[li] > 1], minlength=nl)
    un = np.flatnonzero(per_instr == 0)
    ri = np.concatenate([li, un])
    line = np.concatenate([lid.astype(np.int32), np.full(un.size, nl, np.int32)])
    if scope is not None:
        line[~scope[ri]] = nl + 1
    s, e = start[ri], end[ri]
    empty = e <= s
    rows = Rows(
        line,
        s,
        e,
        is_wait[ri],
        empty if empty.any() else None,
        engine[ri],
        ins.opcode.codes[ri],
        None if core_idx is None else core_idx[ri],
    )
    return rows, fused


def _top_opcodes(rows: Rows, names: tuple[str, ...], nl: int) -> list[list[tuple[str, int, int]]]:
    """Per line, the opcodes with the largest summed duration (count and sum), at most ``TOP_OPCODES``."""
    nops = len(names) + 1  # the extra slot holds rows without an opcode
    size = (nl + 2) * nops
    key = iv.group_key(rows.line, (nops, rows.opcode % nops), size=size)
    cnt = np.bincount(key, minlength=size)[: nl * nops].reshape(nl, nops)
    tot = iv.sum_by_group(key, rows.end - rows.start, size)[: nl * nops].reshape(nl, nops)
    top = np.argsort(-tot, axis=1, kind="stable")[
        :, :TOP_OPCODES
    ]  # one sort of the small (line × opcode) table
    label = (*names, "?")
    cnt_l, tot_l = cnt.tolist(), tot.tolist()
    return [
        [(label[o], cnt_l[k][o], tot_l[k][o]) for o in row if cnt_l[k][o]]
        for k, row in enumerate(top.tolist())
    ]


def _dma_attributed(
    profile: Profile, dma_rows: tuple[Mask, I64, I64], li: I64, lid: I64, nl: int
) -> tuple[I64, I64]:
    """Bytes and union time of the DMA transfers each line's instructions triggered (Flow edges), among the
    rows the kernel counts and clipped like them (so a line's DMA time lies within the kernel's).
    ``li`` is sorted (location rows are in instruction order)."""
    dma = profile.dma
    keep, d_start, d_end = dma_rows
    has = (dma.instr >= 0) & keep
    if not has.any() or li.size == 0:
        return np.zeros(nl, np.int64), np.zeros(nl, np.int64)
    d_idx = np.flatnonzero(has)
    d_instr = dma.instr[d_idx]
    lo = np.searchsorted(li, d_instr, side="left")
    hi = np.searchsorted(li, d_instr, side="right")
    cnt = hi - lo
    total = int(cnt.sum())
    if total == 0:
        return np.zeros(nl, np.int64), np.zeros(nl, np.int64)
    rep = np.repeat(d_idx, cnt)
    pos = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(lo, cnt)
    line = lid[pos]
    nbytes = iv.sum_by_group(line, dma.bytes[rep], nl)
    ns = iv.grouped_union_length(line, d_start[rep], d_end[rep], nl, sorted_by_start=True)
    return nbytes, ns


def _iterations(
    loc: Locations, keep: Mask | None, lid: I64, nl: int, s: I64, e: I64, work_row: Mask
) -> list[list[IterationJson] | None]:
    """Busy time and instruction count per (line, loop-iteration label)."""
    it = loc.iteration.codes if keep is None else loc.iteration.codes[keep]
    has = it >= 0
    nit = len(loc.iteration.values)
    key = np.where(has, lid * nit + it, -1)
    idx, keys = iv.dense_ids(np.where(has, key, 0))
    ng = int(keys.size)
    sel = has & work_row
    busy = iv.grouped_union_length(idx[sel], s[sel], e[sel], ng, sorted_by_start=True)
    cnt = np.bincount(idx[has], minlength=ng)
    out: list[list[IterationJson] | None] = [None] * nl
    for key_g, busy_g, cnt_g in zip(keys.tolist(), busy.tolist(), cnt.tolist(), strict=True):
        if not cnt_g:
            continue
        line, label = key_g // nit, loc.iteration.values[key_g % nit]
        bucket = out[line]
        if bucket is None:
            bucket = out[line] = []
        bucket.append({"label": label, "busy_ns": busy_g, "instr": cnt_g})
    for k, bucket in enumerate(out):
        if bucket is not None and len(bucket) > MAX_ITERATIONS_PER_LINE:
            bucket.sort(key=lambda d: -d["busy_ns"])
            out[k] = bucket[:MAX_ITERATIONS_PER_LINE]
    return out
