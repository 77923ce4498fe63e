"""Legacy gathers by a tile of indices, slices past the end under a mask, 4-D grids, PSUM accumulation groups
and the pre-0.6.0 float->int truncation, vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest


def test_tile_of_indices_gathers_rows(legacy):
    # out[p, :] = x[idx[p], :] with idx computed on chip (the resize-nearest pattern); rows past n are masked off.
    source = """
    @nki.jit
    def gather_rows(x, n_out):
        out = nl.ndarray((n_out, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(x.shape[1])[None, :]
        pos = nisa.iota(i_p, dtype=nl.int32)
        src = nl.floor(nl.multiply(pos, 0.5, dtype=nl.float32), dtype=nl.int32)  # row p reads row p // 2
        rows = nl.load(x[src, i_f], mask=(i_p < n_out))
        nl.store(out[i_p, i_f], value=rows, mask=(i_p < n_out))
        return out
    """
    x = np.random.default_rng(8).random((50, 16), np.float32)
    np.testing.assert_array_equal(legacy(source, x, 100).outputs[0], x[np.arange(100) // 2])


def test_slice_past_the_end_under_a_mask(legacy):
    source = """
    @nki.jit
    def copy_rows(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        for t in nl.affine_range((x.shape[0] + 127) // 128):
            tile = nl.load(x[t * 128:(t + 1) * 128, :], mask=(t * 128 + i_p < x.shape[0]))
            nl.store(out[t * 128:(t + 1) * 128, :], value=tile, mask=(t * 128 + i_p < x.shape[0]))
        return out
    """
    x = np.random.default_rng(9).random((160, 8), np.float32)
    np.testing.assert_array_equal(legacy(source, x).outputs[0], x)


def test_four_dimensional_mgrid_names_axes_p_x_y_z(legacy):
    # windows[p, a, b, c] = x[p, 2 * a + c] for a in 0..3, c in 0..1 (b, of size 1, is y): the sliding-window idiom.
    source = """
    @nki.jit
    def windows(x):
        out = nl.ndarray((x.shape[0], 4, 1, 2), dtype=x.dtype, buffer=nl.shared_hbm)
        w = nl.mgrid[0:x.shape[0], 0:4, 0:1, 0:2]
        t = nl.load(x)
        win = nl.copy(t[w.p, 2 * w.x + w.z + w.y])
        nl.store(out, value=win)
        return out
    """
    x = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    expected = np.stack([x[:, 2 * a : 2 * a + 2] for a in range(4)], axis=1)[:, :, None, :]
    np.testing.assert_array_equal(legacy(source, x).outputs[0], expected)


@pytest.mark.parametrize(
    "allocation",
    ["nl.zeros(shape, nl.float32, buffer=nl.psum)", "nl.ndarray(shape, dtype=nl.float32, buffer=nl.psum)"],
)
def test_psum_plus_equals_value_returning_matmul_is_an_accumulation_group(legacy, allocation):
    # out = lhsT.T @ rhs over a contraction of 384 in 128-partition steps; on an uninitialised (nl.ndarray) PSUM
    # tile the first += overwrites, as a matmul accumulation group does.
    source = f"""
    @nki.jit
    def dot(lhsT, rhs):
        shape = (lhsT.shape[1], rhs.shape[1])
        out = nl.ndarray(shape, dtype=nl.float32, buffer=nl.shared_hbm)
        acc = {allocation}
        for k in nl.affine_range(lhsT.shape[0] // 128):
            acc += nisa.nc_matmul(nl.load(lhsT[k * 128:(k + 1) * 128, :]), nl.load(rhs[k * 128:(k + 1) * 128, :]))
        nl.store(out, value=nl.copy(acc))
        return out
    """
    rng = np.random.default_rng(10)
    a, b = rng.random((384, 32), np.float32), rng.random((384, 64), np.float32)
    np.testing.assert_allclose(legacy(source, a, b).outputs[0], a.T @ b, rtol=1e-4)


def test_float_to_int_truncates_and_finfo_and_reshape_by_keyword(legacy):
    # The legacy simulator cast with NumPy's truncation (RNE only since 0.6.0): 2.5 -> 2, 3.7 -> 3, -1.5 -> -1.
    source = """
    @nki.jit
    def to_int(x):
        out = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.shared_hbm)
        low = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x.reshape(shape=(1, 4)))
        nl.store(out, value=nl.copy(t, dtype=nl.int32))
        nl.store(low, value=nl.full((1, 1), nl.finfo(nl.bfloat16).min, dtype=nl.float32))
        return out, low
    """
    out, low = legacy(source, np.array([2.5, 3.7, -1.5, 0.2], np.float32)).outputs
    assert out.tolist() == [[2, 3, -1, 0]]
    assert low[0, 0] == -3.3895313892515355e38  # bfloat16's lowest finite value


def test_two_loop_reduce_sites_and_a_one_dimensional_load(legacy):
    # Row-block max and sum of x (B blocks of 128 rows) by two loop_reduce calls; a (128,) column of y loads as
    # (128, 1) and scales the sum per partition.
    source = """
    @nki.jit
    def reduce_blocks(x, y):
        out = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
        top = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
        for b in nl.affine_range(x.shape[0] // 128):
            t = nl.load(x[b * 128:(b + 1) * 128, :])
            total = nl.loop_reduce(t, op=np.add, loop_indices=[b])
            biggest = nl.loop_reduce(t, op=np.maximum, loop_indices=[b])
        scale = nl.load(y[0:128, 1])
        nl.store(out, value=nl.multiply(total, scale))
        nl.store(top, value=biggest)
        return out, top
    """
    rng = np.random.default_rng(11)
    x, y = rng.random((512, 24), np.float32), rng.random((128, 3), np.float32)
    out, top = legacy(source, x, y).outputs
    blocks = x.reshape(4, 128, 24)
    np.testing.assert_allclose(out, blocks.sum(axis=0) * y[:, 1:2], rtol=1e-5)
    np.testing.assert_array_equal(top, blocks.max(axis=0))


def test_reductions_over_free_axes_with_a_gap(legacy):
    # the legacy AveragePool2D tutorial reduces axis=[2, 4] of a 5-D grid view (0.7 only trailing axes): the kept
    # dims stay in order, as NumPy's
    source = """
    @nki.jit
    def pooled(x):
        C, H, W = x.shape
        out = nl.ndarray((C, H // 2, W // 3), dtype=x.dtype, buffer=nl.shared_hbm)
        i0, i1, i2, i3, i4 = nl.mgrid[0:C, 0:H // 2, 0:2, 0:W // 3, 0:3]
        t = nl.load(x)
        nl.store(out, value=nl.sum(t[i0, 2 * i1 + i2, 3 * i3 + i4], axis=[2, 4]))
        return out
    """
    x = np.random.default_rng(12).random((16, 4, 9), np.float32)
    expected = x.reshape(16, 2, 2, 3, 3).sum(axis=(2, 4), dtype=np.float32)
    np.testing.assert_allclose(legacy(source, x).outputs[0], expected, rtol=1e-6)


def test_an_integer_tile_divided_by_an_int_truncates_the_quotient(legacy):
    # (int32 tile, Python int) -> int32 (legacy weak typing), computed in FP32 and cast with the legacy
    # truncation: the resize-nearest kernel's floor(position / width) relies on it (0.7 rounds instead)
    source = """
    @nki.jit
    def rows(x):
        out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        pos = nisa.iota(i_p - 64, dtype=nl.int32)
        nl.store(out, value=nl.floor(pos / 38, dtype=nl.int32))
        return out
    """
    positions = np.arange(-64, 64)
    expected = np.trunc(positions / 38).astype(np.int32)[:, None]
    np.testing.assert_array_equal(legacy(source, np.zeros((1, 1), np.float32)).outputs[0], expected)
