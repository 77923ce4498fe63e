"""``nki.isa`` enums and classes (isa.md §0.9, §0.10), plus the instruction handle every call returns."""

from __future__ import annotations

from enum import Enum, IntEnum


class engine(IntEnum):
    """``nisa.engine`` (isa.md §0.9)."""

    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6


# Deprecated aliases still used by nki-library (isa.md §9).
tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


class reduce_cmd(IntEnum):
    """``nisa.reduce_cmd`` accumulator-register commands (isa.md §0.7)."""

    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(IntEnum):
    """``nisa.dge_mode`` DMA descriptor generation (isa.md §0.9, 0.6.0 values)."""

    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(IntEnum):
    """``nisa.oob_mode``: what an out-of-bounds indirect index does."""

    error = 0
    skip = 1


class matmul_perf_mode(str, Enum):
    """``nisa.matmul_perf_mode``; nki-library passes the string values directly."""

    none = "none"
    double_row = "double_row"


class nc_version(IntEnum):
    """``nisa.nc_version``: NeuronCore generation."""

    gen2 = 2
    gen3 = 3
    gen4 = 4


class dma_engine(IntEnum):
    """``nisa.dma_engine`` for ``sendrecv``."""

    dma = 1
    gpsimd_dma = 2


class NkiInstruction:
    """Handle returned by every ISA call; ``depends_on`` adds scheduling edges, which simulation (eager and
    in program order) does not need, so it only returns the handle (isa.md §0.1)."""

    __slots__ = ("name", "op")

    def __init__(self, op: str, name: str | None = None) -> None:
        self.op = op
        self.name = name

    def depends_on(self, *producers: object) -> NkiInstruction:
        """Scheduling edge; a no-op in the eager simulator."""
        return self

    def __repr__(self) -> str:
        return f"NkiInstruction({self.op}{', ' + repr(self.name) if self.name else ''})"
