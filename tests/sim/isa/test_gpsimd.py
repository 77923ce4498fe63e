"""GpSimd instructions (isa.md §4) against hand-computed and NumPy oracles."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import PSUM, new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(6)


def test_iota_patterns(sim):
    t = new((64, 1), np.int32)
    nisa.iota(t, [[1, 1]], 0, 2)
    assert raw(t)[:, 0].tolist() == list(range(0, 128, 2))
    g = new((4, 2, 3))
    nisa.iota(g, [[10, 2], [1, 3]], offset=5, channel_multiplier=100)
    expect = 5 + 100 * np.arange(4)[:, None, None] + 10 * np.arange(2)[None, :, None] + np.arange(3)
    np.testing.assert_array_equal(val(g), expect)
    reg = nisa.register_alloc(7)
    nisa.iota(t, [[1, 1]], offset=reg)
    assert raw(t)[0, 0] == 7
    assert sim.recorder.events[-1].engine == "gpsimd"
    with pytest.raises(HardwareLimitError, match="produces 6 elements"):
        nisa.iota(new((4, 5)), [[1, 6]])
    with pytest.raises(HardwareLimitError, match="must be in SBUF"):
        nisa.iota(new((4, 6), buffer=PSUM), [[1, 6]])


def test_affine_select_causal_mask(sim):
    n = 8
    scores = RNG.standard_normal((n, n)).astype(np.float32)
    dst = new((n, n), ml_dtypes.bfloat16)
    # keep where row - col >= 0
    nisa.affine_select(dst, [[-1, n]], 1, tile(scores), -9984.0, cmp_op=nl.greater_equal)
    expect = np.where(np.tril(np.ones((n, n))) > 0, scores, -9984.0).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(val(dst), expect.astype(np.float32))


def test_tensor_partition_reduce(sim):
    x = RNG.standard_normal((32, 7)).astype(np.float32)
    for op, ref in ((nl.add, x.sum(axis=0)), (nl.maximum, x.max(axis=0)), (nl.average, x.mean(axis=0))):
        d = new((1, 7))
        nisa.tensor_partition_reduce(d, op, tile(x))
        np.testing.assert_allclose(val(d)[0], ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(HardwareLimitError, match="one partition"):
        nisa.tensor_partition_reduce(new((2, 7)), nl.add, tile(x))


def test_nc_n_gather(sim):
    data = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    idx = RNG.integers(0, 15, (4, 6)).astype(np.uint32)
    dst = new((4, 6))
    nisa.nc_n_gather(dst, tile(data), tile(idx, np.uint32))
    np.testing.assert_array_equal(
        val(dst), np.take_along_axis(data.reshape(4, 15), idx.astype(np.int64), axis=1)
    )
    with pytest.raises(HardwareLimitError, match="out of range"):
        nisa.nc_n_gather(dst, tile(data), tile(np.full((4, 6), 15), np.uint32))


def test_local_gather_every_core_partition_gets_all_chunks(sim):
    src = RNG.standard_normal((32, 64)).astype(np.float32)
    index = (np.arange(32 * 2).reshape(32, 2) % 16 * 4).astype(np.uint16)
    dst = new((32, 8 * 4))
    nisa.local_gather(dst, tile(src), tile(index, np.uint16), num_elem_per_idx=4, num_valid_indices=8)
    for core in range(2):
        rows = slice(16 * core, 16 * core + 16)
        offs = index[rows].reshape(-1, order="F")[:8].astype(np.int64)
        pos = (offs[:, None] + np.arange(4)).reshape(-1)
        np.testing.assert_array_equal(val(dst)[rows], src[rows][:, pos])


def test_sequence_bounds_doc_example(sim):
    ids = tile(np.array([[0, 1, 1, 2, 2, 2, 0, 3, 3]], np.float32))
    dst = new((1, 2, 9), np.int32)
    nisa.sequence_bounds(dst, ids)
    assert raw(dst)[0, 0].tolist() == [9, 1, 1, 3, 3, 3, 9, 7, 7]
    assert raw(dst)[0, 1].tolist() == [-1, 3, 3, 6, 6, 6, -1, 9, 9]


def test_nonzero_with_count_doc_example(sim):
    src = np.zeros((32, 8), np.float32)
    src[0] = [0, 1, 1, 0, 0, 1, 0, 0]
    src[16] = [1, 0, 0, 0, 0, 0, 0, 2]
    dst = tile(np.full((32, 9), 99), np.int32)
    nisa.nonzero_with_count(dst, tile(src), index_offset=16)
    assert raw(dst)[0].tolist() == [17, 18, 21, -1, -1, -1, -1, -1, 3]
    assert raw(dst)[16].tolist() == [16, 23, -1, -1, -1, -1, -1, -1, 2]
    assert raw(dst)[1].tolist() == [99] * 9  # other partitions untouched


def test_topk_snake_ascending(sim):
    n = 40
    seq = RNG.permutation(n).astype(np.float32)
    snake = np.zeros((16, 3), np.float32)
    for e in range(n):
        snake[e % 16, e // 16] = seq[e]
    vals, idxs = new((16, 5), ml_dtypes.bfloat16), new((16, 5), np.uint32)
    nisa.topk(vals, idxs, tile(snake, ml_dtypes.bfloat16), n)
    order = np.argsort(seq)[-5:]
    assert val(vals)[3].tolist() == seq[order].tolist()
    assert raw(idxs)[3].tolist() == order.tolist()
