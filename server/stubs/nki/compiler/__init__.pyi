"""``nki.compiler``: per-kernel compiler configuration, passed to ``@nki.jit(compile_config=..., specialization_config=...)``.

0.7 only. Stubs written by nki-studio from its reference notes; the members of ``AddressRotation`` are not documented.
"""

class AddressRotation:
    """Whether the backend may rotate a memory location's address (members undocumented)."""

class CompileConfig:
    """Compiler switches of one kernel (0.7)."""

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

    allow_nested_config_override: bool
    """A nested ``@nki.jit`` kernel with a different config warns and is inlined under the top-level config."""
