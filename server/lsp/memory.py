"""Giving memory back to the system after documents close.

Closing a document drops its caches (each feature's ``close`` listener), but CPython keeps freed objects in
its own arenas and glibc keeps freed heap pages, so the resident size would stay where the busiest moment
left it. Once closes have settled, one full garbage collection and ``malloc_trim(0)`` (glibc only; a no-op
elsewhere) return what is free. CPython's own small-object arenas go back only when wholly empty, so after a
storm most of the growth stays with the default allocator (fragmentation, not live objects); with
``PYTHONMALLOC=malloc`` in the server's environment it goes back. The extension starts the server that way
(lint, which that allocator slows by ~15%, runs in the lint worker, which keeps the default: cli/serve.py);
docs/language-server.md has the measurements.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)


def _malloc_trim() -> Callable[[], object] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim  # glibc; musl has none
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    return lambda: trim(0)


_TRIM = _malloc_trim()


def release_memory() -> None:
    """Collect garbage and hand free heap pages back to the system (run off the event loop)."""
    collected = gc.collect()
    if _TRIM is not None:
        _TRIM()
    log.debug("memory released after document closes (%d objects collected)", collected)
