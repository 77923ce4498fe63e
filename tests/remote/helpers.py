"""Shared helpers for the sshd-backed tests: run the CLI / the flow against the loopback host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from nki_studio.remote.config import settings_from
from nki_studio.remote.flow import RemoteJob
from nki_studio.verify.spec import resolve
from sshd import ALIAS, LoopbackHost


def cli(
    host: LoopbackHost, target: str, workdir: Path, cache: Path, *extra: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """``nki-studio profile remote TARGET --host trn2-test --ssh-config F …`` (JSON output)."""
    argv = [
        sys.executable,
        "-m",
        "nki_studio",
        "profile",
        "remote",
        target,
        *remote_options(host, workdir, cache, **env),
        "--format",
        "json",
        "--timeout",
        "60",
        *extra,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def remote_options(host: LoopbackHost, workdir: Path, cache: Path, **env: str) -> list[str]:
    """The remote options (``cli.remote_options``) that reach the loopback host with the stand-ins."""
    return [
        "--host",
        ALIAS,
        "--ssh-config",
        str(host.ssh_config),
        "--workdir",
        str(workdir),
        "--activate",
        host.activation(**env),
        "--cache-dir",
        str(cache),
    ]


def heat_lines(out: str, kernel: Path) -> list[int]:
    """1-based lines with heat in the CLI's JSON for ``kernel``."""
    report: dict[str, Any] = json.loads(out)
    files = [f for f in report["files"] if f["uri"] == kernel.resolve().as_uri()]
    assert len(files) == 1, [f["uri"] for f in report["files"]]
    return sorted(ln["line"] + 1 for ln in files[0]["lines"])


def job(host: LoopbackHost, kernel: Path, workdir: Path, cache: Path, **env: str) -> RemoteJob:
    """A flow job for ``kernel`` against the loopback host."""
    spec = resolve(kernel.read_text(encoding="utf-8"), str(kernel)).spec
    assert spec is not None
    settings = settings_from(
        {
            "host": ALIAS,
            "sshConfig": str(host.ssh_config),
            "workDir": str(workdir),
            "envActivation": host.activation(**env),
            "timeout": 60,
        }
    )
    return RemoteJob(kernel.resolve(), spec, settings, cache)


def mcp_settings(host: LoopbackHost, workdir: Path, cache: Path) -> dict[str, Any]:
    """``nki-studio mcp --settings``: the loopback host configured and remote profiling enabled."""
    return {
        "remote": {
            "host": ALIAS,
            "sshConfig": str(host.ssh_config),
            "workDir": str(workdir),
            "envActivation": host.activation(),
            "cacheDir": str(cache),
            "timeout": 60,
        },
        "mcp.remoteProfiling": True,
    }
