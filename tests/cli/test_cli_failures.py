"""The CLI fails in one line: an internal error is exit 2 naming the log file that holds the traceback, a logged
traceback stays out of the terminal, and a closed stdout (``| head``) ends the run quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from nki_studio.cli import lint
from nki_studio.cli.errors import EXIT_BROKEN_PIPE, LOG_NAME
from nki_studio.cli.main import main

WARN = (
    "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(x):\n    for i in nl.affine_range(2):\n"
    "        pass\n    return x\n"
)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "nki-studio"


def test_internal_error_is_one_line_and_the_traceback_is_logged(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(args: object) -> int:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(lint, "run", boom)
    assert main(["lint", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error: RecursionError" in err and str(cache / LOG_NAME) in err
    assert "Traceback" in (cache / LOG_NAME).read_text(encoding="utf-8")


def test_a_logged_traceback_is_one_line(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nki_studio.nkilint import engine

    def broken(*args: object, **kwargs: object) -> object:
        raise OverflowError("int too large")

    monkeypatch.setattr(engine, "discover", broken)
    (tmp_path / "k.py").write_text(WARN)
    assert main(["lint", str(tmp_path / "k.py")]) == 2  # NKI999
    out, err = capsys.readouterr()
    assert "NKI999" in out and "OverflowError" in out
    assert "Traceback" not in err and err.count("\n") == 1 and str(cache / LOG_NAME) in err
    assert "OverflowError: int too large" in (cache / LOG_NAME).read_text(encoding="utf-8")


def closed_stdout_run(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run the CLI with a stdout whose reader is gone (as after ``| head``); (exit code, stderr)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "nki_studio", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


def test_lint_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"k{i}.py").write_text(WARN)
    code, err = closed_stdout_run(["lint", str(tmp_path)], tmp_path)
    assert code == EXIT_BROKEN_PIPE and err == ""


def test_profile_report_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text('{"total_time": 0.001, "dma_active_time": 0.0005}')
    code, err = closed_stdout_run(["profile", "summary", str(tmp_path / "summary.json")], tmp_path)
    assert code == EXIT_BROKEN_PIPE and err == ""
