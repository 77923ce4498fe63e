"""Trace records: one per simulated ISA operation. The simulator writes them; the cost model reads them
(and sums the FLOPs the profile's roofline takes as input). This module is the contract between the two, so it holds data only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import IO

# Engines, as ``nisa.engine`` names them (isa.md §0.9) plus "sync".
ENGINES = ("tensor", "vector", "scalar", "gpsimd", "dma", "sync")

# Memory regions used as keys of ``TraceEvent.bytes_read`` / ``bytes_written``.
REGIONS = ("hbm", "sbuf", "psum")


@dataclass(frozen=True, slots=True)
class Operand:
    """One tensor operand of an instruction as the hardware sees it, with the bytes it touches.

    The footprint is a bounding box in the operand's storage (one allocation): on chip, partitions
    ``[part_start, part_end)`` x bytes ``[byte_start, byte_end)`` of each partition; in HBM, bytes
    ``[byte_start, byte_end)`` of the flat buffer (partitions 0..0). ``storage`` numbers allocations
    within one simulation (-1: unknown); the estimated timeline's dependencies are overlaps of footprints.
    """

    role: str  # the keyword it was passed as: "dst", "src", "data1", "stationary", ...
    shape: tuple[int, ...]
    dtype: str  # numpy/ml_dtypes name: "float32", "bfloat16", "float8_e4m3fn", ...
    buffer: str  # "hbm" (incl. shared/private hbm), "sbuf" or "psum"
    storage: int = -1
    part_start: int = 0
    part_end: int = 0
    byte_start: int = 0
    byte_end: int = 0
    row_bytes: int = 0  # longest contiguous run of the innermost dims (a DMA descriptor's row)
    name: str = ""  # the storage's tensor name (kernel argument name for inputs/outputs)
    # HBM: bytes per row of the storage's last dimension when the view is a rectangle of those rows (rows x a
    # byte range within a row; the estimate's footprint then excludes the other columns), else 0
    row_pitch: int = 0
    # on chip: bytes per partition of one block of a legacy block-dimension tensor (``nl.par_dim`` not first),
    # whose blocks the compiler allocates apart, each live on its own; 0 when the storage is one tile
    block_bytes: int = 0


@dataclass(frozen=True)
class TraceEvent:
    """One executed instruction, attributed to the kernel source line that issued it."""

    seq: int  # 0-based issue order within one simulation
    op: str  # public name, e.g. "nisa.nc_matmul", "nl.load"
    engine: str  # one of ENGINES
    file: str  # absolute path of the innermost user-code frame
    line: int  # 1-based line in ``file``
    stack: tuple[str, ...] = ()  # outer user frames, outermost first, each "path:line:function"
    operands: tuple[Operand, ...] = ()
    partitions: int = 0  # partitions spanned by the instruction's output (or input for stores)
    free_elements: int = 0  # elements per partition processed (the "N" of the cost formulas)
    bytes_read: dict[str, int] = field(default_factory=dict)  # region -> bytes
    bytes_written: dict[str, int] = field(default_factory=dict)
    flops: int = 0  # floating-point operations (a multiply-add counts 2)
    core: int = 0  # logical core (program_id) under LNC=2
    rank: int = 0  # collective rank (a separate device) when the spec runs several
    # the activation function of an activation instruction ("exp", "rsqrt"); "" for every other instruction.
    # The estimate charges an activation-table load where it changes on the Scalar engine.
    function: str = ""
    # the NKI version the simulator ran the kernel as (``str(NkiVersion)``: "legacy", "0.7"), "" when not
    # recorded: a record of its own, so the version survives a JSON Lines round trip (the estimate models the
    # legacy compiler's transformations, ``estimate.merged_loads``)
    nki_version: str = ""

    def to_json(self) -> str:
        """One JSON Lines record."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @staticmethod
    def from_json(text: str) -> TraceEvent:
        """Parse a record written by ``to_json``."""
        raw = json.loads(text)
        raw["stack"] = tuple(raw.get("stack", ()))
        raw["operands"] = tuple(Operand(**{**o, "shape": tuple(o["shape"])}) for o in raw.get("operands", ()))
        return TraceEvent(**raw)


def write_jsonl(events: Iterable[TraceEvent], stream: IO[str]) -> None:
    """Write events as JSON Lines."""
    for event in events:
        stream.write(event.to_json())
        stream.write("\n")


def read_jsonl(stream: IO[str]) -> Iterator[TraceEvent]:
    """Read events written by ``write_jsonl``; blank lines are skipped."""
    for text in stream:
        if text.strip():
            yield TraceEvent.from_json(text)
