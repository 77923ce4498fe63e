"""What a drop-in kernel launch leaves besides its output: the ``nki.compiler`` options the simulation did not
honour (the ``ignoredConfig`` of a ``simulate()`` result) and the simulation's warnings.

A drop-in launch (``kernel(...)``, ``kernel[lnc](...)``, ``nki.simulate(kernel)(...)``, nki-library's
``cpu_simulate``) returns only the kernel's output, as AWS's simulator does, so these would be lost. Each
ignored option is raised as an :class:`IgnoredConfigWarning` at the kernel's ``def`` line (pytest lists it in
its warnings summary; a script sees it on stderr; a blanket ``-W error`` does not turn it into a failure, a
filter naming the category does), and every launch is offered to the active
:func:`recording` blocks (the pytest plugin adds them to the test's report).

Before a launch runs, its arguments are offered to the active :func:`watching_inputs` callbacks (what a test
calls a kernel with: the inputs of a spec, e.g. for ``migrate``'s proof).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
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


@dataclass(frozen=True)
class LaunchInputs:
    """What one drop-in launch passes its kernel: per parameter, its value as a simulate spec writes it
    (``float32[128,512]`` for an array, ``4``, ``0.5``, ``true``, ``none``, ``(3,4)`` for a tuple of integers,
    ``Config(size=2)`` for a dataclass instance of the kernel's module); other values (strings ...) are left
    out."""

    kernel: str
    file: str
    arguments: tuple[tuple[str, str], ...]
    grid: tuple[
        int, ...
    ] = ()  # a legacy launch grid's extents (``kernel[2, 3](...)``), none for other launches

    def spec(self) -> str:
        """The arguments as spec fields (``a=float32[128,512] n=4``)."""
        return " ".join(f"{name}={value}" for name, value in self.arguments)


_lock = threading.Lock()
_recorders: list[list[LaunchNote]] = []
_watchers: list[Callable[[LaunchInputs], None]] = []


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


@contextmanager
def watching_inputs(callback: Callable[[LaunchInputs], None]) -> Iterator[None]:
    """Call ``callback`` with each drop-in launch's inputs (any thread) before it runs; an exception it raises
    stops the launch (a caller that wants the inputs only)."""
    with _lock:
        _watchers.append(callback)
    try:
        yield
    finally:
        with _lock:
            _watchers.remove(callback)


def _scalar(value: Any) -> str | None:
    """A number, true/false or none as a spec writes it (``verify.spec``'s scalars), or None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (int, float)):
        return str(value)
    return None


def _instance(value: Any, module: str) -> str | None:
    """A dataclass instance as a spec writes it, ``Config(size=2,flag=true)`` (the fields whose values differ
    from their defaults), when its class is what its name means in the kernel's ``module`` (where the proof
    builds it again) and those values are scalars; else None."""
    cls = type(value)
    if not dataclasses.is_dataclass(value) or getattr(sys.modules.get(module), cls.__name__, None) is not cls:
        return None
    fields = []
    for f in dataclasses.fields(value):
        given = getattr(value, f.name)
        if not f.init or (f.default is not dataclasses.MISSING and given == f.default):
            continue
        text = _scalar(given)
        if text is None:
            return None
        fields.append(f"{f.name}={text}")
    return f"{cls.__name__}({','.join(fields)})"


def _described(value: Any, module: str = "") -> str | None:
    """``value`` as a spec writes it, or None (not an array, a number, none, a tuple of integers or a
    dataclass instance of the kernel's ``module`` with scalar fields)."""
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, tuple) and value and all(type(v) is int for v in value):  # a shape argument
        return str(value).replace(" ", "")  # one spec token: (3,4)
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and shape and dtype is not None:  # NumPy arrays, torch tensors
        name = str(dtype).removeprefix("torch.")
        return f"{name}[{','.join(str(int(d)) for d in shape)}]"
    return _instance(value, module)


def offer_inputs(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Offer a launch's arguments to the watchers (nothing to do without one)."""
    with _lock:
        watchers = list(_watchers)
    if not watchers:
        return
    try:
        bound = inspect.signature(func).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # the launch itself reports a bad call
        return
    kernel = inspect.unwrap(func)  # a launched grid wraps the kernel
    module = getattr(kernel, "__module__", "")
    described = ((name, _described(value, module)) for name, value in bound.items())
    code = getattr(kernel, "__code__", None)
    inputs = LaunchInputs(
        getattr(func, "__name__", "kernel"),
        code.co_filename if code is not None else "",
        tuple((name, text) for name, text in described if text is not None),
        tuple(int(d) for d in getattr(func, "dims", ())),  # sim.legacy.spmd.GridLaunch holds its extents
    )
    for callback in watchers:
        callback(inputs)


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


__all__ = [
    "IgnoredConfigWarning",
    "LaunchInputs",
    "LaunchNote",
    "offer_inputs",
    "publish",
    "recording",
    "watching_inputs",
]
