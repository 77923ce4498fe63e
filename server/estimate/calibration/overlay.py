"""The calibration overlay: fitted per-target costs that replace the built-in cost of the instructions they
cover (``price``), consulted by the scheduler where it prices an instruction. Its keys (``compute_key``,
``dma_row``) and features (``elements``) are the ones the fit uses, so both sides describe an instruction alike.
"""

from __future__ import annotations

from nki_studio.estimate.cost import free_size
from nki_studio.protocol.calibration import CalibrationTable
from nki_studio.sim.trace import TraceEvent

ComputeKey = tuple[str, str, str]  # (engine, opcode, dtype)

# Descriptor-row buckets (bytes) the DMA cost is fitted per: under the 512 B of DMA_DESCRIPTOR_OVERHEAD, under
# the 2 KiB recommended minimum, under 8 KiB, and above (hardware.md §3 [BW]; the edges are inferred).
DMA_ROW_EDGES = (0, 512, 2048, 8192)


def opcode(event: TraceEvent) -> str:
    """The instruction's ISA name without its module (``nisa.tensor_tensor`` -> ``tensor_tensor``)."""
    return event.op.rsplit(".", 1)[-1]


def dtype(event: TraceEvent) -> str:
    """The first input operand's dtype (the first operand's when none is an input), "" without operands."""
    inputs = [o for o in event.operands if not o.role.startswith(("dst", "out", "reduce_res"))]
    chosen = inputs or list(event.operands)
    return chosen[0].dtype if chosen else ""


def compute_key(event: TraceEvent) -> ComputeKey:
    """The key of a compute instruction's fitted cost."""
    return event.engine, opcode(event), dtype(event)


def elements(event: TraceEvent) -> int:
    """N of a fitted compute cost: the largest per-partition element count among the on-chip operands."""
    return free_size(event)


def moved_bytes(event: TraceEvent) -> int:
    """Bytes a DMA transfer moves: the larger of what it reads and writes."""
    return max(sum(event.bytes_read.values()), sum(event.bytes_written.values()))


def dma_row(event: TraceEvent) -> int:
    """The bucket (index into ``DMA_ROW_EDGES``) of a transfer's descriptor row: its smallest contiguous row."""
    rows = [o.row_bytes for o in event.operands if o.row_bytes > 0]
    row = min(rows) if rows else 0
    return max(i for i, edge in enumerate(DMA_ROW_EDGES) if row >= edge)


class Overlay:
    """A target's calibration table, indexed for pricing."""

    def __init__(self, table: CalibrationTable) -> None:
        self.table = table
        self._compute = {
            (c["engine"], c["opcode"], c["dtype"]): (c["fixed_ns"], c["per_element_ns"], c["builtin_scale"])
            for c in table["compute"]
        }
        self._dma = {
            DMA_ROW_EDGES.index(d["row_min"]): (d["fixed_ns"], d["ns_per_byte"]) for d in table["dma"]
        }

    def price(self, event: TraceEvent, builtin_ns: float, dma_engines: int) -> float:
        """``event``'s duration: the fitted cost of its key, else its engine's scale of ``builtin_ns``, else
        ``builtin_ns``. A DMA transfer's is its time on its ``dma_engines`` engines (latency not included)."""
        if event.engine == "dma":
            fitted = self._dma.get(dma_row(event))
            if fitted is None:
                return builtin_ns
            return fitted[0] + fitted[1] * moved_bytes(event) / max(dma_engines, 1)
        cost = self._compute.get(compute_key(event))
        if cost is not None:
            return cost[0] + cost[1] * elements(event) + cost[2] * builtin_ns
        return builtin_ns * self.table["engine_scale"].get(event.engine, 1.0)
