"""The bundled stubs type-check real kernel code: pyright and mypy (both from PyPI) over the examples and our
kernels in the style of public NKI libraries (``tests/stubs/kernels``) report no error. The committed baseline
is zero: any error is either a stub too narrow or missing something, or a bug in our own example."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUBS = ROOT / "server" / "stubs"
# Examples kept wrong on purpose for the linter (bad_*.py) are not type-checked.
FILES = sorted(
    [p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("bad_")]
    + list((ROOT / "tests" / "stubs" / "kernels").glob("*.py"))
)


def _tool(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} not installed (dev dependencies)")
    return found


def test_pyright_reports_no_error(tmp_path: Path) -> None:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "stubPath": str(STUBS),
                "typeCheckingMode": "standard",
                "pythonVersion": "3.10",
                "reportMissingModuleSource": "none",  # stubs without the SDK: the documented setting
                "pythonPlatform": "Linux",
            }
        )
    )
    done = subprocess.run(
        [_tool("pyright"), "-p", str(config), "--outputjson", *map(str, FILES)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    report = json.loads(done.stdout)
    errors = [
        f"{Path(d['file']).name}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert report["summary"]["filesAnalyzed"] == len(FILES)
    assert errors == []


def test_mypy_reports_no_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            _tool("mypy"),
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--python-version",
            "3.10",
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--no-error-summary",
            *map(str, FILES),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"MYPYPATH": str(STUBS), "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
