"""Checks on a profile's numbers before anything is computed from them, shared by every reader.

Three checks, all here so each rule exists once:

* ``int_values`` turns one numeric column (Parquet, CSV, legacy JSON tables) into integers: NaN, infinities,
  nulls in a required column, values outside the field's range or the target integer type are an error naming
  the table, the field, how many rows and the first of them. Nothing is wrapped or clipped (a fractional value
  is rounded to the nearest integer, as before).
* ``check_model`` runs on the normalised model of every reader (Perfetto included): timestamps, durations,
  bytes, cores, line numbers and execution windows within their ranges, no interval ending before it starts.
* ``clean_scalars`` checks the one-row tables (Summary, Metadata): a field that is not a finite, non-negative
  number in range is dropped with a visible note, so the metric that needed it is shown as unavailable (or
  taken from the rows instead) rather than computed from a wrong value.

Ranges: times are integer ns below 2**62, so every difference and every sum of two stays inside int64 (the
interval maths subtracts and adds timestamps); cores below 65,536 (lookup tables are sized by the largest core
index); line numbers fit int32 (the model stores them so).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from nki_studio.profile.model import Profile, ProfileError

MAX_TIME_NS = 1 << 62
MAX_CORE = (1 << 16) - 1
MAX_LINE = (1 << 31) - 1
MAX_BYTES = 1 << 48  # one transfer; the kernel total is checked against the int64 range separately
MAX_INDEX = (1 << 31) - 1
_SHOWN_ROWS = 3


class Bound(NamedTuple):
    """Inclusive range of a field and what it is, for the message."""

    lo: int
    hi: int
    what: str


TIME = Bound(0, MAX_TIME_NS - 1, "a time in ns (0 to 2^62)")
CORE = Bound(0, MAX_CORE, "a core index (0 to 65535)")
LINE = Bound(0, MAX_LINE, "a line number (0 to 2^31-1)")
BYTES = Bound(0, MAX_BYTES, "a byte count (0 to 2^48)")
INDEX = Bound(0, MAX_INDEX, "an index (0 to 2^31-1)")
COUNT = Bound(0, MAX_TIME_NS - 1, "a count (0 to 2^62)")  # FLOPs: their sums stay inside int64 like times
PARTITIONS = Bound(0, MAX_CORE, "a partition count (0 to 65535)")

# Range of each table field the readers convert (by field name: the tables share their spellings).
FIELD_BOUNDS: dict[str, Bound] = {
    "start_ts": TIME,
    "end_ts": TIME,
    "execution_start_ts": TIME,
    "execution_end_ts": TIME,
    "pcore_idx": CORE,
    "transfer_bytes": BYTES,
    "line_number": LINE,
    "execution_index": INDEX,
    # the optional columns of the bounds and investigations (readers.detail_columns)
    "adjusted_flops": COUNT,
    "read_num_sbuf_partitions": PARTITIONS,
    "write_num_sbuf_partitions": PARTITIONS,
    "size": BYTES,  # TensorInfo
}


def _row_list(bad: npt.NDArray[np.bool_], show: Callable[[int], str]) -> str:
    rows = np.flatnonzero(bad)[:_SHOWN_ROWS].tolist()
    return ", ".join(f"row {r} = {show(r)}" for r in rows)


def _fail(
    table: str, field: str, bad: npt.NDArray[np.bool_], problem: str, show: Callable[[int], str]
) -> None:
    """Raise the error naming ``table.field``, the count of ``bad`` rows and the first of them."""
    count = int(bad.sum())
    raise ProfileError(
        f"{table}.{field}: {count} of {bad.size} row{'s' if bad.size != 1 else ''} {problem} "
        f"(first: {_row_list(bad, show)}); the profile is corrupt or not from Neuron Explorer"
    )


def int_values(
    values: npt.NDArray[Any],
    table: str,
    field: str,
    dtype: type[np.signedinteger[Any]] = np.int64,
    null: npt.NDArray[np.bool_] | None = None,
    required: bool = False,
) -> npt.NDArray[Any]:
    """``values`` (float64, int64 or uint64, nulls already filled) as ``dtype`` after the checks of the module
    docstring. ``null`` marks the filled rows: an error when ``required``, exempt from the range otherwise (the
    reader's default stands for "not recorded")."""
    if required and null is not None and null.any():
        _fail(table, field, null, "are empty (null) in a required column", lambda r: "null")
    bound = FIELD_BOUNDS.get(field)
    info = np.iinfo(dtype)
    lo, hi = (max(bound.lo, info.min), min(bound.hi, info.max)) if bound else (info.min, info.max)
    what = bound.what if bound else f"an integer within {info.dtype} range"
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if null is not None:
            finite |= null
        if not finite.all():
            _fail(table, field, ~finite, "are not finite numbers", lambda r: str(values[r]))
    if values.size and (int(values.min()) < lo or int(values.max()) > hi):
        bad = (values < lo) | (values > hi)
        if null is not None:
            bad &= ~null
        if bad.any():
            _fail(table, field, bad, f"are out of range for {what}", lambda r: str(values[r]))
    if values.dtype.kind == "f":
        return np.round(values).astype(dtype)
    return values.astype(dtype, copy=False)


def _check(
    a: npt.NDArray[Any], table: str, field: str, bound: Bound, bad: npt.NDArray[np.bool_] | None = None
) -> None:
    if a.size and (int(a.min()) < bound.lo or int(a.max()) > bound.hi):
        _fail(
            table,
            field,
            (a < bound.lo) | (a > bound.hi),
            f"are out of range for {bound.what}",
            lambda r: str(a[r]),
        )


def _ordered(start: npt.NDArray[Any], end: npt.NDArray[Any], table: str) -> None:
    back = end < start
    if back.any():
        _fail(
            table,
            "end_ts",
            back,
            "end before they start",
            lambda r: f"{int(end[r])} < start_ts {int(start[r])}",
        )


def check_model(profile: Profile) -> None:
    """Raise ProfileError unless every row of the normalised model is in range (module docstring). Row numbers
    are the reader's order (the table's rows; the record index in legacy JSON, the slice order in .pftrace)."""
    ins, dma, loc = profile.instructions, profile.dma, profile.locations
    itable = "Instruction"
    _check(ins.start, itable, "start_ts", TIME)
    _check(ins.end, itable, "end_ts", TIME)
    _ordered(ins.start, ins.end, itable)
    _check(ins.pcore, itable, "pcore_idx", CORE)
    dtable = dma.table or "DMA"
    _check(dma.start, dtable, "start_ts", TIME)
    _check(dma.end, dtable, "end_ts", TIME)
    _ordered(dma.start, dma.end, dtable)
    _check(dma.bytes, dtable, "transfer_bytes", BYTES)
    _check(dma.pcore, dtable, "pcore_idx", CORE)
    if dma.bytes.size and float(dma.bytes.sum(dtype=np.float64)) >= 2**62:
        raise ProfileError(
            f"{dtable}.transfer_bytes: the total exceeds the 64-bit range; the profile is corrupt"
        )
    _check(loc.line, f"{loc.source or 'source location'}", "line", LINE)
    for ex in profile.executions:
        for name, value in (("execution_start_ts", ex.start), ("execution_end_ts", ex.end)):
            if not TIME.lo <= value <= TIME.hi:
                raise ProfileError(
                    f"ExecutionInfo.{name}: execution {ex.index} has {value}, out of range for {TIME.what}"
                )


# Summary fields in seconds that the metrics turn into ns: beyond this they pass 2**62 ns.
_MAX_SECONDS = MAX_TIME_NS / 1e9
_ACTIVE_SUFFIX = "_active_time"
_TOTALS = ("total_time", "total_exec_time")


# Metadata fields the roofline divides by, with the range a real device can have (inferred generously from
# hardware.md: Trn1/Trn2 DMA bandwidth ~0.4 TB/s, a 128×128 PE array at ~1.4 GHz); outside it a ceiling or
# peak would be absurd (a 1e-300 B/s ceiling makes the memory floor infinite), so the target's figure is used.
_PLAUSIBLE: dict[str, tuple[float, float]] = {
    "dma_ddr_bandwidth": (1e6, 1e15),  # bytes/s
    "tensor_engine_num_rows": (1, 1 << 16),
    "tensor_engine_num_cols": (1, 1 << 16),
    "tensor_engine_clock_freq": (1e-3, 1e3),  # GHz
}


# One-row fields that are numbers by their name (times, fractions, byte and FLOP counts), whatever the file
# holds: the metrics and the roofline compute with them.
_NUMERIC_SUFFIXES = ("_time", "_percent", "_bytes", "_flops")


def _bad_scalar(key: str, value: Any) -> str | None:
    """Why a one-row field cannot be used, or None when it can (a number in range, or text where text is due)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        numeric = key.endswith(_NUMERIC_SUFFIXES) or key in _PLAUSIBLE
        return "is not a number" if numeric and value is not None else None
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    if value < 0:
        return "is negative"
    if abs(value) >= 2**62:
        return "is out of the 64-bit range"
    if key.endswith("_percent") and value > 100:
        return "is over 100 %"
    if key.endswith("_time") and value > _MAX_SECONDS:
        return "is out of range for a time in seconds"
    lo, hi = _PLAUSIBLE.get(key, (0, math.inf))
    if value and not lo <= value <= hi:
        return f"is outside the range a device can have ({lo:g} to {hi:g})"
    return None


def clean_scalars(table: str, fields: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``fields`` without the numbers that cannot be used, and one note per dropped field. A Summary active time
    longer than the Summary's own total is dropped too (a union cannot exceed the span it lies in)."""
    out: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in fields.items():
        why = _bad_scalar(key, value)
        if why:
            notes.append(
                f"{table}.{key} = {str(value)[:40]} {why}; ignored (what needs it is shown as unavailable)"
            )
        else:
            out[key] = value
    if table == "Summary":
        totals = [float(out[k]) for k in _TOTALS if isinstance(out.get(k), (int, float)) and out[k] > 0]
        if totals:
            limit = min(totals)
            for key in [k for k in out if k.endswith(_ACTIVE_SUFFIX)]:
                value = out[key]
                if (
                    isinstance(value, (int, float))
                    and not isinstance(value, bool)
                    and value > limit * (1 + 1e-6)
                ):
                    notes.append(
                        f"Summary.{key} = {value} s is longer than the kernel's total time ({limit} s); ignored"
                    )
                    del out[key]
    return out, notes


def validated(profile: Profile) -> Profile:
    """``profile`` after ``check_model`` with its Summary and Metadata cleaned (notes added)."""
    check_model(profile)
    profile.summary, s_notes = clean_scalars("Summary", profile.summary)
    profile.metadata, m_notes = clean_scalars("Metadata", profile.metadata)
    profile.notes = [*profile.notes, *s_notes, *m_notes]
    return profile
