"""Data movement and layout helpers (language.md §7): load, store, load_transpose2d, copy, matmul,
transpose, broadcast_to, expand_dims, where, gather_flattened, dropout.

Helpers that are one ISA instruction are lowered to it (``nisa.dma_copy``, ``tensor_copy``, ``nc_matmul``,
``nc_transpose``), so their checks and numerics are the instruction's and the trace names the instruction.
"""

from __future__ import annotations

import numpy as np
from nki_studio.sim import context, dtypes, untaken
from nki_studio.sim import isa as nisa
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.language._ops import new_tile, result_dtype, tile_arg, value_of
from nki_studio.sim.language.creation import _rng
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import NkiTensor


def _hbm_arg(name: str, value: object) -> NkiTensor:
    if not isinstance(value, NkiTensor):
        raise SimulationError(f"nl.{name}: expected a tensor, got {type(value).__name__}")
    if value.buffer.on_chip:
        raise HardwareLimitError(f"nl.{name}: expected an HBM tensor, got one on {value.buffer.value}")
    return value


def load(src: NkiTensor, dtype: object = None, **_: object) -> NkiTensor:
    """HBM view -> new SBUF tile of the same shape (first dim = partitions), cast through FP32 if ``dtype``."""
    s = _hbm_arg("load", src)
    if len(s.shape) < 2:
        raise HardwareLimitError(
            f"nl.load: a {len(s.shape)}-D source cannot become an on-chip tile; "
            f"index or reshape it to 2-D (partition dim first)"
        )
    out = new_tile(s.shape, s.dtype if dtype is None else dtypes.to_dtype(dtype))
    nisa.dma_copy(dst=out, src=s)
    return out


def store(dst: NkiTensor, value: NkiTensor, **_: object) -> None:
    """Copy an SBUF tile into an HBM view (PSUM values must be copied to SBUF first)."""
    d = _hbm_arg("store", dst)
    v = tile_arg("store", value)
    if v.buffer is MemoryRegion.psum:
        raise HardwareLimitError(
            "nl.store: the value is in PSUM; copy it to SBUF first (nl.copy / nisa.tensor_copy)"
        )
    if v.size != d.size:
        raise HardwareLimitError(
            f"nl.store: value {list(v.shape)} does not match destination {list(d.shape)}"
        )
    nisa.dma_copy(dst=d, src=v)


@untaken.tile_instruction
def load_transpose2d(src: NkiTensor, dtype: object = None, **_: object) -> NkiTensor:
    """2-D HBM -> SBUF with the axes swapped."""
    s = _hbm_arg("load_transpose2d", src)
    if len(s.shape) != 2:
        raise HardwareLimitError(f"nl.load_transpose2d: source must be 2-D, got {list(s.shape)}")
    out = new_tile((s.shape[1], s.shape[0]), s.dtype if dtype is None else dtypes.to_dtype(dtype))
    context.issue("nl.load_transpose2d", "dma", reads={"src": s}, writes={"dst": out})
    write(out, read(s, raw=True).T)
    return out


def copy(x: NkiTensor, dtype: object = None, **_: object) -> NkiTensor:
    """A new SBUF tile with ``x``'s values (bit-exact when the dtype is unchanged).

    On NeuronCore-v2 a float copy is ``nisa.activation(op=nl.copy)`` on the Scalar engine: "Uses the Scalar Engine
    via activation(op=copy)" (the nki.language.copy page of the NKI 0.4.0 era, general/nki/api/generated; the
    legacy v2.26 page names no engine), which the trn1 AccelOpt NKIBench profiles confirm (lora's only Scalar
    work is its ``nl.copy``s: 1,039 us measured). Integer copies stay bit-exact on Vector (the Scalar engine casts
    through FP32: that the compiler avoids it for them is inferred)."""
    t = tile_arg("copy", x)
    out = new_tile(t.shape, t.dtype if dtype is None else dtypes.to_dtype(dtype))
    if (
        context.current().options.target.generation.nc_version == 2
        and dtypes.is_float(t.dtype)
        and dtypes.is_float(out.dtype)
    ):
        nisa.activation(dst=out, op="copy", data=t)
    else:
        nisa.tensor_copy(dst=out, src=t, engine=nisa.engine.vector)
    return out


def matmul(x: NkiTensor, y: NkiTensor, transpose_x: bool = False, **_: object) -> NkiTensor:
    """``x @ y`` (or ``x.T @ y``) into a new FP32 PSUM tile; contraction <= 128, M <= 128, N <= moving max."""
    a, b = tile_arg("matmul", x), tile_arg("matmul", y)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise HardwareLimitError(f"nl.matmul: operands must be 2-D, got {list(a.shape)} and {list(b.shape)}")
    lim = context.current().options.target.limits
    k, m = (a.shape[0], a.shape[1]) if transpose_x else (a.shape[1], a.shape[0])
    n = b.shape[1]
    if b.shape[0] != k:
        raise HardwareLimitError(
            f"nl.matmul: contraction mismatch: x gives K={k}, y has {b.shape[0]} partitions"
        )
    if (
        k > lim.matmul_contraction_max
        or m > lim.matmul_stationary_free_max
        or n > lim.matmul_moving_free_max_fp32
    ):
        raise HardwareLimitError(
            f"nl.matmul: tile [K={k}, M={m}, N={n}] exceeds the {lim.generation.value} limits K<={lim.matmul_contraction_max}, "
            f"M<={lim.matmul_stationary_free_max}, N<={lim.matmul_moving_free_max_fp32}"
        )
    out = new_tile((m, n), dtypes.FLOAT32, MemoryRegion.psum)
    stationary = a if transpose_x else _sbuf_transpose(a)
    nisa.nc_matmul(dst=out, stationary=stationary, moving=b, accumulate=False)
    return out


