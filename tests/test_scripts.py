"""The scripts a user runs first: ``scripts/demo-profile.sh`` (run by ``scripts/demo.sh``) prints the synthetic
profile the README promises, labelled as generated and painted on the example's lines; ``scripts/package-all.sh``
on a fresh clone (no ``node_modules``) says what to run first instead of failing with ``ERR_MODULE_NOT_FOUND``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_demo_prints_a_synthetic_profile_on_the_example() -> None:
    run = _bash(ROOT / "scripts" / "demo-profile.sh", "examples/tensor_add.py")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "synthetic profile of examples/tensor_add.py (GENERATED" in out and "not measured" in out
    assert re.search(r"Latency: [\d.]+ [µm]?s", out), out
    # the report paints the kernel's source lines: some line of the example carries time before the "│"
    painted = [ln for ln in out.splitlines() if re.match(r"\s*\d+ [^│]*\d[\d.]* [nµm]?s [^│]*│", ln)]
    assert painted, out
    assert "bash scripts/demo-profile.sh" in (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")


def test_a_fresh_clone_is_told_to_install_the_npm_dependencies(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "package-all.sh", tmp_path / "scripts")
    shutil.copy(ROOT / "package.json", tmp_path)
    run = _bash(tmp_path / "scripts" / "package-all.sh", "universal")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "npm ci" in run.stderr and "ERR_MODULE_NOT_FOUND" not in run.stderr
    assert not (tmp_path / "dist").exists()  # stopped before doing anything
