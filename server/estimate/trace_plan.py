"""What the scheduler needs of each instruction, computed from the trace's columns in whole-array steps
(``nki_studio.sim.trace_columns``), so its per-instruction loop only places and records:

* durations: ``cost.instruction_cost`` / ``schedule.dma_plan`` once per distinct cost signature (op, engine,
  sizes, and each operand's role, shape, dtype, buffer, partitions and row bytes), not once per instruction;
* the footprint of each operand that touches bytes (allocation, bytes x partitions, written or read), with
  the PSUM banks a Vector/Scalar access holds, and whether it is the last access of its allocation on its
  core (then the scheduler forgets the allocation: nothing later can depend on it);
* the Tensor engine's issue overhead and stationary loads (a load unless the stationary footprint is the one
  the previous matmul of the core left in the array) and the Scalar engine's activation-table loads, added to
  the durations: both follow from the order of a core's instructions alone;
* the DMA queue (``_dma_queues``: per HBM tensor and direction), the join scope of barriers and collectives, and what of this the scheduler
  must look at per instruction (``kind``), so that its common case is a plain one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from nki_studio.estimate import constants as K
from nki_studio.estimate.activation_tables import table_loads
from nki_studio.estimate.columns import SMALL_ROWS, first_of, group, row_hash
from nki_studio.estimate.tile_deps import TileDeps, tile_deps
from nki_studio.model.targets import Generation, TargetLimits
from nki_studio.sim.trace import TraceEvent
from nki_studio.sim.trace_columns import CompactTrace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

WRITE_ROLES = ("dst", "out", "reduce_res", "val_dst", "idx_dst")
CORE_JOINS = ("nisa.core_barrier", "nisa.sendrecv")
# Engines that share PSUM access: Vector and Scalar never touch one PSUM bank at the same time (on v2 not PSUM
# at all at the same time) -- hardware.md §3, [A2], [A3].
PSUM_SHARERS = ("vector", "scalar")
SCOPES = (None, "core", "all")  # join scope by code
# ``Plan.kind`` bits: what an instruction needs beyond its engine queue and listed dependencies
DMA, FOOTPRINTS, BANKS, JOIN = 1, 2, 4, 8


def join_scope(op: str) -> str | None:
    """The instances an instruction joins: "core" (the cores of one rank), "all" (every instance), or None."""
    if op in CORE_JOINS:
        return "core"
    return "all" if op.startswith("ncc.") else None


@dataclass
class Plan:
    """Per-event and per-footprint inputs of the scheduler (see the module docstring). Footprint rows are in
    event order; event i's are ``fp_offsets[i]:fp_offsets[i + 1]``."""

    engine: npt.NDArray[np.int32]  # code into ``engines``
    engines: tuple[str, ...]
    ns: F64  # duration (DMA: time on its engines, without the per-transfer latency)
    kind: npt.NDArray[np.int8]  # DMA | FOOTPRINTS | BANKS | JOIN bits, 0: the engine queue and deps alone
    dma_first: I64  # DMA engines first..last; -1 for other engines
    dma_last: I64
    queue: I64  # DMA queue (``_dma_queues``)
    scope: npt.NDArray[np.int8]  # code into SCOPES
    stream: I64  # (rank, core) program, code into ``streams``
    streams: tuple[tuple[int, int], ...]
    deps: TileDeps  # dependencies known before scheduling
    fp_offsets: I64  # the other footprints, for the scheduler's footprint index
    fp_storage: I64
    fp_b0: I64
    fp_b1: I64
    fp_p0: I64
    fp_p1: I64
    fp_write: B
    fp_last: B  # the last access of its allocation on its core
    bank_offsets: I64  # PSUM banks a Vector/Scalar access holds: bank0..bank1
    bank0: I64
    bank1: I64


