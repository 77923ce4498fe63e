"""Remote-profiling settings: host, remote work directory, activation command, NeuronCore, ssh options.

Filled from the language server's ``remote`` settings object (VS Code ``nki-studio.remote.*``) or from the
CLI. The keys, defaults and allowed values are declared in ``nki_studio.settings.declaration``. Validation
happens here so the command builder only ever sees values it can pass on safely.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nki_studio.settings.declaration import default, setting

DEFAULT_WORKDIR: str = default("remote.workDir")
TRANSFERS = setting("remote.transfer").enum
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


def _declared(key: str) -> Any:
    """The declared default of the ``remote.<key>`` setting (KeyError: the key is not declared)."""
    return default(f"remote.{key}")


def _value(values: Mapping[str, Any], key: str) -> Any:
    """``values[key]``, or the declared default when it is missing."""
    return values.get(key, _declared(key))


@dataclass(frozen=True)
class RemoteSettings:
    """Everything the flow needs to know about the host."""

    host: HostSpec
    workdir: str = remote_workdir(DEFAULT_WORKDIR)
    activation: str = (
        ""  # shell text the user configured, run verbatim before the tools (e.g. `source venv/bin/activate`)
    )
    neuron_core: int = _declared("neuronCore")
    ssh_options: tuple[str, ...] = ()
    ssh_config: str | None = None  # ``ssh -F FILE``
    keep_files: bool = _declared("keepFiles")
    python: str = "python3"
    platform_target: str = "trn2"
    connect_timeout_s: int = 8
    # compile / capture / view each; big kernels take minutes (view of ~1 GB NTFF)
    stage_timeout_s: float = float(_declared("timeout"))
    control_path: str | None = None  # set by the flow while its shared connection is up
    transfer: str = _declared("transfer")  # "auto" (rsync when both ends have it, else scp), "scp" or "rsync"


def settings_from(raw: Mapping[str, Any], **overrides: Any) -> RemoteSettings:
    """Build settings from the client's ``remote`` object (camelCase keys) plus explicit overrides."""
    values = {**raw, **{k: v for k, v in overrides.items() if v is not None}}
    host = _value(values, "host")
    if not isinstance(host, str) or not host.strip():
        raise RemoteConfigError("remote.host is not set: name an ssh config alias or user@host[:port]")
    core = _value(values, "neuronCore")
    if isinstance(core, bool) or not isinstance(core, int) or core < 0:
        raise RemoteConfigError(f"remote.neuronCore: expected a non-negative integer, got {core!r}")
    opts = _value(values, "sshOptions")
    if isinstance(opts, str):
        opts = opts.split()
    if not isinstance(opts, (list, tuple)) or not all(isinstance(o, str) for o in opts):
        raise RemoteConfigError("remote.sshOptions: expected a list of strings (one argument each)")
    activation = _value(values, "envActivation") or ""
    if not isinstance(activation, str):
        raise RemoteConfigError("remote.envActivation: expected a string")
    transfer = _value(values, "transfer") or _declared("transfer")
    if transfer not in TRANSFERS:
        raise RemoteConfigError(f"remote.transfer: expected one of {', '.join(TRANSFERS)}, got {transfer!r}")
    timeout = _value(values, "timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise RemoteConfigError(f"remote.timeout: expected a positive number of seconds, got {timeout!r}")
    return RemoteSettings(
        host=parse_host(host),
        workdir=remote_workdir(str(_value(values, "workDir") or DEFAULT_WORKDIR)),
        activation=activation.strip(),
        neuron_core=core,
        ssh_options=tuple(opts),
        ssh_config=_value(values, "sshConfig") or None,
        keep_files=bool(_value(values, "keepFiles")),
        platform_target=str(values.get("target") or "trn2"),
        stage_timeout_s=float(timeout),
        transfer=transfer,
    )
