"""Through the real language server: a loaded profile of a document and that document's estimate (the
``nki-studio.simulate`` command) pair up, and the heat payload sent after both carries ``measured_vs_estimated``
(what the kernel panel shows), whichever came second."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import fixturegen
import pytest
import pytest_lsp
from fixturewriters import write_parquet
from lsp_heatmap_client import CONFIG, field
from lsprotocol import types
from moved_kernels import A, B, marker_line
from nki_studio.profile.line_align import BY_TEXT, write_snapshot
from pytest_lsp import LanguageClient, client_capabilities

pytestmark = pytest.mark.slow  # a server, a simulation worker

_SPEC = "# nki-studio: simulate x=float32[128,512]\n"
_B = B.replace("@nki.jit\n", _SPEC + "@nki.jit\n")


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def _heat(client: LanguageClient, count: int, timeout: float = 60.0) -> Any:
    for _ in range(int(timeout / 0.05)):
        if len(client.heatmaps) >= count:  # type: ignore[attr-defined]
            return _plain(client.heatmaps[count - 1])  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)
    raise AssertionError(f"expected {count} nki/heatmap notifications")


def _plain(obj: Any) -> Any:
    """A payload as JSON-like dicts and lists (the client decodes objects as named tuples)."""
    if hasattr(obj, "_asdict"):
        return {k: _plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


async def _run(client: LanguageClient, command: str, *args: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(args))
    )


@pytest.mark.asyncio
async def test_the_heat_sent_after_a_profile_and_an_estimate_carries_their_comparison(
    client: LanguageClient, tmp_path: Path
) -> None:
    kernel = tmp_path / "kernel.py"
    kernel.write_text(_B)
    tl = fixturegen.kernel_timeline("/home/ubuntu/kernels/kernel.py", fixturegen.kernel_body_lines(A), seed=6)
    prof = write_parquet(tl, tmp_path / "measured_parquet")
    write_snapshot(prof, {str(kernel): A})
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={
                "nki-studio": {"lintEnabled": False, "trustedWorkspace": True, "simulateOnSave": False}
            },
        )
    )
    uri = kernel.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=_B)
        )
    )
    await _run(client, "nki-studio.loadProfile", prof.as_uri())
    measured = await _heat(client, 1)
    assert measured["source"] == "measured" and "measured_vs_estimated" not in measured

    answer = await _run(client, "nki-studio.simulate", uri, "kernel")
    assert field(answer, "status") == "no_reference", answer  # ran; its spec names no reference
    estimated = await _heat(client, 2)
    assert estimated["source"] == "estimate"
    both = estimated["measured_vs_estimated"]
    assert (
        both["measured"].startswith("measured: Neuron Explorer profile ")
        and "(not a measurement)" in both["estimated"]
    )
    assert both["lines_matched_by"].startswith(BY_TEXT)
    (hot,) = [r for r in both["lines"] if r["line_measured"] == marker_line(A, "hot")]
    assert (
        hot["line_estimated"] == marker_line(_B, "hot")
        and hot["ratio"] == hot["estimated_ns"] / hot["measured_ns"]
    )

    await _run(client, "nki-studio.loadProfile", prof.as_uri())  # the profile second: its heat carries it
    again = await _heat(client, 4)  # the clear of the first load, then the new heat
    assert again["source"] == "measured" and again["measured_vs_estimated"] == both

    await _run(client, "nki-studio.clearProfile")
    await _run(client, "nki-studio.simulate", uri, "kernel")
    last = await _heat(client, 6)
    assert last["source"] == "estimate" and "measured_vs_estimated" not in last
