"""nc_matmul / nc_transpose against NumPy (isa.md §1.1, §1.3): PSUM accumulation, dtypes, limits."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import PSUM, new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim.errors import HardwareLimitError, SimulationError

RNG = np.random.default_rng(0)
BF16 = ml_dtypes.bfloat16


def test_matmul_bf16_matches_numpy_with_fp32_accumulation(sim):
    a = RNG.standard_normal((128, 96)).astype(BF16)
    b = RNG.standard_normal((128, 512)).astype(BF16)
    dst = new((96, 512), buffer=PSUM)
    nisa.nc_matmul(dst, tile(a, BF16), tile(b, BF16))
    expect = a.astype(np.float32).T @ b.astype(np.float32)
    np.testing.assert_allclose(val(dst), expect, rtol=1e-5, atol=1e-4)
    ev = sim.recorder.events[-1]
    assert (ev.op, ev.engine, ev.flops) == ("nisa.nc_matmul", "tensor", 2 * 128 * 96 * 512)
    assert ev.bytes_read == {"sbuf": (128 * 96 + 128 * 512) * 2}
    assert ev.bytes_written == {"psum": 96 * 512 * 4}
    assert ev.file == __file__


def test_accumulate_none_overwrites_first_then_accumulates(sim):
    a, b = np.ones((4, 2), np.float32), np.full((4, 3), 2.0, np.float32)
    dst = new((2, 3), buffer=PSUM)  # NaN sentinel: an accumulate would show NaN
    ta, tb = tile(a), tile(b)
    nisa.nc_matmul(dst, ta, tb)
    assert np.all(val(dst) == 8)
    nisa.nc_matmul(dst, ta, tb)
    assert np.all(val(dst) == 16)
    nisa.nc_matmul(dst, ta, tb, accumulate=False)
    assert np.all(val(dst) == 8)


def test_accumulate_is_per_element_for_overlapping_writes(sim):
    dst = new((2, 4), buffer=PSUM)
    ta, tb = tile(np.ones((1, 2), np.float32)), tile(np.ones((1, 2), np.float32))
    nisa.nc_matmul(dst[:, 0:2], ta, tb)
    nisa.nc_matmul(dst[:, 1:3], ta, tb)  # column 1 accumulates, column 2 is a first write
    assert val(dst)[0, :3].tolist() == [1, 2, 1]


def test_accumulate_true_on_memset_psum_warns(sim):
    dst = new((2, 3), buffer=PSUM)
    nisa.memset(dst, 1.0)
    nisa.nc_matmul(dst, tile(np.ones((4, 2), np.float32)), tile(np.ones((4, 3), np.float32)), accumulate=True)
    assert np.all(val(dst) == 5)
    assert any("accumulate=True" in w for w in sim.warnings)
    # a non-matmul write clears the flags: accumulate=None overwrites again
    nisa.memset(dst, 0.0)
    nisa.nc_matmul(dst, tile(np.ones((4, 2), np.float32)), tile(np.ones((4, 3), np.float32)))
    assert np.all(val(dst) == 4)


def test_double_row_fp8_einsum(sim):
    s = RNG.integers(-3, 4, (8, 2, 4)).astype(ml_dtypes.float8_e4m3)
    m = RNG.integers(-3, 4, (8, 2, 5)).astype(ml_dtypes.float8_e5m2)
    dst = new((4, 5), buffer=PSUM)
    nisa.nc_matmul(dst, tile(s, s.dtype), tile(m, m.dtype), perf_mode="double_row")
    np.testing.assert_array_equal(
        val(dst), np.einsum("kli,klj->ij", s.astype(np.float32), m.astype(np.float32))
    )


def test_double_row_needs_trn2(trn1):
    s = tile(np.ones((8, 2, 4)), ml_dtypes.float8_e4m3)
    with pytest.raises(HardwareLimitError, match="NeuronCore-v3"):
        nisa.nc_matmul(new((4, 4), buffer=PSUM), s, s, perf_mode=nisa.matmul_perf_mode.double_row)


def test_transpose_mode_is_bit_exact(sim):
    x = np.array([[1.0, np.nan], [np.inf, -2.5]], np.float32).astype(BF16)
    dst = new((2, 2), BF16, buffer=PSUM)
    nisa.nc_matmul(dst, tile(x, BF16), tile(np.eye(2), BF16), is_transpose=True)
    assert raw(dst).view(np.uint16).tolist() == x.T.view(np.uint16).tolist()


@pytest.mark.parametrize(
    ("sshape", "mshape", "dshape", "dtype", "message"),
    [
        ((64, 129), (64, 4), (128, 4), np.float32, "stationary free size 129 exceeds maximum 128"),
        ((64, 4), (64, 513), (4, 513), np.float32, "moving free size 513 exceeds maximum 512"),
        ((64, 4), (64, 8), (4, 9), np.float32, r"dst must be \[4, 8\]"),
        ((64, 4), (64, 8), (4, 8), BF16, "dst dtype bfloat16 is not supported on trn2"),
    ],
)
def test_matmul_limits(sim, sshape, mshape, dshape, dtype, message):
    with pytest.raises(HardwareLimitError, match=message) as err:
        nisa.nc_matmul(new(dshape, dtype, PSUM), new(sshape), new(mshape))
    assert err.value.file == __file__


def test_matmul_trn3_allows_wide_moving_and_bf16_dst(trn3):
    a, b = np.ones((4, 2), np.float32), np.ones((4, 4096), np.float32)
    dst = new((2, 4096), BF16, PSUM)
    nisa.nc_matmul(dst, tile(a, BF16), tile(b, BF16))
    assert np.all(val(dst) == 4)


def test_matmul_rejects_mixed_fp32_and_bf16_and_wrong_buffers(sim):
    with pytest.raises(HardwareLimitError, match="float32/tfloat32 only combine"):
        nisa.nc_matmul(new((4, 4), buffer=PSUM), new((8, 4), BF16), new((8, 4)))
    with pytest.raises(HardwareLimitError, match="stationary must be in SBUF, not PSUM"):
        nisa.nc_matmul(new((4, 4), buffer=PSUM), new((8, 4), buffer=PSUM), new((8, 4)))


def test_tiling_checks(sim):
    s, m = tile(np.ones((32, 32), np.float32)), tile(np.ones((32, 8), np.float32))
    nisa.nc_matmul(new((32, 8), buffer=PSUM), s, m, tile_position=(32, 0), tile_size=(32, 32))
    with pytest.raises(HardwareLimitError, match="multiple of 64"):
        nisa.nc_matmul(new((32, 8), buffer=PSUM), s, m, tile_position=(32, 0), tile_size=(64, 128))
    with pytest.raises(HardwareLimitError, match="given together"):
        nisa.nc_matmul(new((32, 8), buffer=PSUM), s, m, tile_position=(0, 0))


def test_nc_transpose_engines(sim):
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    dst = new((64, 128), buffer=PSUM)
    nisa.nc_transpose(dst, tile(x))
    np.testing.assert_array_equal(val(dst), x.T)
    assert sim.recorder.events[-1].engine == "tensor"
    small = RNG.standard_normal((32, 16)).astype(np.float32)
    out = new((16, 32))
    nisa.nc_transpose(out, tile(small), engine=nisa.engine.vector)
    np.testing.assert_array_equal(val(out), small.T)
    assert sim.recorder.events[-1].engine == "vector"
    with pytest.raises(HardwareLimitError, match="at most \\[32, 32\\]"):
        nisa.nc_transpose(new((64, 128)), tile(x), engine=nisa.engine.vector)
    with pytest.raises(HardwareLimitError, match="must equal data dtype"):
        nisa.nc_transpose(new((64, 128), BF16, PSUM), tile(x))


def test_indirect_matmul_operands_gather_columns_in_groups_of_32(trn3):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    data = tile(x, BF16)
    xb = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    offsets = rng.permutation(64)[:48]  # offset i sits at index[i % 32, i // 32] on the Tensor engine
    index_values = np.zeros((32, 2), np.int32)
    for i, off in enumerate(offsets):
        index_values[i % 32, i // 32] = off
    index = tile(index_values, np.int32)
    out = new((16, 48), buffer=PSUM)
    stationary = tile(x[:, :16], BF16)
    nisa.nc_matmul(out, stationary, data.indirect(index, 48))
    expected = xb[:, :16].T @ xb[:, offsets]
    np.testing.assert_allclose(val(out), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(HardwareLimitError, match="tile_position"):
        nisa.nc_matmul(out, stationary, data.indirect(index, 48), tile_position=(32, 0), tile_size=(32, 128))
    with pytest.raises(HardwareLimitError, match="bfloat16"):
        nisa.nc_matmul(out, tile(x[:, :16]), tile(x).indirect(index, 48))  # float32 input


def test_indirect_matmul_needs_neuroncore_v4(sim):
    data = tile(np.ones((32, 64), np.float32), BF16)
    index = tile(np.zeros((32, 2), np.int32), np.int32)
    with pytest.raises(HardwareLimitError, match="NeuronCore-v4"):
        nisa.nc_matmul(new((16, 48), buffer=PSUM), tile(np.ones((32, 16)), BF16), data.indirect(index, 48))


def test_matmul_dst_must_stay_in_one_psum_bank_before_trn3(sim):
    acc = new((4, 1024), buffer=PSUM)  # two 2 KiB banks per partition
    s, m = tile(np.ones((8, 4), np.float32)), tile(np.ones((8, 512), np.float32))
    nisa.nc_matmul(acc[:, 512:1024], s, m)
    with pytest.raises(HardwareLimitError, match="crosses a 2048-byte PSUM bank boundary"):
        nisa.nc_matmul(acc[:, 256:768], s, m)


def test_vector_engine_reads_the_same_indirect_view_in_groups_of_16(trn3):
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    data = tile(x, BF16)
    index_values = np.zeros((32, 2), np.int32)
    offsets = np.arange(32)[::-1] + 5
    for i, off in enumerate(offsets):
        index_values[i % 16, i // 16] = off
    out = new((32, 32))
    nisa.tensor_copy(dst=out, src=data.indirect(tile(index_values, np.int32), 32))
    np.testing.assert_array_equal(val(out), x.astype(ml_dtypes.bfloat16).astype(np.float32)[:, offsets])
    tensor_shaped = data.indirect(tile(np.zeros((32, 2), np.int32), np.int32), 48)  # 48 > 16 x 2 offsets
    with pytest.raises(SimulationError, match="groups of 16"):
        nisa.tensor_copy(dst=new((32, 48)), src=tensor_shaped)
