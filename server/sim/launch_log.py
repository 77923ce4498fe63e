"""What a drop-in kernel launch leaves besides its output: the ``nki.compiler`` options the simulation did not
honour (the ``ignoredConfig`` of a ``simulate()`` result) and the simulation's warnings.

A drop-in launch (``kernel(...)``, ``kernel[lnc](...)``, ``nki.simulate(kernel)(...)``, nki-library's
``cpu_simulate``) returns only the kernel's output, as AWS's simulator does, so these would be lost. Each
ignored option is raised as an :class:`IgnoredConfigWarning` at the kernel's ``def`` line (pytest lists it in
its warnings summary; a script sees it on stderr; a blanket ``-W error`` does not turn it into a failure, a
filter naming the category does), and every launch is offered to the active
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


def _only_generic_error(message: str) -> bool:
    """Whether the filter that would apply to an ``IgnoredConfigWarning`` is an "error" one for a broader
    category (``Warning``, ``UserWarning``) rather than for this category itself."""
    for action, text, category, _module, _lineno in warnings.filters:
        if not issubclass(IgnoredConfigWarning, category) or (text is not None and not text.match(message)):
            continue
        return action == "error" and category is not IgnoredConfigWarning
    return False


def publish(func: Callable[..., Any], ignored_config: list[str], sim_warnings: list[str]) -> None:
    """Report one launch: a warning per ignored option at the kernel's ``def`` line, and a note to recorders."""
    code = getattr(func, "__code__", None)
    filename = code.co_filename if code is not None else "<kernel>"
    lineno = code.co_firstlineno if code is not None else 0
    for line in ignored_config:
        message = f"nki-studio simulator: {line}"
        with warnings.catch_warnings():
            if _only_generic_error(message):
                # A blanket "error" filter (pytest's ``filterwarnings = error``) must not fail a kernel the
                # toolchain compiles; only a filter naming this category makes it an error.
                warnings.simplefilter("always", IgnoredConfigWarning)
            warnings.warn_explicit(
                message, IgnoredConfigWarning, filename, lineno, module=getattr(func, "__module__", None)
            )
    if not ignored_config and not sim_warnings:
        return
    note = LaunchNote(getattr(func, "__name__", "kernel"), tuple(ignored_config), tuple(sim_warnings))
    with _lock:
        for notes in _recorders:
            notes.append(note)


__all__ = ["IgnoredConfigWarning", "LaunchNote", "publish", "recording"]
