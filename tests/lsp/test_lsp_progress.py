"""End-to-end: ``jobs.progress`` sends begin/report/end and a client cancel reaches the job."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest_lsp
from lsp_harness import HERE, recording_client, start
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, str(HERE / "progress_server.py")], client_factory=recording_client
    )
)
async def client(lsp_client: LanguageClient) -> Any:
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def _run(client: LanguageClient, steps: int, pause: float) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="test.progress", arguments=[steps, pause])
    )


async def test_progress_begin_report_end(client: LanguageClient) -> None:
    assert await _run(client, 3, 0.01) == "done"
    (values,) = client.progress_reports.values()
    kinds = [v.kind for v in values]
    assert kinds == ["begin", "report", "report", "report", "end"]
    assert values[0].title == "Test job" and values[0].cancellable is True
    assert [v.percentage for v in values[1:4]] == [33, 66, 100]
    assert values[-1].message is None


async def test_client_cancel_stops_the_job(client: LanguageClient) -> None:
    task = asyncio.ensure_future(_run(client, 1000, 0.05))
    for _ in range(500):
        if client.progress_reports and len(next(iter(client.progress_reports.values()))) >= 2:
            break
        await asyncio.sleep(0.01)
    (token,) = client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    assert await asyncio.wait_for(task, 10) == "cancelled"
    values = client.progress_reports[token]
    assert values[-1].kind == "end" and values[-1].message == "cancelled"
    assert len(values) < 100  # stopped long before its 1000 steps
