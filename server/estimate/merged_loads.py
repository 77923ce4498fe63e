"""The legacy compiler's merging of repeated loads: the trace of a legacy ``neuronxcc.nki`` kernel as it runs.

A legacy kernel that loads the same HBM region again (a weight tile reloaded per row tile, a slice loaded twice)
runs with one transfer: the compiler keeps the first copy on chip. The rule modelled here: a load (a DMA from
HBM to SBUF/PSUM) of the same region -- same tensor, same bytes, same view (shape, row run, row pitch) into a
tile of the same shape and dtype, on the same core -- as an earlier load costs nothing when neither that
region of HBM nor the earlier load's destination was written in between; it is dropped from the trace the
estimate schedules, and its readers read the copy already on chip: every read of the dropped destination, until
that destination or the kept copy is written again, is recorded as a read of the same bytes of the kept copy.

So the merge is visible to the models downstream: the readers wait for the kept copy's load, and the kept copy
stays live until its last redirected read, which the SBUF spill model (``estimate.spills``) counts -- where the
longer liveness pushes the program-order peak over the capacity, the estimate pays the store and reload the
hardware then makes (AccelOpt matmul measures 16x the merged estimate's DMA bytes: a merge without capacity
is not what runs). Whether the compiler declines a merge that would not fit, rather than merging and
spilling, is not documented (inferred: both move the same bytes here, the copy saved and reloaded or the
region loaded again, so the estimate's DMA bytes do not tell them apart).

Sources: the Neuron 2.26 "About the NKI compiler" page says the legacy compiler "performs a small number of middle
end and back end transformations" on the kernel (``nki.compiler.skip_middle_end_transformations`` turns the
middle end off); it names none of them. The merging rule is **inferred from the measured DMA bytes of four
AccelOpt kernels** (trn1, legacy API): add_rmsnorm_matmul (W reloaded per row tile: 4.44x the measured bytes
unmerged, 1.00x merged), matmul_add_rmsnorm (4.84x), rope_optimized (each slice loaded twice) and
rmsnorm_matmul (x loaded twice; 1.38x). Current (0.7) code is priced as written: NKI 0.7's compiler traces the
kernel and runs back-end transformations only (nki-0.7.md §1, the 2.33 "About the NKI compiler" page); its
``CompileConfig.dma_copy_elim`` is opt-in and not modelled.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from nki_studio.estimate.columns import first_of, group
from nki_studio.estimate.trace_plan import WRITE_ROLES
from nki_studio.model.targets import LEGACY
from nki_studio.sim.trace import Operand
from nki_studio.sim.trace_columns import CompactTrace, TraceBuilder

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class _Rect:
    """An operand's footprint in its allocation: partitions [p0, p1) x bytes [b0, b1)."""

    storage: int
    p0: int
    p1: int
    b0: int
    b1: int

    def overlaps(self, other: _Rect) -> bool:
        return (
            self.storage == other.storage
            and self.p0 < other.p1
            and other.p0 < self.p1
            and self.b0 < other.b1
            and other.b0 < self.b1
        )

    def contains(self, other: _Rect) -> bool:
        return (
            self.storage == other.storage
            and self.p0 <= other.p0
            and other.p1 <= self.p1
            and self.b0 <= other.b0
            and other.b1 <= self.b1
        )


@dataclass
class _Alias:
    """A dropped load's destination ``dropped`` read as the kept copy ``kept`` (the kept load's destination,
    operand row ``kept_row``) from the event after ``start`` to event ``end`` (included: an instruction reads
    before it writes)."""

    dropped: _Rect
    kept: _Rect
    kept_row: int
    start: int
    end: int


