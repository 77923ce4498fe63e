"""When a cached reading of a file is still current: its modification time in nanoseconds and its size.

The mtime alone misses a file rewritten within one tick of the file system's clock (a few milliseconds on Linux,
whole seconds on some file systems); the size catches most of those rewrites. Every cache of a file's contents
keys on this stamp.
"""

from __future__ import annotations

import os

Stamp = tuple[int, int]
MISSING: Stamp = (-1, -1)  # a file that cannot be stat'ed


def file_stamp(path: str) -> Stamp:
    """(mtime in ns, size) of ``path``; raises OSError when it cannot be stat'ed."""
    stat = os.stat(path)
    return stat.st_mtime_ns, stat.st_size


def file_stamp_or_missing(path: str) -> Stamp:
    """``file_stamp``, or ``MISSING`` when the file cannot be stat'ed."""
    try:
        return file_stamp(path)
    except OSError:
        return MISSING
