"""The normalised profile model every reader produces (Parquet, legacy JSON, CSV export, summary-json,
Perfetto). Columnar on purpose: a profile may hold millions of instructions, so each field is one NumPy
array and strings are stored once in a table of values plus integer codes.

Times are integer nanoseconds on the profile's own clock (Neuron Explorer's ``start_ts``/``end_ts``);
intervals are half-open ``[start, end)``. Nothing here depends on the file format it came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]

# Canonical engine names. Profiles spell them differently (Parquet ``Instruction.engine`` is capitalised,
# ``ActiveTime.engine`` lower case, Perfetto tracks say "Vector Engine Row 0"): parquet-schema.md §3.
ENGINE_NAMES = ("Tensor", "Vector", "Scalar", "GpSimd", "Sync")

# Semaphore waits are not work (metrics.md §1).
WAIT_OPCODES: frozenset[str] = frozenset({"EVENT_SEMAPHORE", "EVENT_SEMAPHORE_RANGE_CLEAR"})

# Setup/teardown opcodes ``Summary.total_exec_time`` ignores (metrics.md §1). Configurable by callers.
SETUP_OPCODES: frozenset[str] = frozenset(
    {
        "NOP",
        "SET_ORDERING_MODE",
        "NOTIFY",
        "COMPARE_BRANCH",
        "DRAIN",
        "WRITE",
        "TENSOR_LOAD",
        "MODIFY_POOL_CONFIG",
    }
)


def canonical_engine(name: str | None) -> str:
    """Map any engine/track spelling ("vector", "Vector Engine Row 1", "TensorMatrix", "Pool") to one name."""
    if not name:
        return "Unknown"
    low = name.strip().lower().replace("_", "").replace(" ", "")
    # "gpsimd" must be tested before "sync"-like prefixes; "pool" is the GpSimd engine's ISA name.
    for canon, prefixes in (
        ("GpSimd", ("gpsimd", "pool")),
        ("Tensor", ("tensor", "pe")),
        ("Vector", ("vector", "dve")),
        ("Scalar", ("scalar", "act")),
        ("Sync", ("sync", "sp")),
    ):
        if low.startswith(prefixes):
            return canon
    return name.strip()


class ProfileError(Exception):
    """A profile could not be read. The message says what is wrong and what still works or how to fix it."""


@dataclass(frozen=True)
class Codes:
    """A string column: ``values[codes[i]]`` is row i's string (code -1 means missing)."""

    values: tuple[str, ...]
    codes: I32

    @staticmethod
    def from_strings(items: Sequence[str | None]) -> Codes:
        """Encode a Python sequence (small tables, tests); large columns use Arrow dictionaries instead."""
        table: dict[str, int] = {}
        codes = np.full(len(items), -1, dtype=np.int32)
        for i, item in enumerate(items):
            if item is not None:
                codes[i] = table.setdefault(item, len(table))
        return Codes(tuple(table), codes)

    def value(self, i: int) -> str | None:
        """Row i's string or None."""
        c = int(self.codes[i])
        return None if c < 0 else self.values[c]

    def mask_of(self, wanted: frozenset[str] | set[str]) -> npt.NDArray[np.bool_]:
        """Boolean mask of rows whose string is in ``wanted``."""
        lut = np.array([v in wanted for v in self.values] + [False], dtype=bool)
        return lut[self.codes]  # code -1 indexes the trailing False


@dataclass(frozen=True)
class Instructions:
    """Executed instructions. ``row_id`` is ``Instruction.id`` (the key ``Flow`` uses), None when the profile
    gives no ids (then nothing can refer to a row by id)."""

    start: I64
    end: I64
    engine: Codes  # canonical engine names
    opcode: Codes
    pcore: I32
    row_id: I64 | None
    execution: I32 | None = None  # ExecutionInfo index per row (-1: outside every window); None: no windows
    # Tensor-engine detail (bounds.md §1, §3); None when the profile does not say.
    flops: I64 | None = None  # BF16-equivalent FLOPs (``Instruction.adjusted_flops``)
    transpose: npt.NDArray[np.bool_] | None = None  # a Tensor-engine transpose (``tensor_instruction_type``)
    matmul_kmn: I32 | None = None  # shape (n, 3): K, M, N of a matmul, -1 where unknown

    def __len__(self) -> int:
        return int(self.start.shape[0])


