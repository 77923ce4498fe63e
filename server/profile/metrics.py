"""Per-line and per-kernel metrics of a profile, exactly as ``profile-formats/metrics.md`` defines them.

Everything is computed with whole-array NumPy operations over the columnar ``Profile`` (no Python loop per
instruction), so a million-instruction profile takes a fraction of a second. Scope (metrics.md §1): one
execution window at a time and every physical core (``pcore_idx``) separately; a line's headline numbers come
from the core where it is busiest, never from one union across cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from nki_studio.profile import intervals as iv
from nki_studio.profile.linemetrics import LineMetrics, line_metrics
from nki_studio.profile.model import SETUP_OPCODES, WAIT_OPCODES, Profile, ProfileError, sort_by_start
from nki_studio.profile.roofline import Roofline, RooflineOptions, TraceFlops, roofline_point
from nki_studio.profile.timeline import engine_timeline
from nki_studio.protocol.profile import KernelMetricsJson
from nki_studio.protocol.simulation import EngineTrack

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class MetricOptions:
    """Knobs of the metric computation; the defaults follow metrics.md."""

    wait_opcodes: frozenset[str] = WAIT_OPCODES
    setup_opcodes: frozenset[str] = SETUP_OPCODES
    execution: int | None = (
        None  # ExecutionInfo.execution_index; None: the first execution (or whole profile)
    )
    kernel_dma_only: bool = True  # drop queue_type 'instruction' and transfers of <= 4 bytes (metrics.md §4)
    exclusive_time: bool = True  # the additive view (metrics.md §3); one extra sort of all line islands
    roofline: RooflineOptions = field(default_factory=RooflineOptions)


@dataclass
class KernelMetrics:
    """Kernel-level decomposition (metrics.md §2, §4, §5)."""

    latency_ns: int
    latency_source: str  # which denominator, e.g. "Summary.total_exec_time"
    dma_union_ns: int
    dma_union_source: str
    compute_union_ns: int
    # None when the profile has no DMA rows (DMA time from the Summary): the overlap is not recorded, so neither
    # is the idle time; a number here would break idle >= 0.
    intersection_ns: int | None
    dma_or_compute_ns: int | None
    idle_ns: int | None
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
    timeline: list[EngineTrack]  # per-engine busy intervals from the kernel start (profile.timeline)

    def to_dict(self) -> KernelMetricsJson:
        """JSON-ready dict; its keys are the fields (tests/protocol checks that they agree)."""
        return cast(
            KernelMetricsJson,
            {**self.__dict__, "roofline": self.roofline.to_dict() if self.roofline else None},
        )


@dataclass
class ProfileMetrics:
    """Result of ``compute_metrics``: per-line rows (hottest first) and the kernel summary."""

    lines: list[LineMetrics]
    kernel: KernelMetrics


def _scope(
    profile: Profile, options: MetricOptions
) -> tuple[Mask | None, int | None, tuple[int, int] | None, list[str]]:
    """Which instructions count: the selected execution window, or everything."""
    notes: list[str] = []
    if not profile.executions:
        return None, None, None, notes
    wanted = options.execution if options.execution is not None else profile.executions[0].index
    match = [x for x in profile.executions if x.index == wanted]
    if not match:
        raise ProfileError(
            f"execution {wanted} is not in this profile (executions: {[x.index for x in profile.executions]})"
        )
    ex = match[0]
    if len(profile.executions) > 1:
        notes.append(f"profile has {len(profile.executions)} executions; showing execution {ex.index}")
    ins = profile.instructions
    mask = (
        ins.execution == ex.index
        if ins.execution is not None
        else (ins.start >= ex.start) & (ins.start < ex.end)
    )
    return None if mask.all() else mask, ex.index, (ex.start, ex.end), notes


def _too_short(
    latency: int, source: str, needed: int, span: tuple[int, int] | None, what: str, notes: list[str]
) -> bool:
    """Whether a Summary latency is shorter than a measured union it must hold (``needed``), which would give a
    negative idle time or a share above 1; noted, so the caller takes the rows' span instead."""
    if not (source.startswith("Summary.") and latency < needed and span is not None):
        return False
    notes.append(
        f"{source} ({latency} ns) is shorter than the measured {what} ({needed} ns); the span of the rows is "
        "the latency instead"
    )
    return True


