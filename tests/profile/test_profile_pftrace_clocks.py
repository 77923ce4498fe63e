"""Perfetto clocks (perfetto.md §3.2 item 6): clock ids, sequence defaults, snapshots with units, incremental
clocks and the legacy microsecond field all end up as ns on the trace clock; a trace without clock fields is
read as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from nki_studio.profile.readers.detect import load_profile
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SEQ = 7


def _write(path: Path, packets: list[Any]) -> Path:
    head = []
    for uuid, name, parent in ((10, "NeuronCore 0", 0), (11, "Vector Engine Row 0", 10)):
        p = pb.TracePacket()
        p.track_descriptor.uuid = uuid
        p.track_descriptor.name = name
        if parent:
            p.track_descriptor.parent_uuid = parent
        head.append(p)
    trace = pb.Trace()
    trace.packet.extend(head + packets)
    path.write_bytes(trace.SerializeToString())
    return path


def _slice_event(ts: int, begin: bool, line: int = 5, clock: int | None = None, seq: int = SEQ) -> Any:
    p = pb.TracePacket()
    p.timestamp = ts
    p.trusted_packet_sequence_id = seq
    if clock is not None:
        p.timestamp_clock_id = clock
    ev = p.track_event
    ev.track_uuid = 11
    ev.type = pb.TrackEvent.TYPE_SLICE_BEGIN if begin else pb.TrackEvent.TYPE_SLICE_END
    if begin:
        ev.name = "TENSOR_TENSOR"
        a = ev.debug_annotations.add()
        a.name, a.string_value = "nki_source_location", f"/home/u/k.py:{line}"
    return p


def _snapshot(readings: dict[int, tuple[int, int, bool]], seq: int = SEQ, primary: int = 0) -> Any:
    p = pb.TracePacket()
    p.trusted_packet_sequence_id = seq
    for cid, (ts, unit, incremental) in readings.items():
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp = cid, ts
        if unit:
            c.unit_multiplier_ns = unit
        if incremental:
            c.is_incremental = True
    if primary:
        p.clock_snapshot.primary_trace_clock = primary
    return p


def _times(path: Path) -> list[tuple[int, int]]:
    ins = load_profile(path).instructions
    order = np.argsort(ins.start, kind="stable")
    return [(int(ins.start[i]), int(ins.end[i])) for i in order]


def test_no_clock_fields_leave_timestamps_as_they_are(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.pftrace", [_slice_event(100, True), _slice_event(250, False)])
    assert _times(path) == [(100, 250)]
    assert not any("clock" in n for n in load_profile(path).notes)


def test_sequence_default_clock_with_unit_converts_through_the_snapshot(tmp_path: Path) -> None:
    dflt = pb.TracePacket()
    dflt.trusted_packet_sequence_id = SEQ
    dflt.trace_packet_defaults.timestamp_clock_id = 64  # sequence-scoped, in µs
    packets = [
        _snapshot({64: (10, 1000, False), 6: (1_000_000, 0, False)}),
        dflt,
        _slice_event(12, True),
        _slice_event(15, False),
    ]
    path = _write(tmp_path / "t.pftrace", packets)
    assert _times(path) == [(1_002_000, 1_005_000)]
    assert any("converted" in n for n in load_profile(path).notes)


def test_packet_clock_id_uses_the_latest_snapshot_before_it(tmp_path: Path) -> None:
    packets = [
        _snapshot({3: (500, 0, False), 6: (100_500, 0, False)}),
        _slice_event(700, True, clock=3),
        _snapshot({3: (800, 0, False), 6: (200_800, 0, False)}),
        _slice_event(900, False, clock=3),
        _slice_event(300_000, True, line=6),
        _slice_event(300_050, False),
    ]  # BOOTTIME already
    path = _write(tmp_path / "t.pftrace", packets)
    assert _times(path) == [(100_700, 200_900), (300_000, 300_050)]


def test_incremental_clock_counts_every_packet_on_it(tmp_path: Path) -> None:
    dflt = pb.TracePacket()
    dflt.trusted_packet_sequence_id = SEQ
    dflt.trace_packet_defaults.timestamp_clock_id = 65
    counter = pb.TracePacket()  # not a slice, but its delta moves the clock too
    counter.timestamp, counter.trusted_packet_sequence_id = 5, SEQ
    counter.track_event.type = pb.TrackEvent.TYPE_COUNTER
    counter.track_event.track_uuid = 11
    counter.track_event.counter_value = 3
    packets = [
        _snapshot({65: (1000, 0, True), 6: (5000, 0, False)}),
        dflt,
        _slice_event(10, True),
        _slice_event(20, False),
        counter,
        _slice_event(5, True),
        _slice_event(40, False),
        _snapshot({65: (2000, 0, True), 6: (9000, 0, False)}),
        _slice_event(1, True),
        _slice_event(2, False),
    ]
    path = _write(tmp_path / "t.pftrace", packets)
    # 1000+10, +20 | +5 (counter), +5, +40 | reset to 2000: +1, +2 — each mapped to BOOTTIME by its snapshot.
    assert _times(path) == [(5010, 5030), (5040, 5080), (9001, 9003)]


def test_legacy_absolute_microseconds(tmp_path: Path) -> None:
    b, e = _slice_event(0, True), _slice_event(0, False)
    b.ClearField("timestamp")
    e.ClearField("timestamp")
    b.track_event.timestamp_absolute_us = 7
    e.track_event.timestamp_absolute_us = 9
    assert _times(_write(tmp_path / "t.pftrace", [b, e])) == [(7000, 9000)]
