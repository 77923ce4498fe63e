"""``service.migration`` on value-returning ISA calls (bn_stats/bn_aggr, values used inside expressions, results
cast by a dtype held in a name) and transposed two-dim index tiles, each rewritten and proven by simulating both
versions."""

from __future__ import annotations

from collections.abc import Callable

# Statistics over 1024 columns: two bn_stats of 512 written side by side, aggregated by bn_aggr (the nki-samples
# layernorm tutorial's pattern).
STATISTICS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,1024]
@nki.jit
def k(a):
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    stats = nl.ndarray((128, 12), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        stats[:, j * 6:(j + 1) * 6] = nisa.bn_stats(t[:, j * 512:(j + 1) * 512], dtype=nl.float32)
    mean_var = nisa.bn_aggr(stats)
    nl.store(out, value=mean_var)
    return out
"""

# A transpose read inside an expression, reductions cast by a dtype held in a name, and a tile stored transposed
# through its index tiles (the nki-samples SD attention kernel's constructs).
TRANSPOSED = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,64] b=float32[64,128]
@nki.jit
def k(a, b):
    out = nl.ndarray((2, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    sums = nl.ndarray((64, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    scaled = y * nisa.nc_transpose(x)
    i_p = nl.arange(64)[:, None]
    i_f = nl.arange(128)[None, :]
    nl.store(out[1, i_f, i_p], value=scaled)
    red = nl.ndarray((64, 2), dtype=nl.float32, buffer=nl.sbuf)
    same = red.dtype
    wide = nl.float32
    red[:, 0:1] = nisa.tensor_reduce(np.add, data=y, axis=(1,), dtype=same)
    red[:, 1:2] = nisa.tensor_reduce(np.max, data=scaled, axis=(1,), dtype=wide)
    nl.store(sums, value=red)
    copied = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.sbuf)
    t[:, :] = nisa.nc_transpose(x)
    nl.store(copied, value=t)
    return out, sums, copied
"""


# Sliding windows through nl.mgrid grids (an object read by field, a tuple unpacked), an index expression held in a
# name for iota, and a fill value from nl.finfo (nki-samples' select_and_scatter and average_pool2d constructs).
GRIDS = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,8,8]
@nki.jit
def k(a):
    windows = nl.ndarray((128, 3, 2, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    ids = nl.ndarray((1, 1, 2, 2), dtype=nl.uint32, buffer=nl.shared_hbm)
    sums = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.full((128, 8, 10), fill_value=nl.finfo(nl.float32).min, dtype=nl.float32, buffer=nl.sbuf)
    t[:, 0:8, 1:9] = nl.load(a)
    g = nl.mgrid[0:128, 0:3, 0:2, 0:2]
    nl.store(windows, value=nl.copy(t[g.p, 2 * g.x + g.y, g.z]))
    flat = 2 * g.y + g.z
    nl.store(ids, value=nisa.iota(flat, dtype=nl.uint32))
    i0, i1, i2 = nl.mgrid[0:128, 0:4, 0:2]
    pairs = nl.copy(t[i0, 2 * i1 + i2, 3])
    nl.store(sums, value=nl.sum(pairs, axis=[2]))
    return windows, ids, sums
"""


# A running maximum started at the lowest FP32 value (nki-samples' flash attention: nl.full(..., nl.fp32.min,
# lazy_initialization=False)).
LOWEST = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,64]
@nki.jit
def k(a):
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    running = nl.full((128, 1), fill_value=nl.fp32.min, dtype=nl.float32, buffer=nl.sbuf, lazy_initialization=False)
    floor = nl.full((128, 1), fill_value=0.5 * nl.fp32.min, dtype=nl.float32, buffer=nl.sbuf)
    t = nl.load(a)
    running[...] = nl.maximum(running, nl.max(t, axis=[1], keepdims=True))
    nl.store(out[:, 0:1], value=running)
    nl.store(out[:, 1:2], value=floor)
    return out
"""


def test_fp32_min_and_lazy_initialization_are_rewritten_and_proven(proven: Callable[[str], str]) -> None:
    migrated = proven(LOWEST)
    assert "buffer=nl.sbuf)" in migrated and "lazy_initialization" not in migrated
    assert "fill_value=-3.4028235e+38" in migrated and "0.5 * (-3.4028235e+38)" in migrated
    assert "fp32" not in migrated


def test_bn_stats_and_bn_aggr_values_are_rewritten_and_proven(proven: Callable[[str], str]) -> None:
    migrated = proven(STATISTICS)
    assert "nisa.bn_stats(dst=stats[:, j * 6:(j + 1) * 6], data=t[:, j * 512:(j + 1) * 512])" in migrated
    assert (
        "mean_var = nl.ndarray((stats.shape[0], 2), dtype=stats.dtype, buffer=nl.sbuf); "
        "nisa.bn_aggr(dst=mean_var, data=stats)" in migrated
    )


def test_nested_values_dtype_names_and_transposed_tiles_are_rewritten_and_proven(
    proven: Callable[[str], str],
) -> None:
    migrated = proven(TRANSPOSED)
    assert (
        "nc_transpose_value1 = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.psum); "
        "nisa.nc_transpose(dst=nc_transpose_value1, data=x); scaled = nl.multiply(y, nc_transpose_value1)"
    ) in migrated
    assert "out.ap(pattern=[[1, 64], [out.shape[2], 128]], offset=out.shape[1] * out.shape[2])" in migrated
    assert "nisa.tensor_reduce(dst=red[:, 1:2], op=np.max, data=scaled, axis=(1,))" in migrated
    assert "arange" not in migrated
    # into an SBUF tile (rewritten first, by isa_results): through PSUM, as the legacy Tensor engine transpose (0.7 would pick the Vector engine)
    assert (
        "nisa.nc_transpose(dst=nc_transpose_value, data=x); nisa.tensor_copy(dst=t[:, :], src=nc_transpose_value)"
        in migrated
    )


def test_mgrid_windows_iota_of_a_named_expression_and_finfo_are_rewritten_and_proven(
    proven: Callable[[str], str],
) -> None:
    migrated = proven(GRIDS)
    assert "np.finfo(nl.float32).min" in migrated
    assert (
        "t.ap(pattern=[[t.shape[1] * t.shape[2], 128], [2 * t.shape[2], 3], [t.shape[2], 2], [1, 2]])"
        in migrated
    )
    assert (
        "nisa.iota(dst=iota_value, pattern=[[0, 1], [2, 2], [1, 2]], offset=0, channel_multiplier=0)"
        in migrated
    )
    assert "mgrid" not in migrated and "flat =" not in migrated
