"""The language server's commands as adapters over the service, through the real server (pytest-lsp, stdio):
``nki-studio.simulate`` and ``nki-studio.profileRemote`` answer an untrusted workspace with the service's one
refusal; a trusted remote run reaches ssh through the service (a closed port: the flow's error response)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from nki_studio.service.simulation import REFUSAL
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

TESTS = Path(__file__).resolve().parents[1]
sys.path += [str(TESTS / "profile"), str(TESTS / "lsp")]  # the shared LSP test clients, looked up last
from lsp_harness import start  # noqa: E402
from lsp_heatmap_client import CONFIG, field  # noqa: E402

KERNEL = TESTS / "verify" / "data" / "add_kernel.py"


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, root: Path, trusted: bool) -> None:
    remote = {"host": "127.0.0.1:1", "cacheDir": str(root / "cache"), "timeout": 10}
    await start(client, {"lintEnabled": False, "trustedWorkspace": trusted, "remote": remote}, root)


async def _run(client: LanguageClient, command: str, *args: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(args))
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("command", ["nki-studio.simulate", "nki-studio.profileRemote"])
async def test_an_untrusted_workspace_gets_the_one_refusal(client: LanguageClient, command: str) -> None:
    await _start(client, KERNEL.parent, trusted=False)
    result = await _run(client, command, KERNEL.as_uri(), "add")
    assert field(result, "status") == "refused" and field(result, "message") == REFUSAL


@pytest.mark.asyncio
async def test_a_trusted_remote_run_reaches_ssh_through_the_service(
    client: LanguageClient, tmp_path: Path
) -> None:
    kernel = tmp_path / KERNEL.name
    kernel.write_text(KERNEL.read_text(encoding="utf-8"), encoding="utf-8")
    await _start(client, tmp_path, trusted=True)
    with pytest.raises(JsonRpcException, match="host unreachable"):
        await _run(client, "nki-studio.profileRemote", kernel.as_uri(), "add")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
