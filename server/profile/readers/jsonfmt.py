"""Readers for the JSON outputs: legacy full-profile JSON (``--output-format json``) and summary-json.

Legacy JSON records are renamed to the Parquet field names (``timestamp``/``duration``/``label`` →
``start_ts``/``end_ts``/``engine``) and go through the same table assembly as Parquet (json-legacy.md §1).
The file text is read once and the ``instruction``/``dma`` arrays are decoded record by record, keeping only
the fields the model needs (memory ≈ file size, not the ~5× of ``json.load``). Neuron deprecated this format
after SDK 2.33; for big profiles Parquet is the format to use.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from nki_studio.profile.model import (
    Profile,
    ProfileError,
    no_dma,
    no_instructions,
    no_locations,
)
from nki_studio.profile.readers.tables import profile_from_tables
from nki_studio.profile.validate import BYTES, CORE, TIME, Bound, clean_scalars

_SUMMARY_HINTS = (
    "total_time",
    "total_exec_time",
    "total_active_time",
    "neuroncore_cycle_count",
    "dma_active_time",
)


def load_json_document(path: Path) -> Any:
    """Parse a JSON file, skipping log lines printed before the first ``{`` (summary-json goes to stdout)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    brace = text.find("{")
    if brace < 0:
        raise ProfileError(f"{path}: no JSON object in the file; not a Neuron profile")
    try:
        return json.loads(text[brace:])
    except json.JSONDecodeError as exc:
        raise ProfileError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); truncated file?"
        ) from exc
    except RecursionError as exc:
        raise ProfileError(_too_deep(path)) from exc


def _too_deep(path: Path) -> str:
    # The decoder's depth is bounded by the interpreter's recursion limit; no Neuron profile nests this deep.
    return f"{path}: JSON nested too deeply to read (over {sys.getrecursionlimit()} levels); not a Neuron profile"


def summary_entry(doc: Any) -> dict[str, Any] | None:
    """The summary object of a summary-json document, or None if ``doc`` is not one.

    Shape ``{"n_<hash>": {fields}}``; with several entries take the one with the largest ``total_time``
    (what one real consumer does, json-legacy.md §2). A bare fields object is accepted too.
    """
    if not isinstance(doc, dict) or not doc:
        return None
    if any(k in doc for k in _SUMMARY_HINTS):
        return doc
    entries = [v for v in doc.values() if isinstance(v, dict) and any(k in v for k in _SUMMARY_HINTS)]
    if not entries:
        return None
    return max(entries, key=lambda v: _seconds(v.get("total_time")))


