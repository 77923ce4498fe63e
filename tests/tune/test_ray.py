"""Candidates as Ray tasks on a REAL local Ray cluster started by the test: a head and two worker nodes on
this machine (``ray start``, one CPU each), torn down afterwards by killing the process groups this test
started (never ``ray stop``, which would end every Ray process on the machine)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nki_studio.service.settings import Settings
from nki_studio.service.tune import TuneOptions, tune

pytest.importorskip("ray")

RAY = str(Path(sys.executable).with_name("ray"))
NODE = ["--block", "--num-cpus=1", "--node-ip-address=127.0.0.1", "--object-store-memory=80000000"]
START_S = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in reversed(procs):
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 15
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # what SIGTERM left (gcs_server, raylet, workers)
        except ProcessLookupError:
            pass
        proc.wait()


def _wait_for_cpus(address: str, cpus: int) -> None:
    probe = (
        "import time, ray\n"
        f"ray.init(address={address!r}, logging_level=40)\n"
        f"end = time.time() + {START_S}\n"
        f"while ray.cluster_resources().get('CPU', 0) < {cpus} and time.time() < end:\n"
        "    time.sleep(1)\n"
        "print(ray.cluster_resources().get('CPU', 0))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=START_S + 60)
    assert out.stdout.strip().endswith(f"{float(cpus)}"), out.stdout + out.stderr[-2000:]


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a head and two workers on 127.0.0.1, one CPU each."""
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    procs: list[subprocess.Popen[bytes]] = []
    address = f"127.0.0.1:{port}"
    try:
        head = [RAY, "start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}"]
        workers = [[RAY, "start", f"--address={address}", *NODE]] * 2
        # one node at a time, each once it says it is up: started together on a loaded 2-core machine, a
        # worker's raylet can time out waiting for the head's GCS
        for index, command in enumerate([[*head, *NODE], *workers]):
            log = Path(temp) / f"node{index}.log"
            with open(log, "wb") as out:
                procs.append(
                    subprocess.Popen(
                        command, env=env, start_new_session=True, stdout=out, stderr=subprocess.STDOUT
                    )
                )
            deadline = time.monotonic() + START_S
            while "block forever" not in log.read_text(errors="replace"):
                assert procs[-1].poll() is None, log.read_text(errors="replace")[-3000:]
                assert time.monotonic() < deadline, f"Ray node {index} did not start"
                time.sleep(1)
        _wait_for_cpus(address, 3)
        yield address
    finally:
        _stop(procs)
        shutil.rmtree(temp, ignore_errors=True)


def test_search_on_a_local_ray_cluster(cluster: str, project: Path) -> None:
    path = project / "stream_scale.py"
    options = TuneOptions(space="TILE_F=512,1024,1536 BUFS=1,2", ray_address=cluster)
    report = tune(str(path), path.read_text(), Settings(trusted_workspace=True), options)
    assert report["executor"] == f"ray ({cluster}, 3 CPUs)"
    assert report["evaluated"] == 7 and not report["notes"]
    assert report["winner"] is not None and report["winner"]["values"] == {"TILE_F": 1024, "BUFS": 2}
    failed = [r for r in report["candidates"] if r["verdict"] == "failed"]
    assert [r["values"]["TILE_F"] for r in failed] == [1536, 1536]  # verified in the sandbox on the nodes


def test_limits_hold_inside_ray_tasks(cluster: str, project: Path, settings: object) -> None:
    path = project / "misbehaving.py"
    limits = settings(timeout_s=8, memory_mb=1024)  # type: ignore[operator]
    report = tune(str(path), path.read_text(), limits, TuneOptions(ray_address=cluster, cache=False))
    reasons = {r["values"]["MODE"]: r["reason"].split(":")[0] for r in report["candidates"]}
    assert reasons == {0: "", 1: "timeout", 2: "memory_limit"}
