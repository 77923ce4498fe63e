"""The columns of an estimated profile the bounds and investigations read (bounds.md §1, §3), taken from the
simulator trace: Tensor-engine FLOPs (BF16-equivalent), transposes and matmul K/M/N per instruction; memory
text, DMA transposes and the exact HBM byte range per DMA transfer.

Spelled as Neuron Explorer spells them, so one investigation reads measured and estimated profiles alike:
``source = "[[INPUT]]"`` for a load from a kernel input, ``dest = "[OUTPUT]"`` for a store to a kernel output,
``[SB]`` for on-chip memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from nki_studio.estimate.cost import operand
from nki_studio.profile.model import Codes, TensorRole
from nki_studio.sim.trace import Operand, TraceEvent

# BF16-equivalent FLOPs, as ``Instruction.adjusted_flops`` counts them on Trn2 (bounds.md §1): FP32 x4, FP8 x0.5.
_FP32 = frozenset({"float32", "tfloat32"})
_TRANSPOSE_DMA = frozenset({"nisa.dma_transpose", "nl.load_transpose2d"})


def _dtype_factor(ops: Sequence[Operand]) -> float:
    dtypes = {o.dtype for o in ops}
    if dtypes & _FP32:
        return 4.0
    if dtypes and all(d.startswith("float8") for d in dtypes):
        return 0.5
    return 1.0


def _free(o: Operand) -> int:
    return math.prod(o.shape[1:]) if len(o.shape) > 1 else 1


def _tensor_op(e: TraceEvent) -> tuple[int, bool, tuple[int, int, int]]:
    """(BF16-equivalent FLOPs, is a transpose, (K, M, N)) of one Tensor-engine event."""
    st, mv = operand(e, "stationary"), operand(e, "moving")
    if st is not None and mv is not None:
        k, m, n = st.shape[0], _free(st), _free(mv)
        transpose = e.flops == 0  # nc_matmul(is_transpose=True) issues no FLOPs in the trace
        raw = e.flops if not transpose else 2 * k * m * n  # inferred: a transpose counted as the matmul it is
        return round(raw * _dtype_factor((st, mv))), transpose, (k, m, n)
    data = operand(e, "data")
    if e.op == "nisa.nc_transpose" and data is not None:
        # inferred: an identity matmul with the data as stationary [K=p, M=f] and the identity [p, p] moving
        p, f = data.shape[0], _free(data)
        return round(2 * p * f * p * _dtype_factor((data,))), True, (p, f, p)
    return round(e.flops * _dtype_factor(e.operands)), False, (-1, -1, -1)


def instruction_columns(
    events: Sequence[TraceEvent], rows: Sequence[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.int32]]:
    """``flops``, ``transpose`` and ``matmul_kmn`` of the profile instructions ``rows`` (indices into events);
    FLOPs are counted on the Tensor engine only, as the profiler does."""
    n = len(rows)
    flops = np.zeros(n, np.int64)
    transpose = np.zeros(n, bool)
    kmn = np.full((n, 3), -1, np.int32)
    for r, i in enumerate(rows):
        e = events[i]
        if e.engine != "tensor":
            continue
        flops[r], transpose[r], kmn[r] = _tensor_op(e)
    return flops, transpose, kmn


def dma_columns(
    events: Sequence[TraceEvent], rows: Sequence[int], tensors: Sequence[TensorRole]
) -> tuple[Codes, Codes, npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """``source``, ``dest``, ``transpose`` and ``hbm_range`` of the DMA transfers ``rows``."""
    role = {(t.name, t.role) for t in tensors}
    sources: list[str] = []
    dests: list[str] = []
    hbm = np.full((len(rows), 3), -1, np.int64)
    for r, i in enumerate(rows):
        e = events[i]
        src = next((o for o in e.operands if not o.role.startswith("dst")), None)
        dst = next((o for o in e.operands if o.role.startswith("dst")), None)
        sources.append(_memory(src, "IN", role))
        dests.append(_memory(dst, "OUT", role))
        side = src if src is not None and src.buffer == "hbm" else dst
        if side is not None and side.buffer == "hbm" and side.storage >= 0:
            hbm[r] = (side.storage, side.byte_start, side.byte_end)
    transpose = np.array([events[i].op in _TRANSPOSE_DMA for i in rows], bool)
    return Codes.from_strings(sources), Codes.from_strings(dests), transpose, hbm


def _memory(o: Operand | None, kind: str, roles: set[tuple[str, str]]) -> str:
    if o is None:
        return ""
    if o.buffer != "hbm":
        return "[SB]" if o.buffer == "sbuf" else "[PSUM]"
    if (o.name or f"hbm#{o.storage}", kind) in roles:  # named as estimate.profile names tensors
        return "[[INPUT]]" if kind == "IN" else "[OUTPUT]"
    return f"[HBM {o.name or o.storage}]"