def as_compiled(trace: CompactTrace) -> CompactTrace:
    """``trace`` as the compiler of its NKI version runs it: a legacy kernel's repeated loads merged and their
    readers reading the kept copy (see the module docstring), any other trace unchanged (the same object)."""
    if trace.nki_version != LEGACY:
        return trace
    merged, aliases = _merges(trace)
    if not merged.any():
        return trace
    kept = np.flatnonzero(~merged)
    records = trace.records(kept)
    for i, operands in _redirected(trace, aliases).items():
        at = int(np.searchsorted(kept, i))
        records[at] = dataclasses.replace(records[at], operands=operands)
    builder = TraceBuilder()  # the records carry their version
    builder.extend(records)
    return builder.build()


def merged_loads(trace: CompactTrace) -> B:
    """Per event, whether it is a load the legacy compiler merges into an earlier one (see the module
    docstring), whatever the trace's version."""
    return _merges(trace)[0]


def _merges(trace: CompactTrace) -> tuple[B, list[_Alias]]:
    """``merged_loads`` and the aliases the merges make."""
    n = len(trace)
    merged = np.zeros(n, bool)
    owner = trace.operand_event()
    if not owner.size:
        return merged, []
    storage = trace.operand("storage").astype(np.int64)
    buffers = trace.operand_table("buffer")
    hbm = trace.operand("buffer") == (buffers.index("hbm") if "hbm" in buffers else -1)
    write = _writes(trace)
    known = storage >= 0
    dma = np.array([e == "dma" for e in trace.event_table("engine")], bool)[trace.event("engine")]
    source = first_of(hbm & ~write & known, owner, n)
    dest = first_of(~hbm & write & known, owner, n)
    loads = np.flatnonzero(dma & (source >= 0) & (dest >= 0))
    if loads.size < 2:
        return merged, []
    src, dst = source[loads], dest[loads]
    # the same region loaded the same way into the same kind of tile (operand columns: views, not values)
    key, _ = group(
        [
            trace.operand(c)[src]
            for c in ("storage", "byte_start", "byte_end", "row_bytes", "row_pitch", "shape")
        ]
        + [trace.operand(c)[dst] for c in ("shape", "dtype", "buffer")]
        + [trace.event("rank")[loads], trace.event("core")[loads]]
    )
    repeated = np.bincount(key)[key] > 1
    if not repeated.any():  # the common case: every load a different region
        return merged, []
    loads, src, dst, key = loads[repeated], src[repeated], dst[repeated], key[repeated]
    # the writes that can make a copy stale: of a repeated region's HBM tensor or of a destination's tile
    watched = np.isin(storage, np.concatenate([storage[src], storage[dst]]))
    writes = np.flatnonzero(write & known & watched)
    aliases = _walk(trace, merged, loads, src, dst, key, writes, storage)
    return merged, aliases


def _writes(trace: CompactTrace) -> B:
    """Per operand row, whether the instruction writes it."""
    roles = np.array([r.startswith(WRITE_ROLES) for r in trace.operand_table("role")], bool)
    return roles[trace.operand("role")]


def _redirected(trace: CompactTrace, aliases: list[_Alias]) -> dict[int, tuple[Operand, ...]]:
    """Event -> its operands with the reads of a dropped destination, inside the alias's window, reading the
    same bytes of the kept copy."""
    if not aliases:
        return {}
    storage = trace.operand("storage")
    by_storage: dict[int, list[_Alias]] = {}
    for a in aliases:
        by_storage.setdefault(a.dropped.storage, []).append(a)
    rows = np.flatnonzero(np.isin(storage, list(by_storage)) & ~_writes(trace))
    owner, offsets = trace.operand_event(), trace.offsets
    p0, p1 = trace.operand("part_start"), trace.operand("part_end")
    b0, b1 = trace.operand("byte_start"), trace.operand("byte_end")
    kept_ops = {a.kept_row: _operand(trace, a.kept_row) for a in aliases}
    out: dict[int, list[Operand]] = {}
    for row in rows.tolist():
        event = int(owner[row])
        read = _Rect(int(storage[row]), int(p0[row]), int(p1[row]), int(b0[row]), int(b1[row]))
        windows = by_storage[read.storage]
        alias = next((a for a in windows if a.start < event <= a.end and a.dropped.contains(read)), None)
        if alias is None:
            continue
        operands = out.setdefault(event, list(trace[event].operands))
        kept = kept_ops[alias.kept_row]
        dp, db = alias.kept.p0 - alias.dropped.p0, alias.kept.b0 - alias.dropped.b0
        at = row - int(offsets[event])
        o = operands[at]
        operands[at] = dataclasses.replace(
            o,
            storage=alias.kept.storage,
            part_start=o.part_start + dp,
            part_end=o.part_end + dp,
            byte_start=o.byte_start + db,
            byte_end=o.byte_end + db,
            name=kept.name,
            block_bytes=kept.block_bytes,
        )
    return {e: tuple(ops) for e, ops in out.items()}


