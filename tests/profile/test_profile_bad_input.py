"""Every corrupted or unusable profile gets a clear message: ProfileError from the library, exit 2 from the CLI.
(The LSP error responses are checked in test_profile_lsp.py over the same variants.)"""

from __future__ import annotations

from pathlib import Path

import fixturegen
import pytest
from corrupt import corrupt_variants
from fixturewriters import write_parquet, write_pftrace
from nki_studio.cli.main import main
from nki_studio.profile.analyze import analyze
from nki_studio.profile.model import ProfileError
from nki_studio.profile.readers.detect import load_profile


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return corrupt_variants(tmp_path_factory.mktemp("corrupt"))


def _refusal(path: Path, root: Path) -> str:
    """The message analysis gives: a ProfileError, or the report's problem when nothing can be painted."""
    try:
        report = analyze(path, roots=[root])
    except ProfileError as exc:
        return str(exc)
    problem = report.problem()
    assert problem is not None, f"{path} was accepted"
    return problem


NAMES = [
    "truncated parquet",
    "wrong column types",
    "missing tables",
    "unknown MAJOR schema",
    "empty profile",
    "empty file",
    "JSON that is not a profile",
    "truncated JSON",
    ".pftrace cut mid-packet",
    "not a trace",
    "directory without tables",
    "no source locations",
    "paths that map to no file",
    "NaN start time",
    "infinite DMA bytes",
    "null start time",
    "core index beyond 16 bits",
    "end before start",
    "negative JSON duration",
]


@pytest.mark.parametrize("name", NAMES)
def test_library_refuses_with_clear_message(
    variants: dict[str, tuple[Path, str]], name: str, tmp_path: Path
) -> None:
    path, phrase = variants[name]
    assert phrase in _refusal(path, tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_cli_exits_2_with_the_message(
    variants: dict[str, tuple[Path, str]], name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, phrase = variants[name]
    assert main(["profile", "report", str(path), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert phrase in err and "Traceback" not in err
    # `summary` needs no source lines: it refuses only what cannot be read at all.
    unreadable = name not in ("no source locations", "paths that map to no file")
    assert main(["profile", "summary", str(path)]) == (2 if unreadable else 0)
    assert (phrase in capsys.readouterr().err) == unreadable


def test_unknown_major_message_names_both_versions_and_what_still_works(
    variants: dict[str, tuple[Path, str]],
) -> None:
    with pytest.raises(ProfileError) as info:
        load_profile(variants["unknown MAJOR schema"][0])
    msg = str(info.value)
    assert "12.0.1" in msg and "7.4.0" in msg and "What still works" in msg and "summary-json" in msg
    # ...and the documented escape hatch reads it by column names.
    prof = load_profile(variants["unknown MAJOR schema"][0], ignore_schema_version=True)
    assert any("schema check skipped" in n for n in prof.notes) and prof.has_instructions


def test_newer_minor_schema_is_accepted(tmp_path: Path) -> None:
    prof = load_profile(
        write_parquet(fixturegen.walkthrough_timeline(), tmp_path / "p", schema_version="7.9.3")
    )
    assert prof.schema_version == "7.9.3" and prof.has_instructions


def test_trace_cut_after_some_slices_keeps_them_and_says_so(tmp_path: Path) -> None:
    trace = write_pftrace(fixturegen.walkthrough_timeline(), tmp_path / "t.pftrace")
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) - 5])
    prof = load_profile(trace)
    assert any("cut mid-packet" in n for n in prof.notes)
    assert any("never closed" in n for n in prof.notes) or len(prof.instructions) == 6


def test_extra_unknown_columns_are_ignored(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = write_parquet(fixturegen.walkthrough_timeline(), tmp_path / "p")
    t = pq.read_table(d / "Instruction.parquet")
    pq.write_table(
        t.append_column("column_from_the_future", pa.array([1] * t.num_rows)), d / "Instruction.parquet"
    )
    assert len(load_profile(d).instructions) == 6


def test_split_table_parts_are_read_in_order(tmp_path: Path) -> None:
    from nki_studio.profile.metrics import compute_metrics

    d = write_parquet(fixturegen.walkthrough_timeline(), tmp_path / "p", parts=3)
    assert (d / "Instruction_2.parquet").exists() and not (d / "Instruction.parquet").exists()
    assert compute_metrics(load_profile(d)).kernel.compute_union_ns == 190251


def test_legacy_instruction_without_timestamp_is_refused(tmp_path: Path) -> None:
    import json

    from fixturewriters import write_legacy_json

    path = write_legacy_json(fixturegen.walkthrough_timeline(), tmp_path / "p.json")
    doc = json.loads(path.read_text())
    del doc["instruction"][2]["timestamp"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError, match="lacks an integer 'timestamp'"):
        load_profile(path)


def test_memory_guard(variants: dict[str, tuple[Path, str]], walkthrough_files: dict[str, Path]) -> None:
    from nki_studio.profile.readers.detect import available_memory, memory_estimate, memory_refusal

    assert memory_estimate(walkthrough_files["parquet"]) == 6 * 300  # six Instruction rows
    assert memory_estimate(walkthrough_files["perfetto"]) == walkthrough_files["perfetto"].stat().st_size * 16
    assert memory_estimate(variants["truncated parquet"][0]) == 0  # unreadable: the reader reports it
    assert memory_refusal(10 * 2**30, 4 * 2**30) is not None and "profile report" in str(
        memory_refusal(10 * 2**30, 4 * 2**30)
    )
    assert memory_refusal(1 * 2**30, 4 * 2**30) is None and memory_refusal(10 * 2**30, None) is None
    avail = available_memory()
    assert avail is None or avail > 0
