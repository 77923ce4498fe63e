"""Unit tests of the per-key job runner (newest wins, cancellation) without a server process."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from nki_studio.lsp.jobs import CancelToken, JobRunner


async def test_newest_wins_and_debounce_cancels_pending() -> None:
    ran: list[int] = []
    results: list[int] = []
    with ThreadPoolExecutor(2) as pool:
        runner: JobRunner[int] = JobRunner(pool)
        for i in range(5):
            runner.submit("doc", lambda token, i=i: ran.append(i) or i, delay=0.05, on_result=results.append)
        await asyncio.sleep(0.3)
    assert ran == [4] and results == [4]
    assert not runner.pending("doc")


async def test_running_job_result_dropped_when_superseded() -> None:
    started = threading.Event()
    release = threading.Event()
    results: list[str] = []
    events: list[str] = []
    tokens: list[CancelToken] = []

    def slow(token: CancelToken) -> str:
        tokens.append(token)
        started.set()
        release.wait(5)
        events.append("old finished")
        return "old"

    def new(token: CancelToken) -> str:
        events.append("new started")
        return "new"

    with ThreadPoolExecutor(2) as pool:
        runner: JobRunner[str] = JobRunner(pool)
        runner.submit("doc", slow, on_result=results.append)
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        runner.submit("doc", new, on_result=results.append)
        runner.submit("other", lambda token: "other key", on_result=results.append)
        await asyncio.sleep(0.1)
        assert tokens[0].cancelled  # the running job was told to stop
        assert results == ["other key"] and events == []  # another key is not held up; this one waits
        release.set()
        await asyncio.sleep(0.1)
    assert results == ["other key", "new"]
    assert events == ["old finished", "new started"]  # never two runs of one key at once


async def test_keys_are_independent_and_async_work_runs_on_loop() -> None:
    results: list[str] = []

    async def work(token: CancelToken) -> str:
        await asyncio.sleep(0.01)
        return "async"

    with ThreadPoolExecutor(2) as pool:
        runner: JobRunner[str] = JobRunner(pool)
        runner.submit("a", work, on_result=results.append)
        runner.submit("b", lambda token: "sync", on_result=results.append)
        await asyncio.sleep(0.2)
    assert sorted(results) == ["async", "sync"]


async def test_failing_job_is_contained() -> None:
    def boom(token: CancelToken) -> int:
        raise ValueError("boom")

    results: list[int] = []
    with ThreadPoolExecutor(1) as pool:
        runner: JobRunner[int] = JobRunner(pool)
        runner.submit("doc", boom, on_result=results.append)
        await asyncio.sleep(0.1)
        runner.submit("doc", lambda token: 1, on_result=results.append)
        await asyncio.sleep(0.1)
    assert results == [1]


def test_cancel_token_callbacks() -> None:
    token = CancelToken()
    calls: list[str] = []
    token.on_cancel(lambda: calls.append("first"))
    token.cancel()
    token.cancel()
    token.on_cancel(lambda: calls.append("late"))
    assert calls == ["first", "late"] and token.cancelled and token.wait(0)


async def test_a_run_that_never_ends_does_not_block_its_key() -> None:
    release = threading.Event()
    results: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        runner: JobRunner[str] = JobRunner(pool, overlap_wait_s=0.2)
        runner.submit("doc", lambda token: release.wait(5) and "stuck", on_result=results.append)
        await asyncio.sleep(0.05)
        runner.submit("doc", lambda token: "new", on_result=results.append)
        await asyncio.sleep(0.5)
        assert results == ["new"]
        release.set()


async def test_settled_waits_for_the_newest_job_of_a_key() -> None:
    release = threading.Event()
    results: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        runner: JobRunner[str] = JobRunner(pool)
        assert await runner.settled("doc", 0.1)  # nothing to wait for
        runner.submit("doc", lambda token: release.wait(5) and "first", on_result=results.append)
        assert not await runner.settled("doc", 0.1)  # still running
        runner.submit("doc", lambda token: "second", delay=0.05, on_result=results.append)
        release.set()
        assert await runner.settled("doc", 5)
        assert results == ["second"] and not runner.pending("doc")


async def test_superseded_job_ending_in_job_cancelled_is_logged_at_debug_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import gc
    import logging

    started = threading.Event()

    def stops_when_cancelled(token: CancelToken) -> str:
        started.set()
        token.wait(5)
        token.raise_if_cancelled()  # what a lint does when an edit supersedes it
        return "old"

    caplog.set_level(logging.DEBUG)
    results: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        runner: JobRunner[str] = JobRunner(pool)
        runner.submit("doc", stops_when_cancelled, on_result=results.append)
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        runner.submit("doc", lambda token: "new", on_result=results.append)
        await asyncio.sleep(0.3)
    gc.collect()  # asyncio reports a never-retrieved exception when the future is collected
    await asyncio.sleep(0)
    assert results == ["new"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    assert any("cancelled" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)
