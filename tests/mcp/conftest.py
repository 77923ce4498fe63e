"""Fixtures of the MCP tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcp_harness import DATA, EXAMPLES

# The walkthrough pair the agent loop optimises: the examples themselves, copied so a test may break one.
RMSNORM_PAIR = ("rmsnorm_residual.py", "rmsnorm_residual_fused.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace root (the server is confined to it) holding copies of the RMSNorm example pair and of the
    broken test kernels (data/)."""
    root = tmp_path / "ws"
    root.mkdir()
    for p in [*(EXAMPLES / name for name in RMSNORM_PAIR), *DATA.glob("*.py")]:
        shutil.copy(p, root / p.name)
    return root
