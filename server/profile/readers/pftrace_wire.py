"""Vectorised protobuf wire decoding for the bulk of a Perfetto trace (slice begin/end packets).

Decoding two million ``TracePacket`` objects one by one through the protobuf runtime costs several µs each
in Python; here the fields of *all* packets in a block are read together with NumPy: each step decodes one
field (tag, then value) of every message that still has bytes left, so the number of Python-level steps is
the number of fields per message (a handful), not the number of messages. Field numbers come from the
``perfetto`` package's descriptors. Anything unusual is left to the protobuf runtime (``needs_general``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from nki_studio.profile.intervals import dense_ids

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
_PAD = 16  # zero bytes after the block so a varint read never indexes past the end


class WireError(ValueError):
    """Bytes that are not a valid protobuf encoding."""


def as_array(block: bytes) -> U8:
    """The block as a padded uint8 array."""
    arr = np.zeros(len(block) + _PAD, np.uint8)
    arr[: len(block)] = np.frombuffer(block, np.uint8)
    return arr


def varints(buf: U8, pos: I64) -> tuple[npt.NDArray[np.uint64], I64]:
    """Decode one varint at each position: (values, positions after them). Each further byte is read only
    for the varints that still continue, so the common one-byte case costs one gather."""
    b = buf[pos]
    val = (b & 0x7F).astype(np.uint64)
    length = np.ones(pos.size, np.int64)
    sub = np.flatnonzero(b >= 0x80)
    j = 1
    while sub.size:
        if j == 10:
            raise WireError("varint longer than 10 bytes")
        bj = buf[pos[sub] + j]
        val[sub] |= (bj & 0x7F).astype(np.uint64) << np.uint64(7 * j)
        length[sub] = j + 1
        sub = sub[bj >= 0x80]
        j += 1
    return val, pos + length


@dataclass
class Fields:
    """Decoded fields of a set of messages (message index = position in the input arrays).

    ``scalar[f]``: (message indices, uint64 values) of varint/fixed fields, last occurrence wins per message
    when used through ``last``; ``spans[f]``: (message indices, starts, ends) of length-delimited fields, in
    message order then field order (repeated fields keep every occurrence)."""

    scalar: dict[int, tuple[I64, npt.NDArray[np.uint64]]]
    spans: dict[int, tuple[I64, I64, I64]]
    other: npt.NDArray[np.bool_]  # messages with a field number outside ``wanted``

    def last(
        self, field: int, n: int, default: int = 0
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
        """Per message: the field's value (last occurrence) and whether it was present."""
        out = np.full(n, default, np.uint64)
        present = np.zeros(n, bool)
        if field in self.scalar:
            idx, val = self.scalar[field]
            out[idx] = val  # later occurrences overwrite earlier ones, as protobuf merging does
            present[idx] = True
        return out, present


def scan(buf: U8, starts: I64, ends: I64, wanted: frozenset[int]) -> Fields:
    """Read every field of every message ``buf[starts[i]:ends[i]]`` (all messages at once)."""
    n = starts.size
    idx = np.arange(n, dtype=np.int64)
    cur = starts.astype(np.int64).copy()
    lim = ends.astype(np.int64)  # end of each still-active message, compressed along with idx/cur
    lut = np.zeros(max(wanted, default=0) + 2, bool)
    lut[list(wanted)] = True
    scal_i: dict[int, list[I64]] = {}
    scal_v: dict[int, list[npt.NDArray[np.uint64]]] = {}
    span_parts: dict[int, list[tuple[I64, I64, I64]]] = {}
    other = np.zeros(n, bool)
    while idx.size:
        tag, p = varints(buf, cur)
        fnum = (tag >> np.uint64(3)).astype(np.int64)
        wtype = (tag & np.uint64(7)).astype(np.int64)
        nxt = np.empty_like(p)
        is_var = wtype == 0
        is_len = wtype == 2
        is_64 = wtype == 1
        is_32 = wtype == 5
        if bool(((wtype == 3) | (wtype == 4) | (wtype > 5)).any()):
            raise WireError("unsupported wire type (groups or corrupt data)")
        if is_var.any():
            v, q = varints(buf, p[is_var])
            nxt[is_var] = q
            _collect(scal_i, scal_v, fnum[is_var], idx[is_var], v, wanted)
        if is_len.any():
            ln, q = varints(buf, p[is_len])
            s = q
            e = q + ln.astype(np.int64)
            nxt[is_len] = e
            f = fnum[is_len]
            for field in dense_ids(f)[1]:
                if int(field) in wanted:
                    m = f == field
                    span_parts.setdefault(int(field), []).append((idx[is_len][m], s[m], e[m]))
        for mask, width in ((is_64, 8), (is_32, 4)):
            if mask.any():
                pos = p[mask]
                raw = buf[pos[:, None] + np.arange(width)].astype(np.uint64) << (
                    8 * np.arange(width, dtype=np.uint64)
                )
                nxt[mask] = pos + width
                _collect(scal_i, scal_v, fnum[mask], idx[mask], np.bitwise_or.reduce(raw, axis=1), wanted)
        unknown = ~lut[np.minimum(fnum, lut.size - 1)]
        other[idx[unknown]] = True
        if bool((nxt > lim).any()):
            raise WireError("a field runs past the end of its message (truncated or corrupt)")
        keep = nxt < lim
        idx, cur, lim = idx[keep], nxt[keep], lim[keep]
    scalar = {f: (np.concatenate(scal_i[f]), np.concatenate(scal_v[f])) for f in scal_i}
    spans: dict[int, tuple[I64, I64, I64]] = {}
    for f, parts in span_parts.items():
        mi = np.concatenate([p[0] for p in parts])
        # Parts were appended step by step, so a stable sort by message keeps field order within a message.
        o = np.argsort(mi, kind="stable")
        spans[f] = (mi[o], np.concatenate([p[1] for p in parts])[o], np.concatenate([p[2] for p in parts])[o])
    # Scalars stay in step order, so a later occurrence overwrites an earlier one in ``Fields.last``.
    return Fields(scalar, spans, other)


def _collect(
    scal_i: dict[int, list[I64]],
    scal_v: dict[int, list[npt.NDArray[np.uint64]]],
    fnum: I64,
    idx: I64,
    values: npt.NDArray[np.uint64],
    wanted: frozenset[int],
) -> None:
    for field in dense_ids(fnum)[1]:
        if int(field) in wanted:
            m = fnum == field
            scal_i.setdefault(int(field), []).append(idx[m])
            scal_v.setdefault(int(field), []).append(values[m])
