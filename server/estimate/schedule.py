"""The estimated timeline: every traced instruction placed on its engine queue after what it depends on.

Model (docs/cost-model.md, "Estimated timeline"):

* Each (rank, logical core) runs its own program. Its instructions are placed in trace order, each at the
  first moment after its dependencies when its engine (Tensor, Vector, Scalar, GpSimd, Sync) is free for its
  duration: it may fill a gap an earlier instruction of that engine left, as the compiler's scheduler moves
  independent instructions ahead (docs/cost-model.md, "Engine queues"); a join is placed after its engine's
  work. DMA transfers run on the 16 DMA engines, a transfer
  on the engines that own its on-chip partitions (8 partitions each), every engine one transfer at a time,
  after its issue (in program order, one issue after the other: on the core's hardware DGE instances where
  the generation has them, else on its queue) and in order with its queue (one per HBM tensor and direction,
  inferred) 's earlier transfers on those engines; an engine takes whichever queue's transfer
  is ready, so a transfer may fill a gap an earlier-issued one left.
* An instruction starts after the instructions it depends on through the bytes it touches: read after
  write, write after read and write after write on overlapping footprints (``trace.Operand``: SBUF/PSUM
  partitions x bytes, HBM byte ranges, per allocation). A PSUM accumulation group is a chain of writes to
  one range, so it serialises and its reader waits for the last matmul. Waiting on another engine's result
  adds the semaphore latency.
* ``nisa.core_barrier`` and ``nisa.sendrecv`` join the logical cores of a rank; ``ncc.*`` collectives join
  every instance that issues them: the k-th such instruction starts on all of them when the last arrives.
  Footprints are tracked per core, so shared HBM orders the cores only through these joins.
* Durations: ``nki_studio.estimate.cost`` per instruction, plus the Tensor engine's stationary loads and
  issue overhead, the Scalar engine's activation-table loads (``activation_tables``) and the DMA model below;
  constants in ``nki_studio.estimate.constants``.
"""

from __future__ import annotations

import bisect
import gc
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt
from nki_studio.estimate import constants as K
from nki_studio.estimate.cost import instruction_cost
from nki_studio.estimate.heap import heap_for_large_arrays
from nki_studio.estimate.trace_plan import BANKS, DMA, FOOTPRINTS, JOIN, SCOPES, Plan, plan
from nki_studio.model.targets import TargetLimits
from nki_studio.sim.trace import TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, as_compact

if TYPE_CHECKING:
    from nki_studio.estimate.calibration.overlay import Overlay

F64 = npt.NDArray[np.float64]

_TRANSPOSE_DMA = ("nisa.dma_transpose", "nl.load_transpose2d")


@dataclass
class Schedule:
    """Start and end (ns) of every trace event, index-aligned with ``events``; DMA transfers also name the DMA
    engines they ran on (``dma_engines[i]`` = (first, last), (-1, -1) for other engines)."""

    events: Sequence[TraceEvent]
    start: F64
    end: F64
    dma_engines: npt.NDArray[np.int64]  # shape (n, 2)

    @property
    def total_ns(self) -> float:
        """First start to last end."""
        return float(self.end.max() - self.start.min()) if len(self.events) else 0.0


Rect = tuple[int, int, int, int]  # (b0, b1, p0, p1)


class _Entry:
    """What happened last to one rectangle of an allocation: its bytes ``b0..b1`` x partitions ``p0..p1`` (also
    as ``rect``), the end and engine (by code) of its last write (``write_end`` -1: none) and ``reads``: engine
    -> end of its last read since that write, or None."""

    __slots__ = ("b0", "b1", "p0", "p1", "reads", "rect", "write_end", "write_engine")

    def __init__(
        self, rect: Rect, write_end: float, write_engine: int, reads: dict[int, float] | None
    ) -> None:
        self.b0, self.b1, self.p0, self.p1 = rect
        self.rect = rect
        self.write_end = write_end
        self.write_engine = write_engine
        self.reads = reads

    def overlaps(self, rect: Rect) -> bool:
        """Whether ``rect`` shares a byte and a partition with this entry."""
        return self.b1 > rect[0] and self.b0 < rect[1] and self.p0 < rect[3] and rect[2] < self.p1


