"""GpSimd Engine instructions (isa.md §4): ``iota``, ``affine_select``, ``tensor_partition_reduce``,
``local_gather``, ``nc_n_gather``, ``sequence_bounds``, ``nonzero_with_count``, ``topk``. GpSimd reads and
writes SBUF only (isa.md §0.3).
"""

from __future__ import annotations

import math

import numpy as np
from nki_studio.sim import alu, checks, context, untaken
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.scalars import index_value
from nki_studio.sim.tensor import NkiTensor

F32 = np.float32


def _affine(op: str, pattern: object, offset: object, channel_multiplier: object, p: int) -> np.ndarray:
    """``offset + c*channel_multiplier + sum(i_k*step_k)`` for every partition ``c`` and free position of an
    up-to-4-level pattern ``[[step, num], ...]`` (row-major), in int32 arithmetic; shape ``(P, prod(num))``."""
    try:
        levels = [(index_value(s), index_value(n)) for s, n in pattern]  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise HardwareLimitError(f"{op}: pattern must be a list of [step, num] pairs") from None
    if not 1 <= len(levels) <= 4:
        raise HardwareLimitError(f"{op}: pattern must have 1 to 4 [step, num] levels, got {len(levels)}")
    free = np.zeros(1, np.int64)
    for step, num in levels:
        free = (free[:, None] + np.arange(num, dtype=np.int64)[None, :] * step).reshape(-1)
    base = index_value(offset) + np.arange(p, dtype=np.int64)[:, None] * index_value(channel_multiplier)
    values = base + free[None, :]
    return ((values + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int64)  # int32 wrap


@untaken.instruction
def iota(
    dst: NkiTensor,
    pattern: object,
    offset: object = 0,
    channel_multiplier: object = 0,
    name: str | None = None,
) -> NkiInstruction:
    """Affine index values per partition and pattern position, cast to ``dst.dtype`` (isa.md §4.1)."""
    opname = "nisa.iota"
    d = c.tensor(opname, "dst", dst, c.SBUF)
    p = d.shape[0]
    values = _affine(opname, pattern, offset, channel_multiplier, p)
    if values.shape[1] != checks.free_size(d):
        raise HardwareLimitError(
            f"{opname}: the pattern produces {values.shape[1]} elements per partition, "
            f"dst holds {checks.free_size(d)}"
        )
    context.issue(opname, "gpsimd", writes={"dst": d})
    c.store(d, values)
    return c.handle(opname, name)


@untaken.instruction
def affine_select(
    dst: NkiTensor,
    pattern: object,
    channel_multiplier: object,
    on_true_tile: NkiTensor,
    on_false_value: object,
    cmp_op: object = "equal",
    offset: object = 0,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = on_true_tile where cmp_op(affine_value, 0) else on_false_value`` (isa.md §4.2); values pass
    through FP32 when dtypes differ."""
    opname = "nisa.affine_select"
    d = c.tensor(opname, "dst", dst, c.SBUF)
    t = c.tensor(opname, "on_true_tile", on_true_tile, c.SBUF)
    p, f = c.same_shape2d(opname, dst=d, on_true_tile=t)
    cmp = c.alu_op(
        opname,
        "cmp_op",
        cmp_op if cmp_op is not None else "equal",
        allowed=("equal", "not_equal", "greater", "greater_equal", "less", "less_equal"),
    )
    fill = c.scalar_operand(opname, "on_false_value", on_false_value, p, allow_tensor=False)
    values = _affine(opname, pattern, offset, channel_multiplier, p)
    if values.shape[1] != f:
        raise HardwareLimitError(
            f"{opname}: the pattern produces {values.shape[1]} elements per partition, dst holds {f}"
        )
    context.issue(opname, "gpsimd", reads={"on_true_tile": t}, writes={"dst": d}, flops=2 * p * f)
    keep = cmp.fn(values, 0) != 0
    if c.same_storage_dtype(d, t):
        chosen = np.where(keep, c.mat(t, raw=True), np.asarray(fill).astype(F32).astype(d._data.dtype))
    else:
        chosen = np.where(keep, c.mat(t), fill)
    c.store(d, chosen)
    return c.handle(opname, name)


@untaken.instruction
def tensor_partition_reduce(
    dst: NkiTensor, op: object, data: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Reduce across partitions: ``dst[0, ...] = op(data, axis=0)`` (isa.md §4.3); FP32 *(inferred)*."""
    opname = "nisa.tensor_partition_reduce"
    d = c.tensor(opname, "dst", dst, c.SBUF)
    x = c.tensor(opname, "data", data, c.SBUF)
    f = checks.free_size(x)
    if d.shape[0] != 1 or checks.free_size(d) != f:
        raise HardwareLimitError(f"{opname} dst must be one partition of {f} elements, got {list(d.shape)}")
    opr = None
    if alu.op_name(op) != "average":
        opr = c.alu_op(opname, "op", op, reduce=True, allowed=("add", "maximum", "bitwise_or", "bitwise_and"))
        if opr.kind == alu.BITVEC:
            c.integer(opname, "data", x)
    context.issue(opname, "gpsimd", reads={"data": x}, writes={"dst": d}, flops=x.size)
    if opr is None:
        c.store(d, c.mat(x).mean(axis=0, dtype=F32, keepdims=True))
        return c.handle(opname, name)
    if opr.kind == alu.BITVEC:
        c.store_raw(d, np.asarray(opr.reduce(c.mat(x, raw=True), (0,))).reshape(1, -1))
    else:
        c.store(d, np.asarray(opr.reduce(c.mat(x), (0,))).reshape(1, -1))
    return c.handle(opname, name)


@untaken.instruction
def nc_n_gather(
    dst: NkiTensor, data: NkiTensor, indices: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Per-partition gather from the flattened free dims: ``dst[p, j] = data[p].ravel()[indices[p, j]]``
    (isa.md §4.5); an out-of-range index is an error."""
    opname = "nisa.nc_n_gather"
    d = c.tensor(opname, "dst", dst, c.SBUF)
    x = c.tensor(opname, "data", data, c.SBUF)
    ix = c.tensor(opname, "indices", indices, c.SBUF)
    checks.same_partitions(opname, dst=d, data=x, indices=ix)
    checks.same_free_size(opname, dst=d, indices=ix)
    c.dtype_in(opname, "indices", ix, ("uint32",))
    if d.dtype_name != x.dtype_name:
        raise HardwareLimitError(f"{opname}: dst dtype {d.dtype_name} must equal data dtype {x.dtype_name}")
    f = checks.free_size(x)
    idx = c.mat(ix, raw=True).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= f):
        raise HardwareLimitError(f"{opname}: index {int(idx.max())} out of range [0, {f})")
    context.issue(opname, "gpsimd", reads={"data": x, "indices": ix}, writes={"dst": d})
    c.store(d, np.take_along_axis(c.mat(x, raw=True), idx, axis=1))
    return c.handle(opname, name)


@untaken.instruction
def local_gather(
    dst: NkiTensor,
    src_buffer: NkiTensor,
    index: NkiTensor,
    num_elem_per_idx: int = 1,
    num_valid_indices: int | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """Each GpSimd core (16 partitions) gathers ``num_elem_per_idx``-element chunks of its partitions and
    every partition of the core receives all chunks (isa.md §4.4, [T] NumPy reference).

    AMBIGUOUS (isa.md §4.4): index unit. We read index values as element offsets into each partition's
    flattened data (the value hardware receives in the test), i.e. chunk ``i`` starts at element ``i``.
    """
    opname = "nisa.local_gather"
    d = c.tensor(opname, "dst", dst, c.SBUF)
    src = c.tensor(opname, "src_buffer", src_buffer, c.SBUF)
    ix = c.tensor(opname, "index", index, c.SBUF)
    c.dtype_in(opname, "index", ix, ("uint16",))
    p = checks.same_partitions(opname, src_buffer=src, index=ix, dst=d)
    if p % 16:
        raise HardwareLimitError(f"{opname}: partitions ({p}) must be a multiple of 16")
    if num_elem_per_idx not in (1, 2, 4, 8, 16, 32):
        raise HardwareLimitError(
            f"{opname}: num_elem_per_idx must be 1, 2, 4, 8, 16 or 32, got {num_elem_per_idx}"
        )
    if d.dtype_name != src.dtype_name:
        raise HardwareLimitError(
            f"{opname}: dst dtype {d.dtype_name} must equal src_buffer dtype {src.dtype_name}"
        )
    cores = p // 16
    per_core = ix.size // cores
    n = per_core if num_valid_indices is None else int(num_valid_indices)
    if n > per_core or n > 4096:
        raise HardwareLimitError(
            f"{opname}: num_valid_indices {n} exceeds the {min(per_core, 4096)} indices per core"
        )
    k = num_elem_per_idx
    if n * k != checks.free_size(d):
        raise HardwareLimitError(
            f"{opname}: dst must hold num_valid_indices*num_elem_per_idx = {n * k} "
            f"elements per partition, got {checks.free_size(d)}"
        )
    context.issue(opname, "gpsimd", reads={"src_buffer": src, "index": ix}, writes={"dst": d})
    data = c.mat(src, raw=True)
    idx = c.mat(ix, raw=True).astype(np.int64)
    out = np.empty((p, n * k), data.dtype)
    fsrc = data.shape[1]
    for core in range(cores):
        rows = slice(16 * core, 16 * core + 16)
        offs = idx[rows].reshape(-1, order="F")[:n]  # down the partitions first
        pos = offs[:, None] + np.arange(k)[None, :]
        if pos.size and (pos.min() < 0 or pos.max() >= fsrc):
            raise HardwareLimitError(f"{opname}: index out of range for {fsrc} elements per partition")
        out[rows] = data[rows][:, pos.reshape(-1)]
    c.store(d, out)
    return c.handle(opname, name)


@untaken.instruction
def sequence_bounds(dst: NkiTensor, segment_ids: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Start and end (exclusive) of each element's run of equal segment ids; padding (0) gets ``n``/``-1``
    (isa.md §4.6)."""
    opname = "nisa.sequence_bounds"
    d = c.tensor(opname, "dst", dst, c.SBUF)
    s = c.tensor(opname, "segment_ids", segment_ids, c.SBUF)
    if s.shape[0] != 1 or d.shape[0] != 1:
        raise HardwareLimitError(f"{opname}: segment_ids and dst must have one partition")
    c.dtype_in(opname, "segment_ids", s, ("float32", "int32"))
    c.dtype_in(opname, "dst", d, ("float32", "int32"))
    n = checks.free_size(s)
    if checks.free_size(d) != 2 * n:
        raise HardwareLimitError(f"{opname}: dst must be (1, 2, {n}), got {list(d.shape)}")
    context.issue(opname, "gpsimd", reads={"segment_ids": s}, writes={"dst": d})
    ids = c.mat(s).reshape(-1)
    change = np.flatnonzero(np.diff(ids) != 0) + 1
    starts_of_runs = np.concatenate([[0], change])
    ends_of_runs = np.concatenate([change, [n]])
    run = np.repeat(np.arange(starts_of_runs.size), np.diff(np.concatenate([starts_of_runs, [n]])))
    start = starts_of_runs[run].astype(np.int64)
    end = ends_of_runs[run].astype(np.int64)
    pad = ids == 0
    start[pad], end[pad] = n, -1
    c.store(d, np.concatenate([start, end]).reshape(1, -1))
    return c.handle(opname, name)


@untaken.instruction
def nonzero_with_count(
    dst: NkiTensor,
    src: NkiTensor,
    index_offset: object = 0,
    padding_val: object = -1,
    name: str | None = None,
) -> NkiInstruction:
    """On partitions 0, 16, ..., 112: indices of the non-zero elements (+ offset), padding, then the count
    in the last column; other partitions untouched (v3+, isa.md §4.7)."""
    opname = "nisa.nonzero_with_count"
    c.require_version(opname, 3)
    d = c.tensor(opname, "dst", dst, c.SBUF)
    s = c.tensor(opname, "src", src, c.SBUF)
    c.dtype_in(opname, "src", s, ("float32", "int32"))
    c.dtype_in(opname, "dst", d, ("int32",))
    checks.same_partitions(opname, dst=d, src=s)
    t = checks.free_size(s)
    if checks.free_size(d) != t + 1:
        raise HardwareLimitError(
            f"{opname}: dst needs {t + 1} elements per partition (src + count), got {checks.free_size(d)}"
        )
    off, pad = index_value(index_offset), index_value(padding_val)
    context.issue(opname, "gpsimd", reads={"src": s}, writes={"dst": d})
    values = c.mat(s)
    for row in range(0, s.shape[0], 16):
        hits = np.flatnonzero(values[row] != 0)
        out = np.full(t + 1, pad, np.int64)
        out[: hits.size] = hits + off
        out[t] = hits.size
        c.store(d[row : row + 1], out.reshape(1, -1))
    return c.handle(opname, name)


@untaken.instruction
def topk(
    val_dst: NkiTensor, idx_dst: NkiTensor, src: NkiTensor, n: int, name: str | None = None
) -> NkiInstruction:
    """The K largest of ``n`` values held in a 16-partition snake (element ``e`` at partition ``e % 16``,
    column ``e // 16``), ascending, with their positions (isa.md §4.8).

    AMBIGUOUS there: each 16-partition group (GpSimd core) is read as one snake and its K results are
    written to every partition of the group; ties keep the lower position first (stable sort).
    """
    opname = "nisa.topk"
    vd = c.tensor(opname, "val_dst", val_dst, c.SBUF)
    idd = c.tensor(opname, "idx_dst", idx_dst, c.SBUF)
    s = c.tensor(opname, "src", src, c.SBUF)
    p = checks.same_partitions(opname, val_dst=vd, idx_dst=idd, src=s)
    if p % 16:
        raise HardwareLimitError(f"{opname}: partitions ({p}) must be a multiple of 16")
    c.dtype_in(opname, "src", s, ("bfloat16",))
    c.dtype_in(opname, "val_dst", vd, ("bfloat16",))
    c.dtype_in(opname, "idx_dst", idd, ("uint32",))
    k = checks.free_size(vd)
    if checks.free_size(idd) != k:
        raise HardwareLimitError(f"{opname}: val_dst and idx_dst must have the same free size")
    n = int(n)
    if not 8 <= n < 65536 or checks.free_size(s) < math.ceil(n / 16):
        raise HardwareLimitError(f"{opname}: n={n} must be in [8, 65536) and fit in the src snake")
    if not 1 <= k <= n or k >= 32768:
        raise HardwareLimitError(f"{opname}: K={k} must satisfy 1 <= K <= n and K < 32768")
    context.issue(opname, "gpsimd", reads={"src": s}, writes={"val_dst": vd, "idx_dst": idd}, flops=4 * n + k)
    data = c.mat(s)
    vals = np.empty((p, k), F32)
    idxs = np.empty((p, k), np.int64)
    for g in range(p // 16):
        block = data[16 * g : 16 * g + 16]
        seq = block.T.reshape(-1)[:n]  # element e = block[e % 16, e // 16]
        order = np.argsort(-seq, kind="stable")[:k][::-1]
        vals[16 * g : 16 * g + 16] = seq[order]
        idxs[16 * g : 16 * g + 16] = order
    c.store(vd, vals)
    c.store_raw(idd, idxs.astype(np.uint32))
    return c.handle(opname, name)
