"""The bundled server's start-up module: compiled packages for the running Python, and a clear refusal of an
interpreter that is too old (the extension starts the server before probing the interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from nki_studio import boot


def test_native_packages_for_this_python_go_after_the_bundled_libs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    (tmp_path / "native" / tag).mkdir(parents=True)
    monkeypatch.setattr(sys, "path", ["", "/ext/bundled/libs", "/user"])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/ext/bundled/libs", "/user"]))
    assert boot.add_native_packages(str(tmp_path / "native"), "/ext/bundled/libs") is None
    assert sys.path == ["", "/ext/bundled/libs", str(tmp_path / "native" / tag), "/user"]
    # simulation workers inherit it
    assert os.environ["PYTHONPATH"].split(os.pathsep) == [
        "/ext/bundled/libs",
        str(tmp_path / "native" / tag),
        "/user",
    ]


def test_a_bundle_without_this_python_says_which_versions_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "native" / "cp39").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", ["", "/libs"])
    warning = boot.add_native_packages(str(tmp_path / "native"), "/libs")
    assert warning is not None and "cp39" in warning and f"not cp{sys.version_info[0]}" in warning
    assert sys.path == ["", "/libs"]


def test_a_too_old_python_is_refused_with_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "version_info", (3, 9, 18, "final", 0))
    assert boot.main(["serve"]) == boot.TOO_OLD
    assert "older than 3.10" in capsys.readouterr().err


def test_boot_runs_the_cli() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "nki_studio.boot", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--log-level" in out
