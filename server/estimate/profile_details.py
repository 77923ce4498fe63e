"""The columns of an estimated profile the bounds and investigations read (bounds.md §1, §3), taken from the
simulator trace's columns (``nki_studio.sim.trace_columns``): Tensor-engine FLOPs (BF16-equivalent),
transposes and matmul K/M/N per instruction; memory text, DMA transposes and the exact HBM byte range per DMA
transfer.

Spelled as Neuron Explorer spells them, so one investigation reads measured and estimated profiles alike:
``source = "[[INPUT]]"`` for a load from a kernel input, ``dest = "[OUTPUT]"`` for a store to a kernel output,
``[SB]`` for on-chip memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from nki_studio.estimate.columns import first_of, group, recode
from nki_studio.estimate.spills import SPILL_TENSOR
from nki_studio.profile.model import Codes, TensorRole
from nki_studio.sim.trace_columns import CompactTrace

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

# BF16-equivalent FLOPs, as ``Instruction.adjusted_flops`` counts them on Trn2 (bounds.md §1): FP32 x4, FP8 x0.5.
_FP32 = frozenset({"float32", "tfloat32"})
TRANSPOSE_DMA = frozenset({"nisa.dma_transpose", "nl.load_transpose2d"})


def lut(table: Sequence[Any], fn: Callable[[Any], Any], dtype: Any) -> npt.NDArray[Any]:
    """``fn`` of each value of an interned table, as an array to index with the codes."""
    return np.array([fn(v) for v in table], dtype=dtype).reshape(len(table))


class OperandView:
    """Per-operand-row facts of a trace the profile builder reads, computed once."""

    def __init__(self, trace: CompactTrace) -> None:
        self.trace = trace
        self.n = len(trace)
        self.owner = trace.operand_event()
        roles = trace.operand_table("role")
        role = trace.operand("role")
        self.dst = lut(roles, lambda r: r.startswith("dst"), bool)[role] if roles else np.zeros(0, bool)
        buffers = trace.operand_table("buffer")
        self.buffer = trace.operand("buffer")
        self.hbm = self.buffer == (buffers.index("hbm") if "hbm" in buffers else -1)
        self.storage = trace.operand("storage")
        self.name = trace.operand("name")
        self.src_row = first_of(~self.dst, self.owner, self.n)  # the first operand not written
        self.dst_row = first_of(self.dst, self.owner, self.n)

    def role_rows(self, *wanted: str) -> I64:
        """Per event, the first operand whose role is one of ``wanted`` (-1: none)."""
        roles = self.trace.operand_table("role")
        mask = lut(roles, lambda r: r in wanted, bool)[self.trace.operand("role")] if roles else self.dst
        return first_of(mask, self.owner, self.n)


def _dtype_factor(any_fp32: B, all_fp8: B) -> npt.NDArray[np.float64]:
    return np.where(any_fp32, 4.0, np.where(all_fp8, 0.5, 1.0))


def instruction_columns(
    v: OperandView, rows: I64
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.int32]]:
    """``flops``, ``transpose`` and ``matmul_kmn`` of the profile instructions ``rows`` (event indices); FLOPs
    are counted on the Tensor engine only, as the profiler does."""
    t = v.trace
    n = len(rows)
    flops = np.zeros(n, np.int64)
    transpose = np.zeros(n, bool)
    kmn = np.full((n, 3), -1, np.int32)
    engines = t.event_table("engine")
    tensor = (
        np.flatnonzero(lut(engines, lambda e: e == "tensor", bool)[t.event("engine")[rows]]) if n else rows
    )
    if not tensor.size:
        return flops, transpose, kmn
    ev = rows[tensor]
    dtypes = t.operand_table("dtype")
    dtype = t.operand("dtype")
    fp32 = lut(dtypes, lambda d: d in _FP32, bool)[dtype]
    fp8 = lut(dtypes, lambda d: d.startswith("float8"), bool)[dtype]
    shapes = t.operand_table("shape")
    shape = t.operand("shape")
    dim0 = lut(shapes, lambda s: s[0] if s else 0, np.int64)[shape]
    free = lut(shapes, lambda s: math.prod(s[1:]) if len(s) > 1 else 1, np.int64)[shape]
    st, mv, data = (r[ev] for r in (v.role_rows("stationary"), v.role_rows("moving"), v.role_rows("data")))
    raw_flops = t.event("flops")[ev]
    ops = t.event_table("op")
    nc_transpose = lut(ops, lambda o: o == "nisa.nc_transpose", bool)[t.event("op")[ev]]
    # inferred for the fall-through: every operand's dtype
    counts = np.bincount(v.owner, minlength=v.n)[ev]
    n32 = np.bincount(v.owner, weights=fp32, minlength=v.n)[ev]
    n8 = np.bincount(v.owner, weights=fp8, minlength=v.n)[ev]
    out_flops = np.rint(raw_flops * _dtype_factor(n32 > 0, (counts > 0) & (n8 == counts))).astype(np.int64)
    out_t = np.zeros(ev.size, bool)
    out_kmn = np.full((ev.size, 3), -1, np.int64)

    mm = (st >= 0) & (mv >= 0)
    s, m = st[mm], mv[mm]
    k_, m_, n_ = dim0[s], free[s], free[m]
    is_t = raw_flops[mm] == 0  # nc_matmul(is_transpose=True) issues no FLOPs in the trace
    raw = np.where(is_t, 2 * k_ * m_ * n_, raw_flops[mm])  # inferred: a transpose counted as the matmul it is
    out_flops[mm] = np.rint(raw * _dtype_factor(fp32[s] | fp32[m], fp8[s] & fp8[m])).astype(np.int64)
    out_t[mm] = is_t
    out_kmn[mm] = np.stack([k_, m_, n_], 1)

    tr = ~mm & nc_transpose & (data >= 0)
    # inferred: an identity matmul with the data as stationary [K=p, M=f] and the identity [p, p] moving
    d = data[tr]
    p, f = dim0[d], free[d]
    out_flops[tr] = np.rint(2 * p * f * p * _dtype_factor(fp32[d], fp8[d])).astype(np.int64)
    out_t[tr] = True
    out_kmn[tr] = np.stack([p, f, p], 1)

    flops[tensor], transpose[tensor], kmn[tensor] = out_flops, out_t, out_kmn
    return flops, transpose, kmn


def hbm_key(v: OperandView, rows: I64) -> tuple[I64, I64]:
    """(id per operand row, a row of each id) of HBM operands, equal ids for one tensor name: the storage's
    name, else its number."""
    names = v.trace.operand_table("name")
    named = lut(names, bool, bool)[v.name[rows]] if names else np.zeros(rows.size, bool)
    key_storage = np.where(named, -1, v.storage[rows])
    key_name = np.where(named, v.name[rows], -1)
    ids, first = group([key_storage, key_name])
    return ids, rows[first]


def tensor_name(v: OperandView, row: int) -> str:
    """An HBM operand's tensor name as the estimated profile spells it (``hbm#<storage>`` when unnamed)."""
    return v.trace.operand_table("name")[v.name[row]] or f"hbm#{int(v.storage[row])}"


