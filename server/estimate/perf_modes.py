"""The element-wise engines' performance modes: how many elements per cycle one instruction streams.

NeuronCore-v2 streams 128 elements per cycle on every element-wise engine (one per partition). Later generations
widen the Vector engine (``TargetLimits.lanes``: 512 on trn2/trn3) only in a "performance mode" the hardware
enables per instruction, by instruction, dtype and operand placement (Trainium2 architecture guide, "Vector
Engine Performance Mode", aws-neuron-sdk ``nki/guides/architecture/trainium2_arch.rst``, Neuron 2.32):

* 4x: ``tensor_copy`` / ``tensor_scalar`` with input and output in SBUF, BF16/FP16, contiguous innermost dim;
* 2x: the same instructions in BF16/FP16 with a strided innermost dim or one side in PSUM, and
  ``tensor_tensor`` with both inputs in SBUF and every operand BF16/FP16;
* 1x otherwise: FP32 (and every other dtype) and every other instruction, the NeuronCore-v2 rate.

Trainium3 gives the Scalar engine the same 2x mode for ``tensor_scalar`` / ``tensor_copy`` (hardware.md §3,
[A4]; its ``lanes`` entry, 256). Applying the trn2 conditions to it is inferred.
"""

from __future__ import annotations

from nki_studio.model.targets import TargetLimits
from nki_studio.sim.trace import Operand, TraceEvent

_SIXTEEN_BIT = ("bfloat16", "float16")
_COPY_LIKE = ("tensor_copy", "tensor_scalar")


def _streamed(event: TraceEvent) -> list[Operand]:
    """The operands streamed element by element: not a tensor_scalar's ``[P, 1]`` scalar operands."""
    return [o for o in event.operands if not o.role.startswith("operand")]


def _contiguous(o: Operand) -> bool:
    """Whether the innermost free dim is physically contiguous: the trace's contiguous run is longer than one
    16-bit element (0: not recorded, taken as contiguous)."""
    return o.row_bytes == 0 or o.row_bytes > 2


def lanes(event: TraceEvent, limits: TargetLimits) -> int:
    """Elements per cycle ``event`` streams on its engine (see the module docstring)."""
    base = limits.partitions
    peak = limits.lanes.get(event.engine, base)
    if peak <= base:
        return base
    ops = _streamed(event)
    if not ops or any(o.dtype not in _SIXTEEN_BIT for o in ops):
        return base  # the performance mode is for BF16/FP16 only: FP32 keeps the NeuronCore-v2 rate
    name = event.op.rsplit(".", 1)[-1]
    on_sbuf = all(o.buffer == "sbuf" for o in ops)
    if name in _COPY_LIKE:
        contiguous = all(_contiguous(o) for o in ops)
        if on_sbuf and contiguous:
            return min(peak, 4 * base)
        return min(peak, 2 * base) if on_sbuf or contiguous else base
    inputs_on_sbuf = all(o.buffer == "sbuf" for o in ops if not o.role.startswith("dst"))
    if name == "tensor_tensor" and inputs_on_sbuf:
        return min(peak, 2 * base)
    return base
