"""Reader for Neuron Explorer's Perfetto export (``.pftrace``), decoded offline (perfetto.md §3).

The file is a run of ``TracePacket`` records (field 1 of ``Trace``: tag 0x0A, varint length, bytes). It is
read in blocks of whole records, so memory stays bounded and protobuf's 2 GiB message limit never applies.
In each block the plain slice BEGIN/END packets — nearly all of a device trace — are decoded for all packets
at once by ``pftrace_wire`` (NumPy over the wire format); every other packet (track descriptors, interning,
defaults, incremental-state resets, anything unknown) goes through the protobuf classes shipped in the
``perfetto`` wheel, in file order. Interned strings are resolved per (sequence, reset generation). Slices are
paired per track with a vectorised depth computation instead of a Python stack per event.

Inferred (no real Neuron ``.pftrace`` is public): tracks whose name starts with ``q`` + capital letter are
DMA queues (``qSyncIO0``) and their slices are named after the tensor; other tracks are engine rows whose
engine comes from the track name; the NKI line comes from any debug annotation whose name contains
"source" (``nki_source_location`` preferred); DMA bytes from an annotation whose name contains "bytes"/"size";
each distinct parent track (``NeuronCore k``) is one physical core.

Clocks (perfetto.md §3.2 item 6) are converted to ns on the trace clock by ``pftrace_clocks``: packet and
sequence-default clock ids, clock snapshots, units and incremental clocks. TrackEvent's legacy
``timestamp_absolute_us`` is read as microseconds. Not supported: the legacy ``timestamp_delta_us`` (events using
it are counted in the notes), Chrome ``legacy_event`` packets and counter values — none is needed for per-line
heat of a Neuron device trace as far as documented.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
from nki_studio.profile.intervals import dense_ids
from nki_studio.profile.model import (
    Codes,
    DmaTransfers,
    Profile,
    ProfileError,
    make_instructions,
    no_dma,
)
from nki_studio.profile.readers import pftrace_wire as wire
from nki_studio.profile.readers.common import concat_locations, expand_locations, parsed_values
from nki_studio.profile.readers.pftrace_clocks import Clocks

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


def iter_blocks(
    fh: IO[bytes], block: int = _BLOCK
) -> Iterator[tuple[bytes, npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """Yield (bytes, packet starts, packet ends) for blocks of whole ``Trace.packet`` records.

    Only the record positions are found in Python (one hop per record); the payload bounds are then computed
    for all records at once. Raises TruncatedTrace when the file ends inside a record (after yielding
    everything before it)."""
    rest = b""
    offset = 0
    while True:
        data = fh.read(block)
        buf = rest + data if rest else data
        if not buf:
            return
        pos = 0
        n = len(buf)
        padded = buf + b"\x00\x00\x00"  # lets the fast path read two bytes ahead without a bounds check
        heads: list[int] = []  # offsets of Trace.packet records (tag 0x0A)
        add = heads.append
        while pos < n:
            # Fast path: tag 0x0A (Trace.packet) with a one- or two-byte length, the shape of almost every record.
            b1 = padded[pos + 1]
            if padded[pos] == 0x0A:
                if b1 < 0x80:
                    add(pos)
                    pos += 2 + b1
                    continue
                b2 = padded[pos + 2]
                if b2 < 0x80:
                    add(pos)
                    pos += 3 + ((b1 & 0x7F) | (b2 << 7))
                    continue
            try:
                tag, p = _varint(buf, pos)
                wire_type = tag & 7
                if wire_type == 2:
                    length, p = _varint(buf, p)
                    end = p + length
                elif wire_type == 0:
                    _, end = _varint(buf, p)
                else:
                    raise ProfileError(
                        f"byte {offset + pos}: unexpected wire type {wire_type}; not a Perfetto trace"
                    )
            except IndexError:
                break
            if end > n:
                break
            if tag == 0x0A:
                add(pos)
            pos = end
        if pos > n:
            pos = heads.pop()  # the last record runs past the block: keep it for the next one
        if pos:
            arr = wire.as_array(buf[:pos])
            h = np.asarray(heads, np.int64)
            lengths, starts = wire.varints(arr, h + 1)
            yield buf[:pos], starts, starts + lengths.astype(np.int64)
        rest = buf[pos:]
        offset += pos
        if not data:
            if rest:
                raise TruncatedTrace(
                    f"trace is cut mid-packet at byte {offset} ({len(rest)} trailing bytes); the slices before "
                    "that point were read. Copy the file again (it may still have been written when copied)."
                )
            return


def read_pftrace(path: str | Path, block_size: int = _BLOCK) -> Profile:
    """Decode a ``.pftrace`` into the normalised model (instructions, locations, DMA), ``block_size`` bytes
    at a time."""
    from google.protobuf.message import DecodeError
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    p = Path(path)
    st = _State(pb)
    notes: list[str] = []
    try:
        with open(p, "rb") as fh:
            try:
                for block, starts, ends in iter_blocks(fh, block_size):
                    try:
                        st.block(block, starts, ends)
                    except (DecodeError, wire.WireError) as exc:
                        raise ProfileError(
                            f"{p}: not a Perfetto trace (protobuf decode failed: {exc})"
                        ) from exc
            except TruncatedTrace as exc:
                if not st.events:
                    raise ProfileError(f"{p}: {exc}") from exc
                notes.append(f"{exc}")
    except OSError as exc:
        raise ProfileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    if not st.events:
        raise ProfileError(f"{p}: the trace holds no slices (no TrackEvent begin/end); not a device profile")
    return st.build(str(p), notes)


def _num(desc: Any, name: str) -> int:
    return int(desc.fields_by_name[name].number)


class _State:
    """Accumulates events block by block; turned into the model once at the end.

    Events are kept as arrays per block: packet index (file order), sub-order (an instant is a BEGIN then an
    END), timestamp, kind (+1/-1), track uuid, and for BEGINs the name and args as keys resolved at the end.
    """

    def __init__(self, pb: Any) -> None:
        self.pb = pb
        P, T, D = pb.TracePacket.DESCRIPTOR, pb.TrackEvent.DESCRIPTOR, pb.DebugAnnotation.DESCRIPTOR
        self.f_ts, self.f_seq, self.f_te = (
            _num(P, "timestamp"),
            _num(P, "trusted_packet_sequence_id"),
            _num(P, "track_event"),
        )
        self.f_flags = _num(P, "sequence_flags")
        self.packet_fields = frozenset({self.f_ts, self.f_seq, self.f_te, self.f_flags})
        self.t_type, self.t_uuid, self.t_iid, self.t_name, self.t_args = (
            _num(T, "type"),
            _num(T, "track_uuid"),
            _num(T, "name_iid"),
            _num(T, "name"),
            _num(T, "debug_annotations"),
        )
        self.t_abs_us, self.t_delta_us = _num(T, "timestamp_absolute_us"), _num(T, "timestamp_delta_us")
        self.te_fields = frozenset(
            {self.t_type, self.t_uuid, self.t_iid, self.t_name, self.t_args, self.t_abs_us, self.t_delta_us}
        )
        self.d_iid, self.d_name, self.d_str, self.d_siid, self.d_int, self.d_uint = (
            _num(D, "name_iid"),
            _num(D, "name"),
            _num(D, "string_value"),
            _num(D, "string_value_iid"),
            _num(D, "int_value"),
            _num(D, "uint_value"),
        )
        self.da_fields = frozenset(
            {self.d_iid, self.d_name, self.d_str, self.d_siid, self.d_int, self.d_uint}
        )
        self.BEGIN, self.END, self.INSTANT = (
            pb.TrackEvent.TYPE_SLICE_BEGIN,
            pb.TrackEvent.TYPE_SLICE_END,
            pb.TrackEvent.TYPE_INSTANT,
        )
        self.cleared = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        self.packets = 0  # packets seen before the current block
        self.events: list[dict[str, npt.NDArray[Any]]] = []
        self.tracks: dict[int, tuple[str, int]] = {}  # uuid -> (name, parent uuid)
        self.gen: dict[int, int] = {}  # sequence -> incremental-state generation
        self.interned: dict[tuple[int, int, str], dict[int, str]] = {}  # (seq, gen, table) -> iid -> string
        self.defaults: dict[int, list[tuple[int, int]]] = {}  # seq -> [(packet index, default track uuid)]
        self.strings: dict[str, int] = {"": 0}  # name / location strings -> code (code 0 = none)
        self.arg_keys: set[str] = set()
        self.clocks = Clocks()
        self.delta_us_events = 0  # legacy TrackEvent.timestamp_delta_us: not supported, counted

    def code(self, text: str | bytes) -> int:
        return self.strings.setdefault(_text(text), len(self.strings))

    # ---- one block ---------------------------------------------------------------------------------------------
    def block(self, data: bytes, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]) -> None:
        n = starts.size
        if n == 0:
            return
        buf = wire.as_array(data)
        pf = wire.scan(buf, starts, ends, self.packet_fields)
        seq = pf.last(self.f_seq, n)[0].astype(np.int64)
        flags = pf.last(self.f_flags, n)[0].astype(np.int64)
        te_idx, te_s, te_e = pf.spans.get(self.f_te, (np.zeros(0, np.int64),) * 3)
        has_te = np.zeros(n, bool)
        has_te[te_idx] = True
        general = pf.other | ~has_te | ((flags & self.cleared) != 0)
        gen_start = dict(self.gen)
        resets: dict[int, list[int]] = {}
        for i in np.flatnonzero(general):
            pkt = self.pb.TracePacket.FromString(data[int(starts[i]) : int(ends[i])])
            if self._general(pkt, self.packets + int(i)):
                resets.setdefault(pkt.trusted_packet_sequence_id, []).append(int(i))
        raw_ts, has_ts = pf.last(self.f_ts, n)
        _all_in_range(raw_ts, "TracePacket.timestamp")
        ts = raw_ts.astype(np.int64)
        self.clocks.block_ticks(self.packets + np.arange(n, dtype=np.int64), seq, ts, has_ts)
        fast = np.flatnonzero(~general)
        if fast.size:
            te_of = np.full(n, -1, np.int64)
            te_of[te_idx] = np.arange(te_idx.size)  # one track_event per packet (last wins, as in protobuf)
            k = te_of[fast]
            self._fast(buf, fast, te_s[k], te_e[k], seq[fast], ts[fast], gen_start, resets)
        self.packets += n

    def _gens(
        self,
        idx: npt.NDArray[np.int64],
        seq: npt.NDArray[np.int64],
        gen_start: dict[int, int],
        resets: dict[int, list[int]],
    ) -> npt.NDArray[np.int64]:
        """Incremental-state generation of each fast packet (resets happen only in general packets)."""
        out = np.zeros(idx.size, np.int64)
        for sq in dense_ids(seq)[1]:
            m = seq == sq
            r = np.asarray(resets.get(int(sq), []), np.int64)
            out[m] = gen_start.get(int(sq), 0) + np.searchsorted(r, idx[m], side="right")
        return out

    def _fast(
        self,
        buf: wire.U8,
        idx: npt.NDArray[np.int64],
        s: npt.NDArray[np.int64],
        e: npt.NDArray[np.int64],
        seq: npt.NDArray[np.int64],
        ts: npt.NDArray[np.int64],
        gen_start: dict[int, int],
        resets: dict[int, list[int]],
    ) -> None:
        m = idx.size
        tf = wire.scan(buf, s, e, self.te_fields)
        typ = tf.last(self.t_type, m)[0].astype(np.int64)
        uuid, has_uuid = tf.last(self.t_uuid, m)
        uuid = uuid.astype(np.int64)
        gen = self._gens(idx, seq, gen_start, resets)
        pidx = idx + self.packets
        if not has_uuid.all():
            for j in np.flatnonzero(~has_uuid):
                uuid[j] = self._default_track(int(seq[j]), int(pidx[j]))
        name_code = np.zeros(m, np.int64)
        iid, has_iid = tf.last(self.t_iid, m)
        if has_iid.any():
            name_code[has_iid] = self._resolve(
                seq[has_iid], gen[has_iid], iid[has_iid].astype(np.int64), "names"
            )
        if self.t_name in tf.spans:
            ni, ns, ne = tf.spans[self.t_name]
            raw = buf.tobytes()
            for j, a, b in zip(ni.tolist(), ns.tolist(), ne.tolist(), strict=True):
                name_code[j] = self.code(raw[a:b].decode("utf-8", "replace"))
        loc_code, nbytes = self._annotations(buf, tf, m, seq, gen)
        abs_us, has_abs = tf.last(self.t_abs_us, m)
        if has_abs.any():  # legacy TrackEvent field, microseconds
            _all_in_range(
                abs_us[has_abs] * np.uint64(1000), "TrackEvent.timestamp_absolute_us", abs_us[has_abs]
            )
            ts = np.where(has_abs, abs_us.astype(np.int64) * 1000, ts)
        self.delta_us_events += int(tf.last(self.t_delta_us, m)[1].sum())
        begin = (typ == self.BEGIN) | (typ == self.INSTANT)
        endm = (typ == self.END) | (typ == self.INSTANT)
        for mask, kind, sub in ((begin, 1, 0), (endm, -1, 1)):
            if mask.any():
                self.events.append(
                    {
                        "pidx": pidx[mask],
                        "sub": np.full(int(mask.sum()), sub, np.int8),
                        "ts": ts[mask],
                        "seq": seq[mask].astype(np.uint32),
                        "kind": np.full(int(mask.sum()), kind, np.int8),
                        "track": uuid[mask],
                        "name": name_code[mask] if kind > 0 else np.zeros(int(mask.sum()), np.int64),
                        "loc": loc_code[mask] if kind > 0 else np.zeros(int(mask.sum()), np.int64),
                        "bytes": nbytes[mask] if kind > 0 else np.zeros(int(mask.sum()), np.int64),
                    }
                )

    def _resolve(
        self, seq: npt.NDArray[np.int64], gen: npt.NDArray[np.int64], iid: npt.NDArray[np.int64], table: str
    ) -> npt.NDArray[np.int64]:
        """String codes of interned ids, one dictionary lookup per distinct (sequence, generation, iid)."""
        sq_id, sq_keys = dense_ids(seq)
        ng, ni = int(gen.max()) + 1, int(iid.max()) + 1
        ids, keys = dense_ids((sq_id * ng + gen) * ni + iid)
        codes = np.array(
            [
                self.code(
                    self.interned.get((int(sq_keys[k // (ng * ni)]), int(k // ni % ng), table), {}).get(
                        int(k % ni), ""
                    )
                )
                for k in keys.tolist()
            ],
            np.int64,
        )
        return codes[ids]

    def _annotations(
        self, buf: wire.U8, tf: wire.Fields, m: int, seq: npt.NDArray[np.int64], gen: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Per event: code of its source-location string (0 = none) and its byte count (0 = none)."""
        loc = np.zeros(m, np.int64)
        nbytes = np.zeros(m, np.int64)
        if self.t_args not in tf.spans:
            return loc, nbytes
        owner, a_s, a_e = tf.spans[self.t_args]
        k = owner.size
        da = wire.scan(buf, a_s, a_e, self.da_fields)
        # Key of each annotation: interned name, else the inline name string.
        key_code = np.zeros(k, np.int64)
        kiid, has_kiid = da.last(self.d_iid, k)
        if has_kiid.any():
            key_code[has_kiid] = self._resolve(
                seq[owner][has_kiid], gen[owner][has_kiid], kiid[has_kiid].astype(np.int64), "arg_names"
            )
        raw = buf.tobytes()
        if self.d_name in da.spans:
            for j, a, b in zip(*(x.tolist() for x in da.spans[self.d_name]), strict=True):
                key_code[j] = self.code(raw[a:b].decode("utf-8", "replace"))
        values = tuple(self.strings)
        role = np.array([_role(values[c]) for c in range(len(values))], np.int64)[key_code]
        for c in dense_ids(key_code)[1]:
            self.arg_keys.add(values[int(c)])
        # String values (locations): interned or inline.
        sval = np.zeros(k, np.int64)
        siid, has_siid = da.last(self.d_siid, k)
        if has_siid.any():
            sval[has_siid] = self._resolve(
                seq[owner][has_siid], gen[owner][has_siid], siid[has_siid].astype(np.int64), "strings"
            )
        if self.d_str in da.spans:
            for j, a, b in zip(*(x.tolist() for x in da.spans[self.d_str]), strict=True):
                sval[j] = self.code(raw[a:b].decode("utf-8", "replace"))
        ival = da.last(self.d_int, k)[0].astype(np.int64) | da.last(self.d_uint, k)[0].astype(np.int64)
        # Highest-ranked source key wins per event (annotations are in event order already).
        src = (role > 0) & (sval > 0)
        if src.any():
            o = np.lexsort((role[src], owner[src]))
            loc[owner[src][o]] = sval[src][o]
        byt = role < 0
        nbytes[owner[byt]] = ival[byt]
        return loc, nbytes

    # ---- general packets (protobuf objects, in file order) -----------------------------------------------------
    def _general(self, pkt: Any, pidx: int) -> bool:
        """Handle one packet the fast path does not cover; True when it reset incremental state."""
        seq = pkt.trusted_packet_sequence_id
        reset = bool(pkt.sequence_flags & self.cleared or pkt.incremental_state_cleared)
        if reset:
            self.gen[seq] = self.gen.get(seq, 0) + 1
        gen = self.gen.get(seq, 0)
        if pkt.HasField("interned_data"):
            d = pkt.interned_data
            for table, entries, attr in (
                ("names", d.event_names, "name"),
                ("arg_names", d.debug_annotation_names, "name"),
                ("strings", d.debug_annotation_string_values, "str"),
            ):
                if len(entries):
                    tab = self.interned.setdefault((seq, gen, table), {})
                    for x in entries:
                        v = getattr(x, attr)
                        tab[x.iid] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        if pkt.HasField("trace_packet_defaults"):
            dflt = pkt.trace_packet_defaults
            if dflt.HasField("track_event_defaults"):
                self.defaults.setdefault(seq, []).append((pidx, dflt.track_event_defaults.track_uuid))
        self.clocks.general_packet(pkt, pidx, seq)
        if pkt.HasField("track_descriptor"):
            td = pkt.track_descriptor
            tname = (
                td.name
                or td.static_name
                or (td.thread.thread_name if td.HasField("thread") else "")
                or (td.process.process_name if td.HasField("process") else "")
            )
            self.tracks[td.uuid] = (
                _text(tname) or ("counter" if td.HasField("counter") else ""),
                td.parent_uuid,
            )
        if pkt.HasField("track_event"):
            self._general_event(pkt, pidx, seq, gen)
        return reset

    def _general_event(self, pkt: Any, pidx: int, seq: int, gen: int) -> None:
        ev = pkt.track_event
        typ = ev.type
        if typ not in (self.BEGIN, self.END, self.INSTANT):
            return  # counters are not needed for per-line heat
        track = ev.track_uuid if ev.HasField("track_uuid") else self._default_track(seq, pidx)
        name = loc = nb = 0
        if typ != self.END:
            name = self.code(ev.name or self.interned.get((seq, gen, "names"), {}).get(ev.name_iid, ""))
            best = 0
            for a in ev.debug_annotations:
                key = _text(a.name or self.interned.get((seq, gen, "arg_names"), {}).get(a.name_iid, ""))
                self.arg_keys.add(key)
                role = _role(key)
                if role > best:
                    value = a.string_value or self.interned.get((seq, gen, "strings"), {}).get(
                        a.string_value_iid, ""
                    )
                    if value:
                        loc, best = self.code(value), role
                elif role < 0:
                    nb = _in_range(a.int_value or a.uint_value or a.double_value or 0, "a bytes annotation")
        rows = (
            [(1, 0, name, loc, nb)]
            if typ == self.BEGIN
            else [(-1, 1, 0, 0, 0)]
            if typ == self.END
            else [(1, 0, name, loc, nb), (-1, 1, 0, 0, 0)]
        )
        ts = _in_range(
            ev.timestamp_absolute_us * 1000 if ev.HasField("timestamp_absolute_us") else pkt.timestamp,
            "TracePacket.timestamp",
        )
        self.delta_us_events += ev.HasField("timestamp_delta_us")
        for kind, sub, nm, lc, b in rows:
            self.events.append(
                {
                    "pidx": np.array([pidx], np.int64),
                    "sub": np.array([sub], np.int8),
                    "ts": np.array([ts], np.int64),
                    "seq": np.array([seq], np.uint32),
                    "kind": np.array([kind], np.int8),
                    "track": np.array([track], np.int64),
                    "name": np.array([nm], np.int64),
                    "loc": np.array([lc], np.int64),
                    "bytes": np.array([b], np.int64),
                }
            )

    def _default_track(self, seq: int, pidx: int) -> int:
        uuid = 0
        for at, u in self.defaults.get(seq, []):
            if at <= pidx:
                uuid = u
        return uuid

    # ---- assembly ----------------------------------------------------------------------------------------------
    def build(self, path: str, notes: list[str]) -> Profile:
        cols = {k: np.concatenate([e[k] for e in self.events]) for k in self.events[0]}
        # File order. Each block appended its BEGIN rows then its END rows, both already in packet order, so a
        # stable (run-merging) sort of the combined key is nearly linear.
        order = np.argsort(cols["pidx"] * 2 + cols["sub"], kind="stable")
        ts, kind, track = cols["ts"][order], cols["kind"][order], cols["track"][order]
        ts = self.clocks.to_trace_ns(cols["pidx"][order], cols["seq"][order].astype(np.int64), ts, notes)
        if self.delta_us_events:
            notes.append(
                f"{self.delta_us_events} events use the legacy TrackEvent.timestamp_delta_us, which is not "
                "supported: their packet timestamps are used"
            )
        name, loc, nbytes = cols["name"][order], cols["loc"][order], cols["bytes"][order]
        b_idx, e_idx, open_count = pair_slices(track, kind)
        if open_count:
            notes.append(f"{open_count} slices were never closed (trace ended first); they are left out")
        start, end = ts[b_idx], ts[e_idx]
        tcodes, uuids = dense_ids(track[b_idx])
        info = [self.tracks.get(int(u), (f"track {int(u)}", 0)) for u in uuids]
        # Classify tracks once: DMA queue or engine row; each distinct parent track is one core.
        track_is_dma = np.array([bool(_DMA_TRACK.match(nm)) for nm, _ in info] + [False], bool)
        parents = sorted({par for _, par in info})
        track_core = np.array([parents.index(par) for _, par in info] + [0], np.int32)
        tnames = tuple(nm for nm, _ in info)
        tcodes = tcodes.reshape(-1).astype(np.int32)
        dma_mask = track_is_dma[tcodes]
        pcore = track_core[tcodes]
        strings = tuple(self.strings)
        names = name[b_idx].astype(np.int32)
        locs = loc[b_idx].astype(np.int32)
        im = ~dma_mask
        i_track = Codes(tnames, tcodes[im])
        ins = make_instructions(start[im], end[im], i_track, Codes(strings, names[im]), pcore[im])
        loc_codes = Codes(strings, np.where(locs[im] == 0, -1, locs[im]).astype(np.int32))  # code 0 is ""
        part = expand_locations(parsed_values(loc_codes, "slice source annotation"), loc_codes.codes)
        keys = "/".join(sorted(k for k in self.arg_keys if _role(k) > 0))
        locations = concat_locations([part] if part[0].size else [], f"perfetto slice arg {keys}")
        dma = no_dma()
        if dma_mask.any():
            dm = dma_mask
            cnt = int(dm.sum())
            dma = DmaTransfers(
                start=start[dm],
                end=end[dm],
                bytes=nbytes[b_idx][dm],
                queue=Codes(tnames, tcodes[dm]),
                tensor=Codes(strings, names[dm]),
                queue_type=Codes((), np.full(cnt, -1, np.int32)),
                pcore=pcore[dm],
                instr=np.full(cnt, -1, np.int64),
                table="perfetto q* queue slices",
            )
        if self.arg_keys:
            notes.append("slice argument names seen: " + ", ".join(sorted(self.arg_keys)[:20]))
        return Profile(path, "perfetto", ins, locations, dma, {}, {}, [], "", notes)