def tensors(v: OperandView) -> list[TensorRole]:
    """Kernel inputs (arguments the kernel read) and outputs (HBM it allocated and wrote), in first-use order."""
    rows = np.flatnonzero(v.hbm & (v.storage >= 0))
    if not rows.size:
        return []
    names = v.trace.operand_table("name")
    written = v.dst[rows]
    arg = lut(names, lambda s: s.startswith("arg"), bool)[v.name[rows]]
    named = lut(names, bool, bool)[v.name[rows]]
    spill = lut(names, lambda s: s == SPILL_TENSOR, bool)[v.name[rows]]
    is_arg = arg | (named & ~written)
    keep = (written != is_arg) & ~spill  # else: in place, a scratch read, or the spill buffer
    rows, written = rows[keep], written[keep]
    if not rows.size:
        return []
    ids, reps = hbm_key(v, rows)
    keys, first = group([ids, written.astype(np.int64)])
    size = np.zeros(len(first), np.int64)
    np.maximum.at(size, keys, v.trace.operand("byte_end")[rows])
    return [
        TensorRole(
            tensor_name(v, int(reps[ids[first[k]]])), "OUT" if written[first[k]] else "IN", int(size[k])
        )
        for k in np.argsort(first, kind="stable").tolist()
    ]


def dma_columns(
    v: OperandView, rows: I64, roles: Sequence[TensorRole]
) -> tuple[Codes, Codes, npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """``source``, ``dest``, ``transpose`` and ``hbm_range`` of the DMA transfers ``rows`` (event indices)."""
    t = v.trace
    kinds = {(r.name, r.role) for r in roles}
    src, dst = v.src_row[rows], v.dst_row[rows]
    hbm = np.full((len(rows), 3), -1, np.int64)
    src_hbm = (src >= 0) & v.hbm[np.maximum(src, 0)] if len(v.hbm) else np.zeros(len(rows), bool)
    side = np.where(src_hbm, src, dst)
    ok = (
        (side >= 0) & v.hbm[np.maximum(side, 0)] & (v.storage[np.maximum(side, 0)] >= 0)
        if len(v.hbm)
        else src_hbm
    )
    r = side[ok]
    hbm[ok] = np.stack([v.storage[r], t.operand("byte_start")[r], t.operand("byte_end")[r]], 1)
    ops = t.event_table("op")
    transpose = (
        lut(ops, lambda o: o in TRANSPOSE_DMA, bool)[t.event("op")[rows]] if len(rows) else np.zeros(0, bool)
    )
    return _memory(v, src, "IN", kinds), _memory(v, dst, "OUT", kinds), transpose, hbm


def _memory(v: OperandView, rows: I64, kind: str, kinds: set[tuple[str, str]]) -> Codes:
    """Each operand row's memory as Neuron Explorer writes it ("" for no operand)."""
    buffers = v.trace.operand_table("buffer")
    present = rows >= 0
    safe = np.maximum(rows, 0)
    hbm = present & (v.hbm[safe] if len(v.hbm) else present)
    ids = np.full(len(rows), -1, np.int64)  # -1: none; 0..: on-chip buffer codes; then HBM tensors
    ids[present] = v.buffer[rows[present]]
    nb = len(buffers)
    hbm_rows = rows[hbm]
    strings: dict[int, str] = {-1: ""}
    for b, name in enumerate(buffers):
        strings[b] = "[SB]" if name == "sbuf" else "[PSUM]"
    if hbm_rows.size:
        hid, reps = hbm_key(v, hbm_rows)
        ids[hbm] = nb + hid
        for h, r in enumerate(reps.tolist()):
            tensor = tensor_name(v, r)
            strings[nb + h] = (
                ("[[INPUT]]" if kind == "IN" else "[OUTPUT]")
                if (tensor, kind) in kinds
                else f"[HBM {_label(v, r)}]"
            )
    return recode(ids + 1, lambda i: strings[i - 1])


def _label(v: OperandView, row: int) -> str:
    """An HBM operand's label in memory text: its name, else its storage number."""
    name = v.trace.operand_table("name")[v.name[row]]
    return name or str(int(v.storage[row]))
