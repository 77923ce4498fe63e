"""DMA instructions (isa.md §5): ``dma_copy``, ``dma_transpose``, ``dma_compute``.

DMA moves data between HBM and SBUF (never PSUM since NKI 0.3.0), in the row-major element order of each
view; different dtypes convert through FP32 (not for packed MX types, not with hardware DGE). Indirect
gathers/scatters come in as ``.ap(vector_offset=...)`` / ``scalar_offset`` views (views.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from nki_studio.sim import checks, context, dtypes, untaken
from nki_studio.sim.access import out_of_bounds, read
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.isa.enums import dge_mode as Dge
from nki_studio.sim.isa.enums import engine as Eng
from nki_studio.sim.isa.enums import oob_mode as Oob
from nki_studio.sim.tensor import NkiTensor

_DMA_REGIONS = ("hbm", "sbuf")


def _operand(op: str, role: str, value: object) -> NkiTensor:
    t = checks.tensor_arg(op, role, value)
    if t.buffer.kind == "psum":
        raise HardwareLimitError(
            f"{op} {role} cannot be in PSUM (DMA does not access PSUM since NKI 0.3.0); "
            f"copy it to SBUF with nisa.tensor_copy first"
        )
    return c.tensor(op, role, t, _DMA_REGIONS)


def _modes(op: str, dge: Any, eng: Any, priority: Any, oob: Any) -> tuple[Dge, bool]:
    """Validate the DMA mode arguments (isa.md §5.1); returns the DGE mode and whether ``oob_mode=skip``."""
    try:
        mode = Dge(dge if dge is not None else Dge.unknown)
        skip = Oob(oob if oob is not None else Oob.error) == Oob.skip
        Eng(eng if eng is not None else Eng.unknown)
    except ValueError as exc:
        raise HardwareLimitError(f"{op}: {exc}") from None
    if mode == Dge.hwdge:
        c.require_version(op, 3, "dge_mode=hwdge")
    if priority is not None:
        c.require_version(op, 4, "priority=")
        if priority not in (0, 1, 2, 3):
            raise HardwareLimitError(f"{op}: priority must be 0..3, got {priority!r}")
    return mode, skip


def _transfer(
    dst: NkiTensor,
    sources: list[tuple[NkiTensor, bool]],
    skip: bool,
    combine: Callable[[list[np.ndarray]], np.ndarray],
) -> None:
    """Read ``sources`` (tensor, raw) and write ``combine(values)`` into ``dst``.

    Out-of-range elements of runtime-offset views (``out_of_bounds``) raise with ``oob_mode=error`` (in
    ``read``/``write``); with ``skip`` the transfers touching them are skipped and ``dst`` keeps its
    contents there (isa.md §5.1). Sources map onto ``dst`` element for element in row-major order.
    """
    if not skip:
        c.store(dst, combine([read(t, raw=raw) for t, raw in sources]))
        return
    skipped = out_of_bounds(dst)
    masks = [out_of_bounds(t) for t, _ in sources]
    for mask in masks:
        if mask is not None:
            flat = mask.reshape(dst.shape)
            skipped = flat if skipped is None else skipped | flat
    values = combine([read(t, raw=raw, oob_fill=0) for t, raw in sources])
    c.store(dst, values, where=None if skipped is None else ~skipped)


def _converts(op: str, dst: NkiTensor, src: NkiTensor, mode: Dge) -> bool:
    """Whether the copy converts dtypes (through FP32); raises where conversion is not allowed."""
    if dst.dtype_name == src.dtype_name:
        return False
    if mode == Dge.hwdge:
        raise HardwareLimitError(
            f"{op} with dge_mode=hwdge needs equal dtypes ({src.dtype_name} -> "
            f"{dst.dtype_name}); reinterpret with .view() instead"
        )
    if dtypes.PACKED_X4 & {dst.dtype_name, src.dtype_name}:
        raise HardwareLimitError(
            f"{op} cannot convert packed MX dtypes ({src.dtype_name} -> {dst.dtype_name})"
        )
    return True


@untaken.instruction
def dma_copy(
    dst: NkiTensor,
    src: NkiTensor,
    priority: object = None,
    oob_mode: object = Oob.error,
    dge_mode: object = Dge.unknown,
    engine: object = Eng.unknown,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = src`` between HBM and SBUF with dtype conversion through FP32 (isa.md §5.1); with
    ``oob_mode=skip`` elements whose runtime offset is out of range are not transferred."""
    opname = "nisa.dma_copy"
    d = _operand(opname, "dst", dst)
    s = _operand(opname, "src", src)
    mode, skip = _modes(opname, dge_mode, engine, priority, oob_mode)
    if d.size != s.size:
        raise HardwareLimitError(
            f"{opname}: dst has {d.size} elements {list(d.shape)}, src has {s.size} {list(s.shape)}"
        )
    convert = _converts(opname, d, s, mode)
    context.issue(opname, "dma", reads={"src": s}, writes={"dst": d})
    _transfer(d, [(s, not convert and c.same_storage_dtype(d, s))], skip, lambda v: v[0])
    return c.handle(opname, name)


_DEFAULT_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


