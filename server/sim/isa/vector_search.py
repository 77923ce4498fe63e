"""Vector Engine search and shuffle instructions (isa.md §3.16-§3.19): ``max8``, ``nc_find_index8``,
``nc_match_replace8``, ``nc_stream_shuffle``. Values are compared in FP32.
"""

from __future__ import annotations

import numpy as np
from nki_studio.sim import checks, context, untaken
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.scalars import index_value
from nki_studio.sim.tensor import NkiTensor

_MIN_F, _MAX_F = 8, 16384  # elements per partition of max8 / find_index8 sources (isa.md §3.16-§3.17)


def _search_source(op: str, role: str, t: NkiTensor) -> int:
    if t.ndim > 3:
        raise HardwareLimitError(f"{op} {role} may have at most 3 dimensions, got {list(t.shape)}")
    f = checks.free_size(t)
    if not _MIN_F <= f <= _MAX_F:
        raise HardwareLimitError(f"{op} {role} must have {_MIN_F}..{_MAX_F} elements per partition, got {f}")
    return f


def _eight(op: str, role: str, t: NkiTensor, p: int) -> None:
    if t.shape[0] != p or checks.free_size(t) != 8:
        raise HardwareLimitError(f"{op} {role} must be [{p}, 8], got {list(t.shape)}")


@untaken.instruction
def max8(dst: NkiTensor, src: NkiTensor, name: str | None = None) -> NkiInstruction:
    """The 8 largest values of each partition in descending order, duplicates kept (isa.md §3.16; engine
    not named in the docs, Vector presumed)."""
    opname = "nisa.max8"
    d = c.tensor(opname, "dst", dst)
    s = c.tensor(opname, "src", src)
    p = s.shape[0]
    f = _search_source(opname, "src", s)
    _eight(opname, "dst", d, p)
    context.issue(opname, "vector", reads={"src": s}, writes={"dst": d}, flops=p * f)
    v = c.mat(s)
    top = -np.partition(-v, 7, axis=1)[:, :8] if f > 8 else v
    c.store(d, -np.sort(-top, axis=1))
    return c.handle(opname, name)


def _occurrences(row: np.ndarray, vals: np.ndarray, order: range) -> np.ndarray:
    """Index of each value's next unused occurrence in ``row`` (visiting ``vals`` in ``order``); -1 if none."""
    used: dict[float, int] = {}
    out = np.full(len(vals), -1, np.int64)
    for j in order:
        v = float(vals[j])
        hits = np.flatnonzero(row == v)
        k = used.get(v, 0)
        if k < hits.size:
            out[j] = hits[k]
        used[v] = k + 1
    return out


