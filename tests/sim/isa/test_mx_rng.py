"""MX quantise/matmul (isa.md §1.2, §3.20) against the [MX] golden formulas; RNG stand-ins (§3.21, §3.23)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import PSUM, new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(8)
E4 = ml_dtypes.float8_e4m3fn


def _pack(values: np.ndarray) -> np.ndarray:
    """[K, F, 4] floats -> [K, F] uint32 of float8_e4m3fn (element 0 in the lowest byte)."""
    return np.ascontiguousarray(values.astype(E4)).view(np.uint8).view("<u4")[..., 0]


def test_nc_matmul_mx_against_golden_einsum(trn3):
    k, m, n = 64, 2, 3
    s_vals = RNG.integers(-4, 5, (k, m, 4)).astype(np.float32)
    v_vals = RNG.integers(-4, 5, (k, n, 4)).astype(np.float32)
    s_exp = RNG.integers(125, 130, (k // 8, m)).astype(np.uint8)
    v_exp = RNG.integers(125, 130, (k // 8, n)).astype(np.uint8)
    # K > 32: scale row i lives at partition 32*(i//4) + i%4 of a K-partition scale tile
    s_scale, v_scale = np.zeros((k, m), np.uint8), np.zeros((k, n), np.uint8)
    for i in range(k // 8):
        s_scale[32 * (i // 4) + i % 4], v_scale[32 * (i // 4) + i % 4] = s_exp[i], v_exp[i]
    dst = new((m, n), buffer=PSUM)
    nisa.nc_matmul_mx(
        dst,
        tile(_pack(s_vals), "float8_e4m3fn_x4"),
        tile(_pack(v_vals), "float8_e4m3fn_x4"),
        tile(s_scale, np.uint8),
        tile(v_scale, np.uint8),
    )
    s = s_vals * np.exp2(np.repeat(s_exp, 8, axis=0).astype(np.float32) - 127)[:, :, None]
    v = v_vals * np.exp2(np.repeat(v_exp, 8, axis=0).astype(np.float32) - 127)[:, :, None]
    np.testing.assert_allclose(val(dst), np.einsum("kiq,kjq->ij", s, v), rtol=1e-6)


def test_quantize_mx_scale_and_values(trn3):
    src = RNG.standard_normal((32, 8)).astype(ml_dtypes.bfloat16)
    dst = new((32, 2), "float8_e4m3fn_x4")
    scale = tile(np.zeros((32, 2)), np.uint8)
    nisa.quantize_mx(dst, tile(src, ml_dtypes.bfloat16), scale)
    v = src.astype(np.float32).reshape(4, 8, 2, 4)
    amax = np.abs(v).max(axis=(1, 3))
    exp = np.floor(np.log2(amax)) - 7  # Emax(e4m3fn) - 1
    assert raw(scale)[:4].tolist() == (exp + 127).astype(np.uint8).tolist()
    q = (v / np.exp2(exp)[:, None, :, None]).astype(E4).reshape(32, 2, 4)
    assert raw(dst).tolist() == _pack(q.astype(np.float32)).tolist()
    assert np.all(raw(scale)[4:] == 0)  # other partitions untouched


def test_mx_is_trn3_only(sim):
    with pytest.raises(HardwareLimitError, match="NeuronCore-v4"):
        nisa.quantize_mx(new((32, 2)), new((32, 8)), new((32, 2)))


def test_rng_is_deterministic_and_seedable(sim):
    a, b = new((4, 8), np.uint16), new((4, 8), np.uint16)
    seed = tile(np.array([[123]]), np.uint32)
    nisa.set_rng_seed(seed)
    nisa.rng(a)
    nisa.set_rng_seed(seed)
    nisa.rng(b)
    assert raw(a).tolist() == raw(b).tolist()
    assert len(set(raw(a).reshape(-1).tolist())) > 20


def test_dropout_extremes_and_no_rescaling(sim):
    x = RNG.standard_normal((8, 64)).astype(np.float32)
    out = new((8, 64))
    nisa.dropout(out, tile(x), 0.0)
    np.testing.assert_array_equal(val(out), x)
    nisa.dropout(out, tile(x), 1.0)
    assert np.all(val(out) == 0)
    nisa.dropout(out, tile(x), 0.5)
    kept = val(out) != 0
    np.testing.assert_array_equal(val(out)[kept], x[kept])
    assert 0.3 < kept.mean() < 0.7


def test_rand2_range(trn3):
    out = new((4, 100))
    nisa.rand2(out, -2.0, 3.0)
    assert val(out).min() >= -2 and val(out).max() <= 3


def test_quantize_mx_scale_tile_may_have_several_free_dims(trn3):
    src = RNG.standard_normal((32, 16)).astype(ml_dtypes.bfloat16)
    dst = new((32, 1, 4), "float8_e4m3fn_x4")
    scale = tile(np.zeros((32, 1, 4)), ml_dtypes.float8_e8m0fnu)
    nisa.quantize_mx(dst, tile(src, ml_dtypes.bfloat16), scale)
    amax = np.abs(src.astype(np.float32).reshape(4, 8, 4, 4)).max(axis=(1, 3))
    expect = (np.floor(np.log2(amax)) - 7 + 127).astype(np.uint8)
    assert raw(scale)[:4].reshape(4, 4).view(np.uint8).tolist() == expect.tolist()


def _mx_operands(k: int, m: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random MXFP8 values and scale exponents for a K <= 32 tile (scale rows at partitions [0, K/8))."""
    s_vals = RNG.integers(-4, 5, (k, m, 4)).astype(np.float32)
    v_vals = RNG.integers(-4, 5, (k, n, 4)).astype(np.float32)
    s_scale = np.zeros((k, m), np.uint8)
    v_scale = np.zeros((k, n), np.uint8)
    s_scale[: k // 8] = RNG.integers(125, 130, (k // 8, m))
    v_scale[: k // 8] = RNG.integers(125, 130, (k // 8, n))
    return s_vals, v_vals, s_scale, v_scale


def _dequant(vals: np.ndarray, scale: np.ndarray, k: int) -> np.ndarray:
    return vals * np.exp2(np.repeat(scale[: k // 8], 8, axis=0).astype(np.float32) - 127)[:, :, None]


def test_nc_matmul_mx_gathers_moving_and_its_scale_with_one_index(trn3):
    k, m, cols, n = 32, 2, 40, 33
    s_vals, v_vals, s_scale, v_scale = _mx_operands(k, m, cols)
    offsets = RNG.permutation(cols)[:n]
    index = np.zeros((32, 2), np.int32)  # Tensor engine: offset i at index[i % 32, i // 32]
    for i, o in enumerate(offsets):
        index[i % 32, i // 32] = o
    idx = tile(index, np.int32)
    mv = tile(_pack(v_vals), "float8_e4m3fn_x4")
    mvs = tile(v_scale, np.uint8)
    dst = new((m, n), buffer=PSUM)
    nisa.nc_matmul_mx(
        dst,
        tile(_pack(s_vals), "float8_e4m3fn_x4"),
        mv.indirect(idx, n),
        tile(s_scale, np.uint8),
        mvs.indirect(idx, n),
    )
    s = _dequant(s_vals, s_scale, k)
    v = _dequant(v_vals, v_scale, k)[:, offsets]
    np.testing.assert_allclose(val(dst), np.einsum("kiq,kjq->ij", s, v), rtol=1e-6)


def test_nc_matmul_mx_pairs_share_their_indirection(trn3):
    k, m, cols, n = 32, 2, 40, 32
    s_vals, v_vals, s_scale, v_scale = _mx_operands(k, m, cols)
    st, sts = tile(_pack(s_vals), "float8_e4m3fn_x4"), tile(s_scale, np.uint8)
    mv, mvs = tile(_pack(v_vals), "float8_e4m3fn_x4"), tile(v_scale, np.uint8)
    one = tile(np.arange(32, dtype=np.int32).reshape(32, 1), np.int32)
    other = tile(np.arange(32, dtype=np.int32)[::-1].reshape(32, 1).copy(), np.int32)
    with pytest.raises(HardwareLimitError, match="same index, or neither"):
        nisa.nc_matmul_mx(new((m, n), buffer=PSUM), st, mv.indirect(one, n), sts, mvs)
    with pytest.raises(HardwareLimitError, match="same index, or neither"):
        nisa.nc_matmul_mx(new((m, n), buffer=PSUM), st, mv.indirect(one, n), sts, mvs.indirect(other, n))
    with pytest.raises(HardwareLimitError, match="cannot be combined with tile_position"):
        nisa.nc_matmul_mx(
            new((m, n), buffer=PSUM),
            st,
            mv.indirect(one, n),
            sts,
            mvs.indirect(one, n),
            tile_position=(32, 0),
            tile_size=(32, 128),
        )
