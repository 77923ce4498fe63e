"""The element-wise engines' performance modes: how many elements per cycle one instruction streams.

NeuronCore-v2 streams 128 elements per cycle on every element-wise engine. Trainium2 widens the Vector engine to
"512 BF16/FP16 input/output; 256 input/output for other data types" (the data-path table, ``TargetLimits.lanes``
and ``lanes_other``) and says which instructions reach the 16-bit widths: its "Vector Engine Performance Mode"
(aws-neuron-sdk ``nki/guides/architecture/trainium2_arch.rst``, Neuron 2.32; lifts relative to NeuronCore-v2's
128):

* 4x: ``tensor_copy`` / ``tensor_scalar`` with input and output in SBUF, BF16/FP16, contiguous innermost dim;
* 2x: the same instructions in BF16/FP16 with a strided innermost dim, or contiguous with one side in PSUM; and
  ``tensor_tensor`` with both inputs in SBUF and every operand BF16/FP16 (else 1x: a 16-bit operand in PSUM).

Every other instruction and dtype streams at the "other data types" width, halved when an operand is in PSUM
(inferred: the guide halves the 16-bit copy mode for a PSUM side; the trn2 ladder's FP32 PSUM -> SBUF copies,
0.69 us measured per [128, 512], fit the halved width, 0.60 us, and not the full one, 0.33 us). Trainium3 gives
the Scalar engine the 2x mode for 16-bit ``tensor_scalar`` / ``tensor_copy`` ([A4], its ``lanes`` entry 256;
applying the trn2 conditions to it is inferred).
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
    one = limits.partitions  # the NeuronCore-v2 rate, 1x
    peak = limits.lanes.get(event.engine, one)
    other = limits.lanes_other.get(event.engine, one)
    ops = _streamed(event)
    on_sbuf = all(o.buffer == "sbuf" for o in ops)
    name = event.op.rsplit(".", 1)[-1]
    if ops and all(o.dtype in _SIXTEEN_BIT for o in ops) and peak > one:
        if name in _COPY_LIKE:
            contiguous = all(_contiguous(o) for o in ops)
            if on_sbuf and contiguous:
                return min(peak, 4 * one)
            return min(peak, 2 * one) if on_sbuf or contiguous else one
        if name == "tensor_tensor":
            inputs_on_sbuf = all(o.buffer == "sbuf" for o in ops if not o.role.startswith("dst"))
            return min(peak, 2 * one) if inputs_on_sbuf else one
    return other if on_sbuf else max(other // 2, one)
