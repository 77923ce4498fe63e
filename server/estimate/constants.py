"""Every constant the estimated timeline adds to the per-instruction cost model, with its source.

The cost model's own constants (DMA bandwidth and per-transfer overhead, engine clocks, lane widths, MIN_II,
cycle factors) live in ``nki_studio.model.targets`` (``TargetLimits`` per generation, ``COST_RULES``), each
naming its hardware.md section; this table holds only what the scheduler adds. "inferred" means no
published figure was found: the value is a stated assumption, never fitted to a measurement, except where its
source says it was fitted with leave-one-kernel-out over the calibration suite (the held-out error reported).
docs/cost-model.md reprints this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Constant:
    """One model constant: its value, unit and where it comes from."""

    value: float
    unit: str
    source: str


SEMAPHORE_LATENCY = Constant(
    64.0,
    "ns",
    "inferred: engines hand data over through hardware semaphores (hardware.md §3); no latency is published. "
    "Paid when an instruction waits for another engine's (or a DMA's) result",
)
DMA_PARTITIONS_PER_ENGINE = Constant(
    8.0,
    "partitions",
    "hardware.md §3 cost rules: each of the 16 DMA engines typically handles 8 partitions (128/16) [BW], [DMA]",
)
DMA_DESCRIPTOR_OVERHEAD = Constant(
    512.0,
    "bytes",
    "inferred: a descriptor row of R bytes moves at R / (R + 512) of the engine's rate (80% at 2 KiB, 89% at "
    "4 KiB), shaped after [BW] (hardware.md §3: 2 KiB per partition the recommended minimum, >= 4 KiB saturates). "
    "Checked with leave-one-kernel-out over 15 DMA-bound points of the calibration suite "
    "(benchmarks/calibration/loo_fit.py): the fit, 640 B, sits at the upper bound the documented curve allows and "
    "its held-out median |log(est/meas)| is worse (0.202 against 0.191 at 512 B), so 512 B stays",
)
DMA_ISSUE_COST = Constant(
    600.0,
    "ns",
    "hardware.md §6 [DGE] (nki/deep-dives/nki-dge.rst, Neuron 2.32: 'Each hardware-DGE DMA instruction takes "
    "approximately 600 ns to execute', triggered by the Scalar or Sync engine sequencer; 'Each TRN2 NeuronCore "
    "has two DGE instances'): paid by every transfer before its data moves (the data of one transfer overlaps "
    "the next one's issue), one issue after the other in program order on the core's DGE instances "
    "(TargetLimits.dge_instances; each transfer on the one free first, inferred after the compiler's ASAP "
    "scheduling heuristic), or, without hardware DGE (trn1), on the transfer's own DMA queue. Applied to every "
    "DGE mode and to trn1: inferred (no per-instruction cost is published for host or software descriptors). "
    "The per-transfer latency of [BW] ('~1300 ns cross-engine', TargetLimits.dma_fixed_overhead_ns) stays off "
    "the issuers",
)
DMA_TRANSPOSE_HBM_EFFICIENCY = Constant(
    0.9, "fraction", "hardware.md §3: DMA transpose HBM->SBUF up to ~90% of DMA throughput on Trainium2 [A3]"
)
DMA_TRANSPOSE_SBUF_EFFICIENCY = Constant(
    0.5, "fraction", "hardware.md §3: DMA transpose SBUF->SBUF up to ~50% of DMA throughput on Trainium2 [A3]"
)
STATIONARY_LOAD_SPEEDUP = Constant(
    4.0,
    "x",
    "hardware.md §3: LoadStationary is up to 4x faster than a MultiplyMoving of the same free size [A2]; paid "
    "when a matmul's stationary operand differs from the previous matmul's on that core",
)
TENSOR_INSTRUCTION_OVERHEAD = Constant(
    16.0,
    "cycles",
    "inferred: per-instruction issue overhead of the Tensor engine (not published; the Vector/Scalar access "
    "overhead of 60 cycles [A2] is for streaming SBUF access and already in the cost model)",
)
ACTIVATION_TABLE_LOAD = Constant(
    1283.0,
    "ns",
    "published measurement: 'A swap costs 1283 ns' and 'five ACT_TABLE_LOADs at 1,283 ns' in Neuron Explorer "
    "captures on Trainium (github.com/KevGomes1403/nki-moe-megakernel, nki_kernels/specs/deltanet_decode_opt.md; "
    "one kernel's notes, generation not stated: applying it to every generation is inferred). No Neuron "
    "documentation page in the search corpus describes activation table loads. Paid by a Scalar-engine "
    "activation whose function needs another table than the previous activation's on that core (the first one "
    "too); which functions share a table: estimate/activation_tables.py",
)

EXECUTION_OVERHEAD = Constant(
    11000.0,
    "ns",
    "inferred (fitted with leave-one-out over the calibration suite's latency points; no Neuron page gives a "
    "figure): the kernel start and end of every execution that no instruction covers, added once to the "
    "estimated kernel time, half before the first instruction and half after the last (the split is inferred "
    "too; estimate/execution.py). Fitted by benchmarks/calibration/loo_fit.py --constant execution "
    '(benchmarks/calibration/README.md, "The per-execution fixed cost in the model")',
)

TABLE: dict[str, Constant] = {
    "SEMAPHORE_LATENCY": SEMAPHORE_LATENCY,
    "DMA_PARTITIONS_PER_ENGINE": DMA_PARTITIONS_PER_ENGINE,
    "DMA_DESCRIPTOR_OVERHEAD": DMA_DESCRIPTOR_OVERHEAD,
    "DMA_ISSUE_COST": DMA_ISSUE_COST,
    "DMA_TRANSPOSE_HBM_EFFICIENCY": DMA_TRANSPOSE_HBM_EFFICIENCY,
    "DMA_TRANSPOSE_SBUF_EFFICIENCY": DMA_TRANSPOSE_SBUF_EFFICIENCY,
    "STATIONARY_LOAD_SPEEDUP": STATIONARY_LOAD_SPEEDUP,
    "TENSOR_INSTRUCTION_OVERHEAD": TENSOR_INSTRUCTION_OVERHEAD,
    "ACTIVATION_TABLE_LOAD": ACTIVATION_TABLE_LOAD,
    "EXECUTION_OVERHEAD": EXECUTION_OVERHEAD,
}
