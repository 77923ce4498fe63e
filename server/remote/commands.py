"""Local ``ssh``/``scp`` argument lists and the remote shell lines they carry.

Locally nothing goes through a shell: every command is an argument list for ``subprocess``. Remotely, ssh
always hands one string to the login shell, so every word of that string is built with ``shlex.quote``
from an argument list: a file or kernel name with spaces, quotes, ``$(...)``, ``;`` or newlines stays one
literal word. The only text passed unquoted is the user's own activation command (their setting, run as
they wrote it).

Host keys: we pass ``BatchMode=yes`` (never prompt for passwords or host-key confirmation) and nothing
about ``StrictHostKeyChecking``, so the user's ssh config and known_hosts decide; an unknown host key fails
with "Host key verification failed" unless their config accepts new keys.

Windows' OpenSSH client (Win32-OpenSSH) has no connection multiplexing (PowerShell/Win32-OpenSSH#1328):
there no shared master is started and ``ControlMaster=no``/``ControlPath=none`` are passed, so a
``ControlMaster`` in the user's ssh config cannot fail the connection ("getsockname failed: Not a socket");
each command then authenticates on its own. Remote paths are POSIX on every client; local operands of
scp/rsync are given relative to the command's working directory (:func:`local_operand`), so a drive
letter's colon is never read as ``host:``.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import PurePath

from nki_studio.remote.config import RemoteSettings

PID_FILE = ".stage.pid"


def user_sets(settings: RemoteSettings, name: str) -> bool:
    """Whether the extra ssh options set ``-o NAME=…`` (either ``-o X`` or ``-oX`` spelling)."""
    opts = settings.ssh_options
    values = [opts[i + 1] for i, o in enumerate(opts[:-1]) if o == "-o"] + [
        o[2:] for o in opts if o.startswith("-o") and o != "-o"
    ]
    low = name.lower()
    return any(v.lower().startswith(low + "=") or v.lower().startswith(low + " ") for v in values)


def multiplexing_supported(platform: str | None = None) -> bool:
    """Whether the local ssh client can share one connection (``ControlMaster``): not Windows' OpenSSH."""
    return (sys.platform if platform is None else platform) != "win32"


def _common_options(settings: RemoteSettings, *, master: bool = False) -> list[str]:
    """Options shared by ssh and scp (``-o`` form, which both accept)."""
    args: list[str] = []
    if settings.ssh_config:
        args += ["-F", settings.ssh_config]
    args += ["-o", "BatchMode=yes"]
    if settings.control_path and not master:
        args += ["-o", f"ControlPath={settings.control_path}", "-o", "ControlMaster=no"]
    elif not multiplexing_supported() and not (
        user_sets(settings, "ControlPath") or user_sets(settings, "ControlMaster")
    ):
        args += ["-o", "ControlMaster=no", "-o", "ControlPath=none"]  # overrides the user's ssh config
    if not user_sets(settings, "ConnectTimeout"):
        args += ["-o", f"ConnectTimeout={settings.connect_timeout_s}"]
    if not user_sets(settings, "ServerAliveInterval"):
        # A dead connection is noticed within ~30 s instead of hanging a stage until its timeout.
        args += ["-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3"]
    return args + list(settings.ssh_options)


def ssh_argv(settings: RemoteSettings, remote_line: str) -> list[str]:
    """``ssh … -- DEST LINE``: run one shell line (built by :func:`shell_line`) on the host."""
    args = ["ssh", *_common_options(settings)]
    if settings.host.port:
        args += ["-p", str(settings.host.port)]
    return [*args, "--", settings.host.destination, remote_line]


def master_argv(settings: RemoteSettings, control_path: str, persist_s: int = 60) -> list[str]:
    """Start a shared connection (``ssh -M -f -N``) that later ssh/scp calls reuse through ``control_path``:
    one authentication per run instead of one per command. ``ControlPersist`` ends it by itself when idle
    (e.g. if we are killed before :func:`master_exit_argv` runs)."""
    args = [
        "ssh",
        *_common_options(settings, master=True),
        "-o",
        "ControlMaster=yes",
        "-o",
        f"ControlPath={control_path}",
        "-o",
        f"ControlPersist={persist_s}",
        "-f",
        "-N",
    ]
    if settings.host.port:
        args += ["-p", str(settings.host.port)]
    return [*args, "--", settings.host.destination]


