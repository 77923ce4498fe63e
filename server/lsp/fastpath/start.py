"""The one entry of the fast path (``lsp.fastpath``): the early phase, then the streams and the hand-over for
the full server."""

from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO, NamedTuple

from nki_studio.lsp.fastpath import early_phase
from nki_studio.lsp.fastpath.handover import Handover
from nki_studio.lsp.fastpath.streams import AlreadySentFilter, ReplayReader

ENV = "NKI_STUDIO_FASTPATH"  # "0" (or false/off/no): start the full server alone
_OFF = ("0", "false", "off", "no")


class FullServerIO(NamedTuple):
    """What the full server starts with: its input and output, and what was already done (None: nothing)."""

    input: Any  # pygls reads with readline/read(n)
    output: Any  # and writes whole messages
    handover: Handover | None


def supported() -> bool:
    """Whether this platform can wait on a pipe with a timeout (``select`` on pipes: POSIX). On Windows
    ``select`` takes sockets only, so the fast path is skipped there and the full server starts alone (the
    same answers, only later); waiting on a pipe there would need a reader thread that the full server's
    reader then has to take over, which is not worth its risk for one start-up's head start."""
    return os.name == "posix" and sys.platform != "win32"


def enabled() -> bool:
    """Whether the fast path may run: supported and not switched off by ``NKI_STUDIO_FASTPATH``. (The setting
    ``fastStart`` arrives with ``initialize``, so the early phase itself reads it.)"""
    return supported() and os.environ.get(ENV, "").strip().lower() not in _OFF


def fast_start(stdin: BinaryIO, stdout: BinaryIO) -> FullServerIO:
    """Run the early phase on the client's streams when enabled; the streams for the full server after it."""
    if not enabled():
        return FullServerIO(stdin, stdout, None)
    early = early_phase.run(stdin.fileno(), stdout)
    output: Any = stdout if early.initialize_id is None else AlreadySentFilter(stdout, early)
    return FullServerIO(ReplayReader(early.consumed, stdin), output, early.handover)
