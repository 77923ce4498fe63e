"""Per-line and per-kernel metrics of a profile, exactly as ``profile-formats/metrics.md`` defines them.

Everything is computed with whole-array NumPy operations over the columnar ``Profile`` (no Python loop per
instruction), so a million-instruction profile takes a fraction of a second. Scope (metrics.md §1): one
execution window at a time and every physical core (``pcore_idx``) separately; a line's headline numbers come
from the core where it is busiest, never from one union across cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from nki_studio.profile import intervals as iv
from nki_studio.profile.model import SETUP_OPCODES, WAIT_OPCODES, Locations, Profile, sort_by_start
from nki_studio.profile.roofline import Roofline, RooflineOptions, TraceFlops, roofline_point

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

# How many iterations / opcodes a line keeps (hover and payload size stay bounded).
MAX_ITERATIONS_PER_LINE = 256
TOP_OPCODES = 5


@dataclass(frozen=True)
class MetricOptions:
    """Knobs of the metric computation; the defaults follow metrics.md."""

    wait_opcodes: frozenset[str] = WAIT_OPCODES
    setup_opcodes: frozenset[str] = SETUP_OPCODES
    execution: int | None = None  # ExecutionInfo.execution_index; None: the first execution (or whole profile)
    kernel_dma_only: bool = True  # drop queue_type 'instruction' and transfers of <= 4 bytes (metrics.md §4)
    exclusive_time: bool = True  # the additive view (metrics.md §3); one extra sort of all line islands
    roofline: RooflineOptions = field(default_factory=RooflineOptions)


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
    iterations: list[dict[str, Any]] | None = None  # [{"label": "k=3", "busy_ns":…, "instr":…}]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        d = dict(self.__dict__)
        d["top_opcodes"] = [{"opcode": o, "count": c, "sum_ns": t} for o, c, t in self.top_opcodes]
        d["per_core_busy_ns"] = {str(k): v for k, v in self.per_core_busy_ns.items()}
        return d


@dataclass
class KernelMetrics:
    """Kernel-level decomposition (metrics.md §2, §4, §5)."""

    latency_ns: int
    latency_source: str  # which denominator, e.g. "Summary.total_exec_time"
    dma_union_ns: int
    dma_union_source: str
    compute_union_ns: int
    intersection_ns: int
    dma_or_compute_ns: int
    idle_ns: int
    engines: dict[str, int]  # engine -> busy union ns (work only)
    perfect_pipeline_ns: int
    serialization_gap_ns: int
    instr: int
    work_instr: int
    dma_bytes: int
    dma_bytes_source: str
    effective_dma_gbps: float | None  # bytes / DMA union
    end_to_end_dma_gbps: float | None  # bytes / latency
    unattributed_instr: int
    unattributed_work_instr: int
    unattributed_busy_ns: int
    unattributed_wait_ns: int
    location_source: str
    cores: list[int]
    execution: int | None
    roofline: Roofline | None
    wait_opcodes: list[str]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        d = dict(self.__dict__)
        d["roofline"] = self.roofline.to_dict() if self.roofline else None
        return d


@dataclass
class ProfileMetrics:
    """Result of ``compute_metrics``: per-line rows (hottest first) and the kernel summary."""

    lines: list[LineMetrics]
    kernel: KernelMetrics


def _scope(profile: Profile, options: MetricOptions) -> tuple[Mask | None, int | None, tuple[int, int] | None, list[str]]:
    """Which instructions count: the selected execution window, or everything."""
    notes: list[str] = []
    if not profile.executions:
        return None, None, None, notes
    wanted = options.execution if options.execution is not None else profile.executions[0].index
    match = [x for x in profile.executions if x.index == wanted]
    if not match:
        raise ValueError(
            f"execution {wanted} is not in this profile (executions: {[x.index for x in profile.executions]})"
        )
    ex = match[0]
    if len(profile.executions) > 1:
        notes.append(f"profile has {len(profile.executions)} executions; showing execution {ex.index}")
    ins = profile.instructions
    mask = ins.execution == ex.index if ins.execution is not None else (ins.start >= ex.start) & (ins.start < ex.end)
    return mask, ex.index, (ex.start, ex.end), notes


def _latency(profile: Profile, window: tuple[int, int] | None, span: tuple[int, int] | None) -> tuple[int, str]:
    """The kernel latency and the name of the denominator used (metrics.md §2)."""
    summ = profile.summary
    if window is not None and len(profile.executions) > 1:
        return window[1] - window[0], "ExecutionInfo execution window"
    for key in ("total_exec_time", "total_time"):
        value = summ.get(key)
        if isinstance(value, (int, float)) and value > 0:
            return round(float(value) * 1e9), f"Summary.{key}"
    if window is not None:
        return window[1] - window[0], "ExecutionInfo execution window"
    if span is not None:
        return span[1] - span[0], "span of Instruction ∪ DMA (max end − min start)"
    return 0, "none (empty profile)"


def compute_metrics(
    profile: Profile, options: MetricOptions | None = None, trace_flops: TraceFlops | None = None
) -> ProfileMetrics:
    """Per-line and kernel metrics of one profile. ``trace_flops`` (from the simulator) feeds the roofline."""
    opts = options or MetricOptions()
    profile = sort_by_start(profile)  # no-op for profiles from load_profile
    ins = profile.instructions
    n = len(ins)
    scope, exec_index, window, notes = _scope(profile, opts)
    notes = list(profile.notes) + notes
    start, end = ins.start, ins.end
    if window is not None:
        start, end = np.maximum(start, window[0]), np.minimum(end, window[1])
    in_scope: Mask = np.ones(n, bool) if scope is None else scope
    is_wait = ins.opcode.mask_of(opts.wait_opcodes)
    cores_present, core_idx = _cores(ins.pcore)
    nc = len(cores_present)

    # --- kernel level ---------------------------------------------------------------------------
    work = ~is_wait if scope is None else in_scope & ~is_wait
    # Engine islands first; the compute union per core is then the union of those (far fewer) islands.
    ne = len(ins.engine.values)
    eng_codes = ins.engine.codes.astype(np.int64)
    ek = np.maximum(eng_codes[work], 0) * nc + core_idx[work]
    e_isl = iv.grouped_islands(ek, start[work], end[work], sorted_by_start=True)
    eng_busy = iv.sum_by_group(e_isl[0], e_isl[2] - e_isl[1], max(ne, 1) * nc).reshape(max(ne, 1), nc)
    c_isl = iv.grouped_islands(e_isl[0] % nc, e_isl[1], e_isl[2])
    compute_per_core = iv.sum_by_group(c_isl[0], c_isl[2] - c_isl[1], nc)
    d_isl, dma_source, dma_bytes, bytes_source = _dma_islands(profile, opts, window, core_idx.dtype, cores_present)
    dma_per_core = iv.sum_by_group(d_isl[0], d_isl[2] - d_isl[1], nc)
    inter_per_core = np.zeros(nc, np.int64)
    for c in range(nc):
        ci, di = c_isl[0] == c, d_isl[0] == c
        inter_per_core[c] = int(iv.overlap_with(d_isl[1][di], d_isl[2][di], c_isl[1][ci], c_isl[2][ci]).sum())
    main_core = int(np.argmax(compute_per_core + dma_per_core)) if nc else 0
    cunion = int(compute_per_core[main_core]) if nc else 0
    dunion = int(dma_per_core[main_core]) if nc else 0
    summary_dma = summary_seconds(profile.summary, "dma_active_time")
    if dunion == 0 and len(profile.dma) == 0 and summary_dma is not None:
        dunion = summary_dma[0]
        dma_source = f"{summary_dma[1]} (no DMA rows in the profile; intersection unknown)"
    inter = int(inter_per_core[main_core]) if nc else 0
    span = _span(start, end, d_isl) if scope is None else _span(start[in_scope], end[in_scope], d_isl)
    latency, latency_source = _latency(profile, window, span)

    engines = {ins.engine.values[e]: int(eng_busy[e, main_core]) for e in range(ne) if eng_busy[e].any()}
    if not engines and profile.summary:
        engines = _engines_from_summary(profile.summary)
    perfect = max([*engines.values(), dunion], default=0)

    # --- per line ---------------------------------------------------------------------------------
    loc = profile.locations
    lines, unattr = _line_metrics(
        profile, opts, start, end, in_scope, is_wait, core_idx, nc, d_isl, latency, cunion
    )
    roof = roofline_point(profile, opts.roofline, trace_flops, latency, dma_bytes)
    if not loc.instr.size and n:
        notes.append(NO_SOURCE_HELP)
    kernel = KernelMetrics(
        latency_ns=latency,
        latency_source=latency_source,
        dma_union_ns=dunion,
        dma_union_source=dma_source,
        compute_union_ns=cunion,
        intersection_ns=inter,
        dma_or_compute_ns=dunion + cunion - inter,
        idle_ns=latency - (dunion + cunion - inter) if latency else 0,
        engines=engines,
        perfect_pipeline_ns=perfect,
        serialization_gap_ns=latency - perfect if latency else 0,
        instr=int(in_scope.sum()),
        work_instr=int(work.sum()),
        dma_bytes=dma_bytes,
        dma_bytes_source=bytes_source,
        effective_dma_gbps=dma_bytes / dunion if dunion and dma_bytes else None,
        end_to_end_dma_gbps=dma_bytes / latency if latency and dma_bytes else None,
        unattributed_instr=unattr[0],
        unattributed_work_instr=unattr[1],
        unattributed_busy_ns=unattr[2],
        unattributed_wait_ns=unattr[3],
        location_source=loc.source,
        cores=[int(c) for c in cores_present],
        execution=exec_index,
        roofline=roof,
        wait_opcodes=sorted(opts.wait_opcodes),
        notes=notes,
    )
    return ProfileMetrics(lines, kernel)


NO_SOURCE_HELP = (
    "This profile has no NKI source locations (no KernelInstructions table and no "
    "Instruction.nki_source_location / bir_debug_info_source_location values), so time cannot be put on "
    "source lines. Recompile the kernel with NEURON_FRAMEWORK_DEBUG=1 and NKI_DEBUG_INFO=True set (delete the "
    "compiler cache first), re-capture with `neuron-explorer capture`, and process it with "
    "`neuron-explorer view ... --nki-source-root <dir with the kernel sources>`."
)


def _cores(pcore: npt.NDArray[np.int32]) -> tuple[list[int], I64]:
    """Distinct physical cores and each row's dense core index."""
    if pcore.size == 0:
        return [0], np.zeros(0, np.int64)
    pc = np.maximum(pcore.astype(np.int64), 0)
    ids, keys = iv.dense_ids(pc)
    return [int(k) for k in keys], ids