def _latency(
    profile: Profile, window: tuple[int, int] | None, span: tuple[int, int] | None, summary: bool = True
) -> tuple[int, str]:
    """The kernel latency and the name of the denominator used (metrics.md §2); ``summary=False`` skips the
    Summary's totals."""
    summ = profile.summary if summary else {}
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
    start, end = _clipped(ins.start, ins.end, window)
    is_wait = ins.opcode.mask_of(opts.wait_opcodes)
    cores_present, core_idx = _cores(ins.pcore)
    nc = len(cores_present)
    # Rows no union may see: out of scope, or empty after clipping (None: there are none).
    dead: Mask | None = None if scope is None else ~scope
    empty = end <= start
    if empty.any():
        dead = empty if dead is None else dead | empty
    del empty

    # --- kernel level ---------------------------------------------------------------------------
    # Engine islands first; the compute union per core is then the union of those (far fewer) islands.
    ne = max(len(ins.engine.values), 1)
    ek = iv.group_key(np.maximum(ins.engine.codes, 0), (nc, core_idx), size=ne * nc + 1)
    ek[is_wait if dead is None else is_wait | dead] = ne * nc
    scratch = iv.Scratch()  # the row-sized gather buffers every union pass below reuses
    e_isl = iv.islands_by_group(ek, start, end, ne * nc, scratch)
    del ek
    eng_busy = iv.sum_by_group(e_isl[0], e_isl[2] - e_isl[1], ne * nc).reshape(ne, nc)
    c_isl = iv.grouped_islands(e_isl[0] % nc, e_isl[1], e_isl[2])
    compute_per_core = iv.sum_by_group(c_isl[0], c_isl[2] - c_isl[1], nc)
    d_isl, dma_source, dma_bytes, bytes_source, dma_rows = _dma_islands(profile, opts, window, cores_present)
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
        inter: int | None = None
    else:
        inter = int(inter_per_core[main_core]) if nc else 0
    span = _span(start, end, d_isl) if scope is None else _span(start[scope], end[scope], d_isl)
    latency, latency_source = _latency(profile, window, span)
    room = span[1] - span[0] if span is not None else latency
    if inter is None and room and dunion > room:  # the Summary's DMA time cannot lie inside the kernel
        notes.append(
            f"{dma_source.split(' (')[0]} ({dunion} ns) is longer than the kernel; DMA time not shown"
        )
        dunion, dma_source = 0, "not recorded (the Summary's DMA time does not fit the kernel)"
    active = max(dunion, cunion) if inter is None else dunion + cunion - inter
    if _too_short(latency, latency_source, active, span, "DMA ∪ compute", notes):
        latency, latency_source = _latency(profile, window, span, summary=False)

    names = ins.engine.values
    engines = {names[e]: int(eng_busy[e, main_core]) for e in range(len(names)) if eng_busy[e].any()}
    if not engines and profile.summary:
        engines = _engines_from_summary(profile.summary)
        for name in [e for e, v in engines.items() if latency and v > latency]:
            notes.append(
                f"Summary's {name} engine time is longer than the latency ({latency_source}); not shown"
            )
            del engines[name]
    perfect = max([*engines.values(), dunion], default=0)
    n_in = n if scope is None else int(scope.sum())
    n_work = n_in - int(is_wait.sum() if scope is None else (is_wait & scope).sum())

    # --- per line ---------------------------------------------------------------------------------
    loc = profile.locations
    lines, unattr = line_metrics(
        profile,
        dma_rows,
        start,
        end,
        scope,
        is_wait,
        core_idx,
        nc,
        d_isl,
        latency,
        cunion,
        opts.exclusive_time,
        scratch,
    )
    longest_wait = max([unattr[3], *(ln.wait_ns for ln in lines)])
    if _too_short(latency, latency_source, longest_wait, span, "semaphore wait of one line", notes):
        latency, latency_source = _latency(profile, window, span, summary=False)
        for ln in lines:
            ln.share = ln.busy_ns / latency if latency else 0.0
    roof = roofline_point(profile, opts.roofline, trace_flops, latency, dma_bytes)
    origin = window[0] if window is not None else span[0] if span is not None else 0
    tracks = engine_timeline(e_isl, list(names), nc, main_core, d_isl, origin, latency) if nc else []
    if not loc.instr.size and n:
        notes.append(NO_SOURCE_HELP)
    kernel = KernelMetrics(
        latency_ns=latency,
        latency_source=latency_source,
        dma_union_ns=dunion,
        dma_union_source=dma_source,
        compute_union_ns=cunion,
        intersection_ns=inter,
        dma_or_compute_ns=None if inter is None else dunion + cunion - inter,
        idle_ns=None if inter is None else latency - (dunion + cunion - inter) if latency else 0,
        engines=engines,
        perfect_pipeline_ns=perfect,
        serialization_gap_ns=latency - perfect if latency else 0,
        instr=n_in,
        work_instr=n_work,
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
        timeline=tracks,
    )
    return ProfileMetrics(lines, kernel)


