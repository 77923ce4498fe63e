"""What the profile code sends follows the declared protocol (``nki_studio.protocol``, its generated JSON Schema):
the heatmap payloads of every profile format and of an estimate, ``profile --json``, ``profile analyze --json``
and ``profile compare --json``, checked with jsonschema against the same schema the extension's types come from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import perf_kernels as pk
import pytest
from jsonschema import Draft202012Validator
from nki_studio.cli.main import main
from nki_studio.estimate.heat import estimate_payload
from nki_studio.model.targets import Generation
from nki_studio.profile.analyze import analyze
from nki_studio.protocol.schema import protocol_schema

DEFS = protocol_schema()["$defs"]
VERIFY_DATA = Path(__file__).parents[1] / "verify" / "data"


def problems(value: Any, name: str) -> list[str]:
    """Where ``value`` breaks the declared type ``name`` (empty: it follows it)."""
    validator = Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DEFS})
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message:.200}" for e in validator.iter_errors(value)]


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))  # as the client receives it (tuples become lists)


@pytest.mark.parametrize("fmt", ["parquet", "json", "perfetto", "csv"])
def test_measured_payloads_follow_the_schema(
    fmt: str, kernel_files: dict[str, Path], kernel_file: Path
) -> None:
    report = analyze(kernel_files[fmt], roots=[kernel_file.parent.parent])
    payloads = report.payloads(lambda local: Path(local).as_uri())
    assert payloads and all(p["lines"] for p in payloads)
    assert [e for p in payloads for e in problems(_json(p), "HeatmapParams")] == []


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["report", "{parquet}", "--root", "{root}", "--format", "json"], "ProfileReportJson"),
        (["summary", "{parquet}", "--format", "json"], "ProfileSummaryJson"),
        (["analyze", "{parquet}", "--root", "{root}", "--json"], "ProfileAnalysisJson"),
        (["compare", "{parquet}", "{json}", "--root", "{root}", "--json"], "Comparison"),
    ],
    ids=["report", "summary", "analyze", "compare"],
)
def test_profile_json_outputs_follow_the_schema(
    argv: list[str],
    name: str,
    kernel_files: dict[str, Path],
    kernel_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The ``--json`` outputs declared in ``nki_studio.protocol.outputs``."""
    where = {
        "parquet": kernel_files["parquet"],
        "json": kernel_files["json"],
        "root": kernel_file.parent.parent,
    }
    assert main(["profile", *(a.format(**where) for a in argv)]) == 0
    assert problems(json.loads(capsys.readouterr().out), name) == []


def test_estimated_payload_follows_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An estimate's payload, with its roofline point, from a real simulation."""
    path = VERIFY_DATA / "add_kernel.py"
    main(["simulate", f"{path}::add", "--json"])
    result = json.loads(capsys.readouterr().out)
    payload = estimate_payload(path.as_uri(), str(path), "add", result["estimate"])
    assert payload["lines"] and payload["kernel"]["roofline"] is not None
    assert problems(_json(payload), "HeatmapParams") == []


def test_estimated_findings_follow_the_schema(tmp_path: Path) -> None:
    """The investigations' findings of an estimate, on the line at fault."""
    from nki_studio.estimate.section import estimate_section

    path, trace = pk.trace("transpose", str(tmp_path))
    payload = estimate_payload(path.as_uri(), str(path), "k", estimate_section(trace, Generation.GEN3))
    assert [f["code"] for f in payload["findings"]] == ["NKI706"]
    assert problems(_json(payload), "HeatmapParams") == []


def test_the_check_reports_a_wrong_payload(kernel_files: dict[str, Path], kernel_file: Path) -> None:
    payload = _json(analyze(kernel_files["parquet"], roots=[kernel_file.parent.parent]).payloads(str)[0])
    payload["lines"][0]["busy_ns"] = "12 µs"
    payload["stray"] = 1
    del payload["kernel"]["latency_ns"]
    found = problems(payload, "HeatmapParams")
    assert any(p.startswith("lines/0/busy_ns") for p in found)
    assert any("stray" in p for p in found)
    assert any(p.startswith("kernel") for p in found)