class _Footprints:
    """What happened last to each rectangle of one allocation on one core (``_Entry``); entries are sorted by
    first byte for overlap queries and indexed by rectangle, since most tiles are always accessed whole. A write
    drops the entries it covers (whatever waits for them waits for it), so a tile rewritten in a loop keeps one
    entry. ``version`` counts changes, so an overlap query made while placing an instruction is reused when it
    commits."""

    __slots__ = ("entries", "index", "longest", "starts", "version")

    def __init__(self, rect: Rect, write: bool, engine: int, end: float) -> None:
        """Footprints whose first access is this one."""
        entry = _Entry(rect, end, engine, None) if write else _Entry(rect, -1.0, -1, {engine: end})
        self.starts: list[int] = [rect[0]]
        self.entries: list[_Entry] = [entry]
        self.index: dict[Rect, _Entry] = {rect: entry}
        self.longest = rect[1] - rect[0]
        self.version = 0

    def hits(self, rect: Rect) -> list[_Entry]:
        """The entries an access to ``rect`` depends on: the overlapping ones (a lone entry of exactly this
        rectangle is taken without the range query, the common case of a tile accessed whole)."""
        entries = self.entries
        if len(entries) == 1:
            only = entries[0]
            if only.rect == rect:
                return entries
            return [only] if only.overlaps(rect) else []  # a new list: ``record`` may remove from ``entries``
        b0, b1, p0, p1 = rect
        if len(entries) <= 8:  # a scan is cheaper than two bisections; same entries, same order
            return [e for e in entries if e.b1 > b0 and e.b0 < b1 and e.p0 < p1 and p0 < e.p1]
        starts = self.starts
        lo = bisect.bisect_right(starts, b0 - self.longest)
        hi = bisect.bisect_left(starts, b1)
        return [e for e in entries[lo:hi] if e.b1 > b0 and e.p0 < p1 and p0 < e.p1]

    def record(self, rect: Rect, write: bool, engine: int, end: float, hits: list[_Entry] | None) -> None:
        """Record a scheduled access ending at ``end``; ``hits`` is ``self.hits(rect)`` if nothing changed since."""
        entries = self.entries
        if write:
            if len(entries) == 1 and entries[0].rect == rect:
                entry = entries[0]
            else:
                b0, b1, p0, p1 = rect
                for e in hits if hits is not None else self.hits(rect):
                    if b0 <= e.b0 and e.b1 <= b1 and p0 <= e.p0 and e.p1 <= p1:
                        self._remove(e)
                entry = self._insert(rect)
            entry.write_end, entry.write_engine, entry.reads = end, engine, None
        else:
            found = self.index.get(rect)
            entry = found if found is not None else self._insert(rect)
            reads = entry.reads
            if reads is None:
                entry.reads = {engine: end}
            elif end > reads.get(engine, -1.0):
                reads[engine] = end
        self.version += 1

    def _insert(self, rect: Rect) -> _Entry:
        entry = _Entry(rect, -1.0, -1, None)
        i = bisect.bisect_right(self.starts, rect[0])
        self.starts.insert(i, rect[0])
        self.entries.insert(i, entry)
        self.index[rect] = entry
        self.longest = max(self.longest, rect[1] - rect[0])
        return entry

    def _remove(self, entry: _Entry) -> None:
        i = bisect.bisect_left(self.starts, entry.b0)
        while self.entries[i] is not entry:
            i += 1
        del self.starts[i]
        del self.entries[i]
        if self.index.get(entry.rect) is entry:
            del self.index[entry.rect]


