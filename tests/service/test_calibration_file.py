"""Which calibration an estimate uses: the setting (relative to the project), ``[tool.nki-studio.calibration]``,
the project's default file, ``off``; and the note when it cannot be used."""

from __future__ import annotations

import json
from pathlib import Path

from nki_studio.protocol.calibration import CALIBRATION_VERSION
from nki_studio.service.calibration_file import for_estimate, write_path
from nki_studio.service.settings import Settings

TABLE = {
    "target": "trn2",
    "compute": [],
    "engine_scale": {"vector": 1.25},
    "dma": [],
    "held_out": {"kernels": 2, "before": 0.4, "after": 0.05},
    "profiles": [
        {"file": "p", "sha256": "0" * 64, "date": "d", "target": "trn2", "kernel": "k.py::k", "matched": 3}
    ],
}


def _file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": CALIBRATION_VERSION, "tool": "t", "targets": {"trn2": TABLE}}))
    return path


def test_the_project_file_the_pyproject_table_the_setting_and_off(tmp_path: Path) -> None:
    kernel = str(tmp_path / "src" / "k.py")
    (tmp_path / "src").mkdir()
    assert for_estimate(kernel, "trn2", Settings()) == (
        None,
        None,
    )  # nothing there: the built-in model, silently
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    default = _file(tmp_path / ".nki-studio" / "calibration.json")
    table, note = for_estimate(kernel, "trn2", Settings())
    assert table == TABLE and note is not None and note["file"] == str(default)
    assert note["message"] == "calibrated on 1 of your profiles, held-out error 5%"
    assert write_path(kernel, Settings()) == str(default)

    named = _file(tmp_path / "cal" / "mine.json")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.nki-studio]\n[tool.nki-studio.calibration]\nfile = "cal/mine.json"\n'
    )
    assert for_estimate(kernel, "trn2", Settings())[1]["file"] == str(named)  # type: ignore[index]
    setting = Settings(calibration_file="cal/mine.json")  # relative to the project
    assert for_estimate(kernel, "trn2", setting)[1]["file"] == str(named)  # type: ignore[index]
    assert for_estimate(kernel, "trn2", Settings(calibration_file="off")) == (None, None)
    assert write_path(kernel, Settings(calibration_file="off")) == str(default)


def test_a_named_file_that_is_missing_or_lacks_the_target_is_ignored_with_the_reason(tmp_path: Path) -> None:
    kernel = str(tmp_path / "k.py")
    table, note = for_estimate(kernel, "trn2", Settings(calibration_file="missing.json"))
    assert table is None and note is not None and note["status"] == "ignored"
    assert "cannot read it" in note["message"] and note["message"].endswith("using the built-in model")
    _file(tmp_path / ".nki-studio" / "calibration.json")
    table, note = for_estimate(kernel, "trn1", Settings())
    assert table is None and note is not None and "no table for trn1 (it has: trn2)" in note["message"]
