"""Fixtures shared by the test directories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.protocol.migration import MigrationResult


@pytest.fixture
def prove_migration(tmp_path: Path) -> Callable[..., MigrationResult]:
    """``prove_migration(text, name="kernel.py", inputs=None)``: write a legacy kernel file ``name`` to ``tmp_path``,
    migrate it (trusted: both versions simulated in sandboxed workers), assert the proof held and return the
    result."""
    # imported here, not at the top: every test session loads this file, few tests migrate
    from nki_studio.service.migration import migrate
    from nki_studio.service.settings import Settings

    def prove(text: str, name: str = "kernel.py", inputs: str | None = None) -> MigrationResult:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = migrate(str(path), Settings(trusted_workspace=True), inputs=inputs)
        assert result["status"] == "proven", result["message"]
        return result

    return prove