class _DmaQueues:
    """One core's DMA queues and engines. A transfer is issued (``issue`` ns) one issue after the other, in
    program order, by an issuer: on a generation with hardware DGE (``TargetLimits.dge_instances``) whichever of
    its DGE instances can issue first, so every queue shares them; without, its own queue
    (``trace_plan._dma_queues``). Its data then moves in order with the queue's earlier transfers on the
    same engines (hardware.md §6: a queue runs in order on each engine), on engines first..last at the earliest
    time they are all free for its duration: an engine serves whichever of its queues has a transfer ready, so a
    transfer fills a gap an earlier-issued one left. Engine time is reserved per group of engines a transfer used
    (few distinct groups) as sorted busy intervals, merged where they touch; ``meets`` lists, per group, the
    groups that share an engine with it (its own included)."""

    __slots__ = ("busy", "issue", "issued", "issuers", "meets", "queue_free")

    def __init__(self, issue: float, dge_instances: int) -> None:
        self.issue = issue
        self.issuers = range(-1, -1 - dge_instances, -1)  # keys of the DGE instances in ``issued``
        self.issued: dict[int, float] = {}  # issuer (queue, or DGE instance < 0) -> end of its last issue
        self.queue_free: dict[int, float] = {}  # (queue, engines) -> end of its last data
        self.busy: dict[
            tuple[int, int], tuple[list[float], list[float]]
        ] = {}  # (first, last) -> starts, ends
        self.meets: dict[tuple[int, int], list[tuple[list[float], list[float]]]] = {}

    def start(self, queue: int, first: int, last: int, ready: float, ns: float) -> float:
        """The start of the data of a transfer of ``ns`` on engines first..last, ready at ``ready``; books its
        issue and its engines."""
        issuer = min(self.issuers, key=lambda k: self.issued.get(k, 0.0)) if self.issuers else queue
        issued = self.issued.get(issuer, 0.0)
        if ready > issued:
            issued = ready
        t = self.issued[issuer] = issued + self.issue
        lane = (queue << 12) | (first << 6) | last  # (queue, engines) as one int: engines < 64
        free = self.queue_free.get(lane, 0.0)
        if free > t:
            t = free
        pair = (first, last)
        groups = self.meets.get(pair)
        if groups is None:  # a new group of engines
            busy = self.busy
            busy[pair] = ([], [])
            self.meets = {p: [v for (f, g), v in busy.items() if f <= p[1] and p[0] <= g] for p in busy}
            groups = self.meets[pair]
        if len(groups) == 1:  # the common case: the position in the one group only moves forward
            starts, ends = groups[0]
            t = first_fit(starts, ends, t, ns)
        else:
            moved = True
            while moved:
                moved = False
                for starts, ends in groups:
                    if not ends or t >= ends[-1]:
                        continue
                    j = bisect.bisect_right(starts, t) - 1
                    if j >= 0 and ends[j] > t:  # inside a busy interval
                        t, moved = ends[j], True
                    elif j + 1 < len(starts) and starts[j + 1] < t + ns:  # the gap is too short
                        t, moved = ends[j + 1], True
        reserve(*self.busy[pair], t, ns)
        self.queue_free[lane] = t + ns
        return t


def first_fit(starts: list[float], ends: list[float], t: float, ns: float) -> float:
    """The earliest time from ``t`` at which busy intervals ``starts``/``ends`` (sorted, disjoint) leave ``ns``
    free: ``t`` itself, the end of the interval it falls in, or the end of one before a gap long enough."""
    if not ends or t >= ends[-1]:
        return t
    j = bisect.bisect_right(starts, t) - 1
    count = len(starts)
    while True:
        if j >= 0 and ends[j] > t:  # inside a busy interval
            t = ends[j]
        elif j + 1 < count and starts[j + 1] < t + ns:  # the gap is too short
            t = ends[j + 1]
        else:
            return t
        if t >= ends[-1]:
            return t
        while j + 1 < count and starts[j + 1] <= t:  # bisect_right(starts, t) - 1, from j on
            j += 1


