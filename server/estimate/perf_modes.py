"""The element-wise engines' performance modes: how many elements per cycle one instruction streams.

NeuronCore-v2 streams 128 elements per cycle on every element-wise engine. Trainium2 widens the Vector engine to
"512 BF16/FP16 input/output; 256 input/output for other data types" (the data-path table, ``TargetLimits.lanes``
and ``lanes_other``) and says which instructions reach the 16-bit widths: its "Vector Engine Performance Mode"
(aws-neuron-sdk ``nki/guides/architecture/trainium2_arch.rst``, Neuron 2.32; lifts relative to NeuronCore-v2's
128):

* 4x: ``tensor_copy`` / ``tensor_scalar`` with input and output in SBUF, BF16/FP16, contiguous innermost dim;
* 2x: the same instructions in BF16/FP16 with a strided innermost dim, or contiguous with one side in PSUM; and
  ``tensor_tensor`` with both inputs in SBUF and every operand BF16/FP16 (else 1x: a 16-bit operand in PSUM).

Outside those modes an instruction gets no lift over NeuronCore-v2 (the guide names the modes as the lift "compared
to NeuronCore-v2", for BF16/FP16 only): one streamed input runs at 128 elements per cycle whatever its dtype (an
FP32 ``tensor_scalar``, ``tensor_copy`` or ``tensor_reduce``, a 16-bit ``tensor_reduce``). Two streamed inputs
(``tensor_tensor`` outside its mode, ``scalar_tensor_tensor``) share the "other data types" width, 256 input
elements per cycle, i.e. 128 outputs, halved when an operand is in PSUM (inferred: the guide halves the 16-bit copy
mode for a PSUM side). Reading the data-path width as input elements summed over an instruction's input streams is
inferred: it is the reading under which the table and the mode list agree. Evidence on trn2 (calibration README
"The remaining steps"): the ladder's FP32 PSUM -> SBUF copies, 0.69 us measured per [128, 512], fit 128 lanes
(0.60 us) and not 256 (0.33 us); the walkthrough's plain RMSNorm (FP32 ``tensor_scalar`` and ``tensor_reduce`` on
SBUF) is 0.75 of its measurement at 256 lanes and 0.90 at 128. Trainium3 gives
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


def lanes(event: TraceEvent, limits: TargetLimits, streams: int) -> int:
    """Elements per cycle ``event`` streams on its engine, given how many of its inputs it streams at full size
    (see the module docstring)."""
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
    if streams < 2:  # no performance mode: NeuronCore-v2's rate
        return one
    return other if on_sbuf else max(other // 2, one)