def _span(start: I64, end: I64, d_isl: tuple[I64, I64, I64]) -> tuple[int, int] | None:
    lo = [int(a.min()) for a in (start, d_isl[1]) if a.size]
    hi = [int(a.max()) for a in (end, d_isl[2]) if a.size]
    return (min(lo), max(hi)) if lo else None


def summary_seconds(summary: dict[str, Any], key: str) -> tuple[int, str] | None:
    """``Summary.<key>`` (seconds) in ns, else ``<key>_percent`` × ``total_time`` — the percents are fractions
    0–1 in real summary-json output (profile-formats/samples), despite the schema's "percent" unit."""
    value = summary.get(key)
    if isinstance(value, (int, float)) and value > 0:
        return round(float(value) * 1e9), f"Summary.{key}"
    frac, total = summary.get(f"{key}_percent"), summary.get("total_time")
    if isinstance(frac, (int, float)) and isinstance(total, (int, float)) and frac > 0 and total > 0:
        if frac > 1:  # some producer wrote 0-100 after all
            frac = frac / 100
        return round(float(frac) * float(total) * 1e9), f"Summary.{key}_percent × total_time"
    return None


def _engines_from_summary(summary: dict[str, Any]) -> dict[str, int]:
    """Engine busy unions from the Summary (seconds, or fraction × total_time) for summary-only profiles."""
    out = {}
    for key, name in (("tensor", "Tensor"), ("vector", "Vector"), ("scalar", "Scalar"), ("gpsimd", "GpSimd"), ("sync", "Sync")):
        got = summary_seconds(summary, f"{key}_engine_active_time")
        if got is not None:
            out[name] = got[0]
    return out


