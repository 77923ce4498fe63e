"""Readers for the JSON outputs: legacy full-profile JSON (``--output-format json``) and summary-json.

Legacy JSON records are renamed to the Parquet field names (``timestamp``/``duration``/``label`` →
``start_ts``/``end_ts``/``engine``) and go through the same table assembly as Parquet (json-legacy.md §1).
The whole file is parsed with ``json.loads`` (no streaming JSON parser is a dependency); Neuron deprecated
this format after SDK 2.33, and for big profiles Parquet is the format to use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
from nki_studio.profile.model import (
    Profile,
    ProfileError,
    no_dma,
    no_instructions,
    no_locations,
)
from nki_studio.profile.readers.tables import profile_from_tables

_SUMMARY_HINTS = ("total_time", "total_exec_time", "total_active_time", "neuroncore_cycle_count", "dma_active_time")


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
        raise ProfileError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); truncated file?") from exc


def is_legacy_profile(doc: Any) -> bool:
    """A legacy full-profile JSON has an ``instruction`` list (and usually ``summary``/``dma``)."""
    return isinstance(doc, dict) and isinstance(doc.get("instruction"), list)


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
    return max(entries, key=lambda v: float(v.get("total_time") or 0))


def read_summary_json(path: str | Path) -> Profile:
    """summary-json: the kernel summary only (times seconds, ``*_percent`` fractions 0–1)."""
    p = Path(path)
    entry = summary_entry(load_json_document(p))
    if entry is None:
        raise ProfileError(
            f"{p}: JSON, but not a Neuron profile (no instruction list and no summary fields such as total_time)"
        )
    meta = {k: entry[k] for k in ("instance_type", "compiler_version", "runtime_version", "profiler_version") if k in entry}
    notes = ["summary-json holds kernel totals only: no per-line heat. Use the Parquet output for source lines."]
    return Profile(str(p), "summary-json", no_instructions(), no_locations(), no_dma(), dict(entry), meta, [], "", notes)


def _time_scale(instr: list[dict[str, Any]], summary: dict[str, Any]) -> tuple[float, str]:
    """Nanoseconds per timestamp unit: ns by default, ps when the span matches ``total_time × 1e12``."""
    total = summary.get("total_time") or summary.get("total_exec_time")
    if not instr or not isinstance(total, (int, float)) or total <= 0:
        return 1.0, "timestamps assumed to be nanoseconds (no summary total to check against)"
    lo = min(int(r.get("timestamp", 0)) for r in instr)
    hi = max(int(r.get("timestamp", 0)) + int(r.get("duration", 0)) for r in instr)
    ratio = (hi - lo) / float(total)
    if ratio > 1e11:
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


def read_legacy_json(path: str | Path) -> Profile:
    """Legacy ``--output-format json`` profile → Profile (through the Parquet-shaped table assembly)."""
    p = Path(path)
    doc = load_json_document(p)
    if not is_legacy_profile(doc):
        if summary_entry(doc) is not None:
            return read_summary_json(p)
        raise ProfileError(f"{p}: JSON, but not a Neuron profile (no 'instruction' list, no summary fields)")
    summary_list = doc.get("summary") or [{}]
    summary = summary_list[0] if isinstance(summary_list, list) and summary_list and isinstance(summary_list[0], dict) else {}
    instr = [r for r in doc["instruction"] if isinstance(r, dict)]
    scale, unit_note = _time_scale(instr, summary)
    try:
        ts = [int(r["timestamp"]) for r in instr]
        du = [int(r.get("duration", 0)) for r in instr]
    except (KeyError, TypeError, ValueError) as exc:
        raise ProfileError(f"{p}: an instruction record lacks an integer 'timestamp'/'duration' ({exc})") from exc

    def scaled(v: int) -> int:
        return round(v * scale)

    def sub(r: dict[str, Any]) -> int:
        s = str(r.get("subgraph") or "")
        return int(s[2:]) if s.startswith("sg") and s[2:].isdigit() else 0  # sgNN ≈ physical core (inferred)

    tables: dict[str, pa.Table] = {
        "Instruction": pa.table({
            "start_ts": pa.array([scaled(t) for t in ts], pa.int64()),
            "end_ts": pa.array([scaled(t + d) for t, d in zip(ts, du, strict=True)], pa.int64()),
            "engine": pa.array([str(r.get("label") or r.get("engine") or "") for r in instr], pa.string()),
            "timeline_track": pa.array([r.get("subgroup") and str(r["subgroup"]) for r in instr], pa.string()),
            "opcode": pa.array([str(r.get("opcode") or "") for r in instr], pa.string()),
            "pcore_idx": pa.array([sub(r) for r in instr], pa.int64()),
            "nki_source_location": pa.array([r.get("nki_source_location") or None for r in instr], pa.string()),
            "bir_debug_info_source_location": pa.array(
                [r.get("bir_debug_info_source_location") or None for r in instr], pa.string()
            ),
        })
    }
    dma = [r for r in doc.get("dma") or [] if isinstance(r, dict) and "timestamp" in r]
    if dma:
        tables["DmaPacketAggregated"] = pa.table({
            "start_ts": pa.array([scaled(int(r["timestamp"])) for r in dma], pa.int64()),
            "end_ts": pa.array([scaled(int(r["timestamp"]) + int(r.get("duration", 0))) for r in dma], pa.int64()),
            "transfer_bytes": pa.array([int(r.get("transfer_bytes") or r.get("read_size") or 0) for r in dma], pa.int64()),
            "queue_name": pa.array([_queue_of(r) for r in dma], pa.string()),
            "variable": pa.array([r.get("variable") and str(r["variable"]) for r in dma], pa.string()),
        })
    if summary:
        tables["Summary"] = pa.Table.from_pylist([summary])
    meta = doc.get("metadata")
    if isinstance(meta, dict) and meta:
        tables["Metadata"] = pa.Table.from_pylist([meta])
    return profile_from_tables(tables, str(p), "legacy-json", [f"legacy JSON: {unit_note}"])
