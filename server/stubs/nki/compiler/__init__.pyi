"""``nki.compiler``: per-kernel compiler configuration, passed to ``@nki.jit(compile_config=..., specialization_config=...)``.

0.7 only. Stubs written by nki-studio from its reference notes (``AddressRotation`` members: the ``latest`` API page).
"""

from enum import Enum

class AddressRotation(Enum):
    """Whether the backend may rotate a memory location's address for a better layout."""

    AUTO = ...
    """Decide per memory location: fixed addresses are not rotated, backend-allocated ones may be."""
    ENABLE = ...
    DISABLE = ...

class CompileConfig:
    """Compiler switches of one kernel (0.7)."""

    def __init__(
        self,
        *,
        address_rotation: AddressRotation = ...,
        non_ssa_legalization: bool = ...,
        dead_code_elim: bool = ...,
        barrier_check: bool = ...,
        prefetch_auto: bool = ...,
        nki_alloc_fallback: bool = ...,
    ) -> None: ...

    address_rotation: AddressRotation
    non_ssa_legalization: bool
    dead_code_elim: bool
    barrier_check: bool
    """Check LNC core barriers."""
    prefetch_auto: bool
    """Automatic DMA prefetch ring in SBUF (off by default; exclusive with ``NKI_PREFETCH_RING_SIZE``)."""
    nki_alloc_fallback: bool
    """On by default: fall back to neuronx-cc allocation when NKI's allocator fails; False surfaces SBUF/PSUM OOM."""

class SpecializationConfig:
    """Specialisation switches of one kernel (0.7)."""

    def __init__(self, *, allow_nested_config_override: bool = ...) -> None: ...

    allow_nested_config_override: bool
    """A nested ``@nki.jit`` kernel with a different config warns and is inlined under the top-level config."""
