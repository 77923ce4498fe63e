"""The memory limit without ``RLIMIT_AS``: the RSS watcher (``memory_guard.py``), as macOS and Windows use it.

On Linux the watcher is forced with ``NKI_STUDIO_SIM_MEMORY_GUARD=rss``; the kernels here really allocate
past the limit (a few hundred MiB), and the run must end with the ``memory_limit`` result the address-space
cap gives.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from nki_studio.verify import memory_guard
from nki_studio.verify.job import Job
from nki_studio.verify.memory_guard import MemoryLimitExceeded, RssGuard, method
from nki_studio.verify.runner import run_job
from nki_studio.verify.spec import resolve

DATA = Path(__file__).parent / "data"
MiB = 1 << 20


@pytest.mark.parametrize(
    ("platform", "forced", "expected"),
    [
        ("linux", "", "rlimit"),
        ("linux", "rss", "rss"),
        ("darwin", "", "rss"),  # RLIMIT_AS is accepted there but not enforced
        ("darwin", "rlimit", "rlimit"),
        ("win32", "", "rss"),
        ("win32", "rlimit", "rss"),  # no resource module: cannot be forced
        ("freebsd14", "", "rlimit"),
    ],
)
def test_method_per_platform(platform: str, forced: str, expected: str) -> None:
    assert method(platform, {memory_guard.ENV: forced}) == expected


def _busy_main_thread(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(100))


def test_watcher_raises_memory_error_in_the_main_thread_at_the_limit() -> None:
    samples = iter([10 * MiB, 50 * MiB, 120 * MiB])
    guard = RssGuard(100 * MiB, on_hard_stop=lambda message: None, sample=lambda: next(samples, 120 * MiB))
    guard.start()
    try:
        with pytest.raises(MemoryError, match="resident memory 120 MiB reached the limit of 100 MiB"):
            _busy_main_thread(5.0)
    finally:
        guard.stop()
    with pytest.raises(MemoryLimitExceeded):  # also when the kernel caught it
        guard.raise_if_exceeded()
    assert guard.peak == 120 * MiB


def test_watcher_stays_quiet_below_the_limit() -> None:
    guard = RssGuard(100 * MiB, on_hard_stop=lambda message: None, sample=lambda: 99 * MiB)
    guard.start()
    _busy_main_thread(0.2)
    guard.stop()
    guard.raise_if_exceeded()
    assert guard.exceeded_at is None


def test_a_kernel_that_swallows_the_error_is_stopped_hard() -> None:
    rss = [50 * MiB]
    stopped: list[str] = []
    exited = threading.Event()
    guard = RssGuard(
        100 * MiB,
        on_hard_stop=stopped.append,
        sample=lambda: rss[0],
        exit_process=lambda code: exited.set(),
    )
    guard.start()
    end = time.monotonic() + 5.0
    while not exited.is_set() and time.monotonic() < end:
        try:
            rss[0] += 2 * MiB  # keeps allocating whatever it is told
            time.sleep(0.001)
        except MemoryError:
            pass
    guard.stop()
    assert exited.is_set()
    assert stopped and "reached the limit of 100 MiB" in stopped[0]


def _job(name: str, memory_bytes: int) -> Job:
    path = DATA / name
    res = resolve(path.read_text(), str(path), None, use_pyproject=False)
    assert res.spec is not None, res.problems
    return Job(path=str(path), spec=res.spec.to_json(), memory_bytes=memory_bytes)


@pytest.fixture
def rss_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(memory_guard.ENV, "rss")  # the worker inherits the environment


def test_forced_rss_guard_stops_an_unbounded_allocation_with_the_rlimit_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    results = {}
    for chosen in ("rlimit", "rss"):
        monkeypatch.setenv(memory_guard.ENV, chosen)  # the worker inherits the environment
        results[chosen] = run_job(_job("hog_kernel.py", memory_bytes=1024 * MiB), timeout_s=60)
    rss = results["rss"]
    assert rss["status"] == "memory_limit", rss["message"]
    # the same result as the address-space cap gives: status, message and the kernel's line
    assert "the kernel exceeded the memory limit of 1024 MiB" in rss["message"]
    for key in ("status", "message", "error"):
        assert rss[key] == results["rlimit"][key], key  # type: ignore[literal-required]
    assert rss["error"]["file"].endswith("hog_kernel.py")
    assert rss["peakRssBytes"] < 1024 * MiB * 1.3  # stopped near the limit (sampling overshoot only)


def test_forced_rss_guard_ends_a_kernel_that_catches_memory_error(rss_guard: None) -> None:
    result = run_job(_job("swallow_memory_error.py", memory_bytes=512 * MiB), timeout_s=60)
    assert result["status"] == "memory_limit", result["message"]
    assert result["message"].startswith("the kernel exceeded the memory limit of 512 MiB (resident memory")


def test_sampler_counts_the_processes_the_kernel_started() -> None:
    import subprocess
    import sys

    sampler = memory_guard._TreeSampler()
    alone = sampler()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; b = bytearray(200 << 20); print(1, flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline()  # allocated
        sampler._listed_at = -1e9  # re-list now rather than in 0.5 s
        assert sampler() - alone > 150 * MiB
    finally:
        child.kill()
        child.wait()


def test_without_the_resource_module_the_guard_watches_rss(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    import psutil  # its Linux backend needs ``resource`` itself; Windows' does not

    modules = ", ".join(
        f"nki_studio.verify.{m}"
        for m in ("job", "worker", "runner", "containment", "memory_guard", "winjob", "start_method")
    )
    blocked = f"import sys; sys.modules['resource'] = None; import {modules}"
    subprocess.run([sys.executable, "-c", blocked], check=True)  # as on Windows: no module-level import
    assert psutil
    monkeypatch.setitem(sys.modules, "resource", None)  # ``import resource`` fails from here on
    guard = memory_guard.limit(1 << 40, on_hard_stop=lambda message: None, chosen="rlimit")
    try:
        assert isinstance(guard, RssGuard)
    finally:
        guard.stop()
    assert memory_guard.peak_rss_bytes() > 10 * MiB  # psutil's figure instead of getrusage
