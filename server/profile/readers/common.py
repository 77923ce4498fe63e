"""Helpers shared by the readers: source-location parsing, Arrow → Codes, location expansion."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from nki_studio.profile.model import Codes, Locations, ProfileError, empty_codes
from nki_studio.profile.validate import MAX_LINE

_ITEM_SPLIT = re.compile(r"[,;\n]")


@lru_cache(maxsize=65536)
def parse_locations(text: str | None) -> tuple[tuple[str, int], ...]:
    """Parse an ``nki_source_location``-style value into (path, line) pairs (parquet-schema.md §4).

    The encoding of several locations is undocumented, so this is defensive: strip ``[ ]`` and quotes, split
    items on ``,``/``;``/newline and split each item at its last ``:``. Items without a line are dropped.
    """
    if not text:
        return ()
    body = text.strip().strip("[]")
    out: list[tuple[str, int]] = []
    for item in _ITEM_SPLIT.split(body):
        item = item.strip().strip("'\"").strip()
        path, sep, line = item.rpartition(":")
        if not sep or not path:
            continue
        # Some producers append a column ("file.py:42:7"): take the line before it.
        head, sep2, maybe_line = path.rpartition(":")
        if sep2 and _line_number(maybe_line) is not None and _line_number(line) is not None and head:
            path, line = head, maybe_line
        number = _line_number(line)
        if number:
            out.append((path.strip(), number))
    return tuple(out)


class LineOutOfRange(ValueError):
    """A location whose line number is digits beyond the model's line range (located by ``parsed_values``)."""


def _line_number(text: str) -> int | None:
    """``text`` as a line number; None unless it is ASCII digits; LineOutOfRange beyond the model's range."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    if len(text) > 10 or int(text) > MAX_LINE:
        raise LineOutOfRange(
            f"line number {text[:20]}{'…' if len(text) > 20 else ''} is out of range (0 to 2^31-1)"
        )
    return int(text)


def filled_numpy(
    column: pa.ChunkedArray | pa.Array, default: float, dtype: npt.DTypeLike
) -> npt.NDArray[Any]:
    """A numeric Arrow column as one NumPy array of ``dtype``, nulls replaced by ``default``.

    Chunks are copied straight into the final array (no concatenated intermediate) and nulls are found from the
    validity bitmap, so neither ``pyarrow.compute`` (a ~0.1 s import) nor a float detour for nullable integers
    is needed."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.empty(len(column), dtype)
    pos = 0
    for ch in chunks:
        _fill_chunk(ch, default, out[pos : pos + len(ch)])
        pos += len(ch)
    return out


def _fill_chunk(ch: pa.Array, default: float, part: npt.NDArray[Any]) -> None:
    """Copy one numeric chunk into ``part`` (same length), nulls replaced by ``default``."""
    m = len(ch)
    if m == 0:
        return
    if ch.null_count == m:
        part[:] = default
    elif ch.null_count == 0:
        part[:] = ch.to_numpy()  # zero-copy view of the chunk, one copy into place
    else:
        validity, data = ch.buffers()[:2]
        part[:] = np.frombuffer(data, ch.type.to_pandas_dtype(), count=ch.offset + m)[ch.offset :]
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), count=ch.offset + m, bitorder="little")[
            ch.offset :
        ]
        part[valid == 0] = default