def _seconds(value: Any) -> float:
    """A summary time for ranking entries: the number, or 0 for anything else (checked later with the rest)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else 0.0


def read_summary_json(path: str | Path) -> Profile:
    """summary-json: the kernel summary only (times seconds, ``*_percent`` fractions 0–1)."""
    p = Path(path)
    entry = summary_entry(load_json_document(p))
    if entry is None:
        raise ProfileError(
            f"{p}: JSON, but not a Neuron profile (no instruction list and no summary fields such as total_time)"
        )
    meta: dict[str, Any] = {
        k: entry[k]
        for k in ("instance_type", "compiler_version", "runtime_version", "profiler_version")
        if k in entry
    }
    notes = [
        "summary-json holds kernel totals only: no per-line heat. Use the Parquet output for source lines."
    ]
    return Profile(
        str(p), "summary-json", no_instructions(), no_locations(), no_dma(), dict(entry), meta, [], "", notes
    )


def _time_scale(lo: int, hi: int, summary: dict[str, Any]) -> tuple[float, str]:
    """Nanoseconds per timestamp unit: ns by default, ps when the span matches ``total_time × 1e12``."""
    total = summary.get("total_time") or summary.get("total_exec_time")
    if hi <= lo or not isinstance(total, (int, float)) or total <= 0:
        return 1.0, "timestamps assumed to be nanoseconds (no summary total to check against)"
    if (hi - lo) / float(total) > 1e11:
        return 1e-3, "timestamps are picoseconds (span ≈ total_time × 1e12); converted to ns"
    return 1.0, "timestamps are nanoseconds (span ≈ total_time × 1e9)"


def _queue_of(rec: dict[str, Any]) -> str | None:
    q = rec.get("queue_name") or rec.get("queue")
    if q:
        return str(q)
    sem = str(rec.get("semaphore_id") or "")
    if "(" in sem and sem.endswith(")"):
        return sem[sem.index("(") + 1 : -1]
    return None


_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
InstrRow = tuple[int, int, str, str, int, "str | None", "str | None"]
DmaRow = tuple[int, int, int, "str | None", "str | None"]


def _text_or_none(value: Any) -> str | None:
    return sys.intern(str(value)) if value else None


class _FieldError(ValueError):
    """A record field that is not a finite integer in its range (caught and located by the parser)."""

    def __init__(self, field: str, value: Any, what: str) -> None:
        super().__init__(f"{field} = {str(value)[:40]} is not {what}")
        self.field, self.value, self.what = field, value, what


def _int(field: str, value: Any, bound: Bound) -> int:
    """``value`` as a Python int within ``bound`` (JSON allows 1e400, -5 and 30-digit integers; the tables and
    the interval maths do not)."""
    try:
        out = int(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise _FieldError(field, value, bound.what) from exc
    if not bound.lo <= out <= bound.hi:
        raise _FieldError(field, value, bound.what)
    return out


def _instr_row(rec: dict[str, Any]) -> InstrRow:
    """The fields the model needs from one ``instruction[]`` record (json-legacy.md §1.2)."""
    sub = str(rec.get("subgraph") or "")
    return (
        _int("timestamp", rec["timestamp"], TIME),
        _int("duration", rec.get("duration", 0), TIME),
        sys.intern(str(rec.get("label") or rec.get("engine") or "")),
        sys.intern(str(rec.get("opcode") or "")),
        # sgNN ≈ physical core (inferred)
        _int("subgraph", sub[2:], CORE) if sub.startswith("sg") and sub[2:].isdigit() else 0,
        _text_or_none(rec.get("nki_source_location")),
        _text_or_none(rec.get("bir_debug_info_source_location")),
    )


def _dma_row(rec: dict[str, Any]) -> DmaRow:
    """The fields of one ``dma[]`` record (json-legacy.md §1.3; queue/variable keys unverified)."""
    return (
        _int("timestamp", rec["timestamp"], TIME),
        _int("duration", rec.get("duration", 0), TIME),
        _int("transfer_bytes", rec.get("transfer_bytes") or rec.get("read_size") or 0, BYTES),
        _text_or_none(_queue_of(rec)),
        _text_or_none(rec.get("variable")),
    )


def _parse_profile(text: str, pos: int) -> tuple[dict[str, Any], list[InstrRow], list[DmaRow]]:
    """Parse the top-level object, decoding ``instruction``/``dma`` arrays one record at a time.

    Only the needed fields of each record are kept, so memory is the file text plus compact rows instead of
    one Python dict per record (a 1 GB legacy profile needs ~5 GB with ``json.load``: json-legacy.md §1)."""
    top: dict[str, Any] = {}
    instr: list[InstrRow] = []
    dma: list[DmaRow] = []

    def skip(i: int) -> int:
        m = _WS.match(text, i)
        return m.end() if m else i

    pos = skip(pos)
    if text[pos] != "{":
        raise json.JSONDecodeError("expected an object", text, pos)
    pos = skip(pos + 1)
    if text[pos] == "}":
        return top, instr, dma
    while True:
        key, pos = _DECODER.raw_decode(text, skip(pos))
        pos = skip(pos)
        if text[pos] != ":":
            raise json.JSONDecodeError("expected ':'", text, pos)
        pos = skip(pos + 1)
        if key in ("instruction", "dma") and text[pos] == "[":
            rows: list[Any] = instr if key == "instruction" else dma
            convert = _instr_row if key == "instruction" else _dma_row
            top[key] = []  # marker: the key is present (its rows are in instr/dma)
            pos = skip(pos + 1)
            if text[pos] == "]":
                pos += 1
            else:
                index = 0
                while True:
                    rec, pos = _DECODER.raw_decode(text, skip(pos))
                    # Instruction records must be timed; DMA records without a time are skipped (unverified format).
                    if isinstance(rec, dict) and (key == "instruction" or "timestamp" in rec):
                        try:
                            rows.append(convert(rec))
                        except _FieldError as exc:
                            raise _FieldError(f"{key}[{index}].{exc.field}", exc.value, exc.what) from exc
                    index += 1
                    pos = skip(pos)
                    if text[pos] == "]":
                        pos += 1
                        break
                    if text[pos] != ",":
                        raise json.JSONDecodeError("expected ',' or ']'", text, pos)
                    pos += 1
        else:
            top[key], pos = _DECODER.raw_decode(text, pos)
        pos = skip(pos)
        if text[pos] == "}":
            return top, instr, dma
        if text[pos] != ",":
            raise json.JSONDecodeError("expected ',' or '}'", text, pos)
        pos += 1


def _one_row(p: Path, table: str, where: str, fields: dict[str, Any], notes: list[str]) -> pa.Table:
    """A one-row table of ``fields``: its scalars (nested values are not table fields), the unusable numbers
    dropped first (``clean_scalars``; JSON integers may exceed what a table column holds) with notes."""
    cleaned, dropped = clean_scalars(table, fields)
    notes += dropped
    scalars = {k: v for k, v in cleaned.items() if v is None or isinstance(v, (bool, int, float, str))}
    try:
        return pa.Table.from_pylist([scalars])
    except (pa.ArrowException, OverflowError, ValueError, TypeError) as exc:
        raise ProfileError(f"{p}: {where} holds a value that fits no table column ({exc})") from exc


def read_legacy_json(path: str | Path) -> Profile:
    """Legacy ``--output-format json`` profile → Profile (through the Parquet-shaped table assembly)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ProfileError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    brace = text.find("{")
    if brace < 0:
        raise ProfileError(f"{p}: no JSON object in the file; not a Neuron profile")
    try:
        top, instr, dma = _parse_profile(text, brace)
    except json.JSONDecodeError as exc:
        raise ProfileError(
            f"{p}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); truncated file?"
        ) from exc
    except IndexError as exc:
        raise ProfileError(f"{p}: invalid JSON: the file ends early; truncated file?") from exc
    except RecursionError as exc:
        raise ProfileError(_too_deep(p)) from exc
    except _FieldError as exc:
        raise ProfileError(f"{p}: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ProfileError(
            f"{p}: an instruction or DMA record lacks an integer 'timestamp'/'duration' ({exc})"
        ) from exc
    del text
    if "instruction" not in top:
        if summary_entry(top) is not None:
            return read_summary_json(p)
        raise ProfileError(f"{p}: JSON, but not a Neuron profile (no 'instruction' list, no summary fields)")
    summary_list = top.get("summary") or [{}]
    summary = (
        summary_list[0]
        if isinstance(summary_list, list) and summary_list and isinstance(summary_list[0], dict)
        else {}
    )
    lo = min((r[0] for r in instr), default=0)
    hi = max((r[0] + r[1] for r in instr), default=0)
    scale, unit_note = _time_scale(lo, hi, summary)

    def col(rows: list[Any], k: int, typ: pa.DataType) -> pa.Array:
        return pa.array([r[k] for r in rows], typ)

    def ns(values: list[int]) -> pa.Array:
        arr = np.asarray(values, np.int64)
        return pa.array(arr if scale == 1.0 else np.rint(arr * scale).astype(np.int64))

    tables: dict[str, pa.Table] = {
        "Instruction": pa.table(
            {
                "start_ts": ns([r[0] for r in instr]),
                "end_ts": ns([r[0] + r[1] for r in instr]),
                "engine": col(instr, 2, pa.string()),
                "opcode": col(instr, 3, pa.string()),
                "pcore_idx": col(instr, 4, pa.int64()),
                "nki_source_location": col(instr, 5, pa.string()),
                "bir_debug_info_source_location": col(instr, 6, pa.string()),
            }
        )
    }
    if dma:
        tables["DmaPacketAggregated"] = pa.table(
            {
                "start_ts": ns([r[0] for r in dma]),
                "end_ts": ns([r[0] + r[1] for r in dma]),
                "transfer_bytes": col(dma, 2, pa.int64()),
                "queue_name": col(dma, 3, pa.string()),
                "variable": col(dma, 4, pa.string()),
            }
        )
    notes = [f"legacy JSON: {unit_note}"]
    if summary:
        tables["Summary"] = _one_row(p, "Summary", "summary[0]", summary, notes)
    meta = top.get("metadata")
    if isinstance(meta, dict) and meta:
        tables["Metadata"] = _one_row(p, "Metadata", "metadata", meta, notes)
    return profile_from_tables(tables, str(p), "legacy-json", notes)