def plan(
    trace: CompactTrace,
    limits: TargetLimits,
    cost: Callable[[TraceEvent], tuple[int, int, float]],
) -> Plan:
    """The scheduler's inputs for ``trace``; ``cost(event)`` is (first DMA engine, last, ns) of a
    representative event of each cost signature."""
    n = len(trace)
    owner = trace.operand_event()
    eng_code = trace.event("engine")
    engines = trace.event_table("engine")
    first_e, last_e, ns = _durations(trace, cost)
    fp = _operand_footprints(trace, limits)
    stream_ids, streams = _programs(trace)
    rows = np.flatnonzero(fp.valid)
    key = _allocation_keys(fp.storage, rows, owner, stream_ids, len(streams))
    every = rows.size == owner.size  # then the columns themselves, not copies

    def take(column: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return column if every else column[rows]

    deps = tile_deps(
        key,
        take(owner),
        take(fp.write),
        [take(fp.b0), take(fp.b1), take(fp.p0), take(fp.p1)],
        eng_code,
        K.SEMAPHORE_LATENCY.value,
        n,
    )
    bank_offsets = _offsets(owner[fp.held], n)
    key, rows = key[~deps.static], rows[~deps.static]  # the scheduler's footprint index: the other accesses
    fp_offsets = _offsets(owner[rows], n)
    op_code = trace.event("op").astype(np.int64)
    ops = trace.event_table("op")
    role = trace.operand("role")
    ns = _engine_extras(
        trace, limits, ns, stream_ids, eng_code, engines, op_code, ops, role, trace.operand_table("role")
    )
    scope = (
        np.array([SCOPES.index(join_scope(o)) for o in ops], np.int8)[op_code] if n else np.zeros(0, np.int8)
    )
    return Plan(
        engine=eng_code,
        engines=engines,
        ns=ns,
        kind=_kinds(first_e, fp_offsets, bank_offsets, scope),
        dma_first=first_e,
        dma_last=last_e,
        queue=_dma_queues(trace, fp, owner, n),
        scope=scope,
        stream=stream_ids,
        streams=streams,
        deps=deps,
        fp_offsets=fp_offsets,
        fp_storage=fp.storage[rows],
        fp_b0=fp.b0[rows],
        fp_b1=fp.b1[rows],
        fp_p0=fp.p0[rows],
        fp_p1=fp.p1[rows],
        fp_write=fp.write[rows],
        fp_last=_last_access(key),
        bank_offsets=bank_offsets,
        bank0=fp.bank0,
        bank1=fp.bank1,
    )


def _durations(
    trace: CompactTrace, cost: Callable[[TraceEvent], tuple[int, int, float]]
) -> tuple[I64, I64, F64]:
    """(first DMA engine, last, ns) of every event, ``cost`` called once per cost signature: events grouped by
    their own fields and their operands' hashes, then checked operand by operand against the group's first
    event (an exact grouping on a collision)."""
    if not len(trace):
        return np.full(0, -1, np.int64), np.full(0, -1, np.int64), np.zeros(0, np.float64)
    owner = trace.operand_event()
    o_cols = [
        trace.operand("role"),
        *(trace.operand(f) for f in ("shape", "dtype", "buffer", "part_start", "part_end", "row_bytes")),
    ]
    pos = np.arange(len(owner), dtype=np.int64) - trace.offsets[owner]
    # few operands: their exact grouping costs less than hashing them and checking the hash groups
    if len(owner) <= SMALL_ROWS:
        sig, reps = _signatures(trace, pos, group(o_cols)[0].astype(np.uint64))
    else:
        sig, reps = _signatures(trace, pos, row_hash(o_cols))
        rep_row = trace.offsets[reps[sig[owner]]] + pos
        if not all(np.array_equal(c, c[rep_row]) for c in o_cols):
            sig, reps = _signatures(trace, pos, group(o_cols)[0].astype(np.uint64))
        del rep_row
    del pos, o_cols
    got = [cost(e) for e in trace.records(reps)]  # the representatives alone as records, in one batch
    first_e = np.array([g[0] for g in got], np.int64)[sig]
    last_e = np.array([g[1] for g in got], np.int64)[sig]
    return first_e, last_e, np.array([g[2] for g in got], np.float64)[sig]


def _signatures(trace: CompactTrace, pos: I64, operand_keys: npt.NDArray[np.uint64]) -> tuple[I64, I64]:
    """(signature per event, a representative event per signature): events grouped by their own fields and
    the keys of their operands (``pos``: each operand's position in its event)."""
    n = len(trace)
    counts = np.diff(trace.offsets)
    padded = np.zeros((int(counts.max()), n), np.uint64)  # absent operands: told apart by the count
    padded[pos, trace.operand_event()] = operand_keys
    e_cols = [
        trace.event("op").astype(np.int64),
        trace.event("engine"),
        trace.event("free_elements"),
        trace.event("partitions"),
        trace.regions("bytes_read"),
        trace.regions("bytes_written"),
        counts,
        *padded,
    ]
    return group(e_cols)


@dataclass
class _OperandFootprints:
    """Per operand: its allocation, bytes ``b0..b1`` x partitions ``p0..p1`` (HBM: flat, partitions 0..1),
    whether it writes, whether it touches bytes at all (``valid``); and the operands (``held``) of the PSUM
    banks ``bank0..bank1`` a Vector/Scalar access holds."""

    storage: I64
    b0: I64
    b1: I64
    p0: I64
    p1: I64
    write: B
    valid: B
    held: I64
    bank0: I64
    bank1: I64


def _operand_footprints(trace: CompactTrace, limits: TargetLimits) -> _OperandFootprints:
    """The footprint of every operand (see ``_OperandFootprints``)."""
    owner = trace.operand_event()
    storage = trace.operand("storage")
    b0, b1 = trace.operand("byte_start"), trace.operand("byte_end")
    ps, pe = trace.operand("part_start"), trace.operand("part_end")
    buffers = trace.operand_table("buffer")
    buf = trace.operand("buffer")
    hbm = buf == (buffers.index("hbm") if "hbm" in buffers else -1)
    psum = buf == (buffers.index("psum") if "psum" in buffers else -1)
    op_code = trace.event("op").astype(np.int64)
    fence_op = np.array([o == "nisa.core_barrier" for o in trace.event_table("op")], bool)
    # a barrier counts as a write of its tensor: it waits for the accesses before it, later ones wait for it
    role_writes = np.array([r.startswith(WRITE_ROLES) for r in trace.operand_table("role")], bool)
    write = role_writes[trace.operand("role")] | fence_op[op_code[owner]]
    valid = (storage >= 0) & (hbm | (pe > ps)) & (b1 > b0)
    p0, p1, b0, b1 = _hbm_rows(trace, hbm & valid, storage, ps, pe, b0, b1)
    sharer = np.array([e in PSUM_SHARERS for e in trace.event_table("engine")], bool)
    held = np.flatnonzero(sharer[trace.event("engine")][owner] & psum & valid)
    bank = limits.psum_bank_bytes
    if limits.generation == Generation.GEN2:  # v2: one PSUM access at a time
        bank0 = bank1 = np.zeros(held.size, np.int64)
    else:
        bank0, bank1 = b0[held] // bank, (b1[held] - 1) // bank
    return _OperandFootprints(storage, b0, b1, p0, p1, write, valid, held, bank0, bank1)


def _dma_queues(trace: CompactTrace, fp: _OperandFootprints, owner: I64, n: int) -> I64:
    """Each event's DMA queue: one per HBM tensor and direction (2 x its allocation, + 1 for a store), an
    on-chip copy's per destination allocation (-2 - it), -1 without either. The hardware runs a queue's
    transfers in order on each DMA engine, 16 queues per engine (hardware.md §6, [DMA]); which queue the
    compiler gives a transfer is not documented: one per tensor and direction is inferred from measured
    profiles, whose queues belong to the issuing engine and the data's role (``qSyncIO0``, ``qGpSimdDynamic``:
    shared/profile-formats/parquet-schema.md) and which put two input tensors of one kernel on two queues
    (metrics.md §6.1). Not the issuing source line: a helper that issues every load is not one queue."""
    hbm = trace.operand("buffer") == (
        trace.operand_table("buffer").index("hbm") if "hbm" in trace.operand_table("buffer") else -1
    )
    if not owner.size:
        return np.full(n, -1, np.int64)
    at = first_of(hbm & fp.valid, owner, n)
    dst = first_of(fp.write & fp.valid & ~hbm, owner, n)
    storage = fp.storage.astype(np.int64)
    tensor = 2 * storage[at] + fp.write[at]
    return np.where(at >= 0, tensor, np.where(dst >= 0, -2 - storage[dst], -1))


def _hbm_rows(
    trace: CompactTrace, hbm: B, storage: I64, ps: I64, pe: I64, b0: I64, b1: I64
) -> tuple[I64, I64, I64, I64]:
    """(p0, p1, b0, b1) footprint columns with HBM operands as rows x bytes within a row wherever their
    allocation has a row pitch (``Operand.row_pitch``): a rectangle view its rows and its byte range in them,
    so column blocks of one output do not overlap; another view of such an allocation its bounding box's rows
    whole; an allocation without a pitch flat (partitions 0..1, its byte range)."""
    p0, p1 = np.where(hbm, 0, ps).astype(np.int64), np.where(hbm, 1, pe).astype(np.int64)
    b0, b1 = b0.astype(np.int64), b1.astype(np.int64)
    own = trace.operand("row_pitch").astype(np.int64)
    rows = np.flatnonzero(hbm)
    if not rows.size or not own[rows].any():
        return p0, p1, b0, b1
    pitch_of = np.zeros(int(storage[rows].max()) + 1, np.int64)
    np.maximum.at(pitch_of, storage[rows], own[rows])
    pitch = pitch_of[storage[rows]]
    rows, pitch = rows[pitch > 0], pitch[pitch > 0]
    lo, hi = b0[rows], b1[rows]
    first, last = lo // pitch, (hi - 1) // pitch
    rect = own[rows] > 0
    p0[rows], p1[rows] = first, last + 1
    b0[rows] = np.where(rect, lo - first * pitch, 0)
    b1[rows] = np.where(rect, hi - last * pitch, pitch)
    return p0, p1, b0, b1


def _programs(trace: CompactTrace) -> tuple[I64, tuple[tuple[int, int], ...]]:
    """Each event's (rank, core) program, as a code into the programs, numbered in order of appearance (as the
    trace lists them)."""
    n = len(trace)
    rank, core = trace.event("rank"), trace.event("core")
    if n and (rank.any() or core.any()):
        stream_ids, stream_first = group([rank, core])
    else:  # one program
        stream_ids, stream_first = np.zeros(n, np.int64), np.zeros(min(n, 1), np.int64)
    order = np.argsort(stream_first)
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    return renumber[stream_ids], tuple((int(rank[i]), int(core[i])) for i in stream_first[order])


def _allocation_keys(storage: I64, rows: I64, owner: I64, stream_ids: I64, programs: int) -> I64:
    """The (program, allocation) of the operands ``rows``, as dense numbers."""
    key = storage[rows].astype(np.int64)  # dense as the recorder numbers allocations: 0, 1, ...
    if programs > 1:
        key += stream_ids[owner[rows]] * (int(storage.max(initial=0)) + 1)
    if key.size and int(key.max()) > 4 * key.size + 1024:  # sparse numbers (a hand-made trace): renumber
        key = group([key])[0]
    return key


def _last_access(key: I64) -> B:
    """Whether each access is the last of its (program, allocation): the tail of its run in a stable sort."""
    by_key = np.argsort(key, kind="stable")
    tail = np.empty(key.size, bool)
    if key.size:
        sorted_key = key[by_key]
        np.not_equal(sorted_key[1:], sorted_key[:-1], out=tail[:-1])
        tail[-1] = True
    last = np.zeros(key.size, bool)
    last[by_key[tail]] = True
    return last


def _offsets(owners: I64, n: int) -> I64:
    """CSR offsets of rows owned by events ``owners`` (in event order) over ``n`` events."""
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(owners, minlength=n), out=offsets[1:])
    return offsets


