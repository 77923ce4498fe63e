"""The one entry of the fast path (``lsp.fastpath``): the early phase, then the streams and the hand-over for
the full server."""

from __future__ import annotations

import os
from typing import Any, BinaryIO, NamedTuple

from nki_studio.lsp.fastpath import early_phase
from nki_studio.lsp.fastpath.handover import Handover
from nki_studio.lsp.fastpath.streams import AlreadySentFilter, ReplayReader


class FullServerIO(NamedTuple):
    """What the full server starts with: its input and output, and what was already done (None: nothing)."""

    input: Any  # pygls reads with readline/read(n)
    output: Any  # and writes whole messages
    handover: Handover | None


def supported() -> bool:
    """Whether this platform can wait on a pipe with a timeout (``select`` on pipes: POSIX)."""
    return os.name == "posix"


def fast_start(stdin: BinaryIO, stdout: BinaryIO) -> FullServerIO:
    """Run the early phase on the client's streams when supported; the streams for the full server after it."""
    if not supported():
        return FullServerIO(stdin, stdout, None)
    early = early_phase.run(stdin.fileno(), stdout)
    output: Any = stdout if early.initialize_id is None else AlreadySentFilter(stdout, early)
    return FullServerIO(ReplayReader(early.consumed, stdin), output, early.handover)
