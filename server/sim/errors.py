"""Exceptions raised by the embedded simulator, each naming the kernel source line that caused it.

Every error carries the innermost *user* frame (the kernel file, or a helper module the kernel calls)
and the user call stack, never the simulator's own frames, so editors can point at the kernel line.
"""

from __future__ import annotations

from nki_studio.sim.userframe import SourceLocation, user_location


class SimulationError(Exception):
    """A kernel did something the simulated hardware or API rejects.

    ``location`` is found from the calling frames when not given: the innermost frame outside the
    simulator. ``str(err)`` is ``"<file>:<line>: <message>"``.
    """

    def __init__(self, message: str, *, location: SourceLocation | None = None) -> None:
        self.message = message
        self.location = location if location is not None else user_location()
        super().__init__(message)

    @property
    def file(self) -> str:
        """Absolute path of the user file, or "" when no user frame was on the stack."""
        return self.location.file

    @property
    def line(self) -> int:
        """1-based line in ``file`` (0 when unknown)."""
        return self.location.line

    @property
    def stack(self) -> tuple[str, ...]:
        """Outer user frames, outermost first, each ``"path:line:function"``."""
        return self.location.stack

    def __str__(self) -> str:
        if self.location.file:
            return f"{self.location.file}:{self.location.line}: {self.message}"
        return self.message


class NotImplementedInSimulator(SimulationError):
    """An API that exists in NKI but not (yet) in the embedded simulator; never a silent wrong result."""

    def __init__(self, api: str, detail: str = "", *, location: SourceLocation | None = None) -> None:
        loc = location if location is not None else user_location()
        where = f" ({loc.file}:{loc.line})" if loc.file else ""
        extra = f": {detail}" if detail else ""
        self.api = api
        super().__init__(f"not implemented in the embedded simulator: {api}{where}{extra}", location=loc)

    def __str__(self) -> str:  # the message already names file:line
        return self.message


class HardwareLimitError(SimulationError):
    """A hardware constraint is violated: partitions, tile sizes, buffers, dtypes, capacity.

    Plays the role of ``nisa.NkiValidationError`` (isa.md §0.10); ``nisa`` exports this class under that name.
    """


class UninitializedReadError(SimulationError):
    """Strict mode: an instruction read memory that no instruction ever wrote."""


class ResourceLimitError(SimulationError):
    """A caller-set bound was exceeded: allocation budget, instruction budget or deadline."""


class SimulationTimeout(ResourceLimitError):
    """The caller's deadline passed while the kernel was running."""


class KernelError(SimulationError):
    """An exception raised by user kernel code itself, re-raised with the kernel's file:line.

    ``original`` is the exception the kernel raised (its type name starts the message).
    """

    def __init__(self, original: BaseException, *, location: SourceLocation) -> None:
        self.original = original
        super().__init__(f"{type(original).__name__}: {original}", location=location)


class MissingName(NotImplementedInSimulator, AttributeError):
    """A module attribute the embedded simulator does not have.

    Also an ``AttributeError``, so ``hasattr``, ``getattr(m, name, default)`` and ``import a.b.c as x`` (which
    walks module attributes and falls back to ``sys.modules`` on AttributeError) behave as for any module.
    """
