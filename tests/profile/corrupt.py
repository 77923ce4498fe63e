"""Broken and unusable profiles, each with a phrase the error message must contain (no pytest dependency)."""

from __future__ import annotations

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

    good = write_parquet(tl, d / "unmappable")
    out["paths that map to no file"] = (good, "maps to a file here")
    shutil.rmtree(d / "cut.pftrace", ignore_errors=True)
    return out
