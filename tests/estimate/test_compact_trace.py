"""The columnar trace (``sim.trace_columns``) against the record list it replaces: the same records back, the
same schedule as the quadratic statement of the model (``test_schedule_reference``) on random traces of whole
tiles and of overlapping footprints, and estimated-profile columns equal to a per-event restatement."""

from __future__ import annotations

import dataclasses
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from nki_studio.estimate import columns, trace_plan
from nki_studio.estimate import schedule as scheduler
from nki_studio.estimate.profile import estimate_profile
from nki_studio.estimate.schedule import schedule
from nki_studio.model.targets import Target
from nki_studio.profile.analyze import analyze_profile
from nki_studio.profile.bounds import compute_bounds
from nki_studio.profile.investigations import investigate
from nki_studio.sim.trace import Operand, TraceEvent
from nki_studio.sim.trace_columns import CompactTrace, TraceBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_schedule_reference import LIMITS, _random_trace, reference_schedule


def _tile_trace(seed: int, n: int = 400) -> list[TraceEvent]:
    """Random kernels over tiles: each allocation is accessed whole, or as disjoint byte ranges of it (an HBM
    tensor tile by tile), by loads, element-wise ops, matmuls into PSUM and stores, on two cores, with a
    sprinkle of allocations that are accessed in overlapping parts (left to the footprint index)."""
    rng = random.Random(seed)
    events: list[TraceEvent] = []
    kinds = [
        ("nisa.tensor_copy", "vector", ("dst", "src")),
        ("nisa.activation", "scalar", ("dst", "data")),
        ("nisa.tensor_tensor", "vector", ("dst", "data1", "data2")),
        ("nisa.nc_matmul", "tensor", ("dst", "stationary", "moving")),
        ("nisa.dma_copy", "dma", ("dst", "src")),
        ("nisa.iota", "gpsimd", ("dst",)),
    ]

    def tile(role: str, buffer: str = "sbuf") -> Operand:
        storage = rng.randrange(6) if buffer == "sbuf" else 10 + rng.randrange(2)
        if storage == 5:  # parts of one allocation that overlap
            b0 = rng.choice((0, 256, 512))
            return Operand(role, (128, 256), "bfloat16", buffer, storage, 0, 128, b0, b0 + 512, 512)
        if buffer == "psum":  # two disjoint 2 KiB banks
            b0 = rng.choice((0, 2048))
            return Operand(role, (128, 512), "float32", buffer, storage, 0, 128, b0, b0 + 2048, 2048)
        return Operand(role, (128, 1024), "bfloat16", buffer, storage, 0, 128, 0, 2048, 2048)

    def hbm(role: str) -> Operand:
        t = rng.randrange(6)
        name = "" if role == "dst" and rng.random() < 0.5 else ("arg0" if role == "src" else "out")
        return Operand(
            role,
            (128, 1024),
            "bfloat16",
            "hbm",
            20 + (role == "dst"),
            0,
            0,
            t << 18,
            (t + 1) << 18,
            2048,
            name,
        )

    for seq in range(n):
        op, engine, roles = rng.choice(kinds)
        if engine == "dma":
            ops = (tile("dst"), hbm("src")) if rng.random() < 0.6 else (hbm("dst"), tile("src"))
        elif engine == "tensor":
            ops = (tile("dst", "psum"), tile("stationary"), tile("moving"))
        else:
            ops = tuple(tile(r, "psum" if r != "dst" and rng.random() < 0.3 else "sbuf") for r in roles)
        moved = {o.buffer: 128 * (o.byte_end - o.byte_start) for o in ops}
        events.append(
            TraceEvent(
                seq, op, engine, "k.py", 1 + seq % 5, (), ops, 128, 1024, moved, moved, core=rng.randrange(2)
            )
        )
    return events