def _dma_islands(
    profile: Profile,
    opts: MetricOptions,
    window: tuple[int, int] | None,
    core_dtype: np.dtype[Any],
    cores: list[int],
) -> tuple[tuple[I64, I64, I64], str, int, str]:
    """DMA union islands per core, with the union's source, the kernel DMA bytes and their source."""
    dma = profile.dma
    keep = np.ones(len(dma), bool)
    source = f"union of {dma.table}" if dma.table else "no DMA rows"
    if opts.kernel_dma_only and len(dma):
        keep &= ~dma.queue_type.mask_of({"instruction"}) & (dma.bytes > 4)
        source += " (queue_type != 'instruction', > 4 bytes)"
    s, e = dma.start, dma.end
    if window is not None:
        s, e = np.maximum(s, window[0]), np.minimum(e, window[1])
        keep &= s < e
    lut = {c: i for i, c in enumerate(cores)}
    pc = np.array([lut.get(int(p), 0) for p in range(int(dma.pcore.max()) + 1)] if len(dma) else [], np.int64)
    core = pc[np.maximum(dma.pcore, 0)] if len(dma) else np.zeros(0, np.int64)
    isl = iv.grouped_islands(core[keep], s[keep], e[keep], sorted_by_start=True)
    nbytes = int(dma.bytes[keep].sum())
    bytes_source = f"Σ {dma.table}.transfer_bytes" if nbytes else ""
    if not nbytes:
        total = profile.summary.get("dma_transfer_total_bytes")
        if isinstance(total, (int, float)) and total > 0:
            nbytes, bytes_source = int(total), "Summary.dma_transfer_total_bytes"
    return isl, source, nbytes, bytes_source