def reserve(starts: list[float], ends: list[float], t: float, ns: float) -> None:
    """Mark ``[t, t + ns)`` (a free gap) busy in the sorted intervals ``starts``/``ends``; touching intervals
    merge, so an engine kept busy is one interval."""
    end = t + ns
    j = bisect.bisect_right(starts, t)  # intervals before: [0, j)
    if j and ends[j - 1] == t:  # touches the previous one: extend it
        ends[j - 1] = end
        if j < len(starts) and starts[j] == end:  # and now the next one
            ends[j - 1] = ends[j]
            del starts[j], ends[j]
    elif j < len(starts) and starts[j] == end:
        starts[j] = t
    else:
        starts.insert(j, t)
        ends.insert(j, end)


class _Core:
    """Scheduling state of one (rank, core) program."""

    def __init__(self, engines: int, dge_instances: int) -> None:
        # engine queue (by code) -> its busy intervals (starts, ends): an instruction takes the first gap after
        # its dependencies, as the compiler's scheduler moves independent instructions ahead (module docstring)
        self.busy: list[tuple[list[float], list[float]]] = [([], []) for _ in range(engines)]
        self.dma = _DmaQueues(K.DMA_ISSUE_COST.value, dge_instances)
        self.footprints: dict[int, _Footprints] = {}
        # PSUM bank -> (end, engine) of its last Vector/Scalar access
        self.psum: dict[int, tuple[float, int]] = {}


# storage, rectangle, written, its footprints when placed (None: first access), their version, the hits then
# ... and whether it is the allocation's last access on the core (unpacked by name, never read by position)
Access = tuple[int, Rect, bool, "_Footprints | None", int, "list[_Entry] | None", bool]


class Placed(NamedTuple):
    """An instruction placed but not yet committed (a join waits for every member before it commits)."""

    event: int
    engine: int
    start: float
    ns: float
    dma: bool
    accesses: list[Access]


def _moved_bytes(event: TraceEvent) -> int:
    return max(sum(event.bytes_read.values()), sum(event.bytes_written.values()))


def dma_plan(event: TraceEvent, limits: TargetLimits) -> tuple[int, int, float]:
    """(first engine, last engine, time on them in ns) of one DMA transfer: its bytes over the engines that own
    its on-chip partitions, at the per-engine rate scaled by the descriptor efficiency (and the DMA-transpose
    efficiency). The per-transfer latency (``limits.dma_fixed_overhead_ns``) comes on top, off the engines."""
    per = int(K.DMA_PARTITIONS_PER_ENGINE.value)
    chip = [o for o in event.operands if o.buffer in ("sbuf", "psum") and o.part_end > o.part_start]
    if chip:
        p0, p1 = min(o.part_start for o in chip), max(o.part_end for o in chip)
        first, last = p0 // per, min((p1 - 1) // per, limits.dma_engines - 1)
    else:  # HBM to HBM: spread over every engine
        first, last = 0, limits.dma_engines - 1
    rows = [o.row_bytes for o in event.operands if o.row_bytes > 0]
    row = min(rows) if rows else 0
    overhead = K.DMA_DESCRIPTOR_OVERHEAD.value
    efficiency = row / (row + overhead) if row else 1.0
    if event.op in _TRANSPOSE_DMA:
        both_on_chip = all(o.buffer != "hbm" for o in event.operands)
        efficiency *= (
            K.DMA_TRANSPOSE_SBUF_EFFICIENCY if both_on_chip else K.DMA_TRANSPOSE_HBM_EFFICIENCY
        ).value
    rate = limits.dma_bytes_per_ns / limits.dma_engines * (last - first + 1) * efficiency
    return first, last, _moved_bytes(event) / rate if rate else 0.0


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector. Scheduling allocates a few small lists per instruction and makes no
    cycles, but every few hundred allocations the collector would walk the whole trace again (half the time
    on a 100k-instruction trace); reference counting still frees everything."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def schedule(events: Sequence[TraceEvent], limits: TargetLimits, overlay: Overlay | None = None) -> Schedule:
    """Place every event of a trace on the estimated timeline (see the module docstring); ``overlay``: a
    calibration that prices the instructions it covers (``estimate.calibration``)."""
    trace = as_compact(events)
    with no_cyclic_gc(), heap_for_large_arrays(trace.nbytes()):
        return _schedule(trace, limits, overlay)


