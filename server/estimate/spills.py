"""SBUF spills: when the data a program keeps live in SBUF exceeds its capacity, the compiler stores part of it to
HBM and loads it back before its next use ("the Neuron compiler will insert the necessary spills or refills",
hardware.md §5, memory-hierarchy-overview; measured profiles show them as DMA on spill queues such as
``qScalarSpillReload0`` with ``VIRTUAL`` memory, shared/profile-formats/parquet-schema.md and bounds.md §3.2).

The model (docs/cost-model.md, "SBUF spills"), per (rank, core) program, in trace order:

* An SBUF allocation is live from its first to its last access, as the simulator's capacity check counts it
  (``sim.memory``), with the bytes per partition its accesses reach (the trace records footprints, not allocation
  sizes: inferred to be the allocation's size, as a tile is written whole at least once). Each block of a legacy
  block tensor (``nl.par_dim`` not first; ``Operand.block_bytes``) is an allocation of its own, of one block's
  bytes: "the compiler analyzes the memory dependency and allocates physical address to each tiles [...] the
  physical tiles may not be alive in the memory simultaneously" (NKI Block Dimension Migration Guide, "What are
  block dimensions?"); a legacy result assigned into a block is recorded writing it (``sim.legacy.assignment``),
  so a block is live from its first write to its last read. A legacy kernel's merged load
  (``estimate.merged_loads``) has its readers read the kept copy, so the kept copy is live until their last read.
* Where the live bytes exceed the capacity (``TargetLimits.sbuf_bytes_per_partition``), whole allocations
  the instruction does not access are stored to HBM (a *save*) until the rest fits, the one used again furthest
  in the future first (Belady's choice), and each is loaded back (a *reload*) just before the next instruction
  that accesses it. Neither the choice nor the granularity is documented (inferred): an allocator that colours
  live ranges ("the compiler allocates the tiles with graph coloring", ``nki.compiler.Allocation``, Neuron
  2.33) spills whole ones, and the one measured spill we can reproduce is whole tensors (AccelOpt mamba:
  spill_save_bytes 55,050,240 = 15 [128, 7168] FP32 tensors; 16 saves of one such tensor here).
* A save reads its victim (so it waits for the victim's last write) and the allocations that need the room (so
  they wait for it); a reload reads the save's HBM bytes and writes its victim (so the next access waits for
  it). Both are DMA transfers of the victim's partitions, attributed to the line of the instruction whose output
  was spilled (its first access), as measured profiles attribute them, through an HBM spill tensor
  (``VIRTUAL_spill``, which the estimated profile names like a measured spill buffer) of their own per program
  and engine of that instruction, so one queue per direction and engine (the DMA queue is the HBM tensor's:
  ``trace_plan``): measured profiles name their spill queues by engine (``qSyncSpillReload0`` and
  ``qVectorSpillReload0`` in the fused Mamba tutorial's mamba_v2 profile, ``qScalarSpillReload0`` in AccelOpt's;
  which engine issues which spill is not documented, the producer's is inferred). On one queue per program,
  bmm_softmax's 2,639 saves and 2,639 reloads (1,378 MB; 1,511 MB measured) ran in order behind each other:
  latency 1.17 of the measurement, 1.10 with a queue per engine.

PSUM is not spilled: a program-order PSUM peak over the capacity is what kernels that run on hardware do (the
simulator's note in ``sim.memory``: nki-library's MoE kernels accumulate 12 PSUM banks' worth of matmul tiles),
so the compiler reorders there, and a DMA cannot save a PSUM accumulation group mid-way (inferred).
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from nki_studio.estimate.columns import group
from nki_studio.model.targets import TargetLimits
from nki_studio.sim.trace import ENGINES, Operand, TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, as_compact

I64 = npt.NDArray[np.int64]

SPILL_TENSOR = "VIRTUAL_spill"  # "VIRTUAL" memory is how Neuron Explorer names a compiler spill buffer
SAVE_OP = "spill.save"
RELOAD_OP = "spill.reload"


@dataclass(frozen=True)
class Transfer:
    """One spill transfer, inserted before trace event ``before``: allocation ``victim`` (a row of
    ``_Allocations``, ``nbytes`` per partition), saved or reloaded; a save also names the allocations needing
    the room (``room``)."""

    before: int
    save: bool
    victim: int
    nbytes: int
    room: tuple[int, ...] = ()


@dataclass
class _Allocations:
    """The SBUF allocations of one trace, one row each: its program, storage number and first byte in that
    storage (a block of a block tensor starts at its block's bytes, any other allocation at 0), first and last
    accessing event, bytes per partition, partitions; and the accesses (``ev``, in event order, each of
    allocation ``key``) they come from. A row no access names is never live."""

    program: I64
    storage: I64
    base: I64
    first: I64
    last: I64
    size: I64
    parts: I64
    ev: I64
    key: I64


def _blocks(block: I64, lo: I64, hi: I64) -> tuple[I64, I64]:
    """(how many blocks, first block) each SBUF operand's bytes ``[lo, hi)`` reach in a block tensor whose
    blocks are ``block`` bytes per partition (1 block, block 0 where ``block`` is 0: the storage is one tile)."""
    unit = np.maximum(block, 1)
    start = np.where(block > 0, lo // unit, 0)
    return np.where(block > 0, (hi - 1) // unit - start + 1, 1), start


def _allocations(trace: CompactTrace, programs: I64) -> _Allocations | None:
    """The SBUF allocations of ``trace`` (None when it has none): each storage, or each block of a legacy block
    tensor (``Operand.block_bytes``: the compiler allocates each block's tile apart, live from its first to its
    last access, MIG "What are block dimensions?"), per program. An operand reaching several blocks accesses
    each of them. With one program and no block tensor the storage number is the allocation (the recorder
    numbers storages densely), so every step is a whole-array one without grouping."""
    buffers = trace.operand_table("buffer")
    if "sbuf" not in buffers:
        return None
    storage = trace.operand("storage")
    b0, b1 = trace.operand("byte_start"), trace.operand("byte_end")
    rows = np.flatnonzero((trace.operand("buffer") == buffers.index("sbuf")) & (storage >= 0) & (b1 > b0))
    if not rows.size:
        return None
    lo, hi = b0[rows].astype(np.int64), b1[rows].astype(np.int64)
    block = trace.operand("block_bytes")[rows].astype(np.int64)
    count, start = _blocks(block, lo, hi)
    if (count > 1).any():  # one access per block reached, in order (rows stay in event order)
        at = np.repeat(np.arange(rows.size), count)
        start = start[at] + np.arange(at.size) - np.repeat(np.cumsum(count) - count, count)
        rows, lo, hi, block = rows[at], lo[at], hi[at], block[at]
    ev = trace.operand_event()[rows].astype(np.int64)
    st = storage[rows].astype(np.int64)
    if programs.any() or block.any():
        key, reps = group([programs[ev], st, start])
        program, number, base = programs[ev[reps]], st[reps], start[reps] * block[reps]
    else:
        key = st
        number = np.arange(int(st.max()) + 1, dtype=np.int64)
        program = base = np.zeros(number.size, np.int64)
    n = number.size
    first = np.full(n, np.iinfo(np.int64).max, np.int64)
    last = np.full(n, -1, np.int64)
    first[key[::-1]] = ev[::-1]  # rows are in event order: the last assignment wins
    last[key] = ev
    size = np.zeros(n, np.int64)
    parts = np.zeros(n, np.int64)
    # a block's size is the block (its tile), anything else's the bytes its accesses reach
    np.maximum.at(size, key, np.where(block > 0, block, hi))
    np.maximum.at(parts, key, trace.operand("part_end")[rows].astype(np.int64))
    return _Allocations(program, number, base, first, last, size, parts, ev, key)


@dataclass
class _Accesses:
    """Which events access which allocation (``access[at[a]:at[a + 1]]``, in order): built only for a program
    that overflows."""

    at: I64
    access: I64

    @staticmethod
    def of(a: _Allocations) -> _Accesses:
        order = np.argsort(a.key, kind="stable")  # stable: each allocation's events stay in order
        at = np.zeros(a.first.size + 1, np.int64)
        np.cumsum(np.bincount(a.key, minlength=a.first.size), out=at[1:])
        return _Accesses(at, a.ev[order])


@dataclass
class _Sweep:
    """The eviction walk of one program (``transfers``): the allocations in HBM, and those by next access."""

    a: _Allocations
    x: _Accesses
    cap: int
    transfers: list[Transfer] = field(default_factory=list)
    evicted: dict[int, int] = field(default_factory=dict)  # allocation -> bytes per partition in HBM
    due: list[tuple[int, int]] = field(default_factory=list)  # heap of (next access, evicted allocation)

    def next_access(self, alloc: int, after: int) -> int:
        """The first event after ``after`` that accesses ``alloc`` (-1: none)."""
        lo, hi = int(self.x.at[alloc]), int(self.x.at[alloc + 1])
        j = bisect.bisect_right(self.x.access, after, lo, hi)
        return int(self.x.access[j]) if j < hi else -1

    def accessed(self, event: int) -> set[int]:
        """The allocations ``event`` accesses."""
        lo, hi = np.searchsorted(self.a.ev, [event, event + 1])
        return {int(x) for x in self.a.key[lo:hi]}

    def step(self, event: int, live: int, active: list[int]) -> None:
        """Event ``event`` with ``live`` bytes per partition live in program order and allocations ``active``
        live there: reload what it accesses, then evict what it does not access until the rest fits."""
        a, evicted = self.a, self.evicted
        for alloc in [x for x in evicted if a.last[x] < event]:  # died in HBM: never reloaded
            del evicted[alloc]
        touched = self.accessed(event)
        for alloc in sorted(touched & evicted.keys()):
            self.transfers.append(Transfer(event, False, alloc, evicted.pop(alloc)))
        need = live - sum(evicted.values()) - self.cap
        if need <= 0:
            return
        room = tuple(sorted(x for x in touched if a.first[x] == event))
        candidates = [x for x in active if x not in touched and x not in evicted]
        candidates.sort(key=lambda x: (-self.next_access(x, event), x))
        for alloc in candidates:  # furthest next access first
            if need <= 0:
                break
            nbytes = int(a.size[alloc])
            self.transfers.append(Transfer(event, True, alloc, nbytes, room))
            evicted[alloc] = nbytes
            heapq.heappush(self.due, (self.next_access(alloc, event), alloc))
            need -= nbytes


def _program_transfers(
    a: _Allocations, trace: CompactTrace, cap: int, program: int, accesses: list[_Accesses]
) -> list[Transfer]:
    """The spill transfers of one program: its live bytes per event (first to last access, both included, as
    ``sim.memory`` counts them), walked from the first event over the capacity. ``accesses`` holds the access
    index once one program has built it."""
    n = len(trace)
    mine = np.flatnonzero((a.program == program) & (a.last >= 0))
    weights = a.size[mine].astype(np.float64)  # exact: bytes per partition sum far below 2**53
    diff = np.bincount(a.first[mine], weights, n + 1) - np.bincount(a.last[mine] + 1, weights, n + 1)
    live = np.cumsum(diff[:-1]).astype(np.int64)
    over = np.flatnonzero(live > cap).tolist()
    if not over:
        return []
    if not accesses:
        accesses.append(_Accesses.of(a))
    sweep = _Sweep(a, accesses[0], cap)
    by_first = mine[np.argsort(a.first[mine], kind="stable")].tolist()
    active: list[int] = []
    k = o = 0
    while o < len(over) or sweep.due:
        due = sweep.due[0][0] if sweep.due else n
        event = min(over[o] if o < len(over) else n, due if due >= 0 else n)
        if event >= n:  # evicted data never accessed again
            break
        while sweep.due and sweep.due[0][0] <= event:
            heapq.heappop(sweep.due)
        while o < len(over) and over[o] <= event:
            o += 1
        while k < len(by_first) and a.first[by_first[k]] <= event:
            active.append(by_first[k])
            k += 1
        active = [x for x in active if a.last[x] >= event]
        sweep.step(event, int(live[event]), active)
    return sweep.transfers


def spill_transfers(trace: CompactTrace, limits: TargetLimits) -> tuple[list[Transfer], _Allocations | None]:
    """Every spill transfer of ``trace`` on ``limits``' SBUF (module docstring), in trace order, and the
    allocations they name."""
    if not len(trace):
        return [], None
    rank, core = trace.event("rank"), trace.event("core")
    if rank.any() or core.any():
        programs = group([rank, core])[0].astype(np.int64)
    else:  # one program
        programs = np.zeros(len(trace), np.int64)
    a = _allocations(trace, programs)
    if a is None:
        return [], None
    cap = limits.sbuf_bytes_per_partition
    if int(a.size.sum()) <= cap:  # every allocation live at once still fits (most small kernels)
        return [], a
    transfers: list[Transfer] = []
    accesses: list[_Accesses] = []
    for program in range(int(programs.max()) + 1):
        transfers += _program_transfers(a, trace, cap, program, accesses)
    transfers.sort(key=lambda t: (t.before, not t.save))  # saves make room before reloads fill it
    return transfers, a


def with_spills(trace: CompactTrace, limits: TargetLimits) -> CompactTrace:
    """``trace`` with its spill transfers inserted as DMA events (itself when nothing spills)."""
    transfers, a = spill_transfers(trace, limits)
    if not transfers or a is None:
        return trace
    events = list(trace)
    # one HBM spill tensor per (program, engine of the spilled tile's producer): its own DMA queues
    slot_base = int(trace.operand("storage").max(initial=0)) + 1
    slot_at: dict[int, int] = {}  # victim -> its first byte in its program's spill tensors
    slot_end: dict[int, int] = {}  # program -> bytes used
    out: list[TraceEvent] = []
    k = 0
    for i, event in enumerate(events):
        while k < len(transfers) and transfers[k].before == i:
            t = transfers[k]
            program = int(a.program[t.victim])
            if t.victim not in slot_at:
                slot_at[t.victim] = slot_end.get(program, 0)
                slot_end[program] = slot_at[t.victim] + int(a.size[t.victim] * a.parts[t.victim])
            producer = events[int(a.first[t.victim])]
            slot = slot_base + program * len(ENGINES) + ENGINES.index(producer.engine)
            out.append(_transfer_event(t, a, event, producer, slot, slot_at))
            k += 1
        out.append(event)
    return as_compact(out)


def _transfer_event(
    t: Transfer, a: _Allocations, at: TraceEvent, producer: TraceEvent, slot: int, slot_at: dict[int, int]
) -> TraceEvent:
    """The DMA event of one spill transfer, before event ``at``, on the line of the victim's ``producer``."""
    parts, moved = int(a.parts[t.victim]), t.nbytes * int(a.parts[t.victim])
    lo = slot_at[t.victim]

    def sbuf(role: str, alloc: int, nbytes: int, row: int) -> Operand:
        p, base = int(a.parts[alloc]), int(a.base[alloc])
        return Operand(
            role, (p, nbytes), "uint8", "sbuf", int(a.storage[alloc]), 0, p, base, base + nbytes, row
        )

    hbm = Operand(
        "dst" if t.save else "src",
        (moved,),
        "uint8",
        "hbm",
        slot,
        0,
        0,
        lo,
        lo + moved,
        t.nbytes,
        SPILL_TENSOR,
    )
    operands: tuple[Operand, ...]
    if t.save:  # reads the victim (and the room the next instruction needs), writes HBM
        room = (sbuf("room", r, int(a.size[r]), 0) for r in t.room)
        operands = (hbm, sbuf("src", t.victim, int(a.size[t.victim]), t.nbytes), *room)
        read, written = {"sbuf": moved}, {"hbm": moved}
    else:  # reads HBM, writes the victim
        operands = (sbuf("dst", t.victim, int(a.size[t.victim]), t.nbytes), hbm)
        read, written = {"hbm": moved}, {"sbuf": moved}
    return TraceEvent(
        seq=at.seq,
        op=SAVE_OP if t.save else RELOAD_OP,
        engine="dma",
        file=producer.file,
        line=producer.line,
        stack=producer.stack,
        operands=operands,
        partitions=parts,
        free_elements=t.nbytes,
        bytes_read=read,
        bytes_written=written,
        core=at.core,
        rank=at.rank,
    )
