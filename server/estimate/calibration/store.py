"""The calibration file (``protocol.calibration.CalibrationFile``): written by ``calibrate``, read by every later
estimate. A file that cannot be read, of another version, or without a table for the estimate's target raises
``CalibrationError`` with the reason, and the estimate falls back to the built-in model (never a number from a
table it cannot trust).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, cast

from nki_studio import __version__
from nki_studio.estimate.calibration.overlay import DMA_ROW_EDGES
from nki_studio.protocol.calibration import (
    CALIBRATION_VERSION,
    CalibrationFile,
    CalibrationNote,
    CalibrationTable,
)


class CalibrationError(ValueError):
    """A calibration file that cannot be used: the message says why, in one line."""


def empty() -> CalibrationFile:
    """A file with no table yet."""
    return {"version": CALIBRATION_VERSION, "tool": __version__, "targets": {}}


def read(path: str) -> CalibrationFile:
    """The calibration file at ``path``. Raises ``CalibrationError``."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except OSError as exc:
        raise CalibrationError(f"calibration file {path}: cannot read it: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"calibration file {path}: not JSON ({exc})") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("targets"), dict):
        raise CalibrationError(f"calibration file {path}: not a calibration file (no 'targets' object)")
    if raw.get("version") != CALIBRATION_VERSION:
        raise CalibrationError(
            f"calibration file {path}: version {raw.get('version')!r}, this nki-studio reads version "
            f"{CALIBRATION_VERSION}: run nki-studio calibrate again"
        )
    for target, table in raw["targets"].items():
        problem = _table_problem(table, target)
        if problem:
            raise CalibrationError(f"calibration file {path}: target {target}: {problem}")
    return cast(CalibrationFile, raw)


def table_for(path: str, target: str) -> CalibrationTable:
    """The table of ``target`` in the file at ``path``. Raises ``CalibrationError`` (no table for it too)."""
    tables = read(path)["targets"]
    if target not in tables:
        have = ", ".join(sorted(tables)) or "none"
        raise CalibrationError(f"calibration file {path}: no table for {target} (it has: {have})")
    return tables[target]


def write(path: str, target: str, table: CalibrationTable) -> None:
    """Store ``table`` as ``target``'s in the file at ``path``, keeping the other targets' tables (a file that
    cannot be read is replaced)."""
    try:
        data = read(path) if os.path.exists(path) else empty()
    except CalibrationError:
        data = empty()
    data["tool"] = __version__
    data["targets"][target] = table
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def note(table: CalibrationTable, path: str) -> CalibrationNote:
    """What an estimate that used ``table`` says: "calibrated on 5 of your profiles, held-out error 4%"."""
    n = len(table["profiles"])
    after = table["held_out"]["after"]
    error = f"held-out error {after:.0%}" if after is not None else "held-out error unknown (one kernel)"
    return {
        "status": "applied",
        "file": path,
        "message": f"calibrated on {n} of your profiles, {error}",
        "profiles": n,
    }


def ignored(path: str, reason: str) -> CalibrationNote:
    """What an estimate says when its calibration file could not be used: the built-in model, and why."""
    return {
        "status": "ignored",
        "file": path,
        "message": f"{reason}; using the built-in model",
        "profiles": 0,
    }


def _number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _table_problem(table: Any, target: str) -> str | None:
    """What is wrong with one target's table, or None."""
    if not isinstance(table, dict):
        return "not an object"
    if table.get("target") != target:
        return f"its table says target {table.get('target')!r}"
    compute, dma, scale = table.get("compute"), table.get("dma"), table.get("engine_scale")
    if not isinstance(compute, list) or not isinstance(dma, list) or not isinstance(scale, dict):
        return "'compute', 'dma' (lists) and 'engine_scale' (object) are required"
    for c in compute:
        if not isinstance(c, dict) or not all(
            isinstance(c.get(k), str) for k in ("engine", "opcode", "dtype")
        ):
            return f"a compute cost without engine/opcode/dtype: {c!r}"
        if not (_number(c.get("fixed_ns")) and _number(c.get("per_element_ns"))):
            return (
                f"compute cost {c['engine']} {c['opcode']}: fixed_ns and per_element_ns must be numbers >= 0"
            )
    for d in dma:
        if not isinstance(d, dict) or d.get("row_min") not in DMA_ROW_EDGES:
            return f"a DMA cost whose row_min is not one of {DMA_ROW_EDGES}: {d!r}"
        if not (_number(d.get("fixed_ns")) and _number(d.get("ns_per_byte"))):
            return "DMA cost: fixed_ns and ns_per_byte must be numbers >= 0"
    if not all(isinstance(e, str) and _number(v) for e, v in scale.items()):
        return "engine_scale: numbers >= 0 per engine"
    if not isinstance(table.get("profiles"), list) or not isinstance(table.get("held_out"), dict):
        return "'profiles' (list) and 'held_out' (object) are required"
    return None
