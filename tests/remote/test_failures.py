"""Failures a user can act on, through the real sshd: unreachable host (fast), authentication, unknown host
key, no neuron-explorer, no device, a stand-in exiting non-zero (its stderr shown), a compile error on the
kernel line, a profile without source locations, and cancel (remote process killed, nothing cached)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
import sshd
from helpers import cli, job
from nki_studio.remote.errors import RemoteError
from nki_studio.remote.flow import RemoteJob, fetch_profile, load_report
from sshd import LoopbackHost

pytestmark = pytest.mark.slow  # each test drives ssh/scp against a real sshd (seconds each)


def _fetch(j: RemoteJob, cancelled: threading.Event | None = None) -> None:
    log: list[str] = []
    stop = cancelled or threading.Event()
    profile = fetch_profile(j, log=log.append, progress=lambda s, m: None, cancelled=stop.is_set)
    load_report(profile)


def _error(j: RemoteJob) -> RemoteError:
    with pytest.raises(RemoteError) as info:
        _fetch(j)
    return info.value


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _ended(pid: int) -> bool:
    """Whether process ``pid`` ends within 5 s."""
    for _ in range(100):
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


def _sleeping_capture(host: LoopbackHost, kernel: Path, tmp_path: Path) -> tuple[RemoteJob, Path]:
    """A job whose stand-in capture sleeps 120 s, and the file where the capture writes its process id."""
    pid_file = tmp_path / "capture.pid"
    j = job(
        host,
        kernel,
        tmp_path / "remote",
        tmp_path / "cache",
        STANDIN_CAPTURE_SLEEP="120",
        STANDIN_PID_FILE=str(pid_file),
    )
    return j, pid_file


def _with_config(host: LoopbackHost, tmp_path: Path, old: str, new: str) -> Path:
    config = tmp_path / "ssh_config"
    text = host.ssh_config.read_text()
    assert old in text
    config.write_text(text.replace(old, new))
    return config


def test_stopped_sshd_is_host_unreachable_within_10_s(tmp_path: Path, kernel: Path) -> None:
    reason = sshd.unavailable()
    if reason:
        pytest.skip(reason)
    dead = sshd.start(tmp_path / "dead")
    dead.stop()
    t0 = time.monotonic()
    err = _error(job(dead, kernel, tmp_path / "remote", tmp_path / "cache"))
    assert time.monotonic() - t0 < 10
    assert err.kind == "unreachable" and "host unreachable" in str(err)


def test_auth_failure(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "otherkey")], check=True
    )
    j = job(host, kernel, tmp_path / "remote", tmp_path / "cache")
    config = _with_config(
        host, tmp_path, f"IdentityFile {host.root}/clientkey", f"IdentityFile {tmp_path}/otherkey"
    )
    err = _error(
        RemoteJob(
            j.kernel_file, j.spec, dataclasses.replace(j.settings, ssh_config=str(config)), j.cache_root
        )
    )
    assert err.kind == "auth" and "ssh-agent" in str(err)


def test_unknown_host_key_is_not_accepted(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    (tmp_path / "empty_known_hosts").write_text("")
    j = job(host, kernel, tmp_path / "remote", tmp_path / "cache")
    config = _with_config(
        host,
        tmp_path,
        f"UserKnownHostsFile {host.root}/known_hosts",
        f"UserKnownHostsFile {tmp_path}/empty_known_hosts",
    )
    err = _error(
        RemoteJob(
            j.kernel_file, j.spec, dataclasses.replace(j.settings, ssh_config=str(config)), j.cache_root
        )
    )
    assert err.kind == "hostkey"
    assert (tmp_path / "empty_known_hosts").read_text() == ""  # nothing was added


def test_no_neuron_explorer_on_path(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    py_only = tmp_path / "py-only"
    py_only.mkdir()
    (py_only / "python3").symlink_to(host.standin_bin / "python3")
    err = _error(job(host, kernel, tmp_path / "remote", tmp_path / "cache", PATH=f"{py_only}:/usr/bin:/bin"))
    assert err.kind == "no-explorer" and "envActivation" in str(err)


def test_no_device(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    err = _error(job(host, kernel, tmp_path / "remote", tmp_path / "cache", STANDIN_FAIL="capture"))
    assert err.kind == "no-device" and "nrt_init failed" in str(err)


def test_stand_in_failure_shows_its_stderr_in_the_cli(
    host: LoopbackHost, kernel: Path, tmp_path: Path
) -> None:
    r = cli(host, str(kernel), tmp_path / "remote", tmp_path / "cache", STANDIN_FAIL="view")
    assert r.returncode == 1
    message = r.stderr.split("nki-studio profile remote: ", 1)[1]
    assert (
        "view failed" in message and "internal error while processing the NTFF (stand-in failure)" in message
    )
    assert list((tmp_path / "remote").iterdir()) == []  # cleaned after the failure too
    assert not list((tmp_path / "cache").rglob("*.parquet"))


def test_compile_error_names_the_kernel_line(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    lines = kernel.read_text().splitlines()
    lines[3] = "raise ValueError('tile too big')"  # line 4, module level: fails while the harness imports it
    kernel.write_text("\n".join(lines) + "\n")
    err = _error(job(host, kernel, tmp_path / "remote", tmp_path / "cache"))
    assert err.kind == "compile" and err.line == 4
    assert str(err).startswith(f"{kernel}:4: ") and "ValueError: tile too big" in str(err)


def test_profile_without_source_locations_explains_the_flags(
    host: LoopbackHost, kernel: Path, tmp_path: Path
) -> None:
    err = _error(job(host, kernel, tmp_path / "remote", tmp_path / "cache", STANDIN_NO_SOURCE="1"))
    assert (
        err.kind == "no-source"
        and "NKI_DEBUG_INFO=True" in str(err)
        and "NEURON_FRAMEWORK_DEBUG=1" in str(err)
    )


def test_cancel_kills_the_remote_process_and_caches_nothing(
    host: LoopbackHost, kernel: Path, tmp_path: Path
) -> None:
    j, pid_file = _sleeping_capture(host, kernel, tmp_path)
    stop = threading.Event()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            _fetch(j, stop)
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    assert _alive(pid)
    stop.set()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], RemoteError) and errors[0].kind == "cancelled"
    assert _ended(pid), "the remote capture is still running"
    cache = tmp_path / "cache"
    assert not cache.exists() or not [p for p in cache.rglob("*") if p.is_file()]
    assert list((tmp_path / "remote").iterdir()) == []
    assert os.path.exists(f"/proc/{os.getpid()}")


def test_stage_timeout_stops_the_remote_process(host: LoopbackHost, kernel: Path, tmp_path: Path) -> None:
    j, pid_file = _sleeping_capture(host, kernel, tmp_path)
    j = RemoteJob(j.kernel_file, j.spec, dataclasses.replace(j.settings, stage_timeout_s=4.0), j.cache_root)
    err = _error(j)
    assert err.kind == "timeout" and "after 4 s" in str(err)
    pid = int(pid_file.read_text())
    assert _ended(pid)
