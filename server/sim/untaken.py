"""The untaken callback of an ``nl.if_else`` with a runtime condition: traced and validated, never executed.

The ``latest`` if_else page: "A Python bool or int condition is resolved at compile time. Only the selected
callback is called, and no conditional control flow is emitted." By contrast, a runtime (NkiScalar)
condition emits a branch, so tracing calls both callbacks *(inferred: the page does not say it in so many
words)*: both run their Python side effects and the compiler checks both callbacks' instructions.

So the simulator runs the untaken callback too, in this mode. Every instruction checks its operands
(shapes, dtypes, buffers, partitions, free sizes, engines) before it announces itself with
``context.issue``; in this mode ``issue`` raises ``context.UntakenBranch``, and the decorators below, at the
instruction's entry, turn that into the instruction's normal result. What follows ``issue`` (reads with
their run-time checks, writes, registers, the trace event, the instruction count) never happens. Tensors the
callback allocates are allocated as usual (tracing allocates them too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from nki_studio.sim import context
from nki_studio.sim.errors import SimulationError

F = TypeVar("F", bound=Callable[..., Any])

_NOTE = "in the untaken branch of nl.if_else: the compiler traces both callbacks, so it reports this too"


@contextmanager
def tracing_only() -> Iterator[None]:
    """Run the block as an untaken ``nl.if_else`` callback: instructions are validated, not executed."""
    core = context.current_core()
    core.untaken += 1
    try:
        yield
    except context.UntakenBranch as stopped:
        # An instruction without one of the decorators below: a simulator bug, never a kernel's.
        raise SimulationError(
            f"internal: {stopped.op} stopped in an untaken nl.if_else branch but has no sim.untaken entry"
        ) from None
    except Exception as exc:
        _mark(exc)
        raise
    finally:
        core.untaken -= 1


def _mark(exc: Exception) -> None:
    """Say in a simulator error that its instruction sits in an untaken branch (once, at the innermost)."""
    if isinstance(exc, SimulationError) and _NOTE not in exc.message:
        exc.message = f"{exc.message} ({_NOTE})"
        exc.args = (exc.message,)


def _returning(result: Callable[[context.UntakenBranch, dict[str, Any]], object]) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except context.UntakenBranch as stopped:
                return result(stopped, kwargs)

        return run  # type: ignore[return-value]

    return decorate


def _handle(stopped: context.UntakenBranch, kwargs: dict[str, Any]) -> object:
    from nki_studio.sim.isa.enums import NkiInstruction  # lazily: nki_studio.sim.isa imports this module

    return NkiInstruction(stopped.op, kwargs.get("name"))


instruction = _returning(_handle)
"""For an ``nisa``/collective instruction: untaken, it returns its ``NkiInstruction`` handle."""

tile_instruction = _returning(lambda stopped, _: stopped.writes["dst"])
"""For an ``nl`` operation returning the new tile it writes as ``dst``: untaken, it returns that tile
(allocated, never written)."""

effect_instruction = _returning(lambda stopped, _: None)
"""For an instruction that returns nothing (``register_load``, ``nl.random_seed`` ...)."""
