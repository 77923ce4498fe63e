"""Microscaling (MX, OCP) instructions of NeuronCore-v4: ``nc_matmul_mx`` (Tensor engine, isa.md §1.2) and
``quantize_mx`` (Vector engine, isa.md §3.20), after the CPU golden model of the MX deep dive ([MX]).

Packing: a ``float8_*_x4`` element is a uint32 holding 4 fp8 values (element 0 in the lowest byte), a
``float4_e2m1fn_x4`` a uint16 holding 4 nibbles (low nibble first). One 8-bit scale (``2**(e - 127)``) covers
32 contraction values = 8 partitions x 4 packed values; scale row ``i`` sits at partition ``i`` when the data
has at most 32 partitions, else at ``32*(i//4) + i%4`` (quadrant layout).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from nki_studio.sim import checks, context, untaken
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.isa.tensor_ops import accumulate_into, moving_limit, pe_matmul, tensor_engine_view, tiling
from nki_studio.sim.tensor import NkiTensor

_MX_DATA = {
    "float8_e5m2_x4": ml_dtypes.float8_e5m2,
    "float8_e4m3fn_x4": ml_dtypes.float8_e4m3fn,
    "float4_e2m1fn_x4": ml_dtypes.float4_e2m1fn,
}


def _unpack_mx(t: NkiTensor) -> np.ndarray:
    """An x4 tile ``[K, F]`` as float32 ``[K, F, 4]`` (element 0 in the lowest bits, [MX] golden)."""
    raw = np.ascontiguousarray(c.mat(t, raw=True))
    name = t.dtype_name
    if name == "float4_e2m1fn_x4":
        nibbles = np.stack([(raw >> (4 * i)) & 0xF for i in range(4)], axis=-1).astype(np.uint8)
        return nibbles.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    return raw.astype(np.uint32).view(np.uint8).reshape(*raw.shape, 4).view(_MX_DATA[name]).astype(np.float32)


def scale_partitions(k: int) -> list[int]:
    """Partition of each of the ``k // 8`` scale rows of a ``k``-partition data tile (quadrant layout)."""
    return [i if k <= 32 else 32 * (i // 4) + i % 4 for i in range(k // 8)]


def _mx_scales(op: str, role: str, scale: NkiTensor, k: int, f: int) -> np.ndarray:
    """Per-data-partition scale factors ``[K, F]``: scale row ``k // 8`` stored at partition ``k//8`` for
    K <= 32, else at ``32*(i//4) + i%4`` (quadrant layout, isa.md §1.2)."""
    c.dtype_in(op, role, scale, ("float8_e8m0fnu", "uint8"))
    raw = c.mat(scale, raw=True)
    if scale.dtype_name == "float8_e8m0fnu":
        raw = np.asarray(raw).view(np.uint8)
    rows = k // 8
    where = scale_partitions(k)
    if max(where, default=0) >= raw.shape[0] or raw.shape[1] < f:
        raise HardwareLimitError(
            f"{op} {role} {list(scale.shape)} does not hold the {rows} scale rows of "
            f"{f} values a [{k}, {f}] tile needs"
        )
    exps = raw[where, :f].astype(np.float32)
    return np.repeat(np.exp2(exps - 127.0), 8, axis=0)


def _same_index(a: NkiTensor, b: NkiTensor) -> bool:
    """Whether two ``.indirect()`` views gather with the same offsets (same index values and count)."""
    ra, rb = getattr(a, "_indirect", None), getattr(b, "_indirect", None)
    if ra is None or rb is None:
        return True  # a view of an indirect view: tensor_engine_view refuses it as not modelled
    return ra[2] == rb[2] and np.array_equal(ra[1], rb[1])


def _indirect_pair(
    op: str, data: tuple[str, NkiTensor], scale: tuple[str, NkiTensor], tiled: bool
) -> tuple[NkiTensor, NkiTensor]:
    """A data tile and its scale tile as the Tensor engine reads them: both ``.indirect()`` with the same index,
    or neither (isa.md §1.2); gathered views regrouped to the engine's 32-offset groups (isa.md §0.8). The
    16-bit/FP8 dtype list of ``nc_matmul`` indirection is not applied: §1.2 states none for the x4 types."""
    (drole, d), (srole, s) = data, scale
    if d.is_indirect() != s.is_indirect() or (d.is_indirect() and not _same_index(d, s)):
        raise HardwareLimitError(
            f"{op}: {drole} and {srole} must both use tensor indirection with the same index, or neither"
        )
    if not d.is_indirect():
        return d, s
    return (
        tensor_engine_view(op, drole, d, tiled=tiled, inputs=False),
        tensor_engine_view(op, srole, s, tiled=tiled, inputs=False),
    )


@untaken.instruction
def nc_matmul_mx(
    dst: NkiTensor,
    stationary: NkiTensor,
    moving: NkiTensor,
    stationary_scale: NkiTensor,
    moving_scale: NkiTensor,
    tile_position: object = None,
    tile_size: object = None,
    accumulate: bool | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """MX matmul with on-the-fly dequantisation (v4, isa.md §1.2, [MX] golden model)."""
    op = "nisa.nc_matmul_mx"
    c.require_version(op, 4)
    d = c.tensor(op, "dst", dst, c.PSUM)
    st = c.tensor(op, "stationary", stationary, c.SBUF)
    mv = c.tensor(op, "moving", moving, c.SBUF)
    sts = c.tensor(op, "stationary_scale", stationary_scale, c.SBUF)
    mvs = c.tensor(op, "moving_scale", moving_scale, c.SBUF)
    # "incompatible with tiling": tile_position must be (0, 0) or unset, as for nc_matmul (isa.md §1.1-1.2)
    tiled = isinstance(tile_position, (tuple, list)) and any(int(x) for x in tile_position)
    d = tensor_engine_view(op, "dst", d, tiled=tiled, inputs=False)
    st, sts = _indirect_pair(op, ("stationary", st), ("stationary_scale", sts), tiled)
    mv, mvs = _indirect_pair(op, ("moving", mv), ("moving_scale", mvs), tiled)
    c.dtype_in(op, "stationary", st, tuple(_MX_DATA))
    c.dtype_in(op, "moving", mv, tuple(_MX_DATA))
    lim = c.limits()
    if d.dtype_name not in lim.psum_dst_dtypes:
        raise HardwareLimitError(f"{op} dst dtype {d.dtype_name} must be {' or '.join(lim.psum_dst_dtypes)}")
    k = checks.same_partitions(op, stationary=st, moving=mv)
    m, n = checks.free_size(st), checks.free_size(mv)
    if k % 32 or k > lim.matmul_contraction_max:
        raise HardwareLimitError(
            f"{op}: K={k} must be a multiple of 32 and at most {lim.matmul_contraction_max}"
        )
    if m % 2 or m > lim.matmul_stationary_free_max:
        raise HardwareLimitError(
            f"{op}: stationary free size {m} must be even and at most {lim.matmul_stationary_free_max}"
        )
    if n > moving_limit(d):
        raise HardwareLimitError(f"{op}: moving free size {n} exceeds maximum {moving_limit(d)}")
    if d.shape[0] != m or checks.free_size(d) != n:
        raise HardwareLimitError(f"{op} dst must be [{m}, {n}], got {list(d.shape)}")
    if tile_position or tile_size:
        tiling(op, tile_position, tile_size, k, m, "none")
    context.issue(
        op,
        "tensor",
        reads={"stationary": st, "moving": mv, "stationary_scale": sts, "moving_scale": mvs},
        writes={"dst": d},
        flops=2 * 4 * k * m * n,
    )
    s = _unpack_mx(st) * _mx_scales(op, "stationary_scale", sts, k, m)[:, :, None]
    v = _unpack_mx(mv) * _mx_scales(op, "moving_scale", mvs, k, n)[:, :, None]
    s2 = s.transpose(0, 2, 1).reshape(4 * k, m)
    v2 = v.transpose(0, 2, 1).reshape(4 * k, n)
    accumulate_into(op, d, pe_matmul(s2, v2), accumulate)
    return c.handle(op, name)


_QUANT = {
    "float8_e4m3fn_x4": (ml_dtypes.float8_e4m3fn, 8, 448.0),
    "float8_e5m2_x4": (ml_dtypes.float8_e5m2, 15, 57344.0),
}


@untaken.instruction
def quantize_mx(
    dst: NkiTensor, src: NkiTensor, dst_scale: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Quantise FP16/BF16 ``src[P, F]`` into MXFP8 ``dst[P, F/4]`` and per-group scales (v4, isa.md §3.20).

    Per group of 32 values (8 partitions x 4 consecutive elements): ``X = 2**(floor(log2(amax)) - (Emax-1))``
    (the 0.5.0+ formula; ``2**-127`` for an all-zero group), ``q = fp8(V / X)`` with RNE and saturation to the
    max normal *(inferred; the docs do not state rounding/saturation)*, scale byte ``127 + log2(X)``.
    """
    op = "nisa.quantize_mx"
    c.require_version(op, 4)
    s = c.tensor(op, "src", src, c.SBUF)
    d = c.tensor(op, "dst", dst, c.SBUF)
    sc = c.tensor(op, "dst_scale", dst_scale, c.SBUF)
    c.dtype_in(op, "src", s, ("float16", "bfloat16"))
    fp8, emax, max_normal = _QUANT[c.dtype_in(op, "dst", d, tuple(_QUANT))]
    c.dtype_in(op, "dst_scale", sc, ("float8_e8m0fnu", "uint8"))
    p, f = s.shape[0], checks.free_size(s)
    if p % 32 or f % 4:
        raise HardwareLimitError(
            f"{op}: src [{p}, {f}] needs partitions a multiple of 32 and a free size a multiple of 4"
        )
    if d.shape[0] != p or checks.free_size(d) != f // 4:
        raise HardwareLimitError(f"{op}: dst must be [{p}, {f // 4}], got {list(d.shape)}")
    rows = scale_partitions(p)
    if sc.shape[0] <= max(rows) or checks.free_size(sc) != f // 4:
        raise HardwareLimitError(
            f"{op}: dst_scale {list(sc.shape)} cannot hold scale rows at partitions "
            f"{rows} with {f // 4} values each"
        )
    context.issue(op, "vector", reads={"src": s}, writes={"dst": d, "dst_scale": sc}, flops=2 * p * f)
    v = c.mat(s).reshape(p // 8, 8, f // 4, 4)
    amax = np.abs(v).max(axis=(1, 3))  # [groups, F/4]
    with np.errstate(divide="ignore"):
        exp = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - (emax - 1), -127.0)
    exp = np.clip(exp, -127, 127)
    scaled = v / np.exp2(exp)[:, None, :, None]
    q = np.clip(scaled, -max_normal, max_normal).astype(fp8)
    packed = np.ascontiguousarray(q.reshape(p, f // 4, 4)).view(np.uint8).view("<u4").reshape(p, f // 4)
    c.store_raw(d, packed.astype(np.uint32))
    scale_bytes = (exp + 127).astype(np.uint8)
    cols = f // 4
    for i, part in enumerate(rows):
        row = sc[part : part + 1]  # keeps its free dims; values are laid out row-major
        c.store_raw(row, scale_bytes[i : i + 1].reshape(1, cols).view(row._data.dtype))
    return c.handle(op, name)