def _operand(trace: CompactTrace, row: int) -> Operand:
    """Operand-table row ``row`` as a record."""
    event = int(trace.operand_event()[row])
    return trace[event].operands[row - int(trace.offsets[event])]


def _walk(
    trace: CompactTrace, merged: B, loads: I64, src: I64, dst: I64, key: I64, writes: I64, storage: I64
) -> list[_Alias]:
    """Go through the repeated loads and the watched writes in trace order, marking ``merged``; the aliases
    the merges make, each window closed by the first write to either tile."""
    p0, p1 = trace.operand("part_start"), trace.operand("part_end")
    b0, b1 = trace.operand("byte_start"), trace.operand("byte_end")

    def rect(row: int) -> _Rect:
        first = int(p0[row])  # an HBM operand spans no partitions (0..0): its flat buffer is one
        return _Rect(int(storage[row]), first, max(int(p1[row]), first + 1), int(b0[row]), int(b1[row]))

    owner = trace.operand_event()
    regions: dict[int, _Rect] = {}  # key -> its HBM region
    copies: dict[int, list[tuple[_Rect, int]]] = {}  # key -> the tiles a load left a copy of it in (and row)
    keys_in: dict[int, set[int]] = {}  # storage -> the keys whose region or a copy lies in it
    aliases: list[_Alias] = []
    open_in: dict[int, list[_Alias]] = {}  # storage -> the open aliases with a tile in it
    load_at = {e: i for i, e in enumerate(loads.tolist())}
    write_rows: dict[int, list[int]] = {}
    for row in writes.tolist():
        write_rows.setdefault(int(owner[row]), []).append(row)

    def overwrite(written: _Rect, keep: int, event: int) -> None:
        """``written`` changes at ``event``: copies in it, and every copy of a region in it, are stale (but
        ``keep``'s); an alias with a tile in it ends."""
        for k in keys_in.get(written.storage, ()):
            if k == keep or not copies.get(k):
                continue
            if written.overlaps(regions[k]):
                copies[k] = []
            else:
                copies[k] = [c for c in copies[k] if not written.overlaps(c[0])]
        still = []
        for a in open_in.get(written.storage, ()):
            if a.end >= event and (written.overlaps(a.dropped) or written.overlaps(a.kept)):
                a.end = min(a.end, event)
            else:
                still.append(a)
        open_in[written.storage] = still

    end = len(trace)
    for event in sorted(set(load_at) | set(write_rows)):
        i = load_at.get(event)
        k = int(key[i]) if i is not None else -1
        kept = copies.get(k) if i is not None else None
        if kept:
            merged[event] = True
        for row in write_rows.get(event, ()):
            overwrite(rect(row), k if i is not None and row == dst[i] else -1, event)
        if i is None:
            continue
        region, copy = rect(int(src[i])), rect(int(dst[i]))
        if kept:  # the dropped load's tile reads as the first copy still held
            alias = _Alias(copy, kept[0][0], kept[0][1], event, end)
            aliases.append(alias)
            for st in {copy.storage, alias.kept.storage}:
                open_in.setdefault(st, []).append(alias)
            continue
        regions[k] = region
        copies.setdefault(k, []).append((copy, int(dst[i])))
        keys_in.setdefault(region.storage, set()).add(k)
        keys_in.setdefault(copy.storage, set()).add(k)
    return aliases
