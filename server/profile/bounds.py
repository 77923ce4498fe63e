"""Performance bounds of a kernel (profile-formats/bounds.md §2), for measured and estimated profiles alike.

Three families of kernel times, each a lower bound reached by removing one kind of overhead: memory (DMA idle
time, DMA inefficiency, excess HBM traffic), compute (Tensor-engine idle time, under-utilisation, transposes)
and pipeline (serialisation). The window is the first to the last kernel DMA packet (bounds.md §1); an
estimated profile's is its execution window, the estimate's kernel time. Every physical core is bounded
separately (the headline is the core with the longest window). Gaps are overheads, not predicted savings;
the bottleneck-aware speedup of a family is ``total / max(bound, slowest engine the improvement does not
touch)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from nki_studio.model.targets import limits_for, parse_generation
from nki_studio.profile import intervals as iv
from nki_studio.profile.model import WAIT_OPCODES, Profile
from nki_studio.protocol.analysis import BoundJson, BoundsJson

Mask = npt.NDArray[np.bool_]
DMA = "DMA"

# Each bound once: its plain name (the panel, the CLI) and what the gap *to* it means (bounds.md §2, "gap to the
# previous one means"); the technical name stays the key and the detail.
BOUND_WORDS: dict[str, tuple[str, str]] = {
    "memory_bound": ("DMA never idle", "DMA idle time"),
    "memory_bound_ideal": ("DMA at full efficiency", "DMA inefficiency (small descriptors, transposed DMA)"),
    "memory_bound_ideal_no_reloads": (
        "DMA at full efficiency, each input read once",
        "excess HBM traffic: input reloads and spills",
    ),
    "compute_bound": ("Tensor engine never idle", "Tensor-engine idle time"),
    "compute_bound_ideal_flops": (
        "Tensor engine fully used",
        "Tensor-engine under-utilisation (undersized tiles, weight loads, throttling)",
    ),
    "compute_bound_ideal_useful_flops": (
        "Tensor engine fully used, no transposes",
        "Tensor-engine time spent on transposes",
    ),
    "perfect_pipeline": ("engines fully overlapped", "serialisation between engines"),
}


@dataclass
class Bound:
    """One bound: its time, the gap from the previous bound of its family, and the speedup of reaching it."""

    name: str  # the technical name (bounds.md), a stable key
    ns: float | None  # None: the profile lacks what it needs (``missing`` says what)
    gap_ns: float | None
    gap_means: str
    speedup: float | None  # bottleneck-aware; None where the family is not the bottleneck's (bounds.md §2)
    missing: str = ""

    def to_dict(self) -> BoundJson:
        """JSON-ready dict (``analysis_json.BoundJson``)."""
        return {
            "name": self.name,
            "label": BOUND_WORDS[self.name][0],
            "ns": self.ns,
            "gap_ns": self.gap_ns,
            "gap_means": self.gap_means,
            "speedup": self.speedup,
            "missing": self.missing,
        }


@dataclass
class Family:
    """A family of bounds, ordered from the total time down."""

    name: str  # "memory", "compute", "pipeline"
    bounds: list[Bound]


@dataclass
class Peaks:
    """Per-core peaks with where each came from."""

    dma_bytes_per_s: float
    dma_source: str
    te_flops_per_s: float
    te_source: str


@dataclass
class Bounds:
    """The bounds of one core of one profile."""

    provenance: str  # "measured" or "estimated"
    core: int
    window: tuple[int, int]
    window_source: str
    total_ns: int
    engines: dict[str, int]  # engine -> busy ns in the window; "DMA" = the union of kernel DMA
    bottleneck: str
    families: list[Family]
    dma_bytes: int
    necessary_bytes: int | None
    hardware_flops: int | None
    transpose_flops: int | None
    peaks: Peaks
    notes: list[str] = field(default_factory=list)
    other_cores: list[Bounds] = field(default_factory=list)

    def bound(self, name: str) -> Bound:
        """The bound called ``name`` (KeyError when there is none)."""
        for fam in self.families:
            for b in fam.bounds:
                if b.name == name:
                    return b
        raise KeyError(name)

    def to_dict(self) -> BoundsJson:
        """JSON-ready dict (``analysis_json.BoundsJson``)."""
        # built field by field, not with ``dataclasses.asdict``: its generic deep copy was a tenth of the
        # estimate stage of a small kernel (benchmarks/estimate_overhead_bench.py); every value here is a
        # str, number or None, so copying the containers copies everything.
        return {
            "provenance": self.provenance,
            "core": self.core,
            "window": list(self.window),  # a JSON array, in memory as after a round trip
            "window_source": self.window_source,
            "total_ns": self.total_ns,
            "engines": dict(self.engines),
            "bottleneck": self.bottleneck,
            "families": [{"name": f.name, "bounds": [b.to_dict() for b in f.bounds]} for f in self.families],
            "dma_bytes": self.dma_bytes,
            "necessary_bytes": self.necessary_bytes,
            "hardware_flops": self.hardware_flops,
            "transpose_flops": self.transpose_flops,
            "peaks": {
                "dma_bytes_per_s": self.peaks.dma_bytes_per_s,
                "dma_source": self.peaks.dma_source,
                "te_flops_per_s": self.peaks.te_flops_per_s,
                "te_source": self.peaks.te_source,
            },
            "notes": list(self.notes),
            "other_cores": [c.to_dict() for c in self.other_cores],
        }


def peaks(profile: Profile, generation: str = "trn2") -> Peaks:
    """DMA and Tensor-engine peaks from the profile's Metadata (bounds.md §1), else the target's."""
    meta = profile.metadata
    lim = limits_for(parse_generation(str(meta.get("target") or generation)))
    bw = meta.get("dma_ddr_bandwidth")
    if isinstance(bw, (int, float)) and bw > 0:
        dma, dma_src = float(bw), "Metadata.dma_ddr_bandwidth"
    else:
        dma, dma_src = lim.dma_bytes_per_ns * 1e9, f"{lim.generation.value} DMA bandwidth (model/targets.py)"
    rows, cols, ghz = (
        meta.get(k) for k in ("tensor_engine_num_rows", "tensor_engine_num_cols", "tensor_engine_clock_freq")
    )
    if all(isinstance(v, (int, float)) and v > 0 for v in (rows, cols, ghz)):
        te = float(rows) * float(cols) * 2 * float(ghz) * 1e9  # type: ignore[arg-type]
        te_src = "Metadata tensor_engine rows × cols × 2 × clock"
    else:
        te = lim.partitions * lim.matmul_stationary_free_max * 2 * lim.clock_ghz["tensor"] * 1e9
        te_src = f"{lim.generation.value} PE array rows × cols × 2 × clock (model/targets.py)"
    return Peaks(dma, dma_src, te, te_src)


def kernel_dma_mask(profile: Profile) -> Mask:
    """Kernel DMA transfers: ``queue_type != 'instruction'`` and more than 4 bytes (bounds.md §1)."""
    dma = profile.dma
    return np.asarray(~dma.queue_type.mask_of({"instruction"}) & (dma.bytes > 4), bool)


def _window(profile: Profile, kernel: Mask, core: Mask | None) -> tuple[tuple[int, int], str]:
    dma, ins = profile.dma, profile.instructions
    if profile.provenance == "estimated" and profile.executions:
        # the estimate's kernel time: its instructions and the per-execution fixed cost it adds around them,
        # which a measured profile's first-to-last DMA window leaves out of the profile's rows
        ex = profile.executions[0]
        return (ex.start, ex.end), "the estimate's execution window (with its per-execution fixed cost)"
    sel = kernel if core is None else kernel & core
    if sel.any():
        return (int(dma.start[sel].min()), int(dma.end[sel].max())), "first to last kernel DMA transfer"
    if len(ins):
        return (int(ins.start.min()), int(ins.end.max())), "first to last instruction (no kernel DMA)"
    return (0, 0), "empty profile"


def _busy(start: npt.ArrayLike, end: npt.ArrayLike, w: tuple[int, int]) -> int:
    s, e, keep = iv.clip(start, end, w[0], w[1])
    return iv.union_length(s[keep], e[keep]) if keep.any() else 0


def _family(
    total: float, names: list[str], values: list[float | None], speedups: list[float | None]
) -> Family:
    out: list[Bound] = []
    prev = float(total)
    prev_known: float | None = prev
    for name, ns, sp in zip(names, values, speedups, strict=True):
        if ns is not None and prev_known is not None and ns > prev_known:
            # A lower bound above the time it bounds: the recorded bytes or FLOPs, or the peak they are divided
            # by, contradict the measured times. Withheld rather than shown with a negative gap.
            why = (
                f"{name} ({ns:.0f} ns) exceeds the {out[-1].name if out else 'total time'} it bounds "
                f"({prev_known:.0f} ns): the recorded bytes or FLOPs, or the peak, contradict the measured times"
            )
            out.append(Bound(name, None, None, BOUND_WORDS[name][1], None, missing=why))
            continue
        gap = None if ns is None or prev_known is None else prev_known - ns
        out.append(Bound(name, ns, gap, BOUND_WORDS[name][1], sp))
        prev_known = ns
    return Family("", out)


def _necessary_on_core(profile: Profile, pcore: int) -> int | None:
    """Bytes of kernel inputs and outputs one core moves, each byte once: the union of the HBM ranges of its
    input loads and output stores (estimated profiles know them); None when the profile has no ranges."""
    dma = profile.dma
    if dma.hbm_range is None or dma.source is None or dma.dest is None:
        return None
    io = (dma.source.mask_of({"[[INPUT]]"}) | dma.dest.mask_of({"[OUTPUT]"})) & (dma.pcore == pcore)
    io &= dma.hbm_range[:, 0] >= 0
    rng = dma.hbm_range[io]
    # one grouped union, not one per allocation
    allocations, alloc = np.unique(rng[:, 0], return_inverse=True)
    return int(iv.grouped_union_length(alloc.reshape(-1), rng[:, 1], rng[:, 2], allocations.size).sum())


def _core_bounds(profile: Profile, pcore: int | None, pk: Peaks) -> Bounds:
    ins, dma = profile.instructions, profile.dma
    kernel = kernel_dma_mask(profile)
    on_core_dma = None if pcore is None else dma.pcore == pcore
    on_core_ins = None if pcore is None else ins.pcore == pcore
    window, window_source = _window(profile, kernel, on_core_dma)
    total = window[1] - window[0]
    notes: list[str] = []

    work = ~ins.opcode.mask_of(WAIT_OPCODES)
    if on_core_ins is not None:
        work &= on_core_ins
    # every engine's busy union in one grouped pass (rows of no engine, code -1, left out)
    names = ins.engine.values
    s, e, keep = iv.clip(ins.start, ins.end, window[0], window[1])
    keep &= work & (ins.engine.codes >= 0)
    per_engine = iv.grouped_union_length(ins.engine.codes[keep], s[keep], e[keep], len(names)).tolist()
    engines: dict[str, int] = {name: busy for name, busy in zip(names, per_engine, strict=True) if busy}
    dsel = kernel if on_core_dma is None else kernel & on_core_dma
    memory_bound = _busy(dma.start[dsel], dma.end[dsel], window)
    engines[DMA] = memory_bound
    dma_bytes = int(dma.bytes[dsel].sum())  # the window spans every kernel transfer
    if not dsel.any():
        notes.append("no kernel DMA transfers in the profile: the memory family is not defined")

    tensors = [t for t in profile.tensors if t.role in ("IN", "OUT")]
    necessary = sum(t.size for t in tensors) if tensors else None
    if necessary is None:
        notes.append(
            "kernel inputs/outputs unknown (no TensorInfo table): memory_bound_ideal_no_reloads needs their sizes"
        )
    elif pcore is not None:  # one of several cores: only the bytes this core must move count
        necessary = _necessary_on_core(profile, pcore)
        if necessary is None:
            notes.append(
                "memory_bound_ideal_no_reloads: the kernel inputs/outputs are not known per physical core"
            )

    hw = tr = None
    if ins.flops is not None:
        te = ins.engine.mask_of({"Tensor"}) & work & (ins.start >= window[0]) & (ins.start < window[1])
        hw = int(ins.flops[te].sum())
        tr = int(ins.flops[te & ins.transpose].sum()) if ins.transpose is not None else None
        if tr is None:
            notes.append("no tensor_instruction_type column: transpose FLOPs unknown")
    else:
        notes.append("no Instruction.adjusted_flops column: the compute family's ideal bounds need FLOPs")

    te_busy = engines.get("Tensor", 0)
    perfect = max(engines.values(), default=0)
    bottleneck = max(engines, key=lambda k: engines[k]) if perfect else DMA

    def untouched(touched: str) -> int:
        return max((v for k, v in engines.items() if k != touched), default=0)

    def speed(bound: float | None, touched: str) -> float | None:
        if bound is None or bottleneck not in (DMA, "Tensor"):
            return None  # Vector/Scalar/GpSimd bound: only the pipeline gap is defined (bounds.md §2)
        floor = max(bound, untouched(touched))
        return total / floor if floor > 0 else None

    mem_values: list[float | None] = [
        float(memory_bound) if dsel.any() else None,
        dma_bytes / pk.dma_bytes_per_s * 1e9 if dsel.any() else None,
        necessary / pk.dma_bytes_per_s * 1e9 if necessary is not None and dsel.any() else None,
    ]
    comp_values: list[float | None] = [
        float(te_busy),
        hw / pk.te_flops_per_s * 1e9 if hw is not None else None,
        (hw - tr) / pk.te_flops_per_s * 1e9 if hw is not None and tr is not None else None,
    ]
    memory = _family(
        total,
        ["memory_bound", "memory_bound_ideal", "memory_bound_ideal_no_reloads"],
        mem_values,
        [speed(v, DMA) for v in mem_values],
    )
    memory.name = "memory"
    compute = _family(
        total,
        ["compute_bound", "compute_bound_ideal_flops", "compute_bound_ideal_useful_flops"],
        comp_values,
        [speed(v, "Tensor") for v in comp_values],
    )
    compute.name = "compute"
    pipeline = _family(total, ["perfect_pipeline"], [float(perfect)], [total / perfect if perfect else None])
    pipeline.name = "pipeline"
    for fam in (memory, compute):
        for b in fam.bounds:
            if b.ns is None and not b.missing:
                b.missing = next((n for n in notes if b.name in n or fam.name in n), "not in the profile")
    if bottleneck not in (DMA, "Tensor"):
        notes.append(
            f"the bottleneck is the {bottleneck} engine: only the pipeline gap is defined, the memory and "
            "compute speedups are not"
        )
    return Bounds(
        provenance=profile.provenance,
        core=-1 if pcore is None else pcore,
        window=window,
        window_source=window_source,
        total_ns=total,
        engines=engines,
        bottleneck=bottleneck,
        families=[memory, compute, pipeline],
        dma_bytes=dma_bytes,
        necessary_bytes=necessary,
        hardware_flops=hw,
        transpose_flops=tr,
        peaks=pk,
        notes=notes,
    )


def compute_bounds(profile: Profile, generation: str = "trn2") -> Bounds:
    """The bounds of ``profile`` (bounds.md §2): per physical core, the longest-window core as the headline
    and the others in ``other_cores``."""
    pk = peaks(profile, generation)
    cores = sorted(set(profile.instructions.pcore.tolist()) | set(profile.dma.pcore.tolist()))
    if len(cores) <= 1:
        b = _core_bounds(profile, None, pk)
        b.core = cores[0] if cores else 0
        return b
    per = [_core_bounds(profile, c, pk) for c in cores]
    head = max(per, key=lambda b: b.total_ns)
    head.other_cores = [b for b in per if b is not head]
    head.notes.append(f"{len(cores)} physical cores, bounded separately; showing core {head.core}")
    return head
