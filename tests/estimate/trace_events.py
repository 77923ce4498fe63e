"""Trace-event builders shared by the estimate-model tests (here and ``tests/verify/test_cost.py``)."""

from __future__ import annotations

from nki_studio.sim.trace import Operand, TraceEvent

TILE = Operand("dst", (128, 512), "float32", "sbuf")
TILE_BYTES = 128 * 512 * 4


def event(
    op: str,
    engine: str,
    operands: tuple[Operand, ...] = (TILE,),
    free: int = 512,
    line: int = 10,
    **kw: object,
) -> TraceEvent:
    """One instruction on all 128 partitions at ``/k.py:line`` (by default writing a [128, 512] FP32 SBUF tile);
    ``kw`` sets the event's other fields (bytes, flops, ...)."""
    return TraceEvent(
        seq=0,
        op=op,
        engine=engine,
        file="/k.py",
        line=line,
        operands=operands,
        partitions=128,
        free_elements=free,
        **kw,
    )  # type: ignore[arg-type]


def load(line: int = 5) -> TraceEvent:
    """A ``dma_copy`` of a [128, 512] FP32 tile from HBM into SBUF."""
    return event(
        "nisa.dma_copy", "dma", line=line, bytes_read={"hbm": TILE_BYTES}, bytes_written={"sbuf": TILE_BYTES}
    )
