"""Hostile profile inputs end in exit 2 and one line naming the file (and the JSON path where there is one):
FIFOs and other non-regular files refused before opening, deep JSON nesting, numbers beyond 64 bits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import fixturegen
import numpy as np
import pyarrow as pa
import pytest
from fixturewriters import write_csv, write_legacy_json, write_pftrace
from nki_studio.cli.main import main


def _legacy(tmp_path: Path, name: str, edit: object) -> Path:
    """A legacy JSON profile of the walkthrough timeline, its document changed by ``edit(doc)``."""
    path = write_legacy_json(fixturegen.walkthrough_timeline(), tmp_path / name)
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err
    return err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.timeout(30)
def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "profile.json"
    os.mkfifo(fifo)
    for args in (
        ["profile", "report", str(fifo)],
        ["profile", "summary", str(fifo), "--input-format", "legacy-json"],
    ):
        assert "not a regular file" in _refused(args, capsys)


def test_deeply_nested_json_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "a.json").write_text('{"summary": ' + deep + "}")
    (tmp_path / "b.json").write_text('{"instruction": [{"timestamp": 1, "x": ' + deep + "}]}")
    for name in ("a.json", "b.json"):
        assert "nested too deeply" in _refused(["profile", "summary", str(tmp_path / name)], capsys)


@pytest.mark.parametrize(
    ("field", "value"), [("timestamp", 10**30), ("duration", 10**30), ("timestamp", "1e400")]
)
def test_numbers_beyond_64_bits_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object
) -> None:
    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["instruction"][2][field] = float(value) if isinstance(value, str) else value

    path = _legacy(tmp_path, "big.json", edit)
    assert f"instruction[2].{field}" in _refused(["profile", "report", str(path)], capsys)


def test_a_line_number_beyond_32_bits_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def line(doc: dict) -> None:  # type: ignore[type-arg]
        doc["instruction"][1]["nki_source_location"] = "/home/ubuntu/kernels/k.py:" + "9" * 30

    err = _refused(["profile", "summary", str(_legacy(tmp_path, "line.json", line))], capsys)
    assert "Instruction.nki_source_location: row 1" in err and "out of range" in err


@pytest.mark.parametrize("value", [10**30, float("nan"), float("inf"), -1.0])
def test_an_unusable_summary_total_is_ignored_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    def total(doc: dict) -> None:  # type: ignore[type-arg]
        doc["summary"][0]["total_time"] = value
        doc["summary"][0].pop("total_exec_time", None)

    path = _legacy(tmp_path, "total.json", total)
    assert main(["profile", "summary", str(path), "--format", "json"]) == 0
    kernel = json.loads(capsys.readouterr().out)["kernel"]
    assert any(n.startswith("Summary.total_time = ") and "ignored" in n for n in kernel["notes"])
    assert kernel["latency_source"].startswith("span of")  # the rows' span, not the unusable total
    assert 0 < kernel["compute_union_ns"] <= kernel["latency_ns"]


def test_legacy_json_without_dma_records_reports_idle_as_not_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_dma(doc: dict) -> None:  # type: ignore[type-arg]
        doc["dma"] = []

    path = _legacy(tmp_path, "nodma.json", no_dma)
    assert main(["profile", "summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "overlap and idle: not recorded in this profile" in out and "idle -" not in out
    assert main(["profile", "summary", str(path), "--format", "json"]) == 0
    kernel = json.loads(capsys.readouterr().out)["kernel"]
    assert kernel["idle_ns"] is None and kernel["intersection_ns"] is None
    assert 0 < kernel["dma_union_ns"] <= kernel["latency_ns"]  # the Summary's DMA time is still shown


def test_a_trace_name_that_is_not_utf8_is_read_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_pftrace(fixturegen.walkthrough_timeline(), tmp_path / "t.pftrace")
    data = path.read_bytes()
    assert b"Vector Engine Row 0" in data
    path.write_bytes(data.replace(b"Vector Engine Row 0", b"\xffector Engine Row 0"))
    assert main(["profile", "summary", str(path), "--format", "json"]) == 0
    engines = json.loads(capsys.readouterr().out)["kernel"]["engines"]
    assert "\ufffdector Engine Row 0" in engines  # kept as text (replacement character), not a crash


@pytest.mark.parametrize("value", [2**62, 2**64 - 1])
def test_trace_timestamps_beyond_the_time_range_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: int
) -> None:
    tl = fixturegen.walkthrough_timeline()
    tl.end = tl.end.astype(object)
    tl.end[3] = value  # the writer encodes Python ints as unsigned varints
    path = write_pftrace(tl, tmp_path / "t.pftrace")
    err = _refused(["profile", "summary", str(path)], capsys)
    assert "TracePacket.timestamp" in err and "out of range" in err


def test_csv_with_a_duplicated_column_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(fixturegen.walkthrough_timeline(), tmp_path / "csv")
    f = path / "Instruction.csv"
    lines = f.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace("duration_ns", "start_ts")
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "Instruction has the column 'start_ts' more than once" in _refused(
        ["profile", "summary", str(path)], capsys
    )


def test_a_summary_latency_shorter_than_the_activity_gives_way_to_the_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def short(doc: dict) -> None:  # type: ignore[type-arg]
        doc["summary"][0]["total_exec_time"] = 1e-6  # 1 µs for a 218 µs kernel

    path = _legacy(tmp_path, "short.json", short)
    assert main(["profile", "summary", str(path), "--format", "json"]) == 0
    kernel = json.loads(capsys.readouterr().out)["kernel"]
    assert kernel["latency_ns"] == fixturegen.WALKTHROUGH_LATENCY_NS and kernel["latency_source"].startswith(
        "span"
    )
    assert any("is shorter than the measured DMA ∪ compute" in n for n in kernel["notes"])
    assert kernel["idle_ns"] >= 0


def test_huge_but_valid_times_give_a_sound_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kernel_file: Path
) -> None:
    """Times near the top of the range (2^62 ns) pass validation; every sum, bar and share stays sound."""
    tl = fixturegen.kernel_file_timeline(kernel_file, n_instructions=30, seed=3)
    tl.end[-1] = 2**62 - 1  # one instruction lasting ~146 years
    tl.start[0] = 2**61
    tl.end[0] = 2**61 + 5
    path = write_legacy_json(tl, tmp_path / "huge.json")
    args = ["profile", "report", str(path), "--source", str(kernel_file)]
    assert main([*args, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    k = doc["kernel"]
    assert 0 < k["compute_union_ns"] <= k["latency_ns"] < 2**62
    assert all(0 <= ln["share"] <= 1 and 0 <= ln["heat"] <= 1 for f in doc["files"] for ln in f["lines"])
    assert main(args) == 0
    out = capsys.readouterr().out
    bars = [ln.split()[1] for ln in out.splitlines() if "│" in ln and len(ln.split()) > 1]
    bars = [b for b in bars if set(b) <= {"█", "·"}]
    assert bars and all(len(b) == 20 for b in bars) and any("█" in b for b in bars)


def test_an_absurd_metadata_ceiling_is_ignored_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq
    from fixturewriters import write_parquet

    path = write_parquet(fixturegen.walkthrough_timeline(), tmp_path / "p")
    meta = pq.read_table(path / "Metadata.parquet")
    i = meta.schema.get_field_index("dma_ddr_bandwidth")
    meta = meta.set_column(i, "dma_ddr_bandwidth", pa.array([1e-300]))
    pq.write_table(meta, path / "Metadata.parquet")
    assert main(["profile", "summary", str(path), "--format", "json"]) == 0
    kernel = json.loads(capsys.readouterr().out)["kernel"]
    assert any(n.startswith("Metadata.dma_ddr_bandwidth = 1e-300 is outside") for n in kernel["notes"])
    roofline = kernel["roofline"]
    assert "Metadata" not in roofline["ceiling_source"] and 0 < roofline["memory_floor_ns"] < 1e9


def test_a_summary_number_that_is_text_is_ignored_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def text(doc: dict) -> None:  # type: ignore[type-arg]
        doc["summary"][0]["dma_active_time"] = "abc"
        doc["summary"][0]["hbm_read_bytes"] = [1]

    assert main(["profile", "summary", str(_legacy(tmp_path, "text.json", text)), "--format", "json"]) == 0
    notes = json.loads(capsys.readouterr().out)["kernel"]["notes"]
    assert any(n.startswith("Summary.dma_active_time = abc is not a number") for n in notes)
    assert any(n.startswith("Summary.hbm_read_bytes = [1] is not a number") for n in notes)


def test_a_lines_dma_time_counts_only_the_transfers_the_kernel_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kernel_file: Path
) -> None:
    """Found by the fuzzer: transfers starting before the execution window counted in full for their line
    (clipped for the kernel), so a line's DMA time exceeded the latency."""
    tl = fixturegen.kernel_file_timeline(kernel_file, n_instructions=40, seed=5)
    tl.executions = [(0, int(tl.start.min()), int(tl.end.max()))]
    triggered = np.flatnonzero(tl.dma_trigger >= 0)
    assert triggered.size
    tl.dma_start[triggered] = 1  # long before the window opens
    from fixturewriters import write_parquet

    path = write_parquet(tl, tmp_path / "p")
    assert main(["profile", "report", str(path), "--source", str(kernel_file), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    lat = doc["kernel"]["latency_ns"]
    lines = [ln for f in doc["files"] for ln in f["lines"]]
    assert any(ln["dma_ns"] for ln in lines) and all(ln["dma_ns"] <= lat for ln in lines)


def test_a_wait_longer_than_the_summary_latency_gives_way_to_the_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def long_wait(doc: dict) -> None:  # type: ignore[type-arg]
        doc["instruction"][0]["duration"] = 10**9  # the first semaphore wait lasts a second

    path = _legacy(tmp_path, "wait.json", long_wait)
    assert main(["profile", "summary", str(path), "--format", "json"]) == 0
    kernel = json.loads(capsys.readouterr().out)["kernel"]
    assert kernel["latency_source"].startswith("span")
    assert kernel["unattributed_wait_ns"] <= kernel["latency_ns"]
    assert any("semaphore wait of one line" in n for n in kernel["notes"])


def test_a_csv_header_that_is_not_utf8_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(fixturegen.walkthrough_timeline(), tmp_path / "csv")
    f = path / "Instruction.csv"
    f.write_bytes(f.read_bytes().replace(b"opcode", b"op\xdbcode", 1))
    assert "a column name is not UTF-8 text" in _refused(["profile", "summary", str(path)], capsys)
