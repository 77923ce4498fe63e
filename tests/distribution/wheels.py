"""Steps the distribution tests take with built wheels and sdists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def twine_check(dist: Path) -> None:
    """Assert that every file in ``dist`` passes ``twine check --strict`` (PyPI's metadata and README rules)."""
    files = sorted(str(p) for p in dist.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def install(wheel: Path, target: Path) -> Path:
    """``wheel`` installed without its dependencies into the folder ``target`` (returned)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target
