"""``nki-studio.tuneSpace`` and ``nki-studio.tune`` through the real ``nki-studio serve`` (pytest-lsp): the declared
space pre-fills the question even in an untrusted workspace (it runs nothing); the search is refused there;
trusted, it searches the document's text with ``$/progress`` and answers with the table rows, the scatter SVG
and the whole-line edits that write the winner (applied by the client, not the server); a bad space is an
error response that says what is wrong."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import execute, open_doc, recording_client, start_workspace
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.slow  # a server and simulation workers
KERNEL = Path(__file__).resolve().parents[1] / "tune" / "kernels" / "stream_scale.py"
CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "nki_studio", "serve"], client_factory=recording_client
)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, root: Path, trusted: bool) -> str:
    shutil.copy(KERNEL, root / KERNEL.name)
    await start_workspace(client, root, trusted)
    return open_doc(client, root / KERNEL.name, KERNEL.read_text(encoding="utf-8"))


async def test_untrusted_declares_the_space_but_refuses_the_search(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = await _start(client, tmp_path, trusted=False)
    declared = await execute(client, "nki-studio.tuneSpace", uri, "stream_scale_kernel")
    assert declared == {
        "kernel": "stream_scale_kernel",
        "space": "TILE_F=128,256,512,1024,1536 BUFS=1..3 if TILE_F * BUFS <= 3072",
        "origin": "tune comment",
        "size": 15,
    }
    answer = await execute(client, "nki-studio.tune", {"uri": uri, "kernel": "stream_scale_kernel"})
    assert answer["status"] == "refused" and "untrusted" in answer["message"]
    assert not (tmp_path / ".nki-studio").exists()


async def test_tune_answers_table_scatter_and_the_winners_edit(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = await _start(client, tmp_path, trusted=True)
    spec = {"uri": uri, "kernel": "stream_scale_kernel", "space": "TILE_F=512,1024 BUFS=2"}
    answer = await execute(client, "nki-studio.tune", spec)
    assert answer["status"] == "ok" and answer["uri"] == uri
    report = answer["report"]
    assert report["space"] == {"TILE_F": [512, 1024], "BUFS": [2]}
    assert report["baseline"]["values"] == {"TILE_F": 256, "BUFS": 1}  # the document's text as it is
    assert answer["header"][0] == "rank" and len(answer["rows"]) == 2
    assert all(row[-1].startswith("ranked") for row in answer["rows"]), answer["rows"]
    assert answer["scatter"].startswith("<svg") and 'class="tune-point tune-winner"' in answer["scatter"]
    assert answer["summary"].startswith("tune stream_scale_kernel")
    assert any(
        line.startswith("winner ") and "estimated (not measured)" in line for line in answer["outcome"]
    )
    # the edits replace the constants' lines of the text that was searched; the file itself is untouched
    winner = report["winner"]["values"]
    lines = KERNEL.read_text(encoding="utf-8").splitlines(keepends=True)
    edits = {e["line"]: e["text"] for e in answer["edits"]}
    assert all(e["replace"] for e in answer["edits"])
    assert edits.pop(lines.index("TILE_F = 256\n")) == f"TILE_F = {winner['TILE_F']}\n"
    assert edits == {lines.index("BUFS = 1\n"): "BUFS = 2\n"}
    assert (tmp_path / KERNEL.name).read_text(encoding="utf-8") == KERNEL.read_text(encoding="utf-8")
    titles = [
        v.title
        for values in client.progress_reports.values()
        for v in values
        if isinstance(v, types.WorkDoneProgressBegin)
    ]
    assert "Tuning stream_scale_kernel" in titles
    assert any(m.message.startswith("NKI: tune stream_scale_kernel: winner ") for m in client.messages)


async def test_a_bad_space_is_an_error_that_says_why(client: LanguageClient, tmp_path: Path) -> None:
    uri = await _start(client, tmp_path, trusted=True)
    with pytest.raises(Exception, match="is not NAME=values"):
        await execute(
            client, "nki-studio.tune", {"uri": uri, "kernel": "stream_scale_kernel", "space": "TILE_F"}
        )
    with pytest.raises(Exception, match="budget must be a positive number"):
        await execute(client, "nki-studio.tune", {"uri": uri, "kernel": "stream_scale_kernel", "budget": 0})
