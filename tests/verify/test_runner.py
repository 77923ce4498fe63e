"""The sandboxed runner: results, timeout, memory limit, cancellation, no processes left behind."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from nki_studio.verify.job import Job
from nki_studio.verify.report import findings
from nki_studio.verify.runner import WorkerPool, run_job
from nki_studio.verify.spec import find_kernels, resolve

DATA = Path(__file__).parent / "data"


def _job(name: str, kernel: str | None = None, **kw: object) -> Job:
    path = DATA / name
    res = resolve(path.read_text(), str(path), kernel, use_pyproject=False)
    assert res.spec is not None, res.problems
    return Job(path=str(path), spec=res.spec.to_json(), **kw)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_passing_kernel_reports_backend_timings_oracle_and_the_estimate() -> None:
    result = run_job(_job("add_kernel.py"), timeout_s=60)
    assert result["status"] == "passed", result["message"]
    assert result["backend"] == "embedded"
    assert result["oracle"]["passed"] and result["oracle"]["hasReference"]
    assert {"processStart", "import", "simulation", "oracle", "total"} <= set(result["timings"])
    estimate = result["estimate"]
    assert estimate is not None and estimate["label"] == "estimated" and estimate["totalNs"] > 0
    assert estimate["lines"] and {t["name"] for t in estimate["timeline"]} >= {"DMA"}
    assert result["peak"]["sbuf"]["peakBytes"] > 0
    path = str(DATA / "add_kernel.py")
    [kernel] = find_kernels((DATA / "add_kernel.py").read_text(), path)
    [peak] = [f for f in findings(result, path, kernel) if f.code == "NKI630"]
    # named after the variables the allocating lines assign; the nl.add result has no name
    assert peak.message.startswith("SBUF peak 3 KiB/224 KiB per partition (simulated): ")
    assert {"ta 1 KiB", "tb 1 KiB", "<unnamed> 1 KiB"} == set(peak.message.split(": ", 1)[1].split(", "))


def test_infinite_loop_is_killed_at_the_timeout() -> None:
    result = run_job(_job("loop_kernel.py"), timeout_s=1.0)
    assert result["status"] == "timeout" and "did not finish within 1 s" in result["message"]


def test_unbounded_allocation_hits_the_memory_limit() -> None:
    result = run_job(_job("hog_kernel.py", memory_bytes=1 << 30), timeout_s=60)
    assert result["status"] == "memory_limit", result
    assert "memory limit of 1024 MiB" in result["message"]
    assert result["error"]["line"] == 12 and result["error"]["file"].endswith("hog_kernel.py")


def test_cancel_and_timeout_leave_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("NKI_TEST_CHILD_PID_FILE", str(pid_file))
    pool = WorkerPool(warm=True)
    try:
        stop = threading.Event()

        def cancel_when_child_started() -> bool:
            if pid_file.exists() and pid_file.read_text():
                stop.set()
            return stop.is_set()

        result = run_job(
            _job("spawn_kernel.py"), pool=pool, timeout_s=30, cancelled=cancel_when_child_started
        )
        assert result["status"] == "cancelled"
        child = int(pid_file.read_text())
        deadline = time.time() + 5
        while _alive(child) and time.time() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the kernel's child process outlived the cancelled worker"
        time.sleep(0.5)
        assert len(pool.pids()) <= 1  # at most the fresh spare is left
    finally:
        spare = pool.pids()
        pool.close()
    assert not any(_alive(p) for p in spare)
    assert pool.pids() == []


def test_error_lands_on_the_kernel_line_with_the_helper_chain() -> None:
    result = run_job(_job("broken_kernel.py"), timeout_s=60)
    assert result["status"] == "error"
    err = result["error"]
    assert err["line"] == 7 and err["file"].endswith("broken_kernel.py")
    assert any(s.endswith(":14:broken") for s in err["stack"]), err["stack"]
    path = str(DATA / "broken_kernel.py")
    [kernel] = find_kernels((DATA / "broken_kernel.py").read_text(), path)
    [finding] = [f for f in findings(result, path, kernel) if f.code == "NKI610"]
    assert finding.span.line == 7  # the failing line is in this file
    assert [r.span.line for r in finding.related] == [14, 7]


def test_warm_worker_is_ready_before_the_job() -> None:
    pool = WorkerPool(warm=True)
    try:
        result = run_job(_job("add_kernel.py"), pool=pool, timeout_s=60)
        # started before the job; how much that saves is measured by benchmarks/simulate_bench.py
        assert result["timings"]["warm"] is True and result["status"] == "passed"
        deadline = time.time() + 30
        while not pool.pids() and time.time() < deadline:
            time.sleep(0.05)
        assert len(pool.pids()) == 1  # one job per worker: the next spare is started after the job
    finally:
        pool.close()


def test_official_backend_is_used_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A test double of the Neuron SDK's ``nki`` package following the documented API (simulator.md §1-§3:
    # ``nki.simulate(kernel)(*arrays)``); the real SDK cannot be installed here. It adds, like the kernel.
    pkg = tmp_path / "sdk" / "nki"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "class _K:\n"
        "    def __init__(self, f): self.f = f\n"
        "    def __getitem__(self, lnc): return self\n"
        "def jit(f=None, **kw):\n"
        "    return _K(f) if f is not None else _K\n"
        "def simulate(kernel):\n"
        "    return lambda a, b: (a.astype('float32') + b.astype('float32')).astype(a.dtype)\n"
    )
    (pkg / "language.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "sdk"))
    result = run_job(_job("add_kernel.py"), timeout_s=60)
    assert result["status"] == "passed", result["message"]
    assert result["backend"] == "official"
    assert result["estimate"] is None and result["peak"] is None  # no trace, no capacity
    assert any("official nki.simulate" in w for w in result["warnings"])


def test_nan_from_never_written_memory_is_located_by_a_strict_rerun() -> None:
    result = run_job(_job("half_written.py"), timeout_s=60)
    assert result["status"] == "failed"
    read = result["uninitializedRead"]
    assert read["line"] == 13 and read["file"].endswith("half_written.py")
    path = str(DATA / "half_written.py")
    [kernel] = find_kernels((DATA / "half_written.py").read_text(), path)
    [finding] = [f for f in findings(result, path, kernel) if f.code == "NKI621"]
    assert (
        finding.span.line == 13 and "rows (128-255)" in finding.message and "strict re-run" in finding.message
    )


def test_inputs_function_and_reference_in_another_module() -> None:
    from nki_studio.verify.spec import SimSpec

    spec = SimSpec("add", inputs="make_ab", reference="refs:ref_sum")
    result = run_job(Job(path=str(DATA / "add_kernel.py"), spec=spec.to_json()), timeout_s=60)
    assert result["status"] == "passed", result["message"]
    [out] = result["oracle"]["outputs"]
    assert out["shape"] == [128, 64] and {m["name"]: m["value"] for m in out["metrics"]}["max_abs"] == 0.0


def test_an_inputs_function_is_given_the_kernels_module_and_the_seed(tmp_path: Path) -> None:
    """A kernel taking an object of a class its file defines gets one built from the module being simulated."""
    import numpy as np
    from nki_studio.verify.spec import SimSpec

    (tmp_path / "scaled.py").write_text(
        "from dataclasses import dataclass\n"
        "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
        "@dataclass(frozen=True)\nclass Options:\n    factor: float\n\n\n"
        "@nki.jit\ndef scaled(x, options):\n"
        "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
        "    t = nl.load(x)\n"
        "    nl.store(out, nl.multiply(t, options.factor))\n"
        "    return out\n"
    )
    (tmp_path / "declared.py").write_text(
        "import numpy as np\n\n\n"
        "def scaled_inputs(module, seed):\n"
        "    return np.ones((128, 8), np.float32), module.Options(factor=float(seed + 2))\n"
    )
    spec = SimSpec("scaled", inputs="declared:scaled_inputs", seed=3)
    out = tmp_path / "out.npz"
    job = Job(path=str(tmp_path / "scaled.py"), spec=spec.to_json(), outputs_path=str(out))
    result = run_job(job, timeout_s=60)
    assert result["status"] == "no_reference", result["message"]
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["arr_0"], np.full((128, 8), 5.0, np.float32))


def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, threading, time\n"
        "from nki_studio.verify.runner import WorkerPool, run_job\n"
        "from nki_studio.verify.job import Job\n"
        "from nki_studio.verify.spec import resolve\n"
        f"path = {str(DATA / 'loop_kernel.py')!r}\n"
        "spec = resolve(open(path).read(), path, use_pyproject=False).spec\n"
        "pool, idle = WorkerPool(warm=True), WorkerPool(warm=True)\n"
        "threading.Thread(target=run_job, args=(Job(path=path, spec=spec.to_json()),),\n"
        "                 kwargs={'pool': pool, 'timeout_s': 600}, daemon=True).start()\n"
        "time.sleep(4)\n"
        "print(' '.join(map(str, pool.pids() + idle.pids())), flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pids = [int(p) for p in parent.stdout.readline().split()]
    assert len(pids) == 2  # a busy worker spinning in the kernel, and an idle spare
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 10
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), "a worker outlived its killed parent"


def test_a_job_without_a_version_runs_0_6_code_and_says_how_the_version_was_chosen() -> None:
    result = run_job(_job("trip_count_06.py"), timeout_s=60)
    assert result["status"] == "passed", result["message"]
    assert any("NKI version 0.6 inferred from nl.dynamic_range" in w for w in result["warnings"])


def test_infinite_recursion_keeps_the_call_chain_short(tmp_path: Path) -> None:
    path = tmp_path / "recursive.py"
    path.write_text(
        "import nki\n\n\ndef down(n):\n    return down(n + 1)\n\n\n"
        "# nki-studio: simulate a=float32[128,64]\n@nki.jit\ndef recursive(a):\n    return down(0)\n"
    )
    res = resolve(path.read_text(), str(path), None, use_pyproject=False)
    assert res.spec is not None
    result = run_job(Job(path=str(path), spec=res.spec.to_json()), timeout_s=60)
    assert result["status"] == "error" and "RecursionError" in result["message"]
    stack = result["error"]["stack"]
    assert len(stack) < 10, stack
    assert stack[0].endswith(":11:recursive")  # the outermost frame is kept
    [note] = [s for s in stack if "repeat" in s]
    _, line, function = note.rsplit(":", 2)
    assert line == "5" and function.startswith("down [the 1 call(s) above repeat")
