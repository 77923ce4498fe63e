"""The current simulation: options, per-core state, instruction check-in and the trace recorder.

Every simulated API call runs inside a :class:`SimContext` made current for the running kernel instance
(:func:`activate`). Under LNC=2 each of the two cores has its own :class:`CoreState` (program id, SBUF/PSUM
tracker, engine registers) and both share the context (options, trace, warnings, shared-HBM synchronisation);
the instances of a launch run in lockstep on one thread (``sim.schedule``), handing over in :func:`issue`.

ISA implementations call :func:`issue` once per instruction, before computing. It counts the instruction,
calls the caller's check-in hook (deadlines), enforces the instruction budget, and records a
``TraceEvent`` when tracing is on. With tracing off the cost is a counter increment and two checks.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from nki_studio.model.targets import NkiVersion, Target
from nki_studio.sim.errors import ResourceLimitError, SimulationError
from nki_studio.sim.memory import AllocationBudget, MemoryTracker
from nki_studio.sim.tensor_base import TensorBase
from nki_studio.sim.trace import Operand, TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, TraceBuilder
from nki_studio.sim.userframe import SourceLocation, user_location


@dataclass
class SimOptions:
    """What a simulation run models and how it is bounded."""

    target: Target = field(default_factory=Target)
    precise: bool = True  # ml_dtypes storage (NKI_PRECISE_FP=1) vs float32 storage
    strict: bool = False  # reading never-written memory raises, naming the line
    trace: bool = False  # record one TraceEvent per instruction
    capacity: str = "error"  # SBUF/PSUM over capacity: "error" | "warn" | "off"
    # CompileConfig(nki_alloc_fallback=False): the program-order peak is an error too (memory.py module doc)
    program_order_capacity: bool = False
    jit_arguments: tuple[str, ...] = ()  # the keywords of the kernel's @nki.jit(...) (some are rejected)
    allocation_budget: int | None = None  # live bytes over all regions the kernel may allocate
    max_instructions: int | None = None  # instruction budget (None = unbounded)
    checkin: Callable[[], None] | None = None  # called every instruction; raise to stop the kernel
    while_loop_cap: int = 1 << 20  # iterations before nl.while_loop is declared non-terminating
    lnc: int = 1
    ranks: int = 1  # collective ranks (one kernel instance per rank and logical core)
    # How the NKI version was chosen when it was inferred (reported as the first warning).
    nki_version_note: str | None = None

    @property
    def nki_version(self) -> NkiVersion:
        """The NKI version whose semantics are simulated."""
        return self.target.nki_version


class CoreState:
    """State private to one kernel instance: logical core ``core_id`` (of ``num_cores``, LNC) of
    collective rank ``rank`` (of ``num_ranks``). Each instance runs in its own greenlet when there are several."""

    def __init__(
        self,
        core_id: int,
        num_cores: int,
        memory: MemoryTracker,
        rank: int = 0,
        num_ranks: int = 1,
    ) -> None:
        self.core_id = core_id
        self.num_cores = num_cores
        self.rank = rank
        self.num_ranks = num_ranks
        self.memory = memory
        self.shared_hbm_allocations = (
            0  # per-instance count: the n-th shared_hbm tensor is the same on all cores
        )
        # Engine-private state owned by the ISA implementations (accumulator registers, RNG state...),
        # keyed by a name the owner chooses, e.g. "scalar.reduce_regs".
        self.registers: dict[str, Any] = {}
        # Depth of untaken ``nl.if_else`` callbacks running on this core (sim.untaken): while > 0,
        # instructions are validated and ``issue`` stops them before they execute.
        self.untaken = 0


def _extent(offset: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """Half-open range of flat element positions a strided view touches."""
    lo, hi = offset, offset + 1
    for n, s in zip(shape, strides, strict=True):
        if n > 1:
            if s > 0:
                hi += s * (n - 1)
            else:
                lo += s * (n - 1)
    return lo, hi


def footprint(t: TensorBase) -> tuple[int, int, int, int, int]:
    """``(part_start, part_end, byte_start, byte_end, row_bytes)`` of a view in its storage: the bounding box
    of the elements it touches (``trace.Operand``). Arithmetic on the view's strides only, no per-element work
    except for gathered (index) views."""
    data, shape, strides, index = t._data, t.shape, t.strides, t._index
    isz = data.itemsize
    row, dense = isz, 1
    if index is not None:  # a gathered view: no strides, every element may stand alone
        lo, hi = (int(index.min()), int(index.max()) + 1) if index.size else (0, 0)
    else:
        for n, s in zip(reversed(shape), reversed(strides), strict=True):  # contiguous innermost run
            if n > 1 and s != dense:
                break
            row *= n
            dense *= n
        lo, hi = _extent(t.offset, shape, strides) if t.size else (t.offset, t.offset)
    storage = t._st
    if not storage.region.on_chip:
        return 0, 0, lo * isz, hi * isz, row
    per = max(data.size // storage.shape[0], 1) if storage.shape and storage.shape[0] else max(data.size, 1)
    p0, p1 = lo // per, max(hi - 1, lo) // per + 1
    if p1 - p0 == 1:
        f0, f1 = lo - p0 * per, hi - p0 * per
    elif index is None and strides[0] % per == 0:
        # the first dim steps whole partitions: the free range is the same in each of them
        f0, f1 = _extent(t.offset % per, shape[1:], strides[1:])
        if f0 < 0 or f1 > per:
            f0, f1 = 0, per
    else:
        f0, f1 = 0, per
    return p0, p1, f0 * isz, f1 * isz, min(row, (f1 - f0) * isz)


def row_pitch(t: TensorBase) -> int:
    """An HBM view's row pitch (``trace.Operand.row_pitch``): the bytes of one row of its storage's last
    dimension when the view is a rectangle of those rows -- every dimension either steps whole rows or stays
    inside one row (a row block, a column block, a strided column block) -- so its footprint is rows x a byte
    range within a row; 0 for an on-chip, a gathered or a one-dimensional view, or one that wraps across rows
    (its footprint stays the flat bounding box)."""
    storage = t._st
    if storage.region.on_chip or t._index is not None or len(storage.shape) < 2 or not t.size:
        return 0
    n = storage.shape[-1]
    col_lo = col_hi = t.offset % n
    for dim, s in zip(t.shape, t.strides, strict=True):
        if dim > 1 and s % n:  # moves within a row
            if s > 0:
                col_hi += s * (dim - 1)
            else:
                col_lo += s * (dim - 1)
    return n * t._data.itemsize if 0 <= col_lo and col_hi < n else 0


class TraceRecorder:
    """Builds ``TraceEvent``s with the user's file:line and each operand's footprint."""

    def __init__(self, nki_version: NkiVersion | None = None) -> None:
        # columns, not one object per instruction (sim.trace_columns), labelled with the simulated NKI version
        self._trace = TraceBuilder(nki_version)
        # Storage -> its number in this trace; weak, so tracing never keeps a tile alive (capacity accounting).
        self._storages: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()
        self._numbers = itertools.count()
        # What an operand is recorded as, when not itself: a legacy masked call (``sim.legacy.masks``) records
        # its operands as the rectangle its mask selects, as the hardware moves and computes them.
        self.recorded_as: Callable[[TensorBase], TensorBase] | None = None

    @property
    def events(self) -> CompactTrace:
        """The events recorded so far."""
        return self._trace.build()

    def _storage_id(self, storage: object) -> int:
        uid = self._storages.get(storage)
        if uid is None:
            uid = self._storages[storage] = next(self._numbers)
        return uid

    def _operand(self, role: str, value: TensorBase) -> Operand:
        return Operand(
            role,
            value.shape,
            value.dtype_name,
            value.buffer.kind,
            self._storage_id(value.storage),
            *footprint(value),
            value.storage.name or "",
            row_pitch(value),
            value.storage.block_elements * value._data.itemsize,  # bytes, as footprint() counts them
        )

    def redirect(self, storage: object, target: TensorBase) -> None:
        """The last instruction wrote ``target`` where it recorded ``storage``: a legacy result tile assigned at
        once into a tensor, which the toolchain never allocates (``sim.legacy.assignment``), so the tensor's
        first write and its dependencies are that instruction's."""
        uid = self._storages.get(storage)
        if uid is not None:
            self._trace.redirect_last(uid, lambda role: self._operand(role, target))

    def record(
        self,
        op: str,
        engine: str,
        core: int,
        reads: Mapping[str, object],
        writes: Mapping[str, object],
        flops: int,
        rank: int = 0,
        function: str = "",
    ) -> None:
        """Append one event for an instruction whose operands are ``reads`` and ``writes`` (role -> value);
        ``function``: an activation instruction's function name."""
        loc = user_location()
        operands: list[Operand] = []
        bytes_read: dict[str, int] = {}
        bytes_written: dict[str, int] = {}
        main: TensorBase | None = None
        for mapping, counter in ((writes, bytes_written), (reads, bytes_read)):
            for role, value in mapping.items():
                if not isinstance(value, TensorBase):
                    continue
                if self.recorded_as is not None:
                    value = self.recorded_as(value)
                kind = value.buffer.kind
                operands.append(self._operand(role, value))
                counter[kind] = counter.get(kind, 0) + value.size * value.dtype.itemsize
                if main is None and value.buffer.on_chip:
                    main = value
        if main is not None:
            partitions = main.shape[0]
            free = main.size // partitions if partitions else 0
        else:
            partitions, free = 0, sum(o.shape[0] if o.shape else 1 for o in operands[:1])
        self._trace.append(
            TraceEvent(
                seq=len(self._trace),
                op=op,
                engine=engine,
                file=loc.file,
                line=loc.line,
                stack=loc.stack,
                operands=tuple(operands),
                partitions=partitions,
                free_elements=free,
                bytes_read=bytes_read,
                bytes_written=bytes_written,
                flops=flops,
                core=core,
                rank=rank,
                function=function,
            )
        )


