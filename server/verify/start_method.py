"""How the worker's supervisor starts the job process: ``fork`` or ``spawn`` (a fresh interpreter).

The runner always starts the worker itself as a new interpreter (``python -m nki_studio.verify.worker``);
this choice is about the second step, the supervisor starting the job process that runs the kernel (see
``worker.py``). ``spawn`` is used wherever it is :mod:`multiprocessing`'s default start method, because
forking is unsafe or absent there: Windows (no ``fork``) and macOS (since Python 3.8, system frameworks are
not fork-safe). Elsewhere ``fork`` is used: it costs no second interpreter start-up.

``NKI_STUDIO_SIM_START_METHOD=spawn`` forces ``spawn`` on Linux, so CI runs the simulate tests through the
code path macOS and Windows take (``scripts/test.sh``). ``fork`` cannot be forced where there is none.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Literal

ENV = "NKI_STUDIO_SIM_START_METHOD"
StartMethod = Literal["fork", "spawn"]
# multiprocessing's documented defaults (not imported: it costs ~6 ms in every worker start-up)
_SPAWN_BY_DEFAULT = ("win32", "darwin")


def start_method(
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    has_fork: bool | None = None,
) -> StartMethod:
    """``spawn`` where it is the platform's default, where there is no ``fork``, or when forced by ``ENV``."""
    platform = sys.platform if platform is None else platform
    environ = os.environ if environ is None else environ
    has_fork = hasattr(os, "fork") if has_fork is None else has_fork
    if not has_fork:
        return "spawn"
    forced = environ.get(ENV, "").strip().lower()
    if forced in ("fork", "spawn"):
        return "spawn" if forced == "spawn" else "fork"
    return "spawn" if platform in _SPAWN_BY_DEFAULT else "fork"
