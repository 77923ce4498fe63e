"""Source mapping order, the nki/heatmap payload, hover text, line remapping after edits, and the CLI output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nki_studio.cli.main import main
from nki_studio.profile.heatmap import HeatLine, build_payload, hover_markdown, inlay_label, remap_lines
from nki_studio.profile.mapping import map_sources


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n")
    return path


def test_mapping_order_setting_suffix_basename_and_ambiguity(tmp_path: Path) -> None:
    a = _touch(tmp_path / "proj" / "kernels" / "rms.py")
    _touch(tmp_path / "proj" / "old" / "rms.py")
    b = _touch(tmp_path / "proj" / "x" / "attn.py")
    _touch(tmp_path / "proj" / "y" / "dup.py")
    _touch(tmp_path / "proj" / "z" / "dup.py")
    _touch(tmp_path / "proj" / ".venv" / "attn2.py")
    got = map_sources(
        [
            "/home/ubuntu/kernels/rms.py",
            "/remote/src/x/attn.py",
            "/elsewhere/attn.py",
            "/r/dup.py",
            "/r/missing.py",
            "/home/ubuntu/.venv/attn2.py",
        ],
        [tmp_path / "proj"],
        {"/remote/src": str(tmp_path / "proj")},
    )
    assert got["/home/ubuntu/kernels/rms.py"].local == a.resolve()
    assert "longest common path suffix (2 components)" == got["/home/ubuntu/kernels/rms.py"].how
    assert got["/remote/src/x/attn.py"].local == b.resolve() and got["/remote/src/x/attn.py"].how.startswith(
        "path mapping"
    )
    assert got["/elsewhere/attn.py"].local == b.resolve() and got["/elsewhere/attn.py"].how == "basename"
    assert (
        got["/r/dup.py"].local is None
        and "ambiguous" in got["/r/dup.py"].how
        and len(got["/r/dup.py"].candidates) == 2
    )
    assert got["/r/missing.py"].local is None and "no workspace file" in got["/r/missing.py"].how
    assert got["/home/ubuntu/.venv/attn2.py"].local is None  # virtualenvs are not searched


def test_explicit_source_wins_and_single_file_fallback(tmp_path: Path) -> None:
    k = _touch(tmp_path / "mine.py")
    got = map_sources(["/remote/other_name.py"], [], None, [k])
    assert (
        got["/remote/other_name.py"].local == k.resolve()
        and "only --source" in got["/remote/other_name.py"].how
    )


def _payload(stale: bool = False) -> dict[str, object]:
    lines = [
        HeatLine(
            line=3,
            busy_ns=12_300,
            share=0.18,
            share_of_compute=0.2,
            instr=5,
            work_instr=4,
            wait_ns=700,
            engines={"Vector": 12_300, "Scalar": 100},
            dma_bytes=4096,
            dma_ns=900,
            dma_overlap_ns=50,
            top_opcodes=[{"opcode": "TENSOR_TENSOR", "count": 4, "sum_ns": 12_000}],
            iterations=[{"label": "i=0", "busy_ns": 6000, "instr": 2}],
        ),
        HeatLine(line=1, busy_ns=6_150, share=0.09, instr=1, work_instr=1, engines={"Tensor": 6150}),
    ]
    return build_payload(
        "file:///k.py",
        "measured",
        {"label": "p (parquet)", "path": "/p"},
        lines,
        {"latency_source": "Summary.total_exec_time"},
        stale=stale,
    )


def test_payload_schema() -> None:
    p = _payload()
    assert set(p) == {"uri", "source", "profile", "metric_defs", "stale", "lines", "kernel", "default_metric"}
    assert p["default_metric"] == "time"  # no bounds, no bottleneck: the line's time (compute + DMA issued)
    assert [ln["time_ns"] for ln in p["lines"]] == [6_150, 12_300 + 900]  # type: ignore[index]
    assert [ln["line"] for ln in p["lines"]] == [1, 3]  # type: ignore[index]
    assert [ln["heat"] for ln in p["lines"]] == [0.5, 1.0]  # type: ignore[index]
    assert "iterations" not in p["lines"][0] and p["lines"][1]["iterations"]  # type: ignore[index]
    assert set(p["metric_defs"]) >= {"busy_ns", "share", "instr", "wait_ns", "engines", "dma_bytes"}  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        build_payload("u", "guess", {}, [], {})


def test_hover_and_inlay_text() -> None:
    p = _payload(stale=True)
    line = p["lines"][1]  # type: ignore[index]
    text = hover_markdown(line, p)
    for part in (
        "Measured",
        "12.3 µs",
        "18.0% of kernel",
        "Summary.total_exec_time",
        "5 (4 work, 1 wait)",
        "Vector 12.3 µs",
        "`TENSOR_TENSOR` ×4",
        "Semaphore wait: 700 ns",
        "4.0 KiB",
        "i=0: 6.0 µs",
        "file changed",
    ):
        assert part in text, part
    assert inlay_label(line) == "⏱ 12.3 µs · 18% · Vector"
    assert inlay_label(line, "estimate").startswith("⏱ est. ")


def test_remap_lines_follows_edits() -> None:
    old = "a\nb\nc\nd\n"
    lines = [{"line": 0}, {"line": 1}, {"line": 2}, {"line": 3}]
    moved, changed = remap_lines(lines, old, "new\na\nb\nc\nd\n")
    assert changed and [ln["line"] for ln in moved] == [1, 2, 3, 4]
    moved, _ = remap_lines(lines, old, "a\nB\nc\nd\n")  # edited in place: keeps its heat
    assert [ln["line"] for ln in moved] == [0, 1, 2, 3]
    moved, _ = remap_lines(lines, old, "a\nd\n")  # deleted lines lose theirs
    assert [ln["line"] for ln in moved] == [0, 1]
    assert remap_lines(lines, old, old) == (lines, False)


def test_cli_report_text_and_json(
    walkthrough_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "rmsnorm.py"
    src.write_text("\n".join(f"line {i}" for i in range(1, 61)) + "\n")
    assert (
        main(
            [
                "profile",
                "report",
                str(walkthrough_files["parquet"]),
                "--source",
                str(src),
                "--dma-ceiling",
                "368",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Latency: 218.7 µs\n  kernel time from: Summary.total_exec_time" in out  # plain words first
    assert "DMA union 69.8 µs" in out and "compute union 190.3 µs" in out and "overlap 56.3 µs" in out
    assert "unattributed: 2 (0 work)" in out and "memory floor 5.7 µs" in out
    row41 = next(r for r in out.splitlines() if r.startswith("41 "))
    assert "████████████████████" in row41 and "100.5 µs" in row41 and "line 41" in row41
    assert "\x1b[" not in out  # not a terminal: no colours
    assert (
        main(
            [
                "profile",
                "report",
                str(walkthrough_files["perfetto"]),
                "--source",
                str(src),
                "--format",
                "json",
                "--metric",
                "wait",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    (payload,) = doc["files"]
    assert payload["uri"] == src.resolve().as_uri() and {ln["line"] for ln in payload["lines"]} == {
        40,
        43,
        46,
    }
    assert main(["profile", "summary", str(walkthrough_files["summary-json"])]) == 0
    assert "Latency: 218.7 µs" in capsys.readouterr().out
    assert main(["profile", "report", str(walkthrough_files["parquet"]), "--path-map", "nonsense"]) == 2
    assert main(["profile"]) == 2
