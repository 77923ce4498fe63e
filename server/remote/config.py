"""Remote-profiling settings: host, remote work directory, activation command, NeuronCore, ssh options.

Filled from the language server's ``remote`` settings object (VS Code ``nki-studio.remote.*``) or from the
CLI. Validation happens here so the command builder only ever sees values it can pass on safely.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_WORKDIR = "~/nki-studio-remote"
TRANSFERS = ("auto", "scp", "rsync")
# The work directory also appears in scp's ``host:path`` operand, which older scp (original protocol)
# hands to the remote shell; a conservative character set keeps that operand inert in every scp mode.
_SAFE_PATH = re.compile(r"[A-Za-z0-9._/+-]+")
_HOST = re.compile(r"(?:(?P<user>[^@\s]+)@)?(?P<host>[^@:\s/]+)(?::(?P<port>\d{1,5}))?")


class RemoteConfigError(ValueError):
    """A remote setting that cannot be used as given (message names the setting)."""


@dataclass(frozen=True)
class HostSpec:
    """Where to connect: an ssh destination (config alias or ``user@host``) and an optional port."""

    destination: str
    port: int | None = None

    def __str__(self) -> str:
        return self.destination + (f":{self.port}" if self.port else "")


def parse_host(text: str) -> HostSpec:
    """``alias`` / ``host`` / ``user@host`` / ``user@host:port`` → :class:`HostSpec`.

    A leading ``-`` is refused (it would be read as an ssh option)."""
    text = text.strip()
    m = _HOST.fullmatch(text)
    if not text or text.startswith("-") or m is None or m.group("host").startswith("-"):
        raise RemoteConfigError(
            f"remote.host: expected an ssh config alias or user@host[:port], got {text!r}"
        )
    port = int(m.group("port")) if m.group("port") else None
    if port is not None and not 0 < port < 65536:
        raise RemoteConfigError(f"remote.host: port {port} out of range")
    user = m.group("user")
    return HostSpec(f"{user}@{m.group('host')}" if user else m.group("host"), port)


def remote_workdir(text: str) -> str:
    """The work directory as ssh and scp both understand it: ``~/x`` becomes ``x`` (relative paths are
    relative to the login directory for both), absolute paths stay absolute."""
    path = text.strip() or DEFAULT_WORKDIR
    if path == "~":
        path = "."
    elif path.startswith("~/"):
        path = path[2:] or "."
    if not _SAFE_PATH.fullmatch(path) or path.startswith("-") or ".." in path.split("/"):
        raise RemoteConfigError(
            f"remote.workDir: {text!r} — use letters, digits and . _ / + - only (optionally starting with ~/)"
        )
    return path.rstrip("/") or "/"


@dataclass(frozen=True)
class RemoteSettings:
    """Everything the flow needs to know about the host."""

    host: HostSpec
    workdir: str = "nki-studio-remote"
    activation: str = (
        ""  # shell text the user configured, run verbatim before the tools (e.g. `source venv/bin/activate`)
    )
    neuron_core: int = 0
    ssh_options: tuple[str, ...] = ()
    ssh_config: str | None = None  # ``ssh -F FILE``
    keep_files: bool = False
    python: str = "python3"
    platform_target: str = "trn2"
    connect_timeout_s: int = 8
    stage_timeout_s: float = (
        900.0  # compile / capture / view each; big kernels take minutes (view of ~1 GB NTFF)
    )
    control_path: str | None = None  # set by the flow while its shared connection is up
    transfer: str = "auto"  # "auto" (rsync when both ends have it, else scp), "scp" or "rsync"


def settings_from(raw: Mapping[str, Any], **overrides: Any) -> RemoteSettings:
    """Build settings from the client's ``remote`` object (camelCase keys) plus explicit overrides."""
    values = {**raw, **{k: v for k, v in overrides.items() if v is not None}}
    host = values.get("host")
    if not isinstance(host, str) or not host.strip():
        raise RemoteConfigError("remote.host is not set: name an ssh config alias or user@host[:port]")
    core = values.get("neuronCore", 0)
    if isinstance(core, bool) or not isinstance(core, int) or core < 0:
        raise RemoteConfigError(f"remote.neuronCore: expected a non-negative integer, got {core!r}")
    opts = values.get("sshOptions", [])
    if isinstance(opts, str):
        opts = opts.split()
    if not isinstance(opts, (list, tuple)) or not all(isinstance(o, str) for o in opts):
        raise RemoteConfigError("remote.sshOptions: expected a list of strings (one argument each)")
    activation = values.get("envActivation", "") or ""
    if not isinstance(activation, str):
        raise RemoteConfigError("remote.envActivation: expected a string")
    transfer = values.get("transfer", "auto") or "auto"
    if transfer not in TRANSFERS:
        raise RemoteConfigError(f"remote.transfer: expected one of {', '.join(TRANSFERS)}, got {transfer!r}")
    timeout = values.get("timeout", 900.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise RemoteConfigError(f"remote.timeout: expected a positive number of seconds, got {timeout!r}")
    return RemoteSettings(
        host=parse_host(host),
        workdir=remote_workdir(str(values.get("workDir") or DEFAULT_WORKDIR)),
        activation=activation.strip(),
        neuron_core=core,
        ssh_options=tuple(opts),
        ssh_config=values.get("sshConfig") or None,
        keep_files=bool(values.get("keepFiles", False)),
        platform_target=str(values.get("target") or "trn2"),
        stage_timeout_s=float(timeout),
        transfer=transfer,
    )