def _line_metrics(
    profile: Profile,
    opts: MetricOptions,
    start: I64,
    end: I64,
    in_scope: Mask,
    is_wait: Mask,
    core_idx: I64,
    nc: int,
    d_isl: tuple[I64, I64, I64],
    latency: int,
    cunion: int,
) -> tuple[list[LineMetrics], tuple[int, int, int, int]]:
    """Per-line rows, hottest first, and the unattributed bucket (count, work count, busy ns, wait ns)."""
    ins, loc = profile.instructions, profile.locations
    n = len(ins)
    li = loc.instr
    keep = in_scope[li] if li.size else np.zeros(0, bool)
    if not keep.all():
        li = li[keep]
    # Unattributed bucket: instructions in scope with no location row at all.
    has_loc = np.zeros(n, bool)
    has_loc[li] = True
    un = in_scope & ~has_loc
    un_work = un & ~is_wait
    ub = iv.grouped_union_length(core_idx[un_work], start[un_work], end[un_work], nc, sorted_by_start=True)
    uw = iv.grouped_union_length(core_idx[un & is_wait], start[un & is_wait], end[un & is_wait], nc, sorted_by_start=True)
    unattr = (int(un.sum()), int(un_work.sum()), int(ub.max(initial=0)), int(uw.max(initial=0)))
    if li.size == 0:
        return [], unattr

    fcode = loc.file.codes[keep] if not keep.all() else loc.file.codes
    lines_col = loc.line[keep] if not keep.all() else loc.line
    maxline = int(lines_col.max()) + 1
    lid, lkeys = iv.dense_ids(fcode.astype(np.int64) * maxline + lines_col)
    nl = int(lkeys.size)
    s, e, core = start[li], end[li], core_idx[li]
    wait_row = is_wait[li]
    work_row = ~wait_row

    # Busy (work) and wait unions per (line, core), in one pass: the wait flag is the lowest group bit.
    gk = lid * nc + core
    gw = gk * 2 + wait_row
    w_ig, w_a, w_b = iv.grouped_islands(gw, s, e, sorted_by_start=True)
    both = iv.sum_by_group(w_ig, w_b - w_a, nl * nc * 2).reshape(nl, nc, 2)
    busy, wait = both[:, :, 0], both[:, :, 1]
    is_busy = (w_ig & 1) == 0
    b_ig, b_a, b_b = w_ig[is_busy] >> 1, w_a[is_busy], w_b[is_busy]
    best = np.argmax(busy, axis=1) if nc > 1 else np.zeros(nl, np.int64)

    # DMA overlap: each line-core island against that core's DMA union (cumulative coverage, no loop per line).
    overlap = np.zeros(nl * nc, np.int64)
    for c in range(nc):
        m = (b_ig % nc) == c
        dm = d_isl[0] == c
        ov = iv.overlap_with(d_isl[1][dm], d_isl[2][dm], b_a[m], b_b[m])
        overlap += iv.sum_by_group(b_ig[m], ov, nl * nc)
    overlap2 = overlap.reshape(nl, nc)

    # Exclusive (additive) time: each moment of a core's attributed compute split equally among its busy lines.
    exclusive = np.zeros(nl * nc, np.float64)
    for c in range(nc if opts.exclusive_time else 0):
        m = (b_ig % nc) == c
        exclusive += np.bincount(b_ig[m], weights=iv.exclusive_shares(b_a[m], b_b[m]), minlength=nl * nc)
    exclusive2 = np.rint(exclusive).astype(np.int64).reshape(nl, nc)

    # Per-engine busy per (line, engine, core).
    ins_eng = ins.engine.codes.astype(np.int64)
    ne = max(len(ins.engine.values), 1)
    ek = (lid * ne + ins_eng[li]) * nc + core
    eng = iv.grouped_union_length(ek[work_row], s[work_row], e[work_row], nl * ne * nc, sorted_by_start=True).reshape(nl, ne, nc)

    count = np.bincount(lid, minlength=nl)
    wcount = np.bincount(lid[work_row], minlength=nl)
    per_instr = np.bincount(li, minlength=n)
    fused = np.bincount(lid[per_instr[li] > 1], minlength=nl)
    tops = _top_opcodes(ins.opcode.codes[li], ins.opcode.values, lid, nl, e - s)
    dma_bytes, dma_ns = _dma_attributed(profile, li, lid, nl)
    iters = _iterations(loc, keep, lid, nl, s, e, work_row) if (loc.iteration.codes >= 0).any() else None

    out: list[LineMetrics] = []
    for k in range(nl):
        c = int(best[k])
        b = int(busy[k, c])
        out.append(
            LineMetrics(
                file=loc.file.values[int(lkeys[k] // maxline)],
                line=int(lkeys[k] % maxline),
                instr=int(count[k]),
                work_instr=int(wcount[k]),
                busy_ns=b,
                wait_ns=int(wait[k, c]),
                share=b / latency if latency else 0.0,
                share_of_compute=b / cunion if cunion else 0.0,
                engines={ins.engine.values[x]: int(eng[k, x, c]) for x in range(len(ins.engine.values)) if eng[k, x, c]},
                dma_overlap_ns=int(overlap2[k, c]),
                exclusive_ns=int(exclusive2[k, c]),
                dma_bytes=int(dma_bytes[k]),
                dma_ns=int(dma_ns[k]),
                fused_instr=int(fused[k]),
                top_opcodes=tops[k],
                per_core_busy_ns={} if nc == 1 else {int(x): int(busy[k, x]) for x in range(nc)},
                iterations=iters[k] if iters is not None else None,
            )
        )
    out.sort(key=lambda m: (-m.busy_ns, -m.instr, m.file, m.line))
    return out, unattr


def _top_opcodes(
    op_codes: npt.NDArray[np.int32], names: tuple[str, ...], lid: I64, nl: int, dur: I64
) -> list[list[tuple[str, int, int]]]:
    nops = len(names) + 1  # the extra slot holds rows without an opcode
    key = lid * nops + (op_codes.astype(np.int64) % nops)
    cnt = np.bincount(key, minlength=nl * nops).reshape(nl, nops)
    tot = iv.sum_by_group(key, dur, nl * nops).reshape(nl, nops)
    out = []
    for k in range(nl):
        order = np.argsort(-tot[k], kind="stable")[:TOP_OPCODES]
        out.append([((*names, "?")[o], int(cnt[k, o]), int(tot[k, o])) for o in order if cnt[k, o]])
    return out


def _dma_attributed(profile: Profile, li: I64, lid: I64, nl: int) -> tuple[I64, I64]:
    """Bytes and union time of the DMA transfers each line's instructions triggered (Flow edges)."""
    dma = profile.dma
    has = dma.instr >= 0
    if not has.any() or li.size == 0:
        return np.zeros(nl, np.int64), np.zeros(nl, np.int64)
    order = np.argsort(li, kind="stable")
    sorted_instr = li[order]
    d_idx = np.flatnonzero(has)
    d_instr = dma.instr[d_idx]
    lo = np.searchsorted(sorted_instr, d_instr, side="left")
    hi = np.searchsorted(sorted_instr, d_instr, side="right")
    cnt = hi - lo
    total = int(cnt.sum())
    if total == 0:
        return np.zeros(nl, np.int64), np.zeros(nl, np.int64)
    rep = np.repeat(d_idx, cnt)
    pos = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(lo, cnt)
    line = lid[order[pos]]
    nbytes = iv.sum_by_group(line, dma.bytes[rep], nl)
    ns = iv.grouped_union_length(line, dma.start[rep], dma.end[rep], nl, sorted_by_start=True)
    return nbytes, ns


def _iterations(
    loc: Locations, keep: Mask, lid: I64, nl: int, s: I64, e: I64, work_row: Mask
) -> list[list[dict[str, Any]] | None]:
    """Busy time and instruction count per (line, loop-iteration label)."""
    it = loc.iteration.codes[keep] if not keep.all() else loc.iteration.codes
    has = it >= 0
    nit = len(loc.iteration.values)
    key = np.where(has, lid * nit + it, -1)
    idx, keys = iv.dense_ids(np.where(has, key, 0))
    ng = int(keys.size)
    sel = has & work_row
    busy = iv.grouped_union_length(idx[sel], s[sel], e[sel], ng, sorted_by_start=True)
    cnt = np.bincount(idx[has], minlength=ng)
    out: list[list[dict[str, Any]] | None] = [None] * nl
    for g in range(ng):
        if not cnt[g]:
            continue
        line, label = int(keys[g] // nit), loc.iteration.values[int(keys[g] % nit)]
        bucket = out[line]
        if bucket is None:
            bucket = out[line] = []
        bucket.append({"label": label, "busy_ns": int(busy[g]), "instr": int(cnt[g])})
    for k, bucket in enumerate(out):
        if bucket is not None and len(bucket) > MAX_ITERATIONS_PER_LINE:
            bucket.sort(key=lambda d: -d["busy_ns"])
            out[k] = bucket[:MAX_ITERATIONS_PER_LINE]
    return out