def test_the_columns_give_the_same_records_back() -> None:
    events = _random_trace(3) + _tile_trace(4, 50)
    # a stack, a region outside the usual three, a byte offset beyond 32 bits (an int64 column)
    big = Operand("src", (4,), "float32", "hbm", 7, 0, 0, 2**40, 2**40 + 16, 16, "x")
    events.append(
        TraceEvent(len(events), "nl.load", "dma", "a.py", 3, ("a.py:1:f",), (big,), 0, 4, {"dram": 16}, {})
    )
    compact = CompactTrace.of(events)
    assert len(compact) == len(events)
    assert list(compact) == events
    assert compact[-1] == events[-1] and compact[7] == events[7]
    assert compact[10:20] == events[10:20] and compact[::9] == events[::9]
    rows = np.array([len(events) - 1, 3, 0, 3, 12])  # any order, repeats, the one with an extra region
    assert compact.records(rows) == [events[i] for i in rows.tolist()]
    assert compact.records(np.zeros(0, np.int64)) == []
    assert compact.operand("byte_start").dtype == np.int64  # 2**40 does not fit int32
    assert CompactTrace.of(compact) is compact


def test_the_builder_can_be_read_while_recording() -> None:
    events = _random_trace(5, 20)
    builder = TraceBuilder()
    builder.extend(events[:10])
    assert list(builder.build()) == events[:10]
    builder.extend(events[10:])
    assert list(builder.build()) == events


def test_the_compact_schedule_equals_the_reference_on_tiles_and_overlaps(tracking: str) -> None:
    for events in [_tile_trace(seed) for seed in range(6)] + [_random_trace(seed) for seed in (11, 12)]:
        compact = CompactTrace.of(events)
        got = schedule(compact, LIMITS)
        start, end = reference_schedule(events)
        assert np.array_equal(got.start, np.array(start)), "start times differ"
        assert np.array_equal(got.end, np.array(end)), "end times differ"
        assert np.array_equal(schedule(events, LIMITS).end, got.end)  # a list goes the same way


def _restated_columns(events: list[TraceEvent]) -> dict[str, list[object]]:
    """Per-event statements of what the profile builder derives, in profile row order (instructions, then the
    DMA issue rows)."""
    rows = [e for e in events if e.engine != "dma"] + [e for e in events if e.engine == "dma"]
    seen: Counter[tuple[str, int, tuple[str, ...], str]] = Counter()
    iterations = []
    for e in rows:
        key = (e.file, e.line, e.stack, e.op)
        iterations.append(seen[key])
        seen[key] += 1
    dma = [e for e in events if e.engine == "dma"]
    hbm = [next((o for o in e.operands if o.buffer == "hbm"), None) for e in dma]
    src = [next(o for o in e.operands if not o.role.startswith("dst")) for e in dma]
    dst = [next(o for o in e.operands if o.role.startswith("dst")) for e in dma]
    return {
        "opcode": [e.op.rsplit(".", 1)[-1] for e in rows],
        "line": [e.line for e in rows],
        "iteration": iterations,
        "bytes": [max(sum(e.bytes_read.values()), sum(e.bytes_written.values())) for e in dma],
        "partitions": [
            max((o.part_end - o.part_start for o in e.operands if o.buffer != "hbm"), default=0) for e in dma
        ],
        "tensor": [(o.name or f"hbm#{o.storage}") if o is not None else "sbuf" for o in hbm],
        "direction": [f"{s.buffer}->{d.buffer}" for s, d in zip(src, dst, strict=True)],
        "kmn": [
            (o.shape[0], o.shape[1], m.shape[1])
            for e in rows
            if e.op == "nisa.nc_matmul"
            for o in [next(x for x in e.operands if x.role == "stationary")]
            for m in [next(x for x in e.operands if x.role == "moving")]
        ],
    }


def test_the_estimated_profile_columns_equal_a_per_event_restatement() -> None:
    events = _tile_trace(8, 300)
    p = estimate_profile(CompactTrace.of(events), Target())
    want = _restated_columns(events)
    ins = p.instructions  # sorted by start: compare the rows as multisets
    got = Counter(
        (ins.opcode.value(r), int(p.locations.line[r]), p.locations.iteration.value(r))
        for r in range(len(ins))
    )
    assert np.array_equal(p.locations.instr, np.arange(len(ins)))
    assert got == Counter(
        (o, ln, f"iteration={i}")
        for o, ln, i in zip(want["opcode"], want["line"], want["iteration"], strict=True)
    )
    dma = p.dma
    got_dma = Counter(
        (int(dma.bytes[r]), int(dma.partitions[r]), dma.tensor.value(r), dma.direction.value(r))
        for r in range(len(dma))
    )
    assert got_dma == Counter(
        zip(want["bytes"], want["partitions"], want["tensor"], want["direction"], strict=True)
    )
    kmn = Counter(tuple(int(x) for x in row) for row in ins.matmul_kmn if row[0] >= 0)
    assert kmn == Counter(want["kmn"])


