"""Broken and unusable profiles, each with a phrase the error message must contain (no pytest dependency)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import fixturegen
import pyarrow as pa
import pyarrow.parquet as pq
from fixturewriters import write_legacy_json, write_parquet, write_pftrace


def corrupt_variants(directory: Path) -> dict[str, tuple[Path, str]]:
    """``{name: (path, expected phrase)}`` — every one must be refused with that phrase, never crash."""
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    tl = fixturegen.walkthrough_timeline()
    out: dict[str, tuple[Path, str]] = {}

    trunc = write_parquet(tl, d / "truncated_parquet")
    data = (trunc / "Instruction.parquet").read_bytes()
    (trunc / "Instruction.parquet").write_bytes(data[: len(data) // 2])
    out["truncated parquet"] = (trunc, "truncated or corrupt")

    wrong = write_parquet(tl, d / "wrong_types")
    t = pq.read_table(wrong / "Instruction.parquet")
    idx = t.schema.get_field_index("start_ts")
    t = t.set_column(idx, "start_ts", pa.array([f"t{v}" for v in t.column("start_ts").to_pylist()]))
    pq.write_table(t, wrong / "Instruction.parquet")
    out["wrong column types"] = (wrong, "Instruction.start_ts has type string")

    missing = write_parquet(tl, d / "missing_tables")
    for name in ("Instruction", "Summary"):
        (missing / f"{name}.parquet").unlink()
    out["missing tables"] = (missing, "no Instruction or Summary table")

    major = write_parquet(tl, d / "unknown_major", schema_version="12.0.1")
    out["unknown MAJOR schema"] = (major, "schema 12.0.1")

    empty = d / "empty_profile"
    empty.mkdir(exist_ok=True)
    pq.write_table(
        pq.read_table(trunc.parent / "wrong_types" / "Metadata.parquet"), empty / "Metadata.parquet"
    )
    pq.write_table(
        pa.table(
            {
                "start_ts": pa.array([], pa.int64()),
                "end_ts": pa.array([], pa.int64()),
                "engine": pa.array([], pa.string()),
                "opcode": pa.array([], pa.string()),
            }
        ),
        empty / "Instruction.parquet",
    )
    out["empty profile"] = (empty, "it is empty")

    empty_file = d / "empty.json"
    empty_file.write_bytes(b"")
    out["empty file"] = (empty_file, "the file is empty")

    not_profile = d / "package.json"
    not_profile.write_text('{"name": "x", "version": "1.0"}')
    out["JSON that is not a profile"] = (not_profile, "not a Neuron profile")

    cut_json = write_legacy_json(tl, d / "cut.json")
    cut_json.write_text(cut_json.read_text()[:200])
    out["truncated JSON"] = (cut_json, "invalid JSON")

    trace = write_pftrace(tl, d / "cut.pftrace")
    (d / "cut_first_packet.pftrace").write_bytes(trace.read_bytes()[:7])
    out[".pftrace cut mid-packet"] = (d / "cut_first_packet.pftrace", "cut mid-packet")

    garbage = d / "garbage.pftrace"
    garbage.write_bytes(bytes(range(7, 250)) * 3)
    out["not a trace"] = (garbage, "not a Perfetto trace")

    nodir = d / "not_a_profile_dir"
    nodir.mkdir(exist_ok=True)
    (nodir / "readme.txt").write_text("hello")
    out["directory without tables"] = (nodir, "without Neuron profile tables")

    tl2 = fixturegen.walkthrough_timeline()
    tl2.location = [None] * len(tl2.location)
    out["no source locations"] = (write_parquet(tl2, d / "no_locations"), "NEURON_FRAMEWORK_DEBUG=1")

    out.update(hostile_number_variants(d / "numbers"))

    good = write_parquet(tl, d / "unmappable")
    out["paths that map to no file"] = (good, "maps to a file here")
    shutil.rmtree(d / "cut.pftrace", ignore_errors=True)
    return out


def _parquet_with(directory: Path, table: str, column: str, values: pa.Array) -> Path:
    """The walkthrough as Parquet with one column of one table replaced."""
    path = write_parquet(fixturegen.walkthrough_timeline(), directory)
    t = pq.read_table(path / f"{table}.parquet")
    t = t.set_column(t.schema.get_field_index(column), column, values)
    pq.write_table(t, path / f"{table}.parquet")
    return path


def hostile_number_variants(directory: Path) -> dict[str, tuple[Path, str]]:
    """Profiles whose numbers are unusable (NaN, infinite, negative, out of range, end before start, null in a
    required column), each with the phrase naming table, field and row that the refusal must contain."""
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    n = len(fixturegen.WALKTHROUGH_INSTRUCTIONS)
    out: dict[str, tuple[Path, str]] = {}
    starts = [float(r[4]) for r in fixturegen.WALKTHROUGH_INSTRUCTIONS]
    out["NaN start time"] = (
        _parquet_with(
            d / "nan", "Instruction", "start_ts", pa.array([*starts[:2], float("nan"), *starts[3:]])
        ),
        "Instruction.start_ts: 1 of 6 rows are not finite numbers (first: row 2 = nan)",
    )
    out["infinite DMA bytes"] = (
        _parquet_with(d / "inf", "DmaPacketAggregated", "transfer_bytes", pa.array([1.0, float("inf")])),
        "DmaPacketAggregated.transfer_bytes: 1 of 2 rows are not finite numbers (first: row 1 = inf)",
    )
    out["null start time"] = (
        _parquet_with(d / "null", "Instruction", "start_ts", pa.array([None] * n, pa.int64())),
        "Instruction.start_ts: 6 of 6 rows are empty (null)",
    )
    out["core index beyond 16 bits"] = (
        _parquet_with(d / "core", "Instruction", "pcore_idx", pa.array([0, 0, 0, 2**31, 0, 0], pa.int64())),
        "Instruction.pcore_idx: 1 of 6 rows are out of range for a core index (0 to 65535) (first: row 3",
    )
    out["negative DMA bytes"] = (
        _parquet_with(
            d / "negative_bytes", "DmaPacketAggregated", "transfer_bytes", pa.array([-4, 64], pa.int64())
        ),
        "DmaPacketAggregated.transfer_bytes: 1 of 2 rows are out of range for a byte count (0 to 2^48) (first: "
        "row 0 = -4)",
    )
    out["numbers written as strings"] = (
        _parquet_with(
            d / "strings", "DmaPacketAggregated", "transfer_bytes", pa.array(["1", "64"], pa.string())
        ),
        "DmaPacketAggregated.transfer_bytes has type string, expected an integer column",
    )
    out["float NaN in an integer core column"] = (
        _parquet_with(
            d / "nan_core", "Instruction", "pcore_idx", pa.array([0.0, math.nan, *[0.0] * (n - 2)])
        ),
        "Instruction.pcore_idx: 1 of 6 rows are not finite numbers (first: row 1 = nan)",
    )
    ends = [r[5] for r in fixturegen.WALKTHROUGH_INSTRUCTIONS]
    ends[4] = 1
    out["end before start"] = (
        _parquet_with(d / "back", "Instruction", "end_ts", pa.array(ends, pa.int64())),
        "Instruction.end_ts: 1 of 6 rows end before they start (first: row 4 = 1 < start_ts 209756)",
    )
    tl = fixturegen.walkthrough_timeline()
    tl.dma_end = tl.dma_start - 5
    out["negative JSON duration"] = (
        write_legacy_json(tl, d / "negative.json"),
        "dma[0].duration = -5 is not",
    )
    return out
