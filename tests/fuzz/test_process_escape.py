"""Kernels that try to outlive their simulation: new sessions, double fork + setsid, ignored signals.

Whatever they do, nothing survives the run, after a pass, an error, a timeout or a cancel. The check is the
process table of this test's own descendants (psutil), with this process made a child subreaper for the
test on Linux, so an escaped daemon is re-parented here (and seen) instead of to init.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from nki_studio.verify.job import Job
from nki_studio.verify.runner import WorkerPool, run_job
from nki_studio.verify.spec import resolve

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreaper containment: Linux")

_HEADER = '''
import os, signal, subprocess, sys, time
import nki
import nki.language as nl

def _note(pid):
    with open(os.environ["NKI_TEST_ESCAPE_FILE"], "a") as fh:
        fh.write(f"{pid}\\n")

def _daemon(ignore=True):
    """Double fork + setsid; the grandchild ignores every catchable signal and sleeps."""
    first = os.fork()
    if first == 0:
        os.setsid()
        second = os.fork()
        if second == 0:
            if ignore:
                for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
                    signal.signal(sig, signal.SIG_IGN)
            _note(os.getpid())
            time.sleep(300)
        os._exit(0)
    os.waitpid(first, 0)
    deadline = time.time() + 5
    while time.time() < deadline and len(open(os.environ["NKI_TEST_ESCAPE_FILE"]).read().split()) < 1:
        time.sleep(0.01)

def _new_session():
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; "
                              "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"],
                             start_new_session=True)
    _note(child.pid)

def _respawner():
    """A new-session shell loop that keeps starting new-session sleepers."""
    child = subprocess.Popen(["sh", "-c", "trap '' TERM HUP; while true; do setsid sleep 300 & sleep 0.05; done"],
                             start_new_session=True)
    _note(child.pid)

def _copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out
'''

# (name, kernel body, expected status, timeout)
CASES = [
    ("new_session_then_pass", "_new_session()\n    return _copy(a)", "no_reference", 60.0),
    ("double_fork_then_pass", "_daemon()\n    return _copy(a)", "no_reference", 60.0),
    ("respawner_then_pass", "_respawner()\n    time.sleep(0.3)\n    return _copy(a)", "no_reference", 60.0),
    ("double_fork_then_raise", "_daemon()\n    raise ValueError('boom')", "error", 60.0),
    ("new_session_then_exit", "_new_session()\n    os._exit(3)", "crashed", 60.0),
    (
        "everything_then_hang",
        "_new_session()\n    _daemon()\n    _respawner()\n    while True:\n        pass",
        "timeout",
        4.0,
    ),
    (
        "ignores_signals_then_hang",
        "for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n        signal.signal(s, signal.SIG_IGN)\n"
        "    _daemon()\n    while True:\n        pass",
        "timeout",
        4.0,
    ),
]


@pytest.fixture
def subreaper() -> Iterator[psutil.Process]:
    """This process as the child subreaper of its descendants for the test (so escapees stay visible)."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(36, 1, 0, 0, 0) == 0
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    try:
        yield me
    finally:
        libc.prctl(36, 0, 0, 0, 0)
        for leftover in me.children(recursive=True):  # clean up after a failure, then reap
            if leftover.pid not in before:
                leftover.kill()
        _reap()


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _survivors(me: psutil.Process, allowed: set[int]) -> list[str]:
    _reap()
    out = []
    for p in me.children(recursive=True):
        try:
            if p.pid not in allowed and p.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{p.pid} {' '.join(p.cmdline())[:80]}")
        except psutil.NoSuchProcess:
            pass
    return out


def _job(tmp_path: Path, name: str, body: str) -> Job:
    path = tmp_path / f"{name}.py"
    source = f"{_HEADER}\n\n# nki-studio: simulate a=float32[128,64]\n@nki.jit\ndef {name}(a):\n    {body}\n"
    path.write_text(source)
    res = resolve(source, str(path), name, use_pyproject=False)
    assert res.spec is not None, res.problems
    return Job(path=str(path), spec=res.spec.to_json())


def _wait_for_no_survivors(me: psutil.Process, allowed: set[int], within_s: float = 10.0) -> list[str]:
    deadline = time.time() + within_s
    while (left := _survivors(me, allowed)) and time.time() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize(("name", "body", "status", "timeout"), CASES, ids=[c[0] for c in CASES])
def test_nothing_the_kernel_started_survives_the_run(
    subreaper: psutil.Process,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    body: str,
    status: str,
    timeout: float,
) -> None:
    escapes = tmp_path / "escaped.pids"
    escapes.write_text("")
    monkeypatch.setenv("NKI_TEST_ESCAPE_FILE", str(escapes))
    allowed = {p.pid for p in subreaper.children(recursive=True)}
    result = run_job(_job(tmp_path, name, body), timeout_s=timeout)
    assert result["status"] == status, result["message"]
    noted = [int(p) for p in escapes.read_text().split()]
    assert noted, "the kernel did not get to start its escapee (the test would prove nothing)"
    assert _wait_for_no_survivors(subreaper, allowed) == []
    assert not [p for p in noted if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


def test_cancelled_run_and_warm_pool_leave_no_survivors(
    subreaper: psutil.Process, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    escapes = tmp_path / "escaped.pids"
    escapes.write_text("")
    monkeypatch.setenv("NKI_TEST_ESCAPE_FILE", str(escapes))
    allowed = {p.pid for p in subreaper.children(recursive=True)}
    pool = WorkerPool(warm=True)
    try:
        stop = threading.Event()

        def cancel_once_escaped() -> bool:
            if len(escapes.read_text().split()) >= 2:
                stop.set()
            return stop.is_set()

        job = _job(
            tmp_path, "escape_and_spin", "_new_session()\n    _daemon()\n    while True:\n        pass"
        )
        result = run_job(job, pool=pool, timeout_s=60, cancelled=cancel_once_escaped)
        assert result["status"] == "cancelled"
    finally:
        pool.close()
    assert _wait_for_no_survivors(subreaper, allowed) == []
