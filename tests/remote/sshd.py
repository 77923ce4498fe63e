"""A real OpenSSH server on 127.0.0.1 for the remote-profiling tests (recipe: shared/e2e/SSH.md).

Temporary host and client keys, an ssh config file naming the server ``trn2-test`` with a pre-filled
known_hosts (StrictHostKeyChecking yes: nothing is auto-accepted), and the stand-in Neuron tools: a
``neuron-explorer`` executable, ``python3`` and the stand-in ``nki`` package, put first on PATH/PYTHONPATH by
the activation command, the way a user's ``source venv/bin/activate`` would.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
ALIAS = "trn2-test"
STANDIN = Path(__file__).parent / "standin"


def unavailable() -> str | None:
    """Why the sshd tests are skipped: only when not root (set-up installs OpenSSH as root). As root, missing
    tools are a set-up error, not a reason to skip."""
    if os.geteuid() != 0:
        return "tests/remote need root to start sshd on loopback (scripts/setup-ssh.sh installs it as root)"
    missing = [t for t in (SSHD, "ssh", "scp", "ssh-keygen") if shutil.which(t) is None]
    if missing:
        raise RuntimeError(
            f"not installed: {', '.join(missing)} — scripts/setup-ssh.sh should have installed them"
        )
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LoopbackHost:
    """A running sshd and everything a test needs to reach it."""

    root: Path
    port: int
    ssh_config: Path
    standin_bin: Path

    @property
    def pid(self) -> int:
        return int((self.root / "sshd.pid").read_text())

    def activation(self, **env: str) -> str:
        """Shell text putting the stand-in tools first, plus ``env`` (stand-in knobs)."""
        values = {
            "PATH": f"{self.standin_bin}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": str(STANDIN),
            **env,
        }
        return "export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())

    def stop(self) -> None:
        try:
            os.kill(self.pid, 15)
        except (OSError, ValueError):
            return
        for _ in range(100):
            try:
                os.kill(self.pid, 0)
            except OSError:
                return
            time.sleep(0.05)


def start(root: Path) -> LoopbackHost:
    """Keys, configs, stand-ins, and an sshd listening on a free loopback port."""
    root.mkdir(parents=True, exist_ok=True)
    for key in ("hostkey", "clientkey"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / key)], check=True)
    shutil.copy(root / "clientkey.pub", root / "authorized_keys")
    (root / "authorized_keys").chmod(0o600)
    Path("/run/sshd").mkdir(exist_ok=True)
    port = free_port()
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root}/hostkey\nAuthorizedKeysFile {root}/authorized_keys\n"
        f"PasswordAuthentication no\nKbdInteractiveAuthentication no\nPidFile {root}/sshd.pid\nStrictModes no\n"
        "UsePAM no\nPermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\n"
    )
    host_pub = (root / "hostkey.pub").read_text().split()
    (root / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    config = root / "ssh_config"
    config.write_text(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {root}/clientkey\n"
        f"  IdentitiesOnly yes\n  UserKnownHostsFile {root}/known_hosts\n  StrictHostKeyChecking yes\n"
        "  LogLevel ERROR\n"
    )
    bin_dir = root / "standin-bin"
    bin_dir.mkdir()
    explorer = bin_dir / "neuron-explorer"
    explorer.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(STANDIN / "neuron_explorer.py"))} "$@"\n'
    )
    explorer.chmod(0o755)
    (bin_dir / "python3").symlink_to(sys.executable)
    subprocess.run([SSHD, "-f", str(root / "sshd_config"), "-E", str(root / "sshd.log")], check=True)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.05)
    return LoopbackHost(root, port, config, bin_dir)