class SimContext:
    """One simulation run: options, cores, trace, warnings and cross-core synchronisation."""

    def __init__(self, options: SimOptions) -> None:
        self.options = options
        limits = options.target.limits
        self.budget = AllocationBudget(options.allocation_budget)
        capacity = {"sbuf": limits.sbuf_bytes_per_partition, "psum": limits.psum_bytes_per_partition}
        self.cores: list[CoreState] = []  # index = rank * lnc + core
        for rank in range(options.ranks):
            for core in range(options.lnc):
                tracker = MemoryTracker(
                    capacity,
                    mode=options.capacity,
                    budget=self.budget,
                    pmax=limits.partitions,
                    clock=self._clock,
                )
                tracker.strict_order = options.program_order_capacity
                self.cores.append(CoreState(core, options.lnc, tracker, rank, options.ranks))
        self.recorder: TraceRecorder | None = TraceRecorder(options.nki_version) if options.trace else None
        self.warnings: list[str] = [options.nki_version_note] if options.nki_version_note else []
        self.instructions = 0
        # Shared state for cross-core primitives (nisa.core_barrier, nisa.sendrecv, collectives),
        # keyed by the owner's choice. No lock: the instances of a launch run on one thread, one at a time.
        self.shared: dict[str, Any] = {}
        # (rank, n) -> the n-th shared_hbm storage of that rank, shared by its logical cores.
        self.shared_hbm: dict[tuple[int, int], Any] = {}
        self._warned: set[tuple[str, int, str]] = set()

    def _clock(self) -> int:
        """The time of an access: the number of instructions issued so far (live ranges are in this unit)."""
        return self.instructions

    def warn(self, message: str, location: SourceLocation | None = None) -> None:
        """Record a warning once per (file, line, message), prefixed with ``location`` (default: the user's
        current file:line)."""
        loc = location if location is not None else user_location()
        key = (loc.file, loc.line, message)
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(f"{loc.file}:{loc.line}: {message}" if loc.file else message)


