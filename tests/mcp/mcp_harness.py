"""Client helpers for the MCP tests: the real ``mcp`` client SDK (stdio_client + ClientSession) against a real
``nki-studio mcp`` process."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"


@asynccontextmanager
async def mcp_session(*args: str, cwd: Path | None = None) -> AsyncIterator[ClientSession]:
    """An initialised client session with ``nki-studio mcp ARGS`` over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "nki_studio", "mcp", *args], cwd=str(cwd or ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def structured(result: Any) -> dict[str, Any]:
    """The structured content of a successful call (fails the test on a tool error)."""
    assert not result.is_error, result.content[0].text
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_of(result: Any) -> dict[str, Any]:
    """The ``error`` object of a tool error (fails the test on a success)."""
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    error: dict[str, Any] = result.structured_content["error"]
    assert error["message"] and result.content[0].text.startswith(error["kind"])
    return error