def test_bounds_and_investigations_are_computed_when_first_read() -> None:
    profile = estimate_profile(CompactTrace.of(_tile_trace(9, 200)), Target())
    report = analyze_profile(profile)
    assert "bounds" not in vars(report) and "investigations" not in vars(report)
    assert report.bounds is not None
    assert report.bounds.to_dict() == compute_bounds(profile).to_dict()
    assert [i.to_dict() for i in report.investigations] == [i.to_dict() for i in investigate(profile)]
    assert "bounds" in vars(report)


def test_hash_collisions_fall_back_to_exact_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    events = _tile_trace(10, 200)
    want = schedule(events, LIMITS)
    collide = lambda columns: np.zeros(len(columns[0]), np.uint64)  # noqa: E731  every row one hash
    monkeypatch.setattr(trace_plan, "row_hash", collide)
    monkeypatch.setattr(columns, "row_hash", collide)
    got = schedule(CompactTrace.of(events), LIMITS)
    assert np.array_equal(got.start, want.start) and np.array_equal(got.end, want.end)


def test_sparse_allocation_numbers_schedule_the_same() -> None:
    events = _tile_trace(12, 200)
    spread = [
        TraceEvent(
            e.seq, e.op, e.engine, e.file, e.line, e.stack,
            tuple(dataclasses.replace(o, storage=o.storage * 10**9 + 7) for o in e.operands),
            e.partitions, e.free_elements, e.bytes_read, e.bytes_written, e.flops, e.core, e.rank,
        )
        for e in events
    ]  # fmt: skip
    want = schedule(events, LIMITS)
    got = schedule(CompactTrace.of(spread), LIMITS)
    assert np.array_equal(got.start, want.start) and np.array_equal(got.end, want.end)


def _copy(seq: int, dst: Operand, src: Operand) -> TraceEvent:
    moved = {"sbuf": 128 * (src.byte_end - src.byte_start)}
    return TraceEvent(seq, "nisa.tensor_copy", "vector" if seq % 2 else "scalar", "k.py", 1, (), (dst, src),
                      128, 128, moved, moved)  # fmt: skip


def test_few_overlapping_footprints_are_listed_and_many_left_to_the_footprint_index() -> None:
    def sbuf(role: str, storage: int, b0: int, nbytes: int) -> Operand:
        return Operand(role, (128, nbytes // 2), "bfloat16", "sbuf", storage, 0, 128, b0, b0 + nbytes, nbytes)

    # a tile written whole, read through two slices, rewritten whole: listed before scheduling
    tile = [
        sbuf("dst", 1, 0, 2048),
        sbuf("src", 1, 256, 256),
        sbuf("src", 1, 0, 1024),
        sbuf("dst", 1, 0, 2048),
    ]
    slices = [_copy(k, o, sbuf("src", 0, 0, 2048)) if o.role == "dst" else _copy(k, sbuf("dst", 2 + k, 0, 2048), o)
              for k, o in enumerate(tile)]  # fmt: skip
    # sliding windows of one tile, each overlapping the next 39: left to the index
    windows = [_copy(k, sbuf("dst" if k % 3 == 0 else "src", 1, 64 * k, 2560), sbuf("src", 0, 0, 2048))
               if k % 3 == 0 else _copy(k, sbuf("dst", 100 + k, 0, 2048), sbuf("src", 1, 64 * k, 2560))
               for k in range(60)]  # fmt: skip
    for events, listed in ((slices, True), (windows, False)):
        p = trace_plan.plan(CompactTrace.of(events), LIMITS, scheduler.base_cost(LIMITS))
        assert bool((p.fp_storage == 1).any()) is not listed
        got = schedule(events, LIMITS)
        start, end = reference_schedule(events)
        assert np.array_equal(got.start, np.array(start)) and np.array_equal(got.end, np.array(end))
    assert schedule(slices, LIMITS).start[1] > 0  # the slice waits for the whole write