# The running simulation and kernel instance. A context variable, not thread-local state: the instances of a
# launch share one thread, each in its own greenlet with its own context (sim.schedule); other threads and
# greenlets start with an empty context, so they see no simulation.
_current: ContextVar[tuple[SimContext | None, CoreState | None]] = ContextVar(
    "nki_studio_sim_current", default=(None, None)
)


def current() -> SimContext:
    """The simulation running here (this kernel instance); raises ``SimulationError`` outside a simulation."""
    ctx = _current.get()[0]
    if ctx is None:
        raise SimulationError("the nki API was used outside a simulation (use nki_studio.sim.simulate)")
    return ctx


def current_or_none() -> SimContext | None:
    """The running simulation, or None."""
    return _current.get()[0]


def current_core() -> CoreState:
    """The kernel instance (logical core of a rank) running here."""
    core = _current.get()[1]
    if core is None:
        raise SimulationError("the nki API was used outside a simulation (use nki_studio.sim.simulate)")
    return core


@contextmanager
def activate(ctx: SimContext, core: CoreState) -> Iterator[SimContext]:
    """Make ``ctx``/``core`` current in this thread or greenlet for the duration of the block."""
    token = _current.set((ctx, core))
    try:
        yield ctx
    finally:
        _current.reset(token)


