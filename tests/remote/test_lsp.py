"""``nki-studio.profileRemote`` through the real language server (pytest-lsp, stdio) and the real sshd:
heatmap on the right lines with progress stages; refused when untrusted; a compile error becomes an error
response and a diagnostic on the kernel line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from conftest import BODY_LINES
from lsp_heatmap_client import CONFIG, field
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities
from sshd import ALIAS, LoopbackHost

pytestmark = pytest.mark.slow  # each test drives ssh/scp against a real sshd (seconds each)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, root: Path, host: LoopbackHost, trusted: bool, **env: str) -> None:
    remote = {
        "host": ALIAS,
        "sshConfig": str(host.ssh_config),
        "workDir": str(root / "remote"),
        "envActivation": host.activation(**env),
        "timeout": 60,
        "cacheDir": str(root / "cache"),
    }
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={
                "nki-studio": {
                    "lintEnabled": False,
                    "simulateOnSave": False,
                    "trustedWorkspace": trusted,
                    "remote": remote,
                }
            },
        )
    )


async def _run(client: LanguageClient, *args: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.profileRemote", arguments=list(args))
    )


@pytest.mark.asyncio
async def test_profile_remote_paints_the_kernel(
    client: LanguageClient, host: LoopbackHost, kernel: Path
) -> None:
    root = kernel.parent
    await _start(client, root, host, True)
    uri = kernel.resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=kernel.read_text() + "# not saved yet\n"
            )
        )
    )
    result = await asyncio.wait_for(_run(client, uri, "add_act_kernel"), 120)
    assert field(result, "status") == "ok" and field(result, "files") == [uri]
    assert "unsaved changes" in field(result, "warnings")[0]
    assert Path(field(result, "profile")).is_relative_to(root / "cache")
    for _ in range(250):
        if client.heatmaps:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.02)
    (payload,) = client.heatmaps  # type: ignore[attr-defined]
    assert field(payload, "uri") == uri and field(payload, "source") == "measured"
    assert sorted(field(ln, "line") for ln in field(payload, "lines")) == [n - 1 for n in BODY_LINES]
    logged = [m.message for m in client.log_messages]
    assert any("captured execution 2 of 2" in m for m in logged)  # remote stdout reaches the editor's log
    messages = [getattr(r, "message", None) for reports in client.progress_reports.values() for r in reports]
    for stage in ("uploading", "compiling", "capturing", "processing", "downloading", "loading"):
        assert any(m and m.startswith(stage) for m in messages), (stage, messages)


@pytest.mark.asyncio
async def test_untrusted_workspace_is_refused(
    client: LanguageClient, host: LoopbackHost, kernel: Path
) -> None:
    root = kernel.parent
    await _start(client, root, host, False)
    result = await _run(client, kernel.resolve().as_uri(), "add_act_kernel")
    assert field(result, "status") == "refused"
    assert not (root / "remote").exists()  # the host was never contacted
    assert not client.heatmaps  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_compile_error_is_an_error_and_a_diagnostic(
    client: LanguageClient, host: LoopbackHost, kernel: Path
) -> None:
    lines = kernel.read_text().splitlines()
    lines[3] = "raise ValueError('tile too big')"
    kernel.write_text("\n".join(lines) + "\n")
    await _start(client, kernel.parent, host, True)
    uri = kernel.resolve().as_uri()
    with pytest.raises(JsonRpcException, match="tile too big"):
        await asyncio.wait_for(_run(client, uri, "add_act_kernel"), 120)
    for _ in range(250):
        diags = client.diagnostics.get(uri)
        if diags:
            break
        await asyncio.sleep(0.02)
    assert diags and diags[0].range.start.line == 3 and "tile too big" in diags[0].message


@pytest.mark.asyncio
async def test_cancel_from_the_client_stops_the_run(
    client: LanguageClient, host: LoopbackHost, kernel: Path
) -> None:
    pid_file = kernel.parent / "capture.pid"
    await _start(
        client, kernel.parent, host, True, STANDIN_CAPTURE_SLEEP="120", STANDIN_PID_FILE=str(pid_file)
    )
    run = asyncio.ensure_future(_run(client, kernel.resolve().as_uri(), "add_act_kernel"))
    for _ in range(3000):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    (token,) = client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(JsonRpcException, match="cancelled"):
        await asyncio.wait_for(run, 60)
    for _ in range(250):
        if (
            not Path(f"/proc/{pid}").exists()
            or Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        ):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("remote capture still running after cancel")
    assert not client.heatmaps  # type: ignore[attr-defined]
    assert list((kernel.parent / "remote").iterdir()) == []
    cache = kernel.parent / "cache"
    assert not cache.exists() or not [p for p in cache.rglob("*") if p.is_file()]  # no partial profile kept


@pytest.mark.asyncio
async def test_same_file_name_twice_in_the_workspace(
    client: LanguageClient, host: LoopbackHost, kernel: Path
) -> None:
    # The workspace layout is mirrored on the host, so the recorded path picks the right one of two add_act.py.
    root = kernel.parent
    for sub in ("kernels", "other"):
        (root / sub).mkdir()
        (root / sub / kernel.name).write_text(kernel.read_text())
    kernel.unlink()
    target = root / "kernels" / kernel.name
    await _start(client, root, host, True)
    result = await asyncio.wait_for(_run(client, target.resolve().as_uri(), "add_act_kernel"), 120)
    assert field(result, "files") == [target.resolve().as_uri()]
