"""``nki-studio migrate`` through the command line: the diff by default, JSON, exit codes, files untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nki_studio.cli.main import main

MANUAL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    return t
"""


def test_diff_and_manual_steps_without_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "k.py"
    path.write_text(MANUAL, encoding="utf-8")
    assert main(["migrate", str(path), "--write"]) == 1
    out = capsys.readouterr().out
    assert "-import neuronxcc.nki as nki\n-import neuronxcc.nki.language as nl\n+import nki\n" in out
    assert f"{path}:7: manual: nl.par_dim: block dimensions are gone" in out
    assert out.rstrip().endswith("manual_steps: 1 construct(s) need migrating by hand (listed); no proof run")
    assert path.read_text(encoding="utf-8") == MANUAL


def test_json_and_unparsable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def k(:\n", encoding="utf-8")
    assert main(["migrate", str(path), "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "not_migratable" and result["message"].startswith(
        "cannot parse the file: line 1"
    )
    assert main(["migrate", str(tmp_path / "missing.py")]) == 2
