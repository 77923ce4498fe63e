"""Per-instruction estimated time from one trace record: the cost model of docs/cost-model.md ("Per-instruction
cost"). The scheduler (``nki_studio.estimate.schedule``) places these durations on engine queues; the simple
result's bounds (``nki_studio.estimate.section``) add them up. Constants: ``nki_studio.model.targets`` (``TargetLimits``,
``COST_RULES``, each naming its hardware.md section) and ``nki_studio.estimate.constants``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from nki_studio.estimate.perf_modes import lanes
from nki_studio.model.targets import COST_RULES, InstructionCostRules, TargetLimits
from nki_studio.sim.trace import TraceEvent

# Matmul inputs at a quarter of the 16-bit rate: FP32 alone. TF32 runs at the BF16 rate: "BF16, FP16, TF32, and
# cFP8 input matrix data types at a maximum throughput of 92 TFLOPS, as well as 23 TFLOPS for FP32 inputs" and
# MultiplyMoving ~max(N, 64) cycles "with BF16/FP16/TF32/cFP8 input", "roughly 4x higher" for FP32 (Trainium/
# Inferentia2 architecture guide [A2]; trn2 "79 BF16/FP16/TF32 and 20 FP32 dense TFLOPS" [A3]).
FP32_INPUTS = ("float32",)
# Engines that pay the static instruction overhead of tiny or dependent back-to-back instructions: the Vector
# engine [A2], and the Scalar engine, to which "all the performance notes discussed for Vector Engine" apply [A2]
STATIC_OVERHEAD_ENGINES = ("vector", "scalar")


@dataclass(frozen=True)
class InstructionCost:
    """Estimated time of one traced instruction."""

    event: TraceEvent
    ns: float
    cycles: float  # 0 for DMA (priced in bytes)


def _suffix(op: str) -> str:
    return op.rsplit(".", 1)[-1]


def _free_size(shape: tuple[int, ...]) -> int:
    return math.prod(shape[1:]) if len(shape) > 1 else 1


def operand(event: TraceEvent, *roles: str) -> Any:
    """The first operand of ``event`` in one of ``roles``, or None."""
    for op in event.operands:
        if op.role in roles:
            return op
    return None


def dma_ns(nbytes: int, limits: TargetLimits) -> float:
    """Estimated time of one DMA transfer of ``nbytes``."""
    return nbytes / limits.dma_bytes_per_ns + limits.dma_fixed_overhead_ns / limits.dma_engines


def is_pe_transpose(event: TraceEvent) -> bool:
    """A transpose through the Tensor engine's PE array (``nc_transpose`` / ``transpose`` on the Tensor engine)."""
    return event.engine == "tensor" and _suffix(event.op) in ("nc_transpose", "transpose")


def matmul_cycles(event: TraceEvent, rules: InstructionCostRules = COST_RULES) -> int:
    """TensorE cycles: ``max(64, N_moving)``, x4 when the moving operand is FP32 (hardware.md §3, [A2]). A PE
    transpose of data ``[P, F]`` is a matmul of the data (stationary) by the identity (moving ``[P, P]``:
    hardware.md §3, "transpose (matmul with identity)"), so N is the data's partition count."""
    if is_pe_transpose(event):
        data = operand(event, "data", "src")
        n = data.shape[0] if data is not None and data.shape else event.partitions
        dtype = data.dtype if data is not None else ""
    else:
        moving = operand(event, "moving", "src", "data")
        n = _free_size(moving.shape) if moving is not None else event.free_elements
        dtype = moving.dtype if moving is not None else ""
    cycles = max(rules.matmul_min_cycles, n)
    if dtype in FP32_INPUTS:
        cycles *= rules.matmul_fp32_factor
    return cycles


def _is_input(role: str) -> bool:
    return not role.startswith(("dst", "out", "reduce_res"))


def free_size(event: TraceEvent) -> int:
    """N of the cost formulas: the largest per-partition element count among the on-chip operands (a
    reduction's input, not its small output); the trace's own figure when no operand is on chip."""
    sizes = [_free_size(o.shape) for o in event.operands if o.buffer in ("sbuf", "psum")]
    return max(sizes) if sizes else event.free_elements


def elementwise_cycles(
    event: TraceEvent, limits: TargetLimits, rules: InstructionCostRules = COST_RULES
) -> float:
    """Vector/Scalar/GpSimd cycles for one instruction (see the module docstring)."""
    n = free_size(event)
    name = _suffix(event.op)
    if name in ("iota", "affine_select"):
        return rules.gpsimd_fixed_cycles + n
    if name == "bn_aggr":
        return max(rules.min_ii_cycles, rules.bn_aggr_factor * n) + rules.access_overhead_cycles
    # inputs streamed at full size; a [P, 1] per-partition scalar operand (tensor_scalar's operand0) is not one
    streams = sum(1 for o in event.operands if _is_input(o.role) and _free_size(o.shape) == n)
    factor: float = 1
    if name == "reciprocal" and event.engine == "vector":  # ~8N on Vector, ~N on Scalar [OLD]
        factor = rules.reciprocal_factor
    elif streams >= 2:
        factor = rules.two_input_factor
    data_cycles = math.ceil(factor * n * limits.partitions / lanes(event, limits, streams))
    extra = rules.min_ii_cycles if name in ("activation_reduce", "tensor_scalar_reduce") else 0
    # a tiny instruction ("N << 128" [A2]; below the minimum initiation interval: an inferred threshold) pays the
    # static overhead (the same overhead of dependent back-to-back instructions is not modelled)
    if n < rules.min_ii_cycles and event.engine in STATIC_OVERHEAD_ENGINES:
        extra += rules.static_overhead_cycles
    return max(rules.min_ii_cycles, data_cycles) + extra + rules.access_overhead_cycles


def instruction_cost(
    event: TraceEvent, limits: TargetLimits, rules: InstructionCostRules = COST_RULES
) -> InstructionCost:
    """Estimated time of one instruction on ``limits``' generation."""
    if event.engine == "dma":
        moved = max(sum(event.bytes_read.values()), sum(event.bytes_written.values()))
        return InstructionCost(event, dma_ns(moved, limits), 0.0)
    if event.engine == "sync":  # a sequencer without a data path: no time of its own in this model
        return InstructionCost(event, 0.0, 0.0)
    if event.engine == "tensor":
        cycles: float = matmul_cycles(event, rules)
    else:
        cycles = elementwise_cycles(event, limits, rules)
    clock = limits.clock_ghz.get(event.engine, limits.clock_ghz["vector"])
    return InstructionCost(event, cycles / clock, cycles)