def base_cost(
    limits: TargetLimits, overlay: Overlay | None = None
) -> Callable[[TraceEvent], tuple[int, int, float]]:
    """(first DMA engine, last, ns) of one instruction before the order-dependent extras (stationary and
    activation-table loads, the DMA latency): the built-in model's, or the calibration ``overlay``'s where it
    covers the instruction -- the one place the overlay is consulted."""

    def cost(e: TraceEvent) -> tuple[int, int, float]:
        first, last, ns = (
            dma_plan(e, limits) if e.engine == "dma" else (-1, -1, instruction_cost(e, limits).ns)
        )
        return (first, last, ns) if overlay is None else (first, last, overlay.price(e, ns, last - first + 1))

    return cost


class _Cursor:
    """One program's events, read in order a chunk at a time: the plan's columns for the chunk as lists (per-
    element reads of NumPy arrays cost more than the scheduling itself; whole-trace lists would cost the
    memory the columns save). Event k of the chunk waits for ``dep[dep_at[k]:dep_at[k + 1]]`` (listed
    dependencies, plus ``add``); the columns that neither the common case nor a plain DMA transfer needs are read
    only for a chunk that has other events."""

    CHUNK = 8192

    def __init__(self, p: Plan, idx: npt.NDArray[np.int64]) -> None:
        self.p, self.idx, self.base, self.n = p, idx, 0, 0
        self.load(0)

    def load(self, base: int) -> None:
        p = self.p
        ev = self.idx[base : base + self.CHUNK]
        self.base, self.n = base, len(ev)
        self.events = ev.tolist()
        self.engine = p.engine[ev].tolist()
        self.ns = p.ns[ev].tolist()
        kind = p.kind[ev]
        self.kind = kind.tolist()
        self.dep_at, rows = _gather(p.deps.offsets, ev)
        self.dep = p.deps.event[rows].tolist()
        self.add = p.deps.add[rows].tolist()
        self.first = p.dma_first[ev].tolist()
        self.last = p.dma_last[ev].tolist()
        self.queue = p.queue[ev].tolist()
        if not (kind & ~DMA).any():
            return
        self.scope = np.asarray(SCOPES, object)[p.scope[ev]].tolist()
        self.fp_at, rows = _gather(p.fp_offsets, ev)
        rects = zip(
            p.fp_b0[rows].tolist(),
            p.fp_b1[rows].tolist(),
            p.fp_p0[rows].tolist(),
            p.fp_p1[rows].tolist(),
            strict=True,
        )
        self.accesses = list(
            zip(
                p.fp_storage[rows].tolist(),
                rects,
                p.fp_write[rows].tolist(),
                p.fp_last[rows].tolist(),
                strict=True,
            )
        )
        self.bank_at, rows = _gather(p.bank_offsets, ev)
        self.banks = list(zip(p.bank0[rows].tolist(), p.bank1[rows].tolist(), strict=True))

    def columns(self) -> tuple[list[Any], ...]:
        """The chunk's columns the scheduler's loop reads for its common cases, bound to locals there: events,
        engines, durations, kinds, dependency offsets, dependencies, their additions, DMA queues, first and last
        DMA engines."""
        return (
            self.events,
            self.engine,
            self.ns,
            self.kind,
            self.dep_at,
            self.dep,
            self.add,
            self.queue,
            self.first,
            self.last,
        )


def _gather(
    offsets: npt.NDArray[np.int64], ev: npt.NDArray[np.int64]
) -> tuple[list[int], npt.NDArray[np.int64]]:
    """(chunk-local offsets, rows) of the CSR rows ``offsets`` gives events ``ev``."""
    s, e = offsets[ev], offsets[ev + 1]
    lens = e - s
    local = np.zeros(len(ev) + 1, np.int64)
    np.cumsum(lens, out=local[1:])
    rows = np.arange(int(local[-1]), dtype=np.int64) - np.repeat(local[:-1] - s, lens)
    return local.tolist(), rows