@untaken.instruction
def dma_transpose(
    dst: NkiTensor,
    src: NkiTensor,
    axes: object = None,
    priority: object = None,
    dge_mode: object = Dge.unknown,
    oob_mode: object = Oob.error,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = np.transpose(src, axes)`` while copying HBM->SBUF or SBUF->SBUF, same dtype (isa.md §5.2)."""
    opname = "nisa.dma_transpose"
    d = _operand(opname, "dst", dst)
    checks.buffers(opname, "dst", d, c.SBUF)
    s = _operand(opname, "src", src)
    mode, skip = _modes(opname, dge_mode, None, priority, oob_mode)
    if d.dtype_name != s.dtype_name:
        raise HardwareLimitError(f"{opname}: src dtype {s.dtype_name} must equal dst dtype {d.dtype_name}")
    if s.ndim not in _DEFAULT_AXES:
        raise HardwareLimitError(f"{opname}: src must be 2-D, 3-D or 4-D, got {list(s.shape)}")
    perm = _DEFAULT_AXES[s.ndim] if axes is None else tuple(int(a) for a in axes)  # type: ignore[attr-defined]
    if perm != _DEFAULT_AXES[s.ndim]:
        raise HardwareLimitError(
            f"{opname}: axes {perm} is not supported for a {s.ndim}-D src; use {_DEFAULT_AXES[s.ndim]}"
        )
    expected = tuple(s.shape[a] for a in perm)
    if d.shape != expected:
        raise HardwareLimitError(
            f"{opname}: dst shape {list(d.shape)} must equal the transposed src shape {list(expected)}"
        )
    if mode == Dge.hwdge:
        _hwdge_transpose(opname, s)
    context.issue(opname, "dma", reads={"src": s}, writes={"dst": d})
    if skip:
        # Gather-transpose: skipped source rows leave the transposed dst positions unchanged (0.5.0 fix).
        src_oob = out_of_bounds(s)
        keep = None if src_oob is None else ~np.transpose(src_oob, perm)
        c.store(d, np.transpose(read(s, raw=True, oob_fill=0), perm), where=keep)
    else:
        c.store(d, np.transpose(read(s, raw=True), perm))
    return c.handle(opname, name)


def _hwdge_transpose(op: str, s: NkiTensor) -> None:
    """Hardware-DGE transpose constraints (0.6.0 relaxed form, isa.md §5.2)."""
    shp = s.shape
    if s.dtype.itemsize != 2:
        raise HardwareLimitError(f"{op} with dge_mode=hwdge needs a 2-byte dtype, not {s.dtype_name}")
    if shp[-1] > 128:
        raise HardwareLimitError(f"{op} with dge_mode=hwdge: src last dim {shp[-1]} exceeds 128")
    if s.ndim == 2 and shp[0] != 16:
        raise HardwareLimitError(f"{op} with dge_mode=hwdge: a 2-D src needs shape[0] == 16, got {shp[0]}")
    if s.ndim > 2 and (shp[0] not in (1, 2, 4, 8, 16) or (shp[0] * shp[-2]) % 16):
        raise HardwareLimitError(
            f"{op} with dge_mode=hwdge: src shape {list(shp)} needs shape[0] in "
            f"{{1,2,4,8,16}} and shape[0]*shape[-2] a multiple of 16"
        )


@untaken.instruction
def dma_compute(
    dst: NkiTensor,
    srcs: object,
    reduce_op: object,
    scales: object = None,
    unique_indices: bool = True,
    oob_mode: object = Oob.error,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = srcs[0] + srcs[1] + ...`` in FP32 inside the DMA engines; only ``nl.add`` and unit scales
    (isa.md §5.3). Read-modify-write forms (a source equal to an indirect ``dst``) work because every
    source is read before ``dst`` is written."""
    opname = "nisa.dma_compute"
    d = _operand(opname, "dst", dst)
    if not isinstance(srcs, (list, tuple)) or not 1 <= len(srcs) <= 16:
        raise HardwareLimitError(f"{opname}: srcs must be a list of 1 to 16 tensors")
    sources = [_operand(opname, f"srcs[{i}]", s) for i, s in enumerate(srcs)]
    c.alu_op(opname, "reduce_op", reduce_op, allowed=("add",))
    if scales is not None:
        if len(scales) != len(sources) or any(float(x) != 1.0 for x in scales):  # type: ignore[arg-type,attr-defined]
            raise HardwareLimitError(f"{opname}: only scales of 1.0 are supported")
    for i, s in enumerate(sources):
        if s.size != d.size:
            raise HardwareLimitError(f"{opname}: srcs[{i}] has {s.size} elements, dst has {d.size}")
    if not unique_indices:
        raise HardwareLimitError(f"{opname}: unique_indices=False is not supported")
    _, skip = _modes(opname, None, None, None, oob_mode)
    context.issue(
        opname,
        "dma",
        reads={f"srcs[{i}]": s for i, s in enumerate(sources)},
        writes={"dst": d},
        flops=d.size * (len(sources) - 1),
    )

    def add(values: list[np.ndarray]) -> np.ndarray:
        total = np.zeros(d.size, np.float32)
        for v in values:
            total += np.asarray(v, np.float32).reshape(-1)
        return total.reshape(d.shape)

    _transfer(d, [(s, False) for s in sources], skip, add)
    return c.handle(opname, name)
