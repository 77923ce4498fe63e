"""The server package of an earlier git revision, for the benchmarks that time old and new code side by side
in the same run (``--compare-with`` / ``--baseline``)."""

from __future__ import annotations

import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def server_at(rev: str, into: Path | str) -> str:
    """``server/`` at git revision ``rev`` as the package ``nki_studio`` under ``into``; returns ``into`` (put it
    first on ``PYTHONPATH`` to import the old code)."""
    data = subprocess.run(["git", "archive", rev, "server"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    (Path(into) / "server").rename(Path(into) / "nki_studio")
    return str(into)
