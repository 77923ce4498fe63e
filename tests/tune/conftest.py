"""Shared by the tune tests: the purpose-built kernels and the tiled matmul example copied into a temporary project (so the cache and
``--apply`` write there) and trusted settings with small limits."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.service.settings import Settings, strict

KERNELS = Path(__file__).parent / "kernels"
# the tiled matmul with block factors (TILE_K, TILE_M, TILE_N) is the project's own example
TILED_MATMUL = Path(__file__).parents[2] / "examples" / "tiled_matmul.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder holding copies of the test kernels and its own pyproject.toml."""
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    for kernel in [*KERNELS.glob("*.py"), TILED_MATMUL]:
        shutil.copy(kernel, tmp_path / kernel.name)
    return tmp_path


def trusted(timeout_s: float = 60, memory_mb: int = 2048) -> Settings:
    """Trusted settings with the given simulation limits."""
    return strict(
        Settings(trusted_workspace=True),
        {"simulationTimeout": timeout_s, "simulationMemoryLimitMb": memory_mb},
    )


@pytest.fixture
def settings() -> Callable[..., Settings]:
    """``trusted``: settings(timeout_s=..., memory_mb=...)."""
    return trusted
