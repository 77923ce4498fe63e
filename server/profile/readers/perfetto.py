"""Reader for Neuron Explorer's Perfetto export (``.pftrace``), decoded offline (perfetto.md §3).

The file is a run of ``TracePacket`` records (field 1 of ``Trace``: tag 0x0A, varint length, bytes). It is
read in blocks of whole records, each block parsed by the protobuf classes shipped in the ``perfetto`` wheel
(C-accelerated), so memory stays bounded and protobuf's 2 GiB message limit never applies. Slices are paired
per track with a vectorised depth computation instead of a Python stack per event.

Inferred (no real Neuron ``.pftrace`` is public): tracks whose name starts with ``q`` + capital letter are
DMA queues (``qSyncIO0``) and their slices are named after the tensor; other tracks are engine rows whose
engine comes from the track name; the NKI line comes from any debug annotation whose name contains
"source" (``nki_source_location`` preferred); DMA bytes from an annotation whose name contains "bytes"/"size";
each distinct parent track (``NeuronCore k``) is one physical core.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
from nki_studio.profile.model import (
    Codes,
    DmaTransfers,
    Profile,
    ProfileError,
    make_instructions,
    no_dma,
)
from nki_studio.profile.readers.common import concat_locations, expand_locations, parsed_values

_BLOCK = 8 << 20
_DMA_TRACK = re.compile(r"^q[A-Z]")


class TruncatedTrace(ProfileError):
    """The trace ends inside a packet."""


def _varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise IndexError
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProfileError("malformed varint: not a Perfetto trace")


def iter_blocks(fh: IO[bytes], block: int = _BLOCK) -> Iterator[bytes]:
    """Yield byte blocks that each hold whole ``Trace.packet`` records; raise TruncatedTrace on a cut file."""
    rest = b""
    offset = 0
    while True:
        data = fh.read(block)
        buf = rest + data if rest else data
        if not buf:
            return
        pos = 0
        n = len(buf)
        while pos < n:
            try:
                tag, p = _varint(buf, pos)
                wire = tag & 7
                if wire == 2:
                    length, p = _varint(buf, p)
                    end = p + length
                elif wire == 0:
                    _, end = _varint(buf, p)
                else:
                    raise ProfileError(f"byte {offset + pos}: unexpected wire type {wire}; not a Perfetto trace")
            except IndexError:
                break
            if end > n:
                break
            pos = end
        if pos:
            yield buf[:pos]
        rest = buf[pos:]
        offset += pos
        if not data:
            if rest:
                raise TruncatedTrace(
                    f"trace is cut mid-packet at byte {offset} ({len(rest)} trailing bytes); the slices before "
                    "that point were read. Copy the file again (it may still have been written when copied)."
                )
            return


def read_pftrace(path: str | Path) -> Profile:
    """Decode a ``.pftrace`` into the normalised model (instructions, locations, DMA)."""
    from google.protobuf.message import DecodeError
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    p = Path(path)
    st = _State(pb)
    notes: list[str] = []
    try:
        with open(p, "rb") as fh:
            try:
                for block in iter_blocks(fh):
                    try:
                        trace = pb.Trace.FromString(block)
                    except DecodeError as exc:
                        raise ProfileError(f"{p}: not a Perfetto trace (protobuf decode failed: {exc})") from exc
                    st.consume(trace.packet)
            except TruncatedTrace as exc:
                if not st.kind:
                    raise ProfileError(f"{p}: {exc}") from exc
                notes.append(f"{exc}")
    except OSError as exc:
        raise ProfileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if not st.kind:
        raise ProfileError(f"{p}: the trace holds no slices (no TrackEvent begin/end); not a device profile")
    return st.build(str(p), notes)


class _State:
    """Accumulates events while packets stream past; turned into arrays once at the end."""

    def __init__(self, pb: Any) -> None:
        self.pb = pb
        self.begin = pb.TrackEvent.TYPE_SLICE_BEGIN
        self.end = pb.TrackEvent.TYPE_SLICE_END
        self.instant = pb.TrackEvent.TYPE_INSTANT
        self.cleared = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        self.ts: list[int] = []
        self.kind: list[int] = []  # +1 begin, -1 end (an instant is a begin and an end at the same time)
        self.track: list[int] = []
        self.name: list[str] = []  # begin only (ends carry no name), "" for ends
        self.loc: list[str] = []
        self.nbytes: list[int] = []
        self.tracks: dict[int, tuple[str, int]] = {}  # uuid -> (name, parent uuid)
        self.names: dict[int, dict[int, str]] = {}  # per sequence: event-name iid -> name
        self.arg_names: dict[int, dict[int, str]] = {}
        self.strings: dict[int, dict[int, str]] = {}
        self.default_track: dict[int, int] = {}
        self.arg_keys: set[str] = set()
        self.clock_note = False

    def consume(self, packets: Any) -> None:
        ts_a, kind_a, track_a = self.ts.append, self.kind.append, self.track.append
        name_a, loc_a, bytes_a = self.name.append, self.loc.append, self.nbytes.append
        begin, end, instant = self.begin, self.end, self.instant
        for pkt in packets:
            which = pkt.WhichOneof("data")
            seq = pkt.trusted_packet_sequence_id
            if pkt.sequence_flags & self.cleared or pkt.incremental_state_cleared:
                self.names[seq], self.arg_names[seq], self.strings[seq] = {}, {}, {}
                self.default_track.pop(seq, None)
            if pkt.HasField("interned_data"):
                self._intern(seq, pkt.interned_data)
            if pkt.HasField("trace_packet_defaults"):
                d = pkt.trace_packet_defaults
                if d.HasField("track_event_defaults"):
                    self.default_track[seq] = d.track_event_defaults.track_uuid
                if d.HasField("timestamp_clock_id"):
                    self.clock_note = True
            if which == "track_event":
                ev = pkt.track_event
                typ = ev.type
                track = ev.track_uuid if ev.HasField("track_uuid") else self.default_track.get(seq, 0)
                if typ == end:
                    ts_a(pkt.timestamp)
                    kind_a(-1)
                    track_a(track)
                    name_a("")
                    loc_a("")
                    bytes_a(0)
                    continue
                if typ != begin and typ != instant:
                    continue  # counters: not needed for per-line heat
                if pkt.HasField("timestamp_clock_id"):
                    self.clock_note = True
                name = ev.name or self.names.get(seq, {}).get(ev.name_iid, "")
                loc, nb = self._args(seq, ev.debug_annotations) if len(ev.debug_annotations) else ("", 0)
                for _ in range(2 if typ == instant else 1):
                    ts_a(pkt.timestamp)
                    track_a(track)
                    name_a(name)
                    loc_a(loc)
                    bytes_a(nb)
                kind_a(1)
                if typ == instant:
                    kind_a(-1)
            elif which == "track_descriptor":
                td = pkt.track_descriptor
                tname = td.name or td.static_name or (td.thread.thread_name if td.HasField("thread") else "") or (
                    td.process.process_name if td.HasField("process") else ""
                )
                if td.HasField("counter"):
                    tname = tname or "counter"
                self.tracks[td.uuid] = (tname, td.parent_uuid)

    def _intern(self, seq: int, data: Any) -> None:
        names = self.names.setdefault(seq, {})
        for e in data.event_names:
            names[e.iid] = e.name
        an = self.arg_names.setdefault(seq, {})
        for e in data.debug_annotation_names:
            an[e.iid] = e.name
        sv = self.strings.setdefault(seq, {})
        for e in data.debug_annotation_string_values:
            sv[e.iid] = e.str.decode("utf-8", "replace")

    def _args(self, seq: int, annotations: Any) -> tuple[str, int]:
        loc, nbytes, loc_rank = "", 0, 0
        an = self.arg_names.get(seq, {})
        for a in annotations:
            key = a.name or an.get(a.name_iid, "")
            low = key.lower()
            self.arg_keys.add(key)
            if "source" in low:
                value = a.string_value or self.strings.get(seq, {}).get(a.string_value_iid, "")
                rank = 2 if "nki" in low else 1
                if value and rank > loc_rank:
                    loc, loc_rank = value, rank
            elif "bytes" in low or "size" in low:
                nbytes = int(a.int_value or a.uint_value or a.double_value or 0)
        return loc, nbytes

    def build(self, path: str, notes: list[str]) -> Profile:
        ts = np.asarray(self.ts, np.int64)
        kind = np.asarray(self.kind, np.int8)
        track = np.asarray(self.track, np.int64)
        b_idx, e_idx, open_count = pair_slices(track, kind)
        if open_count:
            notes.append(f"{open_count} slices were never closed (trace ended first); they are left out")
        if self.clock_note:
            notes.append("trace declares a non-default clock; timestamps used as nanoseconds (unverified)")
        start, end = ts[b_idx], ts[e_idx]
        btrack = track[b_idx]
        # Classify tracks once: DMA queue or engine row; the parent track is the core.
        uuids = np.unique(btrack)
        is_dma_track = {int(u): bool(_DMA_TRACK.match(self.tracks.get(int(u), ("", 0))[0])) for u in uuids}
        parents = sorted({self.tracks.get(int(u), ("", 0))[1] for u in uuids})
        core_of = {par: k for k, par in enumerate(parents)}
        dma_mask = np.array([is_dma_track[int(u)] for u in btrack], bool) if btrack.size else np.zeros(0, bool)
        track_name = Codes.from_strings([self.tracks.get(int(u), (f"track {u}", 0))[0] for u in uuids])
        tlut = {int(u): k for k, u in enumerate(uuids)}
        tcodes = np.array([tlut[int(u)] for u in btrack], np.int32) if btrack.size else np.zeros(0, np.int32)
        pcore_t = np.array([core_of[self.tracks.get(int(u), ("", 0))[1]] for u in uuids] + [0], np.int32)
        pcore = pcore_t[tcodes] if btrack.size else np.zeros(0, np.int32)
        names = np.asarray(self.name, dtype=object)[b_idx]
        locs = np.asarray(self.loc, dtype=object)[b_idx]
        im = ~dma_mask
        i_track = Codes(track_name.values, track_name.codes[tcodes[im]])
        ins = make_instructions(start[im], end[im], i_track, _codes(names[im]), i_track, pcore[im])
        loc_codes = _codes(locs[im], empty_is_missing=True)
        part = expand_locations(parsed_values(loc_codes), loc_codes.codes)
        locations = concat_locations([part] if part[0].size else [], "perfetto slice arg " + "/".join(sorted(k for k in self.arg_keys if "source" in k.lower())))
        dma = no_dma()
        if dma_mask.any():
            dm = dma_mask
            qcodes = Codes(track_name.values, track_name.codes[tcodes[dm]])
            dma = DmaTransfers(
                start=start[dm], end=end[dm], bytes=np.asarray(self.nbytes, np.int64)[b_idx][dm], queue=qcodes,
                tensor=_codes(names[dm]), queue_type=Codes((), np.full(int(dm.sum()), -1, np.int32)),
                pcore=pcore[dm], instr=np.full(int(dm.sum()), -1, np.int64), table="perfetto q* queue slices",
            )
        if self.arg_keys:
            notes.append("slice argument names seen: " + ", ".join(sorted(self.arg_keys)[:20]))
        return Profile(path, "perfetto", ins, locations, dma, {}, {}, [], "", notes)


def _codes(values: npt.NDArray[Any], empty_is_missing: bool = False) -> Codes:
    """Encode an object array of strings (few distinct values) without a per-row Python dict lookup."""
    if values.size == 0:
        return Codes((), np.zeros(0, np.int32))
    uniq, inv = np.unique(values.astype(str), return_inverse=True)
    codes = inv.astype(np.int32)
    vals = tuple(str(u) for u in uniq)
    if empty_is_missing and "" in vals:
        codes = np.where(codes == vals.index(""), -1, codes).astype(np.int32)
    return Codes(vals, codes)


def pair_slices(track: npt.NDArray[np.int64], kind: npt.NDArray[np.int8]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Match each BEGIN with its END on the same track (innermost open slice closes first), vectorised.

    Within a track, the nesting depth after each event is a running sum of +1/−1. A BEGIN that raises the depth
    to d is closed by the next END that lowers it from d, so grouping events by (track, level) leaves them in
    alternating begin/end order. Returns (begin indices, end indices, number of never-closed slices).
    """
    n = kind.size
    if n == 0:
        z = np.zeros(0, np.int64)
        return z, z, 0
    order = np.lexsort((np.arange(n), track))
    k = kind[order].astype(np.int64)
    t = track[order]
    csum = np.cumsum(k)
    first = np.r_[True, t[1:] != t[:-1]]
    head = np.maximum.accumulate(np.where(first, np.arange(n), 0))  # index of each track's first event
    base = (csum - k)[head]
    depth = csum - base
    level = np.where(k > 0, depth, depth + 1)  # an END closes the slice at its depth before the event
    grp = np.lexsort((np.arange(n), level, t))
    ks = k[grp]
    gkey_t, gkey_l = t[grp], level[grp]
    same_next = np.r_[(gkey_t[1:] == gkey_t[:-1]) & (gkey_l[1:] == gkey_l[:-1]), False]
    is_pair = (ks > 0) & np.r_[ks[1:] < 0, False] & same_next
    bpos = np.flatnonzero(is_pair)
    b = order[grp[bpos]]
    e = order[grp[bpos + 1]]
    open_count = int((ks > 0).sum()) - int(bpos.size)
    return b.astype(np.int64), e.astype(np.int64), open_count
