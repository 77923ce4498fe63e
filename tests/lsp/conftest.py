"""Fixtures: ``client`` is a started server with the test options; ``bare_client`` is not initialised yet
(call ``lsp_harness.start`` with your own initializationOptions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import CONFIG, start
from nki_studio.nkilint.api import config_for
from pytest_lsp import LanguageClient


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    """A started server with default test options (no debounce)."""
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def bare_client(lsp_client: LanguageClient) -> Any:
    """A running server the test initialises itself."""
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory with its own (empty) ``[tool.nki-studio]`` so the repository's config does not apply."""
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    assert config_for(str(tmp_path / "k.py"))[1] is None
    return tmp_path
