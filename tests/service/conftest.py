"""Fixtures shared by the service tests."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings


@pytest.fixture
def proven(tmp_path: Path) -> Callable[[str], str]:
    """``proven(text)``: migrate a legacy kernel file (written to ``tmp_path``), assert the proof held (both versions
    simulated on the same inputs, equal), and return the migrated text."""

    def prove(text: str) -> str:
        path = tmp_path / "kernel.py"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        result = migrate(str(path), Settings(trusted_workspace=True))
        assert result["status"] == "proven", result["message"]
        return str(result["migrated"])

    return prove