def _text(value: str | bytes) -> str:
    """A protobuf string field as text: the runtime hands back bytes when the field is not valid UTF-8."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


_MAX = 1 << 62  # the model's time and byte range (nki_studio.profile.validate); beyond it int64 sums wrap


def _in_range(value: float, what: str) -> int:
    """One decoded number as an int within the model's range, else a ProfileError naming ``what``."""
    if not (isinstance(value, int) or math.isfinite(value)) or not 0 <= value < _MAX:
        raise ProfileError(f"{what} = {value} is out of range (0 to 2^62); the trace is corrupt")
    return int(value)


def _all_in_range(
    values: npt.NDArray[np.uint64], what: str, before: npt.NDArray[np.uint64] | None = None
) -> None:
    """``_in_range`` for a column of varints (``before``: the values as written, when ``values`` is scaled and
    so may have wrapped)."""
    raw = values if before is None else before
    limit = _MAX if before is None else _MAX // 1000
    if raw.size and int(raw.max()) >= limit:
        bad = int(np.flatnonzero(raw >= limit)[0])
        raise ProfileError(f"{what} = {int(raw[bad])} is out of range (0 to 2^62 ns); the trace is corrupt")


def _role(key: str) -> int:
    """2: NKI source location, 1: another source location, -1: byte count, 0: ignored."""
    low = key.lower()
    if "source" in low:
        return 2 if "nki" in low else 1
    return -1 if "bytes" in low or "size" in low else 0