@contextmanager
def session(options: SimOptions | None = None, **overrides: Any) -> Iterator[SimContext]:
    """A one-core simulation context for direct API use (tests, notebooks): ``with session(strict=True):``."""
    opts = options if options is not None else SimOptions()
    for key, value in overrides.items():
        setattr(opts, key, value)
    ctx = SimContext(opts)
    try:
        with activate(ctx, ctx.cores[0]):
            yield ctx
            for core in ctx.cores:
                core.memory.finish()  # capacity from the complete live ranges (raises at the tensor's line)
    finally:
        for core in ctx.cores:
            core.memory.release_all()


class UntakenBranch(BaseException):
    """Raised by ``issue`` inside an untaken ``nl.if_else`` callback: the instruction's operands were
    validated (everything an instruction checks comes before ``issue``) and what follows (reads, writes,
    registers, trace) must not run. ``sim.untaken``'s decorators catch it at the instruction's entry.

    A ``BaseException``, so a kernel's own ``except Exception`` cannot swallow it."""

    def __init__(self, op: str, writes: Mapping[str, object]) -> None:
        super().__init__(op)
        self.op = op
        self.writes = writes


def untaken() -> bool:
    """True while an untaken ``nl.if_else`` callback runs on the current core."""
    core = _current.get()[1]
    return core is not None and core.untaken > 0


def issue(
    op: str,
    engine: str,
    reads: Mapping[str, object] | None = None,
    writes: Mapping[str, object] | None = None,
    flops: int = 0,
    function: str = "",
) -> None:
    """Announce one instruction (call before computing it).

    ``op`` is the public name ("nisa.tensor_tensor"), ``engine`` one of ``trace.ENGINES``; ``reads`` and
    ``writes`` map operand roles to values (non-tensors are ignored); ``function``: the activation function
    of an activation instruction (recorded in the trace for the estimate's table loads). Raises ``ResourceLimitError`` when
    the instruction budget is spent; the check-in hook may raise to stop the kernel. Inside an untaken
    ``nl.if_else`` callback it raises ``UntakenBranch`` instead: nothing is counted, traced or executed.
    """
    ctx, core = _current.get()
    if ctx is None:
        raise SimulationError(f"{op} was called outside a simulation (use nki_studio.sim.simulate)")
    if core is not None and core.untaken:
        raise UntakenBranch(op, writes or {})
    baton = ctx.shared.get("baton")
    if baton is not None and core is not None:  # several instances: one instruction each in turn
        baton.step(core.rank * core.num_cores + core.core_id)  # = position in ctx.cores
    ctx.instructions += 1
    opts = ctx.options
    if opts.checkin is not None:
        opts.checkin()
    if opts.max_instructions is not None and ctx.instructions > opts.max_instructions:
        raise ResourceLimitError(f"instruction budget of {opts.max_instructions} exceeded at {op}")
    if ctx.recorder is not None:
        ctx.recorder.record(
            op,
            engine,
            core.core_id if core else 0,
            reads or {},
            writes or {},
            flops,
            core.rank if core else 0,
            function,
        )


def warn(message: str) -> None:
    """Record a simulation warning at the user's line (no-op outside a simulation)."""
    ctx = _current.get()[0]
    if ctx is not None:
        ctx.warn(message)
