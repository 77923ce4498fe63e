"""``scripts/package-all.sh`` on a fresh clone (no ``node_modules``) says what to run first instead of failing
with ``ERR_MODULE_NOT_FOUND esbuild``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_fresh_clone_is_told_to_install_the_npm_dependencies(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "package-all.sh", tmp_path / "scripts")
    shutil.copy(ROOT / "package.json", tmp_path)
    run = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "package-all.sh"), "universal"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "npm ci" in run.stderr and "ERR_MODULE_NOT_FOUND" not in run.stderr
    assert not (tmp_path / "dist").exists()  # stopped before doing anything