def _stable_order(key: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Stable sort order of non-negative integer keys: radix sort when they fit 16 bits."""
    if key.size and int(key.max()) < 1 << 16:
        return np.argsort(key.astype(np.uint16), kind="stable")
    return np.argsort(key, kind="stable")


def pair_slices(
    track: npt.NDArray[np.int64], kind: npt.NDArray[np.int8]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Match each BEGIN with its END on the same track (innermost open slice closes first), vectorised.

    Within a track, the nesting depth after each event is a running sum of +1/−1. A BEGIN that raises the depth
    to d is closed by the next END that lowers it from d, so grouping events by (track, level) leaves them in
    alternating begin/end order. Returns (begin indices, end indices, number of never-closed slices).
    """
    n = kind.size
    if n == 0:
        z = np.zeros(0, np.int64)
        return z, z, 0
    tid, _ = dense_ids(track)
    order = _stable_order(tid)
    k = kind[order].astype(np.int64)
    t = tid[order]
    csum = np.cumsum(k)
    first = np.r_[True, t[1:] != t[:-1]]
    head = np.maximum.accumulate(np.where(first, np.arange(n), 0))  # index of each track's first event
    depth = csum - (csum - k)[head]
    level = np.where(k > 0, depth, depth + 1)  # an END closes the slice at its depth before the event
    lo = int(level.min())
    grp = _stable_order(t * (int(level.max()) - lo + 1) + (level - lo))
    ks = k[grp]
    gkey = (t * (int(level.max()) - lo + 1) + (level - lo))[grp]
    same_next = np.r_[gkey[1:] == gkey[:-1], False]
    is_pair = (ks > 0) & np.r_[ks[1:] < 0, False] & same_next
    bpos = np.flatnonzero(is_pair)
    b = order[grp[bpos]]
    e = order[grp[bpos + 1]]
    open_count = int((ks > 0).sum()) - int(bpos.size)
    return b.astype(np.int64), e.astype(np.int64), open_count
