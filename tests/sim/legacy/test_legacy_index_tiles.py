"""Legacy index tiles (``nl.arange``, ``nl.mgrid``), ``t[i_p, i_f]`` indexing and ``mask=``, vs NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from nki_studio.sim.errors import SimulationError

SHIFTED_ADD = """
@nki.jit
def add_tiles(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(a.shape[0] // 64):
        i_p = t * 64 + nl.arange(64)[:, None]
        i_f = nl.arange(a.shape[1])[None, :]
        x = nl.load(a[i_p, i_f])
        y = nl.load(b[i_p, i_f])
        nl.store(out[i_p, i_f], value=nl.add(x, y))
    return out
"""


def test_arange_tiles_index_hbm_and_sbuf(legacy):
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 96), np.float32), rng.random((128, 96), np.float32)
    result = legacy(SHIFTED_ADD, a, b)
    np.testing.assert_array_equal(result.outputs[0], a + b)
    assert result.report.nki_version == "legacy"


def test_mgrid_fields_and_index_arithmetic(legacy):
    # out[p, f] = x[p, 2f] (a strided gather through index arithmetic); .p is the column, .x the row.
    source = """
    @nki.jit
    def every_other(x):
        out = nl.ndarray((x.shape[0], x.shape[1] // 2), dtype=x.dtype, buffer=nl.shared_hbm)
        grid = nl.mgrid[0:x.shape[0], 0:x.shape[1] // 2]
        tile = nl.load(x[grid.p, grid.x * 2])
        i_p, i_f = nl.mgrid[0:x.shape[0], 0:x.shape[1] // 2]
        nl.store(out[i_p, i_f], value=tile)
        return out
    """
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    np.testing.assert_array_equal(legacy(source, x).outputs[0], x[:, ::2])


def test_mask_limits_a_ragged_last_tile(legacy):
    # 200 rows in tiles of 128: the second tile's rows 200..255 are masked off (they lie outside the tensor).
    source = """
    @nki.jit
    def plus_one(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_f = nl.arange(x.shape[1])[None, :]
        for t in nl.affine_range((x.shape[0] + 127) // 128):
            i_p = t * 128 + nl.arange(128)[:, None]
            tile = nl.load(x[i_p, i_f], mask=(i_p < x.shape[0]))
            nl.store(out[i_p, i_f], value=nl.add(tile, 1.0), mask=(i_p < x.shape[0]))
        return out
    """
    x = np.random.default_rng(1).random((200, 64), np.float32)
    np.testing.assert_array_equal(legacy(source, x).outputs[0], x + np.float32(1.0))


def test_mask_keeps_masked_off_elements_of_the_destination(legacy):
    # Only the upper triangle (i_f >= i_p) of the output is stored; the rest keeps the input's values.
    source = """
    @nki.jit
    def upper(x, out):
        i_p, i_f = nl.mgrid[0:x.shape[0], 0:x.shape[1]]
        tile = nl.load(x[i_p, i_f])
        nl.store(out[i_p, i_f], value=nl.multiply(tile, 2.0), mask=(i_f >= i_p))
        return out
    """
    x = np.random.default_rng(2).random((16, 16), np.float32)
    out = np.full((16, 16), -1.0, np.float32)
    expected = np.where(np.triu(np.ones((16, 16), bool)), 2 * x, -1.0)
    np.testing.assert_array_equal(legacy(source, x, out).outputs[0], expected)


def test_index_outside_the_tensor_without_a_mask_is_an_error(legacy):
    source = """
    @nki.jit
    def overrun(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p = 64 + nl.arange(128)[:, None]
        nl.store(out[i_p, nl.arange(8)[None, :]], value=nl.load(x[i_p, nl.arange(8)[None, :]]))
        return out
    """
    with pytest.raises(
        SimulationError, match=r"nl\.load: an nl\.arange/nl\.mgrid index .* mask=\(index < size\)"
    ):
        legacy(source, np.zeros((128, 8), np.float32))


def test_a_predicate_is_not_a_python_bool(legacy):
    source = """
    @nki.jit
    def branch(x):
        i_p = nl.arange(128)[:, None]
        if i_p < 5:
            pass
        return x
    """
    with pytest.raises(SimulationError, match="compile-time mask"):
        legacy(source, np.zeros((128, 8), np.float32))


def test_masked_off_out_of_bounds_elements_never_land_in_the_tensor(legacy):
    # An 8-wide tile stored into 6 columns under mask=(i_f < 6): the 2 masked-off columns lie outside the tensor
    # and must not overwrite any element (they once aliased element [0, 0]).
    source = """
    @nki.jit
    def narrow(x):
        out = nl.ndarray((16, 6), dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:16, 0:8]
        nl.store(out[i_p, i_f], value=nl.load(x), mask=(i_f < 6))
        return out
    """
    x = np.random.default_rng(14).random((16, 8), np.float32)
    np.testing.assert_array_equal(legacy(source, x).outputs[0], x[:, :6])