NO_SOURCE_HELP = (
    "This profile has no NKI source locations (no KernelInstructions table and no "
    "Instruction.nki_source_location / bir_debug_info_source_location values), so time cannot be put on "
    "source lines. Recompile the kernel with NEURON_FRAMEWORK_DEBUG=1 and NKI_DEBUG_INFO=True set (delete the "
    "compiler cache first), re-capture with `neuron-explorer capture`, and process it with "
    "`neuron-explorer view ... --nki-source-root <dir with the kernel sources>`."
)


def _cores(pcore: npt.NDArray[np.int32]) -> tuple[list[int], I64 | None]:
    """Distinct physical cores and each row's dense core index (None when there is only one core)."""
    if pcore.size == 0 or int(pcore.min()) == int(pcore.max()):
        return [max(int(pcore[0]), 0) if pcore.size else 0], None
    pc = np.maximum(pcore.astype(np.int64), 0)
    ids, keys = iv.dense_ids(pc)
    if keys.size == 1:
        return [int(keys[0])], None
    return [int(k) for k in keys], ids


def _clipped(start: I64, end: I64, window: tuple[int, int] | None) -> tuple[I64, I64]:
    """Instruction times clipped to the execution window; the arrays themselves when nothing sticks out."""
    if window is None or start.size == 0:
        return start, end
    w0, w1 = window
    if int(start.min()) < w0:
        start = np.maximum(start, w0)
    if int(end.max()) > w1:
        end = np.minimum(end, w1)
    return start, end


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
    for key, name in (
        ("tensor", "Tensor"),
        ("vector", "Vector"),
        ("scalar", "Scalar"),
        ("gpsimd", "GpSimd"),
        ("sync", "Sync"),
    ):
        got = summary_seconds(summary, f"{key}_engine_active_time")
        if got is not None:
            out[name] = got[0]
    return out


def _dma_islands(
    profile: Profile,
    opts: MetricOptions,
    window: tuple[int, int] | None,
    cores: list[int],
) -> tuple[tuple[I64, I64, I64], str, int, str, tuple[Mask, I64, I64]]:
    """DMA union islands per core, with the union's source, the kernel DMA bytes and their source, and the rows
    they count (mask, start and end clipped to the window): what the lines' attributed DMA counts too."""
    dma = profile.dma
    keep = np.ones(len(dma), bool)
    source = f"union of {dma.table}" if dma.table else "no DMA rows"
    # the kernel-DMA filter separates a measured profile's infrastructure rows (instruction fetch, semaphore
    # writes) from the kernel's; an estimated profile has none, and its tiny transfers are the kernel's own
    if opts.kernel_dma_only and len(dma) and profile.provenance != "estimated":
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
    return isl, source, nbytes, bytes_source, (keep, s, e)
