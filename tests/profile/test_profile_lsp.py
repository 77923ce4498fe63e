"""The profile feature through the real language server (pytest-lsp, stdio): loadProfile → nki/heatmap for the
right documents and lines, hover text, stale heat after edits, clear, and error responses for bad profiles."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import fixturegen
import pytest
import pytest_lsp
from corrupt import corrupt_variants
from fixturewriters import write_parquet
from lsp_heatmap_client import CONFIG, field
from lsprotocol import types
from nki_studio.sim.trace import TraceEvent, write_jsonl
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, root: Path, options: dict[str, Any] | None = None) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"nki-studio": {"lintEnabled": False, **(options or {})}},
        )
    )


async def _wait(client: LanguageClient, count: int, timeout: float = 15.0) -> list[Any]:
    for _ in range(int(timeout / 0.02)):
        if len(client.heatmaps) >= count:  # type: ignore[attr-defined]
            return client.heatmaps  # type: ignore[attr-defined]
        await asyncio.sleep(0.02)
    raise AssertionError(f"expected {count} nki/heatmap notifications, got {len(client.heatmaps)}")  # type: ignore[attr-defined]


async def _run(client: LanguageClient, command: str, *args: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(args))
    )


@pytest.mark.asyncio
async def test_load_hover_edit_clear(
    client: LanguageClient,
    kernel_file: Path,
    kernel_files: dict[str, Path],
    kernel_timeline: fixturegen.Timeline,
) -> None:
    root = kernel_file.parent.parent
    await _start(client, root, {"inlayHints": True})
    result = await _run(client, "nki-studio.loadProfile", kernel_files["parquet"].as_uri())
    uri = kernel_file.resolve().as_uri()
    assert field(result, "files") == [uri]
    (payload,) = await _wait(client, 1)
    assert (
        field(payload, "uri") == uri
        and field(payload, "source") == "measured"
        and field(payload, "stale") is False
    )
    lines = field(payload, "lines")
    source = kernel_file.read_text().splitlines()
    painted = {field(ln, "line") for ln in lines}
    # Exactly the lines the profile recorded (1-based in the profile, 0-based in LSP), all kernel-body code.
    recorded = {
        int(loc.rpartition(":")[2]) - 1
        for text in kernel_timeline.location
        if text
        for loc in text.split(",")
    }
    assert painted == recorded and all(source[n].startswith("    ") for n in painted)
    assert max(field(ln, "heat") for ln in lines) == 1.0
    assert "longest common path suffix" in field(field(field(payload, "profile"), "mapping"), "how")
    assert field(field(payload, "kernel"), "latency_source") == "Summary.total_exec_time"

    text = kernel_file.read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    hot = max(lines, key=lambda ln: field(ln, "busy_ns"))
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=field(hot, "line"), character=4),
        )
    )
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert "Measured" in value and "Top opcodes" in value and "Engines" in value
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=len(source), character=0)
            ),
        )
    )
    assert hints and all(str(h.label).startswith("⏱") for h in hints)

    # Insert two lines at the top: heat moves down by two and is marked stale.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="# a\n# b\n" + text)],
        )
    )
    moved = (await _wait(client, 2))[1]
    assert field(moved, "stale") is True
    assert {field(ln, "line") for ln in field(moved, "lines")} == {n + 2 for n in painted}

    cleared = await _run(client, "nki-studio.clearProfile")
    assert field(cleared, "cleared") == [uri]
    last = (await _wait(client, 3))[2]
    assert field(last, "lines") == [] and field(last, "cleared") is True
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=field(hot, "line") + 2, character=4),
        )
    )
    assert hover is None or "Measured" not in hover.contents.value  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_bad_profiles_get_error_responses_and_the_server_survives(
    client: LanguageClient, tmp_path: Path, kernel_file: Path, kernel_files: dict[str, Path]
) -> None:
    await _start(client, tmp_path)  # a workspace without the kernel: paths map to no file
    cases = corrupt_variants(tmp_path / "corrupt")
    cases["missing"] = (tmp_path / "missing", "no such file")
    for name, (path, expected) in cases.items():
        with pytest.raises(JsonRpcException) as info:
            await _run(client, "nki-studio.loadProfile", path.as_uri())
        assert expected in str(info.value), name
        if name not in (
            "paths that map to no file",
            "no source locations",
        ):  # those list what to do, line by line
            assert "\n" not in str(info.value).strip(), name
    with pytest.raises(JsonRpcException, match="needs the URI"):
        await _run(client, "nki-studio.loadProfile")
    # Still serving: a good profile with a path mapping now loads.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"nki-studio": {"pathMappings": {"/home/ubuntu/kernels": str(kernel_file.parent)}}}
        )
    )
    await asyncio.sleep(0.2)
    with pytest.raises(JsonRpcException, match="simulator trace"):
        await _run(
            client,
            "nki-studio.loadProfile",
            {"uri": kernel_files["json"].as_uri(), "trace": str(tmp_path / "none.jsonl")},
        )
    trace = tmp_path / "trace.jsonl"
    with open(trace, "w", encoding="utf-8") as fh:
        write_jsonl(
            [
                TraceEvent(
                    seq=0,
                    op="nisa.nc_matmul",
                    engine="tensor",
                    file=str(kernel_file),
                    line=12,
                    flops=2 * 128**3,
                )
            ],
            fh,
        )
    result = await _run(
        client, "nki-studio.loadProfile", {"uri": kernel_files["json"].as_uri(), "trace": trace.as_uri()}
    )
    assert field(result, "files") == [kernel_file.resolve().as_uri()]
    assert "path mapping" in field(field(result, "mapping")[0], "how")
    (payload,) = await _wait(client, 1)
    roofline = field(field(payload, "kernel"), "roofline")
    assert field(roofline, "flops") == 2 * 128**3 and "simulator trace" in field(roofline, "flops_source")


@pytest.mark.asyncio
async def test_one_notification_per_mapped_document(client: LanguageClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for name in ("rmsnorm.py", "helpers.py"):
        (ws / "kernels").mkdir(parents=True, exist_ok=True)
        (ws / "kernels" / name).write_text("\n".join(f"    line{i}" for i in range(1, 61)) + "\n")
    tl = fixturegen.walkthrough_timeline()
    tl.location[2] = "/home/ubuntu/kernels/helpers.py:3"
    profile = write_parquet(tl, tmp_path / "p")
    await _start(client, ws)
    result = await _run(client, "nki-studio.loadProfile", profile.as_uri())
    uris = {(ws / "kernels" / n).resolve().as_uri(): n for n in ("rmsnorm.py", "helpers.py")}
    assert set(field(result, "files")) == set(uris)
    got = {
        field(p, "uri"): sorted(field(ln, "line") for ln in field(p, "lines")) for p in await _wait(client, 2)
    }
    assert got == {
        next(u for u, n in uris.items() if n == "rmsnorm.py"): [40, 46],
        next(u for u, n in uris.items() if n == "helpers.py"): [2],
    }
