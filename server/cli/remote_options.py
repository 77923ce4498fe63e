"""The remote-profiling options, declared once for every sub-command that profiles on a Trn2 host
(``profile remote``, ``tune --confirm-remote``): each option is one ``remote.*`` setting given on the command
line (``docs/settings.md``); ``remote_object`` turns the ones given into the ``remote`` settings object the
service reads (``nki_studio.remote.config``)."""

from __future__ import annotations

import argparse
from typing import Any

from nki_studio.settings.declaration import default

# (flag, the ``remote`` key it sets, argparse keywords); the stage time limit's flag differs per command
# (``tune`` has its own --timeout, the simulation's), so it is added apart under one dest.
_OPTIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--ssh-config", "sshConfig", {"metavar": "FILE", "help": "ssh configuration file (ssh -F)"}),
    (
        "--ssh-option",
        "sshOptions",
        {
            "action": "append",
            "metavar": "ARG",
            "help": "extra argument for ssh/scp, repeatable (e.g. --ssh-option=-oProxyJump=bastion)",
        },
    ),
    (
        "--workdir",
        "workDir",
        {"metavar": "DIR", "help": f"remote work directory (default {default('remote.workDir')})"},
    ),
    (
        "--activate",
        "envActivation",
        {"metavar": "SHELL", "help": "command that activates the Neuron environment on the host"},
    ),
    (
        "--neuron-core",
        "neuronCore",
        {
            "type": int,
            "help": f"NeuronCore index (NEURON_RT_VISIBLE_CORES, default {default('remote.neuronCore')})",
        },
    ),
    (
        "--transfer",
        "transfer",
        {
            "choices": ("auto", "scp", "rsync"),
            "help": "file transfer: rsync when both ends have it (auto, default), or always scp / rsync",
        },
    ),
    (
        "--keep-remote",
        "keepFiles",
        {"action": "store_const", "const": True, "help": "keep the uploaded files and capture on the host"},
    ),
    (
        "--cache-dir",
        "cacheDir",
        {"metavar": "DIR", "help": "local profile cache (default ~/.cache/nki-studio/remote-profiles)"},
    ),
)
_HOST = "host"
_TIMEOUT = "timeout"


def _dest(key: str) -> str:
    return f"remote_{key}"


def add_remote_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    host_required: bool,
    timeout_flag: str = "--timeout",
) -> None:
    """Add ``--host`` and the other ``remote.*`` options (None when not given: the declared default applies);
    ``timeout_flag`` names the per-stage time limit."""
    p.add_argument(
        "--host",
        dest=_dest(_HOST),
        required=host_required,
        metavar="HOST",
        help="ssh config alias or user@host[:port]",
    )
    for flag, key, keywords in _OPTIONS:
        p.add_argument(flag, dest=_dest(key), **keywords)
    p.add_argument(
        timeout_flag,
        dest=_dest(_TIMEOUT),
        type=float,
        metavar="SECONDS",
        help=f"seconds per remote stage (default {default('remote.timeout')})",
    )


def remote_object(args: argparse.Namespace) -> dict[str, Any]:
    """The ``remote`` settings object of the options given (the keys of ``docs/settings.md``' remote rows)."""
    keys = (_HOST, *(key for _, key, _ in _OPTIONS), _TIMEOUT)
    values = {key: getattr(args, _dest(key), None) for key in keys}
    return {key: value for key, value in values.items() if value is not None}