@untaken.instruction
def nc_find_index8(
    dst: NkiTensor, data: NkiTensor, vals: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Index of the first occurrence of each of the 8 ``vals`` per partition; the j-th duplicate takes the
    j-th occurrence; a miss is all-ones (isa.md §3.17, 0.6.0 simulator fixes)."""
    opname = "nisa.nc_find_index8"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    v = c.tensor(opname, "vals", vals)
    p = checks.same_partitions(opname, dst=d, data=x, vals=v)
    f = _search_source(opname, "data", x)
    _eight(opname, "vals", v, p)
    _eight(opname, "dst", d, p)
    c.dtype_in(opname, "dst", d, ("uint32", "uint16"))
    context.issue(opname, "vector", reads={"data": x, "vals": v}, writes={"dst": d}, flops=8 * p * f)
    rows, targets = c.mat(x), c.mat(v)
    miss = np.iinfo(d._data.dtype).max
    out = np.empty((p, 8), np.int64)
    for i in range(p):
        idx = _occurrences(rows[i], targets[i], range(8))
        out[i] = np.where(idx < 0, miss, idx)
    c.store_raw(d, out.astype(d._data.dtype))
    return c.handle(opname, name)


@untaken.instruction
def nc_match_replace8(
    dst: NkiTensor,
    data: NkiTensor,
    vals: NkiTensor,
    imm: float,
    dst_idx: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = data`` with the first unmatched occurrence of each of the 8 ``vals`` replaced by ``imm``;
    duplicates are processed from j = 7 down to 0 (isa.md §3.18). A value that is not found leaves ``dst``
    unchanged and writes all-ones into ``dst_idx`` (the docs do not say; same convention as
    ``nc_find_index8``, documented in docs/simulator.md)."""
    opname = "nisa.nc_match_replace8"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    v = c.tensor(opname, "vals", vals)
    p, f = c.same_shape2d(opname, dst=d, data=x)
    _search_source(opname, "data", x)
    _eight(opname, "vals", v, p)
    idx_t = None
    if dst_idx is not None:
        idx_t = c.tensor(opname, "dst_idx", dst_idx)
        _eight(opname, "dst_idx", idx_t, p)
        c.dtype_in(opname, "dst_idx", idx_t, ("uint32", "uint16", "int32"))
    context.issue(
        opname, "vector", reads={"data": x, "vals": v}, writes={"dst": d, "dst_idx": idx_t}, flops=8 * p * f
    )
    rows = np.array(c.mat(x), dtype=np.float32)
    targets = c.mat(v)
    found = np.empty((p, 8), np.int64)
    for i in range(p):
        found[i] = _occurrences(rows[i], targets[i], range(7, -1, -1))
        hit = found[i][found[i] >= 0]
        rows[i, hit] = np.float32(imm)
    c.store(d, rows)
    if idx_t is not None:
        miss = np.iinfo(idx_t._data.dtype).max
        c.store_raw(idx_t, np.where(found < 0, miss, found).astype(idx_t._data.dtype))
    return c.handle(opname, name)


@untaken.instruction
def nc_stream_shuffle(
    dst: NkiTensor, src: NkiTensor, shuffle_mask: object, name: str | None = None
) -> NkiInstruction:
    """Within each 32-partition quadrant ``dst[32q + i] = src[32q + mask[i]]``; 255 keeps ``dst[32q + i]``
    (isa.md §3.19). All sources are read before writing, so ``dst is src`` works."""
    opname = "nisa.nc_stream_shuffle"
    d = c.tensor(opname, "dst", dst)
    s = c.tensor(opname, "src", src)
    if d.dtype_name != s.dtype_name:
        raise HardwareLimitError(f"{opname}: dst dtype {d.dtype_name} must equal src dtype {s.dtype_name}")
    f = checks.same_free_size(opname, dst=d, src=s)
    try:
        mask = [index_value(m) for m in shuffle_mask]  # type: ignore[attr-defined]
    except TypeError:
        raise HardwareLimitError(f"{opname}: shuffle_mask must be a list of 32 integers") from None
    if len(mask) != 32 or any(not (0 <= m < 32 or m == 255) for m in mask):
        raise HardwareLimitError(f"{opname}: shuffle_mask must hold 32 values in 0..31 or 255, got {mask}")
    ps, pd = s.shape[0], d.shape[0]
    quadrants = -(-max(ps, pd) // 32)
    moves = [
        (32 * q + i, 32 * q + m)
        for q in range(quadrants)
        for i, m in enumerate(mask)
        if m != 255 and 32 * q + i < pd
    ]
    for row, from_row in moves:
        if from_row >= ps:
            raise HardwareLimitError(
                f"{opname}: dst partition {row} reads src partition {from_row}, but src has {ps} partitions"
            )
    context.issue(opname, "vector", reads={"src": s}, writes={"dst": d}, flops=0)
    source = np.array(c.mat(s, raw=True))
    out = np.array(c.mat(d, raw=True)) if 255 in mask else np.empty((pd, f), source.dtype)
    for row, from_row in moves:
        out[row] = source[from_row]
    c.store(d, out)
    return c.handle(opname, name)
