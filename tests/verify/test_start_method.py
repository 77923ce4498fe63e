"""How the job process is started (``start_method.py``), and the platform choices of containment and of the
message channel, with the platform patched: the code paths macOS and Windows take, checked on Linux."""

from __future__ import annotations

from pathlib import Path

import pytest
from nki_studio.verify import containment, start_method
from nki_studio.verify.job import Job
from nki_studio.verify.runner import channel_options, run_job
from nki_studio.verify.spec import resolve

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("platform", "forced", "has_fork", "expected"),
    [
        ("linux", "", True, "fork"),
        ("linux", "spawn", True, "spawn"),  # CI's forced-spawn run
        ("linux", " SPAWN ", True, "spawn"),
        ("linux", "forkserver", True, "fork"),  # not a choice here: the platform default
        ("darwin", "", True, "spawn"),  # multiprocessing's default there since Python 3.8
        ("darwin", "fork", True, "fork"),
        ("win32", "", False, "spawn"),
        ("win32", "fork", False, "spawn"),  # no fork to force
    ],
)
def test_start_method_per_platform(platform: str, forced: str, has_fork: bool, expected: str) -> None:
    assert start_method.start_method(platform, {start_method.ENV: forced}, has_fork) == expected


def _argv_of_kernel(monkeypatch: pytest.MonkeyPatch, method: str) -> str:
    monkeypatch.setenv(start_method.ENV, method)  # the worker inherits the environment
    path = DATA / "argv_kernel.py"
    res = resolve(path.read_text(), str(path), None, use_pyproject=False)
    assert res.spec is not None, res.problems
    result = run_job(Job(path=str(path), spec=res.spec.to_json()), timeout_s=60)
    assert result["status"] == "passed", result["message"]
    [line] = [line for line in result["output"].splitlines() if line.startswith("ARGV")]
    return line


def test_forced_spawn_runs_the_kernel_in_a_fresh_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _argv_of_kernel(monkeypatch, "spawn")
    assert "--job-process" in argv and "--started-wall" in argv


def test_fork_runs_the_kernel_in_the_forked_supervisor(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "--job-process" not in _argv_of_kernel(monkeypatch, "fork")


@pytest.mark.parametrize(
    ("platform", "supervisor", "runner"),
    [
        ("linux", "subreaper", "session"),
        ("darwin", "process-group", "session"),
        ("freebsd14", "process-group", "session"),
        ("win32", "none", "job-object"),
    ],
)
def test_containment_plan_per_platform(platform: str, supervisor: str, runner: str) -> None:
    assert containment.plan(platform) == (supervisor, runner)


def test_no_supervisor_containment_on_windows() -> None:
    chosen = containment.for_platform("win32")
    assert chosen.name == "none" and chosen.end() == 0


def test_message_channel_is_a_file_descriptor_on_posix() -> None:
    args, options = channel_options(7, windows=False)
    assert args == ["--fd", "7"] and options == {"pass_fds": (7,), "start_new_session": True}


def test_message_channel_is_one_listed_inheritable_handle_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess

    class FakeMsvcrt:
        @staticmethod
        def get_osfhandle(fd: int) -> int:
            return 1000 + fd

    class FakeStartupInfo:
        def __init__(self, lpAttributeList: dict[str, list[int]]) -> None:
            self.lpAttributeList = lpAttributeList

    inheritable: list[tuple[int, bool]] = []
    monkeypatch.setattr(os, "set_handle_inheritable", lambda h, v: inheritable.append((h, v)), raising=False)
    monkeypatch.setattr(subprocess, "STARTUPINFO", FakeStartupInfo, raising=False)
    args, options = channel_options(7, windows=True, msvcrt=FakeMsvcrt)
    assert args == ["--handle", "1007"] and inheritable == [(1007, True)]
    assert options["close_fds"] is True and "pass_fds" not in options  # pass_fds is POSIX-only
    assert options["startupinfo"].lpAttributeList == {"handle_list": [1007]}
