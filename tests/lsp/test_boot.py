"""The bundled server's start-up module: compiled packages for the running Python, and a clear refusal of an
interpreter that is too old (the extension starts the server before probing the interpreter)."""

from __future__ import annotations

import json
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


def test_pth_files_of_the_native_folder_are_read_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pywin32's layout: its modules sit in folders a .pth file names, and an import line in it loads its DLLs
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    native = tmp_path / "native" / tag
    (native / "win32" / "lib").mkdir(parents=True)
    (native / "win32" / "lib" / "nki_test_bootstrap.py").write_text(
        "import os\nos.environ['NKI_TEST_PTH_RAN'] = '1'\n", encoding="utf-8"
    )
    (native / "pywin32.pth").write_text(
        "# comment\nwin32\nwin32/lib\nPythonwin\nimport nki_test_bootstrap\n", encoding="utf-8"
    )
    monkeypatch.setattr(sys, "path", ["", "/ext/bundled/libs", "/user/site-packages"])
    monkeypatch.delenv("NKI_TEST_PTH_RAN", raising=False)
    monkeypatch.delitem(sys.modules, "nki_test_bootstrap", raising=False)
    assert boot.add_native_packages(str(tmp_path / "native"), "/ext/bundled/libs") is None
    # named folders right after the native one (a missing one, Pythonwin, is skipped as site skips it), ahead of
    # the interpreter's own site-packages
    assert sys.path == [
        "",
        "/ext/bundled/libs",
        str(native),
        str(native / "win32"),
        str(native / "win32" / "lib"),
        "/user/site-packages",
    ]
    assert os.environ.get("NKI_TEST_PTH_RAN") == "1"


def test_a_bundle_for_another_cpu_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    (tmp_path / "native" / tag).mkdir(parents=True)
    running = boot.this_platform()
    assert running is not None  # Linux, macOS or Windows on x64/arm64
    other = "darwin-arm64" if running != "darwin-arm64" else "darwin-x64"
    monkeypatch.setattr(sys, "path", ["", "/libs"])
    (tmp_path / "manifest.json").write_text(json.dumps({"platform": other}), encoding="utf-8")
    warning = boot.add_native_packages(str(tmp_path / "native"), "/libs")
    assert warning is not None and other in warning and running in warning
    assert "Create Server Environment" in warning
    assert sys.path == ["", "/libs"]
    # the same package on its own platform loads
    (tmp_path / "manifest.json").write_text(json.dumps({"platform": running}), encoding="utf-8")
    assert boot.add_native_packages(str(tmp_path / "native"), "/libs") is None
    assert sys.path == ["", "/libs", str(tmp_path / "native" / tag)]


def test_the_running_platform_is_named_as_vs_code_names_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delattr(os, "uname")
    monkeypatch.setenv("PROCESSOR_ARCHITECTURE", "AMD64")
    assert boot.this_platform() == "win32-x64"
    monkeypatch.setenv("PROCESSOR_ARCHITECTURE", "x86")
    assert boot.this_platform() is None
