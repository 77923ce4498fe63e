"""``neuronxcc.nki.compiler`` (``ncc``): direct allocation and compiler directives of the legacy NKI API
(Neuron <= 2.26) [v2.26.1 nki.compiler.* pages; deprecations.md §E]. Removed with the ``nki`` namespace: NKI 0.7
places tensors with ``nl.ndarray(..., address=(partition_offset, byte_offset))`` and configures the compiler with
``nki.compiler.CompileConfig``. Stubs written by nki-studio.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from nki.language import MemoryRegion

_F = TypeVar("_F", bound=Callable[..., Any])

class _Allocator:
    """A memory's allocators: the result is the ``buffer=`` of an ``nl.ndarray`` with block dimensions."""

    def mod_alloc(
        self,
        *,
        base_addr: int | None = None,
        base_bank: int | None = None,
        base_partition: int = 0,
        num_par_tiles: tuple[int, ...] = (),
        num_free_tiles: tuple[int, ...] = (),
        num_bank_tiles: tuple[int, ...] = (),
    ) -> MemoryRegion:
        """Modular allocation: block ``b`` of the tensor lives in physical tile ``b % n`` of the ``n`` given per
        block dimension (``num_free_tiles=`` on SBUF, ``num_bank_tiles=`` on PSUM), from ``base_addr`` bytes
        [v2.26.1 nki.compiler.sbuf.mod_alloc, nki.compiler.psum.mod_alloc]."""

    def auto_alloc(self) -> MemoryRegion:
        """Let the compiler place the tensor [v2.26.1 nki.compiler.sbuf.auto_alloc]."""

    def alloc(self, func: Callable[..., Any]) -> MemoryRegion:
        """Place the tensor with a function from block indices to addresses [v2.26.1 nki.compiler.sbuf.alloc]."""

sbuf: _Allocator
"""SBUF allocators (``ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))``)."""
psum: _Allocator
"""PSUM allocators (``ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,))``)."""

def skip_middle_end_transformations(func: _F) -> _F:
    """Decorator: compile the kernel without the compiler's middle-end loop transformations
    [v2.26.1 nki.compiler.skip_middle_end_transformations]."""

def enable_stack_allocator(func: _F | None = None, **kwargs: Any) -> _F:
    """Decorator: allocate the kernel's tensors with the stack allocator (inferred from its use in nki-samples)."""

def force_auto_alloc(func: _F | None = None, **kwargs: Any) -> _F:
    """Decorator: let the compiler allocate every tensor, ignoring direct allocations (inferred from its name and
    use in nki-samples)."""