def null_mask(column: pa.ChunkedArray | pa.Array) -> npt.NDArray[np.bool_]:
    """True for each null row of ``column`` (from the validity bitmaps, without ``pyarrow.compute``)."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [np.zeros(0, bool)]
    for ch in chunks:
        m = len(ch)
        if ch.null_count == 0:
            parts.append(np.zeros(m, bool))
        elif ch.null_count == m:
            parts.append(np.ones(m, bool))
        else:
            validity = ch.buffers()[0]
            bits = np.unpackbits(np.frombuffer(validity, np.uint8), count=ch.offset + m, bitorder="little")
            parts.append(bits[ch.offset :] == 0)
    return np.concatenate(parts)


def codes_of(column: pa.ChunkedArray | pa.Array) -> Codes:
    """A string column as Codes: each distinct string handled once (Arrow dictionaries), never per row in Python.

    Parquet string columns arrive dictionary-encoded; each chunk's indices are copied straight into the final
    code array and re-mapped in place only when the chunk brings a different dictionary. Plain string columns
    (CSV, JSON) are dictionary-encoded by Arrow first."""
    if not pa.types.is_dictionary(column.type):
        import pyarrow.compute as pc  # only the text formats need it; the Parquet path never imports it

        arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            arr = pc.cast(arr, pa.string())
        column = pc.dictionary_encode(arr)
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    codes = np.empty(len(column), np.int32)
    table: dict[str, int] = {}
    lut = np.full(1, -1, np.int32)
    prev: pa.Array | None = None
    pos = 0
    for ch in chunks:
        m = len(ch)
        if m == 0:
            continue
        if prev is None or not ch.dictionary.equals(prev):
            strings = ("" if v is None else str(v) for v in ch.dictionary.to_pylist())
            lut = np.array([table.setdefault(v, len(table)) for v in strings] + [-1], np.int32)
            prev = ch.dictionary
        part = codes[pos : pos + m]
        pos += m
        _fill_chunk(ch.indices, -1, part)  # a null is code -1 whatever the dictionary
        if not (
            lut[:-1] == np.arange(lut.size - 1)
        ).all():  # a later dictionary: map its codes to the table's
            part[:] = lut[part]
    return Codes(tuple(table), codes)


def expand_locations(
    per_value: Sequence[tuple[tuple[str, int], ...]],
    row_codes: npt.NDArray[np.int32],
    row_index: npt.NDArray[np.int64] | None = None,
    iteration: Codes | None = None,
) -> tuple[npt.NDArray[np.int64], Codes, npt.NDArray[np.int32], Codes]:
    """Expand per-distinct-value location lists to one row per (instruction, location).

    ``per_value[c]`` are the locations of string code ``c``; ``row_codes[i]`` is instruction i's code (or -1).
    Returns (instr, file Codes, line, iteration Codes) — fully vectorised over instructions.
    """
    files: dict[str, int] = {}
    counts = np.zeros(len(per_value) + 1, np.int64)  # the trailing slot serves code -1 (no value)
    flat_file: list[int] = []
    flat_line: list[int] = []
    starts = np.zeros(len(per_value) + 1, np.int64)
    for c, locs in enumerate(per_value):
        starts[c] = len(flat_file)
        counts[c] = len(locs)
        for path, line in locs:
            flat_file.append(files.setdefault(path, len(files)))
            flat_line.append(line)
    starts[-1] = len(flat_file)
    if int(counts.max(initial=0)) <= 1:
        # Common case: at most one location per value: per-value lookup tables, a mask and two small gathers.
        has = (counts == 1)[row_codes]  # code -1 reads the trailing slot
        picked = row_codes[has]
        file_of = np.zeros(len(per_value) + 1, np.int32)
        line_of = np.zeros(len(per_value) + 1, np.int32)
        one = counts == 1
        file_of[one] = flat_file
        line_of[one] = flat_line
        instr = np.flatnonzero(has) if row_index is None else row_index[has]
        it = (
            Codes(iteration.values, iteration.codes[has])
            if iteration is not None
            else empty_codes(int(picked.size))
        )
        return instr, Codes(tuple(files), file_of[picked]), line_of[picked], it
    rc = np.where(row_codes >= 0, row_codes, len(per_value)).astype(np.int64)
    idx = np.arange(row_codes.size, dtype=np.int64) if row_index is None else row_index
    cnt = counts[rc]
    total = int(cnt.sum())
    instr = np.repeat(idx, cnt)
    pos = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(starts[rc], cnt)
    ff = np.asarray(flat_file, np.int32)[pos] if total else np.zeros(0, np.int32)
    fl = np.asarray(flat_line, np.int32)[pos] if total else np.zeros(0, np.int32)
    it = empty_codes(total)
    if iteration is not None and total:
        it = Codes(iteration.values, np.repeat(iteration.codes, cnt))
    return instr, Codes(tuple(files), ff), fl, it


def concat_locations(
    parts: Sequence[tuple[npt.NDArray[np.int64], Codes, npt.NDArray[np.int32], Codes]], source: str
) -> Locations:
    """Join location parts that come from different fields into one Locations, re-encoding files."""
    if len(parts) == 1:
        p_instr, p_file, p_line, p_iter = parts[0]
        return Locations(p_instr, p_file, p_line, p_iter, source)
    files: dict[str, int] = {}
    iters: dict[str, int] = {}
    instr, fcodes, lines, icodes = [], [], [], []
    for p_instr, p_file, p_line, p_iter in parts:
        fmap = np.array([files.setdefault(v, len(files)) for v in p_file.values] + [-1], np.int32)
        imap = np.array([iters.setdefault(v, len(iters)) for v in p_iter.values] + [-1], np.int32)
        instr.append(p_instr)
        fcodes.append(fmap[p_file.codes])
        lines.append(p_line)
        icodes.append(imap[p_iter.codes])
    if not instr:
        return Locations(np.zeros(0, np.int64), empty_codes(), np.zeros(0, np.int32), empty_codes(), "")
    return Locations(
        np.concatenate(instr),
        Codes(tuple(files), np.concatenate(fcodes)),
        np.concatenate(lines),
        Codes(tuple(iters), np.concatenate(icodes)),
        source,
    )


def parsed_values(codes: Codes, where: str) -> list[tuple[tuple[str, int], ...]]:
    """Parse each distinct string of a location column (``where``: its table and field) once; a ProfileError
    naming the field and the first row when a line number is out of range."""
    out = []
    for c, v in enumerate(codes.values):
        try:
            out.append(parse_locations(v))
        except LineOutOfRange as exc:
            rows = np.flatnonzero(codes.codes == c)
            if (
                rows.size
            ):  # a string no row uses as a location (a .pftrace shares its string table) is no error
                raise ProfileError(f"{where}: row {int(rows[0])}: {exc} in {v[:80]!r}") from exc
            out.append(())
    return out
