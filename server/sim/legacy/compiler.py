"""Legacy ``neuronxcc.nki.compiler`` (``ncc``): direct allocation and compiler directives.

``ncc.sbuf.mod_alloc(base_addr=, num_free_tiles=)``, ``ncc.sbuf.auto_alloc()``, ``ncc.psum.mod_alloc`` ... placed
tensors at fixed addresses [v2.26.1 nki.compiler.sbuf.mod_alloc; deprecations.md E]. The simulator keeps its own
placement (addresses are not simulated) but honours the rotation of a modular allocation: block ``b`` of a
``num_free_tiles=(n,)`` tensor is physical tile ``b % n`` (``indexing.blocked``), which is also what the capacity
counts. ``skip_middle_end_transformations``, ``enable_stack_allocator``
and ``force_auto_alloc`` steer compiler passes and return the kernel unchanged; ``no_reorder()``, a loop iterator's
``directives=`` (``nl.sequential_range(n, directives=ncc.no_reorder())``: keep the loop's instructions in program
order, inferred from its use in the nki-samples attention tutorial), constrains the schedule only, and
``multi_buffer(factor)`` the allocation only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nki_studio.sim.memory import MemoryRegion


@dataclass(frozen=True)
class Rotation:
    """A modular allocation: the region, and per block dimension how many physical tiles the blocks rotate over."""

    region: MemoryRegion
    tiles: tuple[int, ...]


class _Allocators:
    """``ncc.sbuf`` / ``ncc.psum``: the region, with the block rotation of a modular allocation."""

    def __init__(self, region: MemoryRegion) -> None:
        self.region = region

    def mod_alloc(
        self, *args: Any, num_free_tiles: object = (), num_bank_tiles: object = (), **_: Any
    ) -> Any:
        """Modular allocation (``num_free_tiles=`` on SBUF, ``num_bank_tiles=`` on PSUM): addresses are not
        simulated, the rotation of blocks over the tiles is."""
        tiles = num_free_tiles or num_bank_tiles
        return Rotation(self.region, tuple(int(t) for t in tiles)) if tiles else self.region  # type: ignore[attr-defined]

    def auto_alloc(self, *args: Any, **kwargs: Any) -> MemoryRegion:
        """Automatic allocation: the region."""
        return self.region

    alloc = auto_alloc


sbuf = _Allocators(MemoryRegion.sbuf)
psum = _Allocators(MemoryRegion.psum)


def _directive(fn: Callable[..., Any] | None = None, **_: Any) -> Any:
    """A compiler directive decorator: the kernel unchanged (with or without arguments)."""
    return (lambda f: f) if fn is None else fn


skip_middle_end_transformations = enable_stack_allocator = force_auto_alloc = _directive


@dataclass(frozen=True)
class LoopDirective:
    """A loop iterator's ``directives=`` value (a scheduling constraint: the values computed do not change)."""

    name: str


def no_reorder() -> LoopDirective:
    """``ncc.no_reorder()``: the loop's instructions keep program order."""
    return LoopDirective("no_reorder")


def multi_buffer(factor: int = 2) -> LoopDirective:
    """``ncc.multi_buffer(factor)``: the loop's tensors multi-buffered over ``factor`` buffers [aws-neuron-sdk
    nki/compiler ``multi_buffer``], an allocation choice: the values computed do not change (inferred)."""
    return LoopDirective("multi_buffer")


__all__ = [
    "enable_stack_allocator",
    "force_auto_alloc",
    "multi_buffer",
    "no_reorder",
    "psum",
    "sbuf",
    "skip_middle_end_transformations",
]