@dataclass(frozen=True)
class Locations:
    """Source locations, one row per (instruction, location); a fused instruction has several rows.

    ``file`` holds the path exactly as recorded on the compile host; mapping to workspace files happens later
    (``nki_studio.profile.mapping``). ``iteration`` labels the loop values of the instruction ("n=0, k=3") when
    ``KernelIterationVariables`` exists (code -1 otherwise).
    """

    instr: I64
    file: Codes
    line: I32
    iteration: Codes
    source: str  # which field the locations came from, e.g. "KernelInstructions"; "" when none


@dataclass(frozen=True)
class DmaTransfers:
    """DMA transfers (``DmaPacketAggregated`` rows, or ``DmaPacket`` packets, or Perfetto queue slices)."""

    start: I64
    end: I64
    bytes: I64
    queue: Codes
    tensor: Codes  # ``variable``; "unknown" without DGE notifications
    queue_type: Codes
    pcore: I32
    instr: I64  # index into Instructions of the triggering instruction via Flow, -1 when unknown
    table: str  # "DmaPacketAggregated", "DmaPacket", "perfetto", "legacy-json dma", ...
    partitions: I32 | None = None  # SBUF partitions each transfer spans; None when the profile does not say
    direction: Codes | None = None  # "hbm->sbuf", "sbuf->hbm", ...; None when the profile does not say
    source: Codes | None = (
        None  # memory text (``source``: "[[INPUT]]" for kernel-input loads, "VIRTUAL..." spills)
    )
    dest: Codes | None = None  # memory text (``dest``)
    transpose: npt.NDArray[np.bool_] | None = None  # a transposing DMA (``is_transpose_mode``)
    # shape (n, 3): HBM allocation, first and last+1 byte of the HBM side; -1 where unknown (estimated profiles:
    # the simulator knows every byte range, Neuron Explorer records them as unparsed text)
    hbm_range: I64 | None = None

    def __len__(self) -> int:
        return int(self.start.shape[0])


@dataclass(frozen=True)
class Execution:
    """One execution window (``ExecutionInfo``)."""

    index: int
    start: int
    end: int


@dataclass(frozen=True)
class TensorRole:
    """A kernel input or output (``TensorInfo`` rows of type IN/OUT) and its size in bytes."""

    name: str
    role: str  # "IN" or "OUT"
    size: int


@dataclass
class Profile:
    """Everything the metrics need from one profile, whatever its format."""

    path: str
    format: str  # "parquet", "legacy-json", "csv", "summary-json", "perfetto"
    instructions: Instructions
    locations: Locations
    dma: DmaTransfers
    summary: dict[str, Any] = field(
        default_factory=dict
    )  # Summary fields; times seconds, *_percent fractions
    metadata: dict[str, Any] = field(default_factory=dict)
    executions: list[Execution] = field(default_factory=list)
    schema_version: str = ""
    notes: list[str] = field(default_factory=list)  # reader remarks and the profile's own Warning rows
    tensors: list[TensorRole] = field(default_factory=list)  # kernel inputs/outputs, when known
    # Where the timings come from: "measured" (a profiler on hardware) or "estimated" (nki_studio.estimate).
    provenance: str = "measured"

    @property
    def has_instructions(self) -> bool:
        """False for summary-only formats (summary-json)."""
        return len(self.instructions) > 0


def constant_column(value: int, n: int, dtype: type[np.integer[Any]] = np.int32) -> npt.NDArray[Any]:
    """``n`` rows of one value as a read-only broadcast view: no memory per row (model columns are never written
    in place; gathers and comparisons make ordinary arrays)."""
    return np.broadcast_to(dtype(value), (n,))


def empty_codes(n: int = 0) -> Codes:
    """A string column with every row missing."""
    return Codes((), constant_column(-1, n))


