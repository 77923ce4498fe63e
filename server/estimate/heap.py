"""Large NumPy temporaries from the C heap while the estimate runs (glibc only; elsewhere nothing changes).

Why: the plan of a 1M-instruction trace makes hundreds of temporary arrays of a few to 30 MB (columns of 3M
operand rows). glibc serves each block above its mmap threshold with a fresh ``mmap`` and returns it with
``munmap`` on free, so every temporary is page-faulted in again (and zeroed by the kernel): measured about a
third of the plan's time at 1M instructions. With the threshold at glibc's own maximum (32 MiB on 64-bit,
``DEFAULT_MMAP_THRESHOLD_MAX``; the value its dynamic threshold reaches after freeing such a block), set once
by the simulation job process (``prefer_heap_for_large_arrays``, before the simulator builds the trace's columns,
which then share the heap),
and a high trim threshold while an estimate runs, freed blocks are reused instead. On exit the trim threshold
goes back down to twice the mmap threshold (what glibc's dynamic rule sets) and ``malloc_trim`` returns the
free memory to the system, so the process does not keep it. The mmap threshold stays: glibc cannot be told to
resume its dynamic adjustment (setting any threshold ends it, mallopt(3)).
Timing facts above are measured (benchmarks/estimate_bench.py); the glibc behaviour is from mallopt(3).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_M_TRIM_THRESHOLD = -1  # mallopt(3) parameter numbers (glibc malloc.h)
_M_MMAP_THRESHOLD = -3
_MMAP_MAX = 32 * 1024 * 1024  # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit glibc
_TRIM_DURING = 1 << 30  # keep up to 1 GiB of freed heap for reuse while the estimate runs


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    # musl and other C libraries have no mallopt/malloc_trim: leave their allocator alone
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()
_raised = False


def prefer_heap_for_large_arrays() -> None:
    """Raise glibc's mmap threshold for the rest of the process (once; see the module docstring). Called by the
    simulation job process before the simulator builds the trace, so the trace's columns come from the heap
    too; not at import, so no other process that merely imports the estimate (the language server, the CLI)
    has its allocator changed."""
    global _raised
    if _LIBC is not None and not _raised:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, _MMAP_MAX)
        _raised = True


# Columns below this size make no temporary near the mmap threshold: nothing to keep, and nothing to trim
# afterwards (``malloc_trim`` walks the whole heap, measured ~0.3 ms after a small kernel's simulation, about a
# tenth of its estimate).
LARGE_BYTES = 1 << 20


@contextmanager
def heap_for_large_arrays(nbytes: int) -> Iterator[None]:
    """Serve large temporaries from the heap for the duration (see the module docstring), for work on columns
    of ``nbytes`` (``CompactTrace.nbytes``): below ``LARGE_BYTES`` the allocator is left as it is."""
    if _LIBC is None or not _raised or nbytes < LARGE_BYTES:
        yield
        return
    _LIBC.mallopt(_M_TRIM_THRESHOLD, _TRIM_DURING)
    try:
        yield
    finally:
        _LIBC.mallopt(_M_TRIM_THRESHOLD, 2 * _MMAP_MAX)
        _LIBC.malloc_trim(0)
