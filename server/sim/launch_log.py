"""What a drop-in kernel launch leaves besides its output: the ``nki.compiler`` options the simulation did not
honour (the ``ignoredConfig`` of a ``simulate()`` result) and the simulation's warnings.

A drop-in launch (``kernel(...)``, ``kernel[lnc](...)``, ``nki.simulate(kernel)(...)``, nki-library's
``cpu_simulate``) returns only the kernel's output, as AWS's simulator does, so these would be lost. Each
ignored option is raised as an :class:`IgnoredConfigWarning` at the kernel's ``def`` line (pytest lists it in
its warnings summary; a script sees it on stderr), and every launch is offered to the active
:func:`recording` blocks (the pytest plugin adds them to the test's report).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


class IgnoredConfigWarning(UserWarning):
    """An ``nki.compiler`` option a kernel set that the simulation accepted but does not honour."""


@dataclass(frozen=True)
class LaunchNote:
    """One drop-in launch: the kernel, its ignored configuration lines and the simulation's warnings."""

    kernel: str
    ignored_config: tuple[str, ...]
    warnings: tuple[str, ...]

    def text(self) -> str:
        """The note as report lines (``config:`` / ``warning:`` like the CLI's simulate report)."""
        lines = [f"kernel {self.kernel}:"]
        lines += [f"  config: {c}" for c in self.ignored_config]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


_lock = threading.Lock()
_recorders: list[list[LaunchNote]] = []


@contextmanager
def recording() -> Iterator[list[LaunchNote]]:
    """Collect the notes of the launches made while the block is active (any thread)."""
    notes: list[LaunchNote] = []
    with _lock:
        _recorders.append(notes)
    try:
        yield notes
    finally:
        with _lock:
            _recorders.remove(notes)


def publish(func: Callable[..., Any], ignored_config: list[str], sim_warnings: list[str]) -> None:
    """Report one launch: a warning per ignored option at the kernel's ``def`` line, and a note to recorders."""
    code = getattr(func, "__code__", None)
    for line in ignored_config:
        if code is not None:
            warnings.warn_explicit(
                f"nki-studio simulator: {line}", IgnoredConfigWarning, code.co_filename, code.co_firstlineno
            )
        else:
            warnings.warn(f"nki-studio simulator: {line}", IgnoredConfigWarning, stacklevel=3)
    if not ignored_config and not sim_warnings:
        return
    note = LaunchNote(getattr(func, "__name__", "kernel"), tuple(ignored_config), tuple(sim_warnings))
    with _lock:
        for notes in _recorders:
            notes.append(note)


__all__ = ["IgnoredConfigWarning", "LaunchNote", "publish", "recording"]