def _schedule(events: Sequence[TraceEvent], limits: TargetLimits, overlay: Overlay | None) -> Schedule:
    trace = as_compact(events)
    return _Scheduler(trace, plan(trace, limits, base_cost(limits, overlay)), limits).run()


Program = tuple[int, int]  # (rank, core)


def _programs(p: Plan) -> dict[Program, npt.NDArray[np.int64]]:
    """Each (rank, core) program's events, in trace order."""
    n = len(p.stream)
    order = np.argsort(p.stream, kind="stable") if n else np.zeros(0, np.int64)
    bounds = np.searchsorted(p.stream[order], np.arange(len(p.streams) + 1)) if n else np.zeros(1, np.int64)
    return {key: order[bounds[s] : bounds[s + 1]] for s, key in enumerate(p.streams)}


def _join_counts(p: Plan, programs: dict[Program, npt.NDArray[np.int64]]) -> dict[Program, dict[str, int]]:
    """How many joins of each scope every program issues: the k-th join of a scope is taken part in by every
    program that issues at least k + 1 of them."""
    counts: dict[Program, dict[str, int]] = {k: defaultdict(int) for k in programs}
    for key, idx in programs.items():
        codes = p.scope[idx]
        for code, scope in enumerate(SCOPES):
            if scope is not None:
                counts[key][scope] = int(np.count_nonzero(codes == code))
    return counts


