"""Perfetto trace clocks (perfetto.md §3.2 item 6): turn each event's ``TracePacket.timestamp`` into
nanoseconds on the trace clock.

A timestamp is on the packet's ``timestamp_clock_id``, else the sequence's
``trace_packet_defaults.timestamp_clock_id``, else BOOTTIME (Perfetto's documented default). Clock ids 64–127 are
sequence-scoped: the same id on two sequences is two clocks. ``ClockSnapshot`` packets give readings of several
clocks at one moment, a clock's unit (``unit_multiplier_ns``) and whether it is incremental (each packet's
timestamp is a delta from the previous packet on that clock and sequence; the first after a snapshot is relative
to the snapshot's reading). The trace clock is the snapshot's ``primary_trace_clock`` (BOOTTIME when unset).

Conversion from clock A to the trace clock T uses the latest snapshot (in file order) at or before the event
that reads both A and T, else the first one after it: ``t_T = snap_T + (t_A - snap_A)``, all in ns. A trace
with no clock fields at all is left untouched (the common case costs nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from nki_studio.profile.model import ProfileError

I64 = npt.NDArray[np.int64]

BOOTTIME = 6
_SEQUENCE_SCOPED = range(64, 128)


def clock_key(clock_id: int, seq: int) -> int:
    """One number per clock: builtin ids as they are, sequence-scoped ids (64–127) qualified by the sequence."""
    return (seq << 8) | clock_id if clock_id in _SEQUENCE_SCOPED else clock_id


@dataclass
class _Snapshot:
    pidx: int
    readings: dict[int, int]  # clock key -> reading in that clock's units
    primary: int  # primary_trace_clock, 0 when unset


@dataclass
class Clocks:
    """Clock information collected while a trace is read, applied to the event timestamps at the end."""

    snapshots: list[_Snapshot] = field(default_factory=list)
    units: dict[int, int] = field(default_factory=dict)  # clock key -> ns per unit
    incremental: set[int] = field(default_factory=set)  # clock keys
    incremental_seqs: set[int] = field(default_factory=set)
    defaults: dict[int, list[tuple[int, int]]] = field(
        default_factory=dict
    )  # seq -> [(packet index, clock id)]
    explicit: dict[int, int] = field(default_factory=dict)  # packet index -> timestamp_clock_id
    ticks: list[tuple[I64, I64, I64]] = field(
        default_factory=list
    )  # (packet index, seq, raw ts) on incremental seqs

    @property
    def used(self) -> bool:
        """Whether the trace says anything about clocks."""
        return bool(self.snapshots or self.defaults or self.explicit)

    def general_packet(self, pkt: Any, pidx: int, seq: int) -> None:
        """Take the clock fields of one protobuf-decoded packet."""
        if pkt.HasField("timestamp_clock_id"):
            self.explicit[pidx] = int(pkt.timestamp_clock_id)
        if pkt.HasField("trace_packet_defaults") and pkt.trace_packet_defaults.HasField("timestamp_clock_id"):
            self.defaults.setdefault(seq, []).append(
                (pidx, int(pkt.trace_packet_defaults.timestamp_clock_id))
            )
        if pkt.HasField("clock_snapshot"):
            cs = pkt.clock_snapshot
            readings = {}
            for c in cs.clocks:
                key = clock_key(int(c.clock_id), seq)
                readings[key] = int(c.timestamp)
                if c.unit_multiplier_ns:
                    self.units[key] = int(c.unit_multiplier_ns)
                if c.is_incremental:
                    self.incremental.add(key)
                    self.incremental_seqs.add(seq)
            self.snapshots.append(_Snapshot(pidx, readings, int(cs.primary_trace_clock)))

    def block_ticks(self, pidx: I64, seq: I64, ts: I64, has_ts: npt.NDArray[np.bool_]) -> None:
        """Remember every timestamped packet of a block on a sequence with an incremental clock: each one moves
        that clock, whether or not it becomes an event."""
        if not self.incremental_seqs:
            return
        m = has_ts & np.isin(seq, list(self.incremental_seqs))
        if m.any():
            self.ticks.append((pidx[m], seq[m], ts[m]))

    def to_trace_ns(self, pidx: I64, seq: I64, ts: I64, notes: list[str]) -> I64:
        """Event timestamps (``pidx`` ascending) in ns on the trace clock."""
        if not self.used:
            return ts
        primary = next((s.primary for s in reversed(self.snapshots) if s.primary), BOOTTIME)
        key = self._keys(pidx, seq)
        out = ts.astype(np.int64, copy=True)
        for k in np.unique(key).tolist():
            m = key == k
            raw = self._absolute(k, pidx[m], ts[m]) if k in self.incremental else ts[m]
            out[m] = self._convert(k, primary, pidx[m], raw, notes)
        notes.append(
            f"timestamps converted to ns on the trace clock (clock id {primary}) from clock(s) "
            f"{', '.join(str(k & 0xFF) for k in np.unique(key).tolist())} using {len(self.snapshots)} "
            "clock snapshot(s)"
        )
        return out

    def _keys(self, pidx: I64, seq: I64) -> I64:
        """Clock key of each event: explicit id, else the sequence default in force, else BOOTTIME."""
        cid = np.full(pidx.size, BOOTTIME, np.int64)
        for s, defs in self.defaults.items():
            on = seq == s
            for at, c in defs:  # file order: later defaults override earlier ones
                cid[on & (pidx >= at)] = c
        if self.explicit:  # packets naming their clock: few (the protobuf path decoded them one by one)
            packets = np.fromiter(self.explicit.keys(), np.int64)
            lo = np.searchsorted(pidx, packets, "left")
            hi = np.searchsorted(pidx, packets, "right")  # an instant is two events of one packet
            for a, b, c in zip(lo.tolist(), hi.tolist(), self.explicit.values(), strict=True):
                cid[a:b] = c
        scoped = (cid >= 64) & (cid < 128)
        return np.where(scoped, (seq << 8) | cid, cid)

    def _absolute(self, k: int, pidx: I64, delta: I64) -> I64:
        """Readings of incremental clock ``k`` at the given packets: running sums of every packet's delta on
        that clock and sequence, restarted from each snapshot's reading."""
        seq = k >> 8
        tp_parts, tts_parts = [], []
        for tp, tseq, tts in self.ticks:
            m = tseq == seq
            tp_parts.append(tp[m])
            tts_parts.append(tts[m])
        tp = np.concatenate(tp_parts) if tp_parts else pidx
        tts = np.concatenate(tts_parts) if tts_parts else delta
        # Only packets on clock k move it: explicit ids and sequence defaults decide, as for events.
        on_k = self._keys(tp, np.full(tp.size, seq, np.int64)) == k
        tp, tts = tp[on_k], tts[on_k]
        snaps = [(s.pidx, s.readings[k]) for s in self.snapshots if k in s.readings]
        sp = np.array([p for p, _ in snaps], np.int64)
        sv = np.array([v for _, v in snaps], np.int64)
        seg = np.searchsorted(sp, tp, side="right") - 1  # -1: before the clock was defined
        _within(np.cumsum(np.where(seg >= 0, tts, 0), dtype=np.float64) + float(np.abs(sv).max(initial=0)), k)
        cs = np.cumsum(np.where(seg >= 0, tts, 0))
        first = np.searchsorted(
            seg, np.arange(sp.size), side="left"
        )  # ticks are in file order, so seg ascends
        before = np.where(first > 0, cs[np.maximum(first - 1, 0)], 0)
        absolute = np.where(seg >= 0, sv[np.maximum(seg, 0)] + cs - before[np.maximum(seg, 0)], tts)
        pos = np.minimum(np.searchsorted(tp, pidx), max(tp.size - 1, 0))
        found = tp[pos] == pidx if tp.size else np.zeros(pidx.size, bool)
        return np.where(
            found, absolute[pos] if tp.size else delta, delta
        )  # not found: before the clock existed

    def _convert(self, k: int, primary: int, pidx: I64, raw: I64, notes: list[str]) -> I64:
        """Readings of clock ``k`` (its own units) → ns on the trace clock ``primary``; a ProfileError when the
        arithmetic would leave int64 (it would wrap silently into plausible-looking times)."""
        unit = self.units.get(k, 1)
        _within(raw.astype(np.float64) * unit, k)
        ns = raw * unit
        if k == primary:
            return ns
        both = [s for s in self.snapshots if k in s.readings and primary in s.readings]
        if not both:
            notes.append(
                f"clock {k & 0xFF} has no snapshot relating it to the trace clock {primary}: its "
                "timestamps are used as they are"
            )
            return ns
        sp = np.array([s.pidx for s in both], np.int64)
        i = np.maximum(np.searchsorted(sp, pidx, side="right") - 1, 0)
        a_py = [s.readings[k] * self.units.get(k, 1) for s in both]
        t_py = [s.readings[primary] * self.units.get(primary, 1) for s in both]
        _within(np.array(a_py + t_py, np.float64), k)
        a, t = np.array(a_py, np.int64), np.array(t_py, np.int64)
        _within(t[i].astype(np.float64) + (ns.astype(np.float64) - a[i]), k)
        return t[i] + (ns - a[i])


_LIMIT = float(1 << 62)  # the model's time range (nki_studio.profile.validate.MAX_TIME_NS)


def _within(values: npt.NDArray[np.float64], k: int) -> None:
    """Raise ProfileError when a clock computation (done in float64 alongside the int64 one) leaves the range."""
    if values.size and not (np.isfinite(values).all() and float(np.abs(values).max()) < _LIMIT):
        raise ProfileError(
            f"clock {k & 0xFF}: converting its timestamps to ns leaves the 64-bit range (timestamps, units or "
            "clock snapshots out of range); the trace is corrupt"
        )