def _sbuf_transpose(t: NkiTensor) -> NkiTensor:
    """``t.T`` in SBUF via the PE array (how ``matmul(transpose_x=False)`` gets its stationary operand)."""
    tp = new_tile((t.shape[1], t.shape[0]), t.dtype, MemoryRegion.psum)
    nisa.nc_transpose(dst=tp, data=t, engine=nisa.engine.tensor)
    res = new_tile(tp.shape, t.dtype)
    nisa.tensor_copy(dst=res, src=tp)
    return res


def transpose(x: NkiTensor, dtype: object = None, **_: object) -> NkiTensor:
    """2-D partition<->free swap on the Tensor engine; the result is in PSUM."""
    t = tile_arg("transpose", x)
    if len(t.shape) != 2:
        raise HardwareLimitError(f"nl.transpose: tile must be 2-D, got {list(t.shape)}")
    if t.shape[1] > context.current().options.target.limits.partitions:
        raise HardwareLimitError(f"nl.transpose: free size {t.shape[1]} would exceed 128 partitions")
    out = new_tile((t.shape[1], t.shape[0]), t.dtype, MemoryRegion.psum)
    nisa.nc_transpose(dst=out, data=t, engine=nisa.engine.tensor)
    if dtype is None or dtypes.to_dtype(dtype) == t.dtype:
        return out
    cast = new_tile(out.shape, dtypes.to_dtype(dtype), MemoryRegion.psum)
    nisa.tensor_copy(dst=cast, src=out, engine=nisa.engine.vector)
    return cast


@untaken.tile_instruction
def broadcast_to(x: NkiTensor, shape: object, dtype: object = None, **_: object) -> NkiTensor:
    """NumPy-rule broadcast of a tile to ``shape`` (same rank); ``x`` itself when nothing changes."""
    t = tile_arg("broadcast_to", x)
    target = tuple(int(d) for d in shape)  # type: ignore[attr-defined]
    if len(target) != len(t.shape) or any(s not in (1, d) for s, d in zip(t.shape, target, strict=True)):
        raise HardwareLimitError(f"nl.broadcast_to: cannot broadcast {list(t.shape)} to {list(target)}")
    if target == t.shape and dtype is None:
        return t
    out = new_tile(target, t.dtype if dtype is None else dtypes.to_dtype(dtype))
    engine = "tensor" if t.shape[0] != target[0] else "vector"  # partition broadcast = ones-matmul
    context.issue("nl.broadcast_to", engine, reads={"src": t}, writes={"dst": out})
    write(out, np.broadcast_to(read(t), target))
    return out


def expand_dims(x: NkiTensor, axis: int) -> NkiTensor:
    """A view with a new size-1 axis."""
    return x.expand_dim(axis)


@untaken.tile_instruction
def where(condition: NkiTensor, x: object, y: object, dtype: object = None, **_: object) -> NkiTensor:
    """Element-wise select: ``x`` where ``condition`` is non-zero, else ``y``."""
    c = tile_arg("where", condition)
    out = new_tile(
        c.shape,
        result_dtype("where", [x, y], dtype)
        if dtype is not None or isinstance(x, NkiTensor) or isinstance(y, NkiTensor)
        else c.dtype,
    )
    context.issue(
        "nl.where", "vector", reads={"condition": c, "x": x, "y": y}, writes={"dst": out}, flops=out.size
    )
    write(out, np.where(read(c) != 0, value_of("where", x), value_of("where", y)))
    return out


@untaken.tile_instruction
def gather_flattened(
    data: NkiTensor, indices: NkiTensor, axis: int = 0, dtype: object = None, **_: object
) -> NkiTensor:
    """Per-partition gather from the flattened free dims of ``data`` (result shape = ``indices`` shape)."""
    d, i = tile_arg("gather_flattened", data), tile_arg("gather_flattened", indices)
    if d.shape[0] != i.shape[0]:
        raise HardwareLimitError(
            f"nl.gather_flattened: data has {d.shape[0]} partitions, indices {i.shape[0]}"
        )
    out = new_tile(i.shape, d.dtype if dtype is None else dtypes.to_dtype(dtype))
    context.issue("nl.gather_flattened", "gpsimd", reads={"data": d, "indices": i}, writes={"dst": out})
    flat = read(d, raw=True).reshape(d.shape[0], -1)
    idx = read(i, raw=True).reshape(i.shape[0], -1).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= flat.shape[1]):
        raise SimulationError(f"nl.gather_flattened: index out of range [0, {flat.shape[1]})")
    write(out, np.take_along_axis(flat, idx, axis=1).reshape(i.shape))
    return out


@untaken.tile_instruction
def dropout(x: NkiTensor, rate: object, dtype: object = None, **_: object) -> NkiTensor:
    """Zero each element with probability ``rate`` (kept values are not rescaled, like ``nisa.dropout``)."""
    t = tile_arg("dropout", x)
    out = new_tile(t.shape, t.dtype if dtype is None else dtypes.to_dtype(dtype))
    context.issue("nl.dropout", "vector", reads={"x": t, "rate": rate}, writes={"dst": out})
    p = read(rate) if isinstance(rate, NkiTensor) else np.float32(rate)  # type: ignore[arg-type]
    keep = _rng().random(t.shape, dtype=np.float32) >= p
    write(out, np.where(keep, read(t), np.float32(0)))
    return out