def make_instructions(
    start: I64,
    end: I64,
    engine: Codes,
    opcode: Codes,
    pcore: I32 | None = None,
    row_id: I64 | None = None,
) -> Instructions:
    """Build Instructions, filling optional columns and normalising engine names to ``ENGINE_NAMES``."""
    n = int(start.shape[0])
    canon = tuple(canonical_engine(v) for v in engine.values)
    uniq = tuple(dict.fromkeys(canon))
    remap = np.array([uniq.index(c) for c in canon] + [-1], dtype=np.int32)
    return Instructions(
        start=np.asarray(start, dtype=np.int64),
        end=np.asarray(end, dtype=np.int64),
        # Already canonical and distinct (the usual case): the codes stand as they are, no row-sized gather.
        engine=Codes(uniq, engine.codes if canon == uniq == engine.values else remap[engine.codes]),
        opcode=opcode,
        pcore=np.zeros(n, np.int32) if pcore is None else np.asarray(pcore, dtype=np.int32),
        row_id=None if row_id is None else np.asarray(row_id, dtype=np.int64),
    )


def no_locations() -> Locations:
    """The Locations of a profile without source information."""
    return Locations(np.zeros(0, np.int64), empty_codes(), np.zeros(0, np.int32), empty_codes(), "")


def no_dma() -> DmaTransfers:
    """The DmaTransfers of a profile without DMA data."""
    z = np.zeros(0, np.int64)
    return DmaTransfers(z, z, z, empty_codes(), empty_codes(), empty_codes(), np.zeros(0, np.int32), z, "")


def no_instructions() -> Instructions:
    """The Instructions of a summary-only profile."""
    z = np.zeros(0, np.int64)
    return make_instructions(z, z, empty_codes(), empty_codes())


def _is_sorted(a: npt.NDArray[Any]) -> bool:
    return bool(a.size < 2 or (a[1:] >= a[:-1]).all())


def _permuted(columns: Any, order: npt.NDArray[np.integer[Any]], n: int) -> Any:
    """A copy of a columnar dataclass with every row-aligned column (array of ``n`` rows, Codes) reordered."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(columns):
        value = getattr(columns, f.name)
        if isinstance(value, Codes):
            changes[f.name] = Codes(value.values, value.codes[order])
        elif isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n:
            changes[f.name] = value[order]
    return dataclasses.replace(columns, **changes)


def sort_by_start(profile: Profile) -> Profile:
    """Return the profile with instructions and DMA transfers ordered by start time and location rows ordered
    by instruction — the invariant the metrics rely on to replace full sorts by linear-time group sorts.
    Readers call this once; it is a no-op for data already in that order (as profilers usually write it)."""
    ins, loc, dma = profile.instructions, profile.locations, profile.dma
    if not _is_sorted(ins.start):
        order = np.argsort(ins.start, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        ins = _permuted(ins, order, len(ins))
        loc = Locations(rank[loc.instr], loc.file, loc.line, loc.iteration, loc.source)
        dma = dataclasses.replace(dma, instr=np.where(dma.instr >= 0, rank[np.maximum(dma.instr, 0)], -1))
    if not _is_sorted(loc.instr):
        o = np.argsort(loc.instr, kind="stable")
        loc = _permuted(loc, o, int(loc.instr.size))
    if not _is_sorted(dma.start):
        dma = _permuted(dma, np.argsort(dma.start, kind="stable"), len(dma))
    profile.instructions, profile.locations, profile.dma = ins, loc, dma
    return profile


def assign_executions(profile: Profile) -> Profile:
    """Give every instruction the ``ExecutionInfo.execution_index`` whose window holds its start (-1 when none
    does). Windows are matched by time because no Parquet field links a row to its execution
    (parquet-schema.md §5: "start_ts within [execution_start_ts, execution_end_ts]")."""
    if not profile.executions:
        return profile
    ins = profile.instructions
    ordered = _is_sorted(ins.start)  # readers sort by start: each window is then one slice
    if ordered and len(profile.executions) == 1:
        ex = profile.executions[0]
        if ins.start.size and ex.start <= int(ins.start[0]) and int(ins.start[-1]) < ex.end:  # the usual case
            profile.instructions = dataclasses.replace(ins, execution=constant_column(ex.index, len(ins)))
            return profile
    ids = np.full(len(ins), -1, np.int32)
    for ex in profile.executions:  # a handful of windows
        if ordered:
            ids[np.searchsorted(ins.start, ex.start, "left") : np.searchsorted(ins.start, ex.end, "left")] = (
                ex.index
            )
        else:
            ids[(ins.start >= ex.start) & (ins.start < ex.end)] = ex.index
    profile.instructions = dataclasses.replace(ins, execution=ids)
    return profile
