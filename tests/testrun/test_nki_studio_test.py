"""``nki-studio test``: a user's own pytest suite, unchanged, on the embedded simulator (subprocess runs of
the sample project in data/sample_project: a passing test, a wrong result, a kernel the simulator refuses)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nki_studio.cli.main import build_parser
from nki_studio.cli.test import pytest_argv

PROJECT = Path(__file__).parent / "data" / "sample_project"


def _run(project: Path, *pytest_args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nki_studio", "test", "--", "-p", "no:cacheprovider", *pytest_args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy outside this repository, so the run sees the user's project only (no conftest, no ini)."""
    return Path(shutil.copytree(PROJECT, tmp_path / "sample_project"))


def test_suite_runs_with_per_test_results_and_the_kernel_line(project: Path) -> None:
    run = _run(project, "-rf")
    assert run.returncode == 1, run.stdout + run.stderr
    assert re.search(r"\b2 failed, 1 passed\b", run.stdout), run.stdout
    assert "FAILED test_kernels.py::test_wrong_kernel_is_caught - AssertionError" in run.stdout
    source = (project / "kernels.py").read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "SIMULATOR ERROR" in text)
    # The traceback stops at the kernel line (the simulator's own frames are left out) ...
    assert f"kernels.py:{line}: HardwareLimitError" in run.stdout
    assert "server/sim/" not in run.stdout.replace("\\", "/")
    # ... and the error itself names the kernel file and line.
    assert f"{project / 'kernels.py'}:{line}: sbuf tensor" in run.stdout


def test_exit_code_is_pytests(project: Path) -> None:
    assert _run(project, "-k", "matches_numpy").returncode == 0


def test_arguments_after_the_separator_go_to_pytest() -> None:
    args = build_parser(("test",)).parse_args(["test", "--nki-library", "--", "-x", "tests"])
    assert pytest_argv(args) == ["-p", "nki_studio.pytest_plugin", "--nki-library", "-x", "tests"]


CONFIGURED = """
import nki
import nki.language as nl
import numpy as np
from nki.compiler import CompileConfig


@nki.jit(compile_config=CompileConfig(dead_code_elim=False))
def copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out


def test_configured_kernel_runs():
    x = np.ones((2, 4), np.float32)
    assert np.array_equal(copy(x), x)
"""


def test_ignored_compiler_options_reach_the_warnings_summary_and_the_report(tmp_path: Path) -> None:
    (tmp_path / "test_configured.py").write_text(CONFIGURED)
    run = _run(tmp_path, "-rA")
    assert run.returncode == 0, run.stdout + run.stderr
    line = CONFIGURED.splitlines().index("@nki.jit(compile_config=CompileConfig(dead_code_elim=False))") + 1
    assert f"test_configured.py:{line}: IgnoredConfigWarning" in run.stdout, run.stdout
    assert "nki-studio simulator: CompileConfig.dead_code_elim=False: ignored (" in run.stdout
    # the -rA report of the passed test carries the section with the same line
    section = run.stdout.split("Captured nki-studio simulator call", 1)
    assert len(section) == 2, run.stdout
    assert section[1].lstrip("- \n").startswith("kernel copy:\n  config: CompileConfig.dead_code_elim=False")