class _Scheduler:
    """One pass over a planned trace: the programs advance in turn, each as far as it can (``_advance``), until
    every one has ended; a program stops at a join until every member has arrived (``_arrive``). ``start`` and
    ``end`` are filled in as events are committed."""

    def __init__(self, trace: CompactTrace, p: Plan, limits: TargetLimits) -> None:
        self.trace, self.p = trace, p
        n = len(trace)
        self.start = [0.0] * n  # lists: element stores are cheaper than on arrays
        self.end = [0.0] * n
        programs = _programs(p)
        self.programs = list(programs)
        self.lengths = {key: len(idx) for key, idx in programs.items()}
        self.cursors = {key: _Cursor(p, idx) for key, idx in programs.items()}
        self.cores = {key: _Core(len(p.engines), limits.dge_instances) for key in programs}
        self.joins_of = _join_counts(p, programs)
        self.sem = K.SEMAPHORE_LATENCY.value
        self.latency = limits.dma_fixed_overhead_ns
        self.pos = dict.fromkeys(programs, 0)  # each program's next event (a join moves every member's)
        self.seen: dict[Program, dict[str, int]] = {k: defaultdict(int) for k in programs}  # joins passed
        # the joins some members have arrived at: (scope, k, rank or -1) -> member -> its placement
        self.waiting: dict[tuple[str, int, int], dict[Program, Placed]] = defaultdict(dict)

    def run(self) -> Schedule:
        """Schedule every program to its end."""
        active = [k for k in self.programs if self.lengths[k]]
        while active:
            progressed = False
            for key in active:
                progressed |= self._advance(key)
            active = [k for k in active if self.pos[k] < self.lengths[k]]
            if active and not progressed:
                self._release_joins()
        p = self.p
        dma_engines = (
            np.stack([p.dma_first, p.dma_last], 1) if len(self.trace) else np.full((0, 2), -1, np.int64)
        )
        return Schedule(
            self.trace, np.array(self.start, np.float64), np.array(self.end, np.float64), dma_engines
        )

    def _advance(self, key: Program) -> bool:
        """Schedule program ``key`` from its position until it ends or waits at a join; whether anything moved.
        The common cases (``Plan.kind`` 0 and a plain DMA transfer) are placed inline: this loop is the
        scheduler's time."""
        start, end, latency = self.start, self.end, self.latency
        core, length = self.cores[key], self.lengths[key]
        busy = core.busy
        cur = self.cursors[key]
        base, chunk = cur.base, cur.n
        dma_start = core.dma.start
        events_, engine_, ns_, kind_, dep_at, dep, add, queue_, first_, last_ = cur.columns()
        progressed = False
        at = self.pos[key]  # a local position between joins (a join moves ``pos`` of every member)
        while at < length:
            k = at - base
            if k >= chunk:
                cur.load(at)
                base, chunk = cur.base, cur.n
                events_, engine_, ns_, kind_, dep_at, dep, add, queue_, first_, last_ = cur.columns()
                k = 0
            ready = 0.0  # after the listed dependencies (``tile_deps``)
            d, d1 = dep_at[k], dep_at[k + 1]
            while d < d1:
                t = end[dep[d]] + add[d]
                if t > ready:
                    ready = t
                d += 1
            kind = kind_[k]
            if not kind:  # the common case: its engine queue and the listed dependencies alone
                starts, ends = busy[engine_[k]]
                ns = ns_[k]
                if ends and ready < ends[-1]:  # a gap the engine left earlier, or after its last instruction
                    t = first_fit(starts, ends, ready, ns)
                    if ns:
                        reserve(starts, ends, t, ns)
                else:  # after everything on the engine: extend its last interval or start one
                    t = ready
                    if ns and ends and ends[-1] == t:
                        ends[-1] = t + ns
                    elif ns:
                        starts.append(t)
                        ends.append(t + ns)
                i = events_[k]
                start[i] = t
                end[i] = t + ns
                at += 1
                progressed = True
                continue
            if kind == DMA:  # a transfer with listed dependencies alone
                ns = ns_[k]
                t = dma_start(queue_[k], first_[k], last_[k], ready, ns)
                i = events_[k]
                start[i] = t
                end[i] = t + (ns + latency)
                at += 1
                progressed = True
                continue
            if not kind & JOIN:
                self._commit(core, *self._place(k, cur, core, ready))
                at += 1
                progressed = True
                continue
            self.pos[key] = at
            arrived, joined = self._arrive(key, k, cur, core, ready)
            progressed |= arrived or joined
            if not joined:
                break  # wait for the other members (``pos[key]`` is ``at``)
            at = self.pos[key]
        self.pos[key] = at
        return progressed

    def _arrive(self, key: Program, k: int, cur: _Cursor, core: _Core, ready: float) -> tuple[bool, bool]:
        """Program ``key`` at its next join (the cursor's event k): placed there unless it already was; once
        every member has, all of them start it together at the last arrival and move past it. Returns (arrived
        now, the join completed)."""
        scope = cur.scope[k]
        j = self.seen[key][scope]
        group = (scope, j, key[0] if scope == "core" else -1)
        arrived = self.waiting[group]
        now = key not in arrived
        if now:
            arrived[key] = self._place(k, cur, core, ready)
        joins_of = self.joins_of
        members = [m for m in self.programs if joins_of[m][scope] > j and (scope == "all" or m[0] == key[0])]
        if any(m not in arrived for m in members):
            return now, False
        t_join = max(a.start for a in arrived.values())
        for m, a in arrived.items():
            self._commit(self.cores[m], a.event, a.engine, t_join, a.ns, a.dma, a.accesses)
            self.pos[m] += 1
            self.seen[m][scope] += 1
        del self.waiting[group]
        return now, True

    def _release_joins(self) -> None:
        """A join some member never reaches: every waiting join commits what arrived, each at its own time."""
        for group, arrived in list(self.waiting.items()):
            for m, a in arrived.items():
                self._commit(self.cores[m], *a)
                self.pos[m] += 1
                self.seen[m][group[0]] += 1
            del self.waiting[group]

    def _place(self, k: int, cur: _Cursor, core: _Core, ready: float) -> Placed:
        """The cursor's event k that is not of the common case (``Plan.kind``), placed not before ``ready`` (its
        listed dependencies): after the accesses it depends on (see ``_Footprints``), its engine queue or DMA
        queue and engines, and the PSUM banks."""
        i, engine, ns, kind = cur.events[k], cur.engine[k], cur.ns[k], cur.kind[k]
        accesses: list[Access] = []
        if kind & FOOTPRINTS:
            ready = self._after_footprints(k, cur, core, engine, ready, accesses)
        if kind & DMA:
            t = core.dma.start(cur.queue[k], cur.first[k], cur.last[k], ready, ns)
            return Placed(i, engine, t, ns + self.latency, True, accesses)
        starts, ends = core.busy[engine]
        if kind & JOIN:  # a join is not moved ahead of its engine's work: all members start it together
            t = ready if not ends or ready > ends[-1] else ends[-1]
            return Placed(i, engine, t, ns, False, accesses)
        t = ready
        if kind & BANKS:  # wait until the other engine left the PSUM banks, then hold them
            banks = [
                b for lo, hi in cur.banks[cur.bank_at[k] : cur.bank_at[k + 1]] for b in range(lo, hi + 1)
            ]
            held = core.psum
            for b in banks:
                holder = held.get(b)
                if holder is not None and holder[1] != engine and holder[0] > t:
                    t = holder[0]
            t = first_fit(starts, ends, t, ns)
            for b in banks:  # the latest end: an earlier access of this engine may end later (a gap filled)
                holder = held.get(b)
                held[b] = (t + ns if holder is None or holder[0] < t + ns else holder[0], engine)
        else:
            t = first_fit(starts, ends, t, ns)
        return Placed(i, engine, t, ns, False, accesses)

    def _after_footprints(
        self, k: int, cur: _Cursor, core: _Core, engine: int, ready: float, accesses: list[Access]
    ) -> float:
        """``ready`` moved past the accesses the cursor's event k depends on through its footprints: read after
        write, and a write also after reads (plus the semaphore when another engine's); its accesses appended to
        ``accesses``, with the overlap queries made, for ``_commit``."""
        sem = self.sem
        prints = core.footprints
        for storage, rect, write, final in cur.accesses[cur.fp_at[k] : cur.fp_at[k + 1]]:
            fp = prints.get(storage)
            if fp is None:
                accesses.append((storage, rect, write, None, 0, None, final))
                continue
            ents = fp.entries
            if (
                len(ents) == 1
            ):  # ``_Footprints.hits`` of one entry, without the call for a tile accessed whole
                only = ents[0]
                hits = ents if only.rect == rect else [only] if only.overlaps(rect) else []
            else:
                hits = fp.hits(rect)
            for h in hits:
                if h.write_end >= 0:
                    t = h.write_end + (sem if h.write_engine != engine else 0.0)
                    if t > ready:
                        ready = t
                if write and h.reads is not None:
                    for reader, t in h.reads.items():
                        if reader != engine:
                            t += sem
                        if t > ready:
                            ready = t
            accesses.append((storage, rect, write, fp, fp.version, hits, final))
        return ready

    def _commit(
        self, core: _Core, i: int, engine: int, t: float, ns: float, dma: bool, accesses: list[Access]
    ) -> None:
        """Event i runs from ``t`` for ``ns``: its start and end, its engine queue and its accesses recorded."""
        done = t + ns
        self.start[i], self.end[i] = t, done
        if not dma and ns > 0:
            reserve(*core.busy[engine], t, ns)
        prints = core.footprints
        for storage, rect, write, fp, version, hits, last in accesses:
            if last:  # nothing later on this core touches the allocation: forget it
                prints.pop(storage, None)
                continue
            if fp is None:
                fp = prints.get(storage)
                if fp is None:
                    prints[storage] = _Footprints(rect, write, engine, done)
                    continue
                hits = None
            elif fp.version != version:  # another access of this instruction changed it
                hits = None
            ents = fp.entries
            if write:
                if len(ents) == 1 and ents[0].rect == rect:  # ``record``'s common case, inline
                    entry = ents[0]
                    entry.write_end, entry.write_engine, entry.reads = done, engine, None
                    fp.version += 1
                    continue
            else:
                found = fp.index.get(rect)
                if found is not None:
                    reads = found.reads
                    if reads is None:
                        found.reads = {engine: done}
                    elif done > reads.get(engine, -1.0):
                        reads[engine] = done
                    fp.version += 1
                    continue
            fp.record(rect, write, engine, done, hits)
