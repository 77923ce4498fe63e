"""Fixtures of the MCP tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcp_harness import DATA


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace root holding copies of the test kernels."""
    root = tmp_path / "ws"
    root.mkdir()
    for p in DATA.glob("*.py"):
        shutil.copy(p, root / p.name)
    return root
