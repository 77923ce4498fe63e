"""``nki-studio tune --confirm-remote K`` and the MCP ``tune`` tool's ``confirm_remote`` through the real sshd on
127.0.0.1 with the stand-in Neuron tools: the top K ranked candidates are profiled from kept copies of the
kernel with their values (never the user's file), measured next to their estimates; a variant the compiler
rejects, or a host that does not answer, is reported for that candidate and the others go on; the profiles
and copies feed ``nki-studio calibrate``."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sshd
from helpers import ALIAS, mcp_settings, remote_options
from jsonschema import Draft202012Validator
from nki_studio.protocol.schema import protocol_schema
from sshd import LoopbackHost

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from mcp_harness import mcp_session, structured

pytestmark = pytest.mark.slow  # simulations, then ssh/scp against a real sshd (seconds each)

KERNEL = Path(__file__).resolve().parents[1] / "tune" / "kernels" / "stream_scale.py"
SPACE = "TILE_F=512,1024 BUFS=2"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.nki-studio]\n")
    shutil.copy(KERNEL, root / KERNEL.name)
    return root


def _tune(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "nki_studio", "tune", str(project / KERNEL.name), "--space", SPACE]
    argv += ["--workers", "1", "--remote-timeout", "60", "--json", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=project)


def _by_tile(confirmation: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {c["values"]["TILE_F"]: c for c in confirmation["candidates"]}


def test_top_k_measured_from_kept_copies_and_a_rejected_variant_reported(
    host: LoopbackHost, project: Path, tmp_path: Path
) -> None:
    before = (project / KERNEL.name).read_text()
    page = tmp_path / "tune.html"
    r = _tune(
        project,
        "--confirm-remote",
        "2",
        "--html",
        str(page),
        *remote_options(host, tmp_path / "remote", tmp_path / "cache", STANDIN_REJECT="TILE_F = 1024"),
    )
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    schema = protocol_schema()
    validator = Draft202012Validator(
        schema["x-cliOutputs"]["nki-studio tune --json"] | {"$defs": schema["$defs"]}
    )
    assert [e.message for e in validator.iter_errors(report)] == []
    confirmation = report["confirmation"]
    assert confirmation["host"] == ALIAS and confirmation["requested"] == 2
    ranked = {c["rank"]: c["values"] for c in report["candidates"] if c["verdict"] == "ranked"}
    assert [c["rank"] for c in confirmation["candidates"]] == [1, 2]
    assert [c["values"] for c in confirmation["candidates"]] == [ranked[1], ranked[2]]

    rejected, measured = _by_tile(confirmation)[1024], _by_tile(confirmation)[512]
    assert rejected["measuredNs"] is None and rejected["profile"] == ""
    assert "rejected" in rejected["error"]  # the compiler's message, for that candidate only
    assert measured["error"] == "" and measured["measuredNs"] > 0
    assert measured["ratio"] == round(measured["estimatedNs"] / measured["measuredNs"], 3)
    assert measured["measuredRank"] == 1 and confirmation["orderAgrees"] is None  # one measured
    profile = Path(measured["profile"])
    assert profile.exists() and profile.is_relative_to(tmp_path / "cache")

    # each candidate from its own kept copy, with its values; the user's file untouched
    assert (project / KERNEL.name).read_text() == before
    directory = Path(confirmation["directory"])
    assert directory.is_relative_to(project / ".nki-studio" / "tune-confirm")
    for tile, row in _by_tile(confirmation).items():
        copy = Path(row["source"])
        assert copy.parent == directory and copy.name == f"stream_scale_tune{row['rank']}.py"
        assert f"TILE_F = {tile}\n" in copy.read_text() and "BUFS = 2\n" in copy.read_text()
    assert shlex.split(confirmation["calibrateCommand"]) == [
        "nki-studio",
        "calibrate",
        str(profile),
        "--source",
        measured["source"],
    ]
    assert confirmation["calibration"] is None
    html = page.read_text()
    assert f"measured on {ALIAS}" in html and "not measured: " in html
    assert "confirm #1" in r.stderr and "[capture]" in r.stderr


def test_calibrate_runs_on_the_profiles(host: LoopbackHost, project: Path, tmp_path: Path) -> None:
    r = _tune(
        project,
        "--confirm-remote",
        "2",
        "--calibrate",
        *remote_options(host, tmp_path / "remote", tmp_path / "cache"),
    )
    assert r.returncode == 0, r.stderr
    confirmation = json.loads(r.stdout)["confirmation"]
    assert all(c["measuredNs"] for c in confirmation["candidates"])
    assert isinstance(confirmation["orderAgrees"], bool)
    assert all(isinstance(c["agrees"], bool) for c in confirmation["candidates"])
    # every profile reached calibrate: fitted on, or skipped with the reason
    result = confirmation["calibration"]
    seen = [u["file"] for u in result["used"]] + [s["profile"] for s in result["skipped"]]
    assert sorted(seen) == sorted(c["profile"] for c in confirmation["candidates"])
    assert all(s["reason"] for s in result["skipped"])


def test_an_unreachable_host_is_reported_per_candidate(
    host: LoopbackHost, project: Path, tmp_path: Path
) -> None:
    closed = f"127.0.0.1:{sshd.free_port()}"
    r = _tune(project, "--confirm-remote", "2", "--host", closed, "--cache-dir", str(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr  # the search's outcome stands; the report says what was not measured
    confirmation = json.loads(r.stdout)["confirmation"]
    assert len(confirmation["candidates"]) == 2
    assert all(c["measuredNs"] is None and c["error"] for c in confirmation["candidates"])
    assert confirmation["calibrateCommand"] == "" and confirmation["orderAgrees"] is None


async def test_mcp_tune_confirms_on_the_host(host: LoopbackHost, project: Path, tmp_path: Path) -> None:
    settings = mcp_settings(host, tmp_path / "remote", tmp_path / "cache")
    async with mcp_session("--root", str(project), "--settings", json.dumps(settings)) as s:
        result = structured(
            await s.call_tool("tune", {"file": KERNEL.name, "space": SPACE, "budget": 2, "confirm_remote": 1})
        )
    confirmed = result["confirmation"]["candidates"]
    assert [c["rank"] for c in confirmed] == [1] and confirmed[0]["measuredNs"] > 0
    assert confirmed[0]["values"] == result["winner"]["values"]
    assert f"measured on {ALIAS}" in result["table"] and "nki-studio calibrate" in result["table"]
    assert any("[capture]" in line for line in result["log"])
