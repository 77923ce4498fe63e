"""max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle (isa.md §3.16-§3.19)."""

from __future__ import annotations

import numpy as np
import pytest
from isa_tiles import new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(5)


def test_max8_then_find_index8_is_top8_argmax(sim):
    x = RNG.standard_normal((16, 100)).astype(np.float32)
    top = new((16, 8))
    nisa.max8(top, tile(x))
    expect = -np.sort(-x, axis=1)[:, :8]
    np.testing.assert_array_equal(val(top), expect)
    idx = new((16, 8), np.uint32)
    nisa.nc_find_index8(idx, tile(x), top)
    np.testing.assert_array_equal(raw(idx), np.argsort(-x, axis=1, kind="stable")[:, :8])
    with pytest.raises(HardwareLimitError, match=r"8\.\.16384"):
        nisa.max8(new((16, 8)), tile(np.ones((16, 4))))


def test_find_index8_duplicates_and_misses(sim):
    data = tile(np.array([[5, 1, 5, 2, 5, 0, 0, 0]], np.float32))
    vals = tile(np.array([[5, 5, 9, 1, 5, 5, 2, 0]], np.float32))
    idx = new((1, 8), np.uint16)
    nisa.nc_find_index8(idx, data, vals)
    assert raw(idx).tolist() == [[0, 2, 0xFFFF, 1, 4, 0xFFFF, 3, 5]]


def test_match_replace8_reverse_duplicates(sim):
    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    dst, idx = new((1, 11)), new((1, 8), np.uint32)
    nisa.nc_match_replace8(dst, tile(data), tile(vals), -1.0, dst_idx=idx)
    assert raw(idx).tolist() == [[2, 10, 9, 8, 7, 6, 5, 4]]  # the documented example
    assert val(dst).tolist() == [[1, 2, -1, 4, -1, -1, -1, -1, -1, -1, -1]]


def test_stream_shuffle_rotate_broadcast_and_keep(sim):
    x = np.arange(64 * 2, dtype=np.float32).reshape(64, 2)
    dst = new((64, 2))
    nisa.nc_stream_shuffle(dst, tile(x), [(i - 1) % 32 for i in range(32)])
    expect = np.concatenate([np.roll(x[:32], 1, axis=0), np.roll(x[32:], 1, axis=0)])
    np.testing.assert_array_equal(val(dst), expect)
    one = tile(np.array([[7.0, 8.0]]))
    wide = tile(np.zeros((32, 2)))
    nisa.nc_stream_shuffle(wide, one, [0] * 32)
    assert np.all(val(wide) == [7, 8])
    inplace = tile(x[:32].copy())
    nisa.nc_stream_shuffle(inplace, inplace, [255] + [0] * 31)
    assert val(inplace)[0].tolist() == [0, 1] and np.all(val(inplace)[1:] == [0, 1])
    with pytest.raises(HardwareLimitError, match="32 values"):
        nisa.nc_stream_shuffle(dst, tile(x), [0] * 16)
