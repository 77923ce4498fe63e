"""The simulation limits every sub-command that runs kernels takes (``simulate``, ``mcp``): ``--timeout`` and
``--memory-mb``, the settings ``simulationTimeout`` and ``simulationMemoryLimitMb`` given on the command line;
unset, the declared default applies (``service.settings``)."""

from __future__ import annotations

import argparse

from nki_studio.settings.declaration import default


def add_limits(p: argparse.ArgumentParser) -> None:
    """Add ``--timeout`` and ``--memory-mb`` (None when not given)."""
    p.add_argument(
        "--timeout",
        type=float,
        help=f"simulation wall-clock limit, seconds (default {default('simulationTimeout')}: simulationTimeout)",
    )
    p.add_argument(
        "--memory-mb",
        type=int,
        help="simulation worker memory limit, MiB "
        f"(default {default('simulationMemoryLimitMb')}: simulationMemoryLimitMb)",
    )
