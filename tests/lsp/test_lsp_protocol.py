"""The server's protocol keeps no future of a finished handler (lsp/protocol.py): pygls 2 kept one for every
didOpen/didChange/didClose notification for good, which made the memory kept after the documents closed grow
with every edit ever made. The real server (its core handlers) is fed the messages as pygls' stdio reader
would, on a running event loop."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from nki_studio.lsp.server import NkiLanguageServer, create_server
from pygls.io_ import StdoutWriter


def _feeder(server: NkiLanguageServer) -> Any:
    def send(message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message})
        server.protocol.handle_message(json.loads(body, object_hook=server.protocol.structure_message))

    return send


def _messages(out: io.BytesIO) -> list[dict[str, Any]]:
    """The messages the server wrote (Content-Length framing)."""
    data, messages = out.getvalue(), []
    while data:
        header, data = data.split(b"\r\n\r\n", 1)
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        messages.append(json.loads(data[:length]))
        data = data[length:]
    return messages


async def _settle(server: NkiLanguageServer) -> None:
    """Let the loop run the handlers' callbacks (async handlers finish on later iterations)."""
    for _ in range(50):
        await asyncio.sleep(0.01)
        if not server.protocol._request_futures:
            return


async def test_no_handler_future_outlives_a_document_opened_edited_and_closed(tmp_path: Path) -> None:
    server = create_server(features=())
    out = io.BytesIO()
    server.protocol.set_writer(StdoutWriter(out))
    send = _feeder(server)
    send(
        {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}}
    )
    send({"method": "initialized", "params": {}})
    uri = (tmp_path / "k.py").as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": "import nki\n"}
    send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
    for version in range(2, 42):
        edit = {
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
            "text": "#",
        }
        send(
            {
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]},
            }
        )
    send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
    await _settle(server)
    try:
        assert [
            m for m in _messages(out) if m.get("id") == 1
        ]  # initialize was answered: messages were handled
        assert uri not in server.workspace.text_documents
        assert server.protocol._request_futures == {}  # pygls 2.1.1 alone: 43+ futures left
    finally:
        if server._release is not None:  # the memory release the close scheduled
            server._release.cancel()
        server.executor.shutdown(wait=False, cancel_futures=True)
        server.request_executor.shutdown(wait=False, cancel_futures=True)


async def test_a_request_cancelled_while_running_is_forgotten_and_answered() -> None:
    """``$/cancelRequest`` still finds a running request's future (what pygls files it for)."""
    server = create_server(features=())
    out = io.BytesIO()
    server.protocol.set_writer(StdoutWriter(out))
    started = asyncio.Event()

    @server.feature("nki/slowTest")
    async def slow(ls: NkiLanguageServer, params: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "finished"

    send = _feeder(server)
    send({"id": 7, "method": "nki/slowTest", "params": {}})
    await asyncio.wait_for(started.wait(), 10)
    assert 7 in server.protocol._request_futures
    send({"method": "$/cancelRequest", "params": {"id": 7}})
    await _settle(server)
    try:
        assert server.protocol._request_futures == {}
        (response,) = [m for m in _messages(out) if m.get("id") == 7]
        assert "error" in response  # the cancelled request's answer, not its result
    finally:
        server.executor.shutdown(wait=False, cancel_futures=True)
        server.request_executor.shutdown(wait=False, cancel_futures=True)


async def test_shutdown_while_a_notification_handler_still_runs_is_answered() -> None:
    """Shutdown cancels the handlers still running while it iterates over their futures; a cancelled one must
    stay there until it is over (dropping it inside that loop failed the shutdown request)."""
    server = create_server(features=())
    out = io.BytesIO()
    server.protocol.set_writer(StdoutWriter(out))
    send = _feeder(server)
    capabilities = {"workspace": {"configuration": True}}
    send({"id": 1, "method": "initialize", "params": {"processId": None, "capabilities": capabilities}})
    # The server's initialized handler asks the client for its configuration and waits: nobody answers here.
    send({"method": "initialized", "params": {}})
    for _ in range(100):
        await asyncio.sleep(0.01)
        if b"workspace/configuration" in out.getvalue():
            break
    assert server.protocol._request_futures  # initialized is still running
    send({"id": 2, "method": "shutdown", "params": None})
    await _settle(server)
    try:
        (response,) = [m for m in _messages(out) if m.get("id") == 2]
        assert "error" not in response and response["result"] is None
    finally:
        server.executor.shutdown(wait=False, cancel_futures=True)
        server.request_executor.shutdown(wait=False, cancel_futures=True)
