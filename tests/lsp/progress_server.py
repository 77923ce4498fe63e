"""Test-only server entry point: the real server plus one command that reports ``$/progress`` through
``nki_studio.lsp.jobs.progress`` while running as a ``JobRunner`` job. Used by test_lsp_progress.py."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from nki_studio.lsp import logs
from nki_studio.lsp.jobs import CancelToken, JobRunner, progress
from nki_studio.lsp.server import NkiLanguageServer, create_server

COMMAND = "test.progress"


def add_command(server: NkiLanguageServer) -> None:
    """``test.progress [steps, seconds_per_step]``: returns "done" or "cancelled"."""
    runner: JobRunner[str] = JobRunner(server.executor, name="test")

    @server.command(COMMAND)
    async def run(ls: NkiLanguageServer, *args: Any) -> str:
        steps, pause = int(args[0]), float(args[1])
        finished: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def work(token: CancelToken) -> str:
            for i in range(steps):
                if token.wait(pause):  # a pool thread that stops as soon as it is cancelled
                    return "cancelled"
                handle.report(f"step {i + 1}/{steps}", percentage=100 * (i + 1) // steps)
            return "done"

        async with progress(ls, "Test job", cancellable=True) as handle:
            token = runner.submit("doc", work, on_result=finished.set_result)
            token.on_cancel(lambda: ls.call_soon(lambda: finished.done() or finished.set_result("cancelled")))
            handle.cancel_token.on_cancel(token.cancel)
            return await finished


if __name__ == "__main__":
    logs.configure_stderr("debug")
    server = create_server(("lint",))
    add_command(server)
    server.start_io(sys.stdin.buffer, sys.stdout.buffer)
