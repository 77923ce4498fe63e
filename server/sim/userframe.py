"""Find the kernel source line behind the current simulator call.

A frame is *internal* when its file lives in the ``nki_studio`` package, the Python standard library or
site-packages (numpy, ml_dtypes...). The innermost non-internal frame is the user's line; the user frames
outside it (up to the point where the simulator called the kernel) form the call stack into helpers.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../server (nki_studio)
_LIB_DIRS = tuple(
    {
        os.path.abspath(p)
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (p := sysconfig.get_paths().get(key))
    }
)
# The simulator's frames a kernel's plain call of another kernel passes through (``transparent``): the user's call
# stack goes on through them to the calling kernel.
_TRANSPARENT: set[types.CodeType] = set()
_internal_cache: dict[str, bool] = {}
_abspath_cache: dict[str, str] = {}  # a code object's file name -> its absolute path (asked per allocation)


@dataclass(frozen=True)
class SourceLocation:
    """A user source position plus the user frames around it (outermost first, "path:line:function")."""

    file: str = ""
    line: int = 0
    stack: tuple[str, ...] = ()


def is_internal(filename: str) -> bool:
    """True for frames of the simulator itself, the standard library or installed packages."""
    cached = _internal_cache.get(filename)
    if cached is None:
        path = _abspath(filename)
        cached = (
            filename.startswith("<frozen")
            or path.startswith(_PACKAGE_DIR + os.sep)
            or any(path.startswith(d + os.sep) for d in _LIB_DIRS)
        )
        _internal_cache[filename] = cached
    return cached


def transparent(function: _F) -> _F:
    """Mark ``function`` (where a kernel calling a kernel calls it plainly) as a frame the user's call stack goes
    through: the sub-kernel's instructions then name the calling kernel's line too."""
    _TRANSPARENT.add(function.__code__)
    return function


def _abspath(filename: str) -> str:
    """``os.path.abspath``, remembered for absolute names (a relative one depends on the working directory)."""
    path = _abspath_cache.get(filename)
    if path is None:
        path = os.path.abspath(filename)
        if os.path.isabs(filename):
            _abspath_cache[filename] = path
    return path


def user_location(frame: types.FrameType | None = None) -> SourceLocation:
    """Location of the innermost user frame at or outside ``frame`` (default: the caller's frames)."""
    f: types.FrameType | None = frame if frame is not None else sys._getframe(1)
    while f is not None and is_internal(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return SourceLocation()
    inner = f
    outer: list[str] = []
    f = f.f_back
    # Walk out through the user's helper frames (and a kernel's plain call of a kernel); stop at the first other
    # internal frame (the simulator's call into the kernel), so test runners and drivers around the simulation
    # are not reported.
    while f is not None and (f.f_code in _TRANSPARENT or not is_internal(f.f_code.co_filename)):
        if f.f_code not in _TRANSPARENT:
            outer.append(f"{_abspath(f.f_code.co_filename)}:{f.f_lineno}:{f.f_code.co_name}")
        f = f.f_back
    outer.reverse()
    return SourceLocation(_abspath(inner.f_code.co_filename), inner.f_lineno, tuple(outer))


def traceback_location(tb: types.TracebackType | None) -> SourceLocation:
    """Location of the innermost user frame of an exception's traceback (kernel line of a crash)."""
    last_user: types.TracebackType | None = None
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            last_user = tb
        tb = tb.tb_next
    if last_user is None:
        return SourceLocation()
    loc = user_location(last_user.tb_frame)
    return SourceLocation(loc.file, last_user.tb_lineno, loc.stack)


def shorten_stack(stack: tuple[str, ...] | list[str], max_cycle: int = 8, min_repeats: int = 3) -> list[str]:
    """A call chain with each run of a repeating cycle (an infinite recursion) kept as its first and last
    occurrence, and one entry between them saying how many calls were left out.

    Entries stay ``path:line:function`` (the elision note is appended to the function of the repeated
    frame), so every consumer still parses them."""
    frames = list(stack)
    out: list[str] = []
    i = 0
    while i < len(frames):
        best_len, best_reps = 0, 1
        for length in range(1, max_cycle + 1):
            block = frames[i : i + length]
            if len(block) < length:
                break
            reps = 1
            while frames[i + reps * length : i + (reps + 1) * length] == block:
                reps += 1
            if reps >= min_repeats and reps * length > best_reps * best_len:
                best_len, best_reps = length, reps
        if not best_len:
            out.append(frames[i])
            i += 1
            continue
        block = frames[i : i + best_len]
        elided = (best_reps - 2) * best_len
        path, line, function = block[0].rsplit(":", 2)
        out.extend(block)
        note = f"the {best_len} call(s) above repeat {best_reps} times; {elided} left out"
        out.append(f"{path}:{line}:{function} [{note}]")
        out.extend(block[1:])
        i += best_reps * best_len
    return out
