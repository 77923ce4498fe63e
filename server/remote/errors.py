"""Failures of a remote profiling run, as messages a user can act on.

ssh exits 255 for its own errors and otherwise with the remote command's status; the texts matched below
are OpenSSH's client messages. The Neuron runtime's wording for a missing device is not documented; the
patterns for it are inferred from common runtime messages (``nrt_init``, ``/dev/neuron``, "No neuron
device") and marked so.
"""

from __future__ import annotations

import re

from nki_studio.remote.process import Completed

UNREACHABLE = re.compile(
    r"Connection refused|Could not resolve hostname|No route to host|Network is unreachable|"
    r"Connection timed out|Operation timed out|Connection closed by|kex_exchange_identification|"
    r"Connection reset"
)
AUTH = re.compile(r"Permission denied \(|Too many authentication failures|no mutual signature")
HOSTKEY = re.compile(r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED")
NOT_FOUND = re.compile(r"neuron-explorer: (?:command )?not found|neuron-explorer: No such file")
PY_NOT_FOUND = re.compile(r"python3?: (?:command )?not found")
# inferred: runtime wording is undocumented
NO_DEVICE = re.compile(
    r"No [Nn]euron device|/dev/neuron\d*: No such file|nrt_init.*(?:fail|error)|"
    r"Failed to (?:open|find) (?:any )?[Nn]euron device|NRT_RESOURCE|no NeuronCores? (?:available|found)",
    re.IGNORECASE,
)
PY_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')

NO_SOURCE_FLAGS = (
    "the profile carries no NKI source locations. The kernel must be compiled with "
    "NKI_DEBUG_INFO=True and NEURON_FRAMEWORK_DEBUG=1 (nki-studio sets both; check that the "
    "activation command does not unset them and that no cached NEFF compiled without them was "
    "reused — delete the compiler cache on the host) and viewed with --nki-source-root."
)


class RemoteError(Exception):
    """A failed stage. ``kind``: unreachable, auth, hostkey, no-explorer, no-device, compile, tool, timeout,
    cancelled, no-source, config. ``line``: 1-based kernel line a compile error names (local file), if any."""

    def __init__(self, kind: str, message: str, *, detail: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.kind, self.detail, self.line = kind, detail, line

    def __str__(self) -> str:
        return self.args[0] + (f"\n{self.detail.strip()}" if self.detail.strip() else "")


def _tail(text: str, n: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def classify(stage: str, result: Completed, host: str, timeout_s: float) -> RemoteError:
    """The error for a failed (non-zero, timed-out) stage result."""
    err = result.stderr
    if result.timed_out:
        return RemoteError(
            "timeout",
            f"{stage}: no result from {host} after {timeout_s:g} s; the remote process was "
            "stopped (raise nki-studio.remote timeout for big kernels)",
            detail=_tail(err),
        )
    if result.returncode == 255 and HOSTKEY.search(err):
        return RemoteError(
            "hostkey",
            f"{host}: host key not trusted. Connect once with `ssh {host}` and check the "
            "fingerprint; nki-studio never accepts host keys by itself",
            detail=_tail(err, 5),
        )
    if result.returncode == 255 and AUTH.search(err):
        return RemoteError(
            "auth",
            f"{host}: authentication failed. nki-studio runs ssh in batch mode (no password "
            "prompts): load your key into ssh-agent or set IdentityFile for this host in ~/.ssh/config",
            detail=_tail(err, 5),
        )
    if result.returncode == 255 and (UNREACHABLE.search(err) or not err.strip()):
        return RemoteError(
            "unreachable",
            f"{host}: host unreachable ({_first(err) or 'ssh could not connect'}). "
            "Check the host name/alias, that the instance is running and that port 22 is open",
            detail="",
        )
    if NOT_FOUND.search(err) or (result.returncode == 127 and "neuron-explorer" in err):
        return RemoteError(
            "no-explorer",
            f"{host}: neuron-explorer not found. Set nki-studio.remote.envActivation "
            "to the command that puts the Neuron tools on PATH (e.g. `source /opt/aws_neuronx_venv_pytorch/"
            "bin/activate`)",
            detail=_tail(err, 5),
        )
    if PY_NOT_FOUND.search(err):
        return RemoteError(
            "no-python",
            f"{host}: python3 not found; set nki-studio.remote.envActivation to the "
            "Neuron virtual environment's activation",
            detail=_tail(err, 5),
        )
    if NO_DEVICE.search(err):
        return RemoteError(
            "no-device",
            f"{host}: no usable Neuron device (is this a Trn2 instance, and is "
            "NeuronCore index free? see nki-studio.remote.neuronCore)",
            detail=_tail(err),
        )
    return RemoteError("tool", f"{stage} failed on {host} (exit {result.returncode})", detail=_tail(err))


def _first(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().removeprefix("ssh: ")
    return ""


def compile_error(result: Completed, host: str, remote_kernel: str, local_kernel: str) -> RemoteError:
    """A failed harness run: the innermost traceback frame in the kernel file gives the (local) line."""
    base = classify("compile", result, host, 0)
    if base.kind != "tool":
        return base
    line = None
    for m in PY_FRAME.finditer(result.stderr):
        if m.group("file") == remote_kernel or m.group("file").endswith("/" + remote_kernel):
            line = int(m.group("line"))
    last = _first("\n".join(reversed(result.stderr.strip().splitlines())))
    where = f"{local_kernel}:{line}: " if line else ""
    return RemoteError(
        "compile",
        f"{where}kernel failed to compile/run on {host}: {last}",
        detail=_tail(result.stderr),
        line=line,
    )
