"""Legacy ``neuronxcc.nki.compiler`` (``ncc``): direct allocation and compiler directives.

``ncc.sbuf.mod_alloc(base_addr=, num_free_tiles=)``, ``ncc.sbuf.auto_alloc()``, ``ncc.psum.mod_alloc`` ... placed
tensors at fixed addresses [v2.26.1 nki.compiler.sbuf.mod_alloc; deprecations.md E]. The simulator keeps its own
placement: an allocator stands for its memory region, so values are unchanged (a correct kernel never reads a
block another block's rotation overwrote; rotating blocks onto ``num_free_tiles`` buffers is not simulated,
inferred to be value-neutral for such kernels). ``skip_middle_end_transformations``, ``enable_stack_allocator``
and ``force_auto_alloc`` steer compiler passes and return the kernel unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nki_studio.sim.memory import MemoryRegion


class _Allocators:
    """``ncc.sbuf`` / ``ncc.psum``: every allocator returns the region itself."""

    def __init__(self, region: MemoryRegion) -> None:
        self.region = region

    def mod_alloc(self, *args: Any, **kwargs: Any) -> MemoryRegion:
        """Modular allocation at a base address: the region (placement not simulated)."""
        return self.region

    alloc = auto_alloc = mod_alloc


sbuf = _Allocators(MemoryRegion.sbuf)
psum = _Allocators(MemoryRegion.psum)


def _directive(fn: Callable[..., Any] | None = None, **_: Any) -> Any:
    """A compiler directive decorator: the kernel unchanged (with or without arguments)."""
    return (lambda f: f) if fn is None else fn


skip_middle_end_transformations = enable_stack_allocator = force_auto_alloc = _directive

__all__ = ["enable_stack_allocator", "force_auto_alloc", "psum", "sbuf", "skip_middle_end_transformations"]