def _kinds(
    first_e: I64, fp_offsets: I64, bank_offsets: I64, scope: npt.NDArray[np.int8]
) -> npt.NDArray[np.int8]:
    """``Plan.kind``: what each event needs of the scheduler beyond its engine queue and listed dependencies."""
    kind = np.where(first_e >= 0, DMA, 0).astype(np.int8)
    kind[np.diff(fp_offsets) > 0] |= FOOTPRINTS
    kind[np.diff(bank_offsets) > 0] |= BANKS
    kind[scope != 0] |= JOIN
    return kind


def _engine_extras(
    trace: CompactTrace,
    limits: TargetLimits,
    ns: F64,
    stream_ids: I64,
    eng_code: npt.NDArray[np.int32],
    engines: tuple[str, ...],
    op_code: I64,
    ops: tuple[str, ...],
    role: npt.NDArray[np.int32],
    roles: tuple[str, ...],
) -> F64:
    """``ns`` plus the Tensor engine's issue overhead and stationary loads, and the activation-table loads
    (module docstring), each added as the scheduler used to add it when it placed the instruction."""
    n = len(ns)
    ns = ns.copy()
    owner = trace.operand_event()
    storage, b0, b1 = trace.operand("storage"), trace.operand("byte_start"), trace.operand("byte_end")
    ps, pe = trace.operand("part_start"), trace.operand("part_end")
    # the stationary operand: a PE transpose's data, else the matmul's stationary
    tensor = np.array([e == "tensor" for e in engines], bool)[eng_code]
    pe_transpose = (
        tensor & np.array([o.rsplit(".", 1)[-1] in ("nc_transpose", "transpose") for o in ops], bool)[op_code]
    )
    is_data = np.array([r in ("data", "src") for r in roles], bool)[role]
    is_st = np.array([r == "stationary" for r in roles], bool)[role]
    st_row = np.where(pe_transpose, first_of(is_data, owner, n), first_of(is_st, owner, n))
    clock = limits.clock_ghz["tensor"]
    overhead = K.TENSOR_INSTRUCTION_OVERHEAD.value
    without = np.flatnonzero(tensor & (st_row < 0))
    ns[without] += overhead / clock
    has = np.flatnonzero(tensor & (st_row >= 0))
    if has.size:
        r = st_row[has]
        ids = group([storage[r], b0[r], b1[r], ps[r], pe[r]])[0]
        st = np.where(storage[r] < 0, -1, ids)  # -1: an unknown allocation, always loaded
        shapes = trace.operand_table("shape")
        free = np.array([math.prod(s[1:]) if len(s) > 1 else 1 for s in shapes], np.float64)
        load = np.maximum(64, free[trace.operand("shape")[r]]) / K.STATIONARY_LOAD_SPEEDUP.value
        # loaded unless the previous matmul of the same core had the same (known) stationary footprint
        by = np.argsort(stream_ids[has], kind="stable")
        same = np.zeros(has.size, bool)
        sb, stb = stream_ids[has][by], st[by]
        same[by[1:]] = (sb[1:] == sb[:-1]) & (stb[1:] == stb[:-1]) & (stb[1:] >= 0)
        ns[has[~same]] += (overhead + load[~same]) / clock
        ns[has[same]] += overhead / clock
    tables = table_loads(trace)
    if tables:
        ns[np.fromiter(tables, np.int64, len(tables))] += np.fromiter(
            tables.values(), np.float64, len(tables)
        )
    return ns