def master_exit_argv(settings: RemoteSettings) -> list[str]:
    """Close the shared connection of ``settings.control_path``."""
    args = ["ssh", *_common_options(settings), "-O", "exit"]
    if settings.host.port:
        args += ["-p", str(settings.host.port)]
    return [*args, "--", settings.host.destination]


def scp_argv(settings: RemoteSettings, sources: Sequence[str], target: str) -> list[str]:
    """``scp -r … -- SOURCES TARGET``; remote operands are made with :func:`remote_operand`."""
    args = ["scp", "-r", "-q", *_common_options(settings)]
    if settings.host.port:
        args += ["-P", str(settings.host.port)]
    return [*args, "--", *sources, target]


def rsync_argv(settings: RemoteSettings, sources: Sequence[str], target: str) -> list[str]:
    """``rsync -a --protect-args -e 'ssh …' -- SOURCES TARGET``. ``--protect-args`` keeps the remote path away
    from the remote shell; the ``-e`` command is ``shlex.join``-quoted, which rsync's own splitter reads the same
    way (spaces separate, single/double quotes group, adjacent quoted parts join)."""
    ssh = ["ssh", *_common_options(settings)]
    if settings.host.port:
        ssh += ["-p", str(settings.host.port)]
    return ["rsync", "-a", "--protect-args", "-e", shlex.join(ssh), "--", *sources, target]


def local_operand(path: PurePath, directory: bool = False) -> tuple[str, str]:
    """``(working directory, operand)`` for a local scp/rsync path: ``./NAME`` in its parent folder, so no
    drive letter (``C:``) or other colon is ever taken for a host; ``directory`` adds rsync's trailing ``/``
    (copy the contents)."""
    return str(path.parent), f"./{path.name}" + ("/" if directory else "")


def remote_operand(settings: RemoteSettings, path: str) -> str:
    """``DEST:PATH`` for scp/rsync. ``path`` is built from the validated work directory and our own job names."""
    return f"{settings.host.destination}:{path}"


def quote_argv(argv: Sequence[str]) -> str:
    """One shell word per argument."""
    return shlex.join(list(argv))


def env_argv(env: Mapping[str, str], argv: Sequence[str]) -> list[str]:
    """``env NAME=VALUE … ARGV``: environment as arguments, so values are quoted like any other word."""
    for name in env:
        if not name.isidentifier():
            raise ValueError(f"not an environment variable name: {name!r}")
    return ["env", *(f"{k}={v}" for k, v in env.items()), *argv]


def shell_line(workdir: str, argv: Sequence[str], activation: str = "", *, track_pid: bool = True) -> str:
    """The line for the remote login shell: enter ``workdir``, optionally record the process group, run the
    user's activation command, then ``argv`` (quoted).

    With ``track_pid`` the shell writes its PID to ``workdir/.stage.pid`` and ``exec``s an inner ``sh``: sshd
    starts every session command as a session (and process-group) leader, so :func:`kill_line` can end the
    whole stage, children included, by killing that group. Without ``track_pid`` (short housekeeping
    commands) the user's activation is not run.
    """
    inner = quote_argv(argv)
    if not track_pid:
        return f"cd {shlex.quote(workdir)} && {inner}"
    if activation:
        inner = f"{activation}\n{inner}"  # newline, not ';' / '&&': the activation text is shell code as the user wrote it
    # bash when the host has it, so an activation written as `source venv/bin/activate` works.
    return (
        f"cd {shlex.quote(workdir)} && echo $$ > {PID_FILE} && "
        f'exec "$(command -v bash || echo sh)" -c {shlex.quote(inner)}'
    )


def kill_line(workdir: str) -> str:
    """Terminate the process group recorded by :func:`shell_line` (TERM, then KILL if still alive after ~2 s)."""
    script = (
        'p=$(cat "$1" 2>/dev/null) || exit 0; kill -s TERM -- "-$p" 2>/dev/null || exit 0; '
        'for i in 1 2 3 4 5 6 7 8 9 10; do kill -s 0 -- "-$p" 2>/dev/null || exit 0; sleep 0.2; done; '
        'kill -s KILL -- "-$p" 2>/dev/null; exit 0'
    )
    return quote_argv(["sh", "-c", script, "sh", f"{workdir}/{PID_FILE}"])
