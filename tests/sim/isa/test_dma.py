"""dma_copy / dma_transpose / dma_compute (isa.md §5)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import HBM, PSUM, new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(7)
BF16 = ml_dtypes.bfloat16


def test_dma_copy_same_dtype_is_bit_exact_and_traced(sim):
    x = RNG.standard_normal((256, 64)).astype(BF16)
    src = tile(x, BF16, HBM)
    dst = new((128, 64), BF16)
    nisa.dma_copy(dst, src[128:256, :])
    assert raw(dst).view(np.uint16).tolist() == x[128:].view(np.uint16).tolist()
    ev = sim.recorder.events[-1]
    assert (ev.engine, ev.bytes_read, ev.bytes_written) == (
        "dma",
        {"hbm": 128 * 64 * 2},
        {"sbuf": 128 * 64 * 2},
    )


def test_dma_copy_casts_through_fp32_and_reorders_row_major(sim):
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    dst = new((4, 2, 3), BF16)
    nisa.dma_copy(dst, tile(x, np.float32, HBM))
    np.testing.assert_array_equal(val(dst).reshape(4, 6), x.astype(BF16).astype(np.float32))
    out = new((24,), np.float32, HBM)
    nisa.dma_copy(out, dst)
    np.testing.assert_array_equal(val(out), x.astype(BF16).astype(np.float32).reshape(-1))


def test_dma_copy_indirect_gather_rows(sim):
    table = RNG.standard_normal((10, 8)).astype(np.float32)
    idx = np.array([[3], [0], [9], [3]], np.int32)
    src = tile(table, np.float32, HBM)
    dst = new((4, 8))
    nisa.dma_copy(dst, src.ap([[8, 4], [1, 8]], vector_offset=tile(idx, np.int32), indirect_dim=0))
    np.testing.assert_array_equal(val(dst), table[idx[:, 0]])


def test_dma_copy_checks(sim):
    with pytest.raises(HardwareLimitError, match="cannot be in PSUM"):
        nisa.dma_copy(new((2, 2), buffer=HBM), tile(np.ones((2, 2)), buffer=PSUM))
    with pytest.raises(HardwareLimitError, match="has 4 elements"):
        nisa.dma_copy(new((2, 2)), tile(np.ones((3, 2)), buffer=HBM))
    with pytest.raises(HardwareLimitError, match="hwdge needs equal dtypes"):
        nisa.dma_copy(new((2, 2), BF16), tile(np.ones((2, 2)), buffer=HBM), dge_mode=nisa.dge_mode.hwdge)
    with pytest.raises(HardwareLimitError, match=r"priority= needs NeuronCore-v4"):
        nisa.dma_copy(new((2, 2)), tile(np.ones((2, 2)), buffer=HBM), priority=1)


def test_dma_transpose_default_axes(sim):
    x = RNG.standard_normal((16, 32)).astype(BF16)
    dst = new((32, 16), BF16)
    nisa.dma_transpose(dst, tile(x, BF16, HBM), dge_mode=nisa.dge_mode.hwdge)
    np.testing.assert_array_equal(val(dst), x.T.astype(np.float32))
    y = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    d4 = new((5, 3, 4, 2))
    nisa.dma_transpose(d4, tile(y, np.float32, HBM))
    np.testing.assert_array_equal(val(d4), np.transpose(y, (3, 1, 2, 0)))
    with pytest.raises(HardwareLimitError, match="must equal the transposed"):
        nisa.dma_transpose(new((16, 32), BF16), tile(x, BF16, HBM))
    with pytest.raises(HardwareLimitError, match="2-byte dtype"):
        nisa.dma_transpose(
            new((32, 16)), tile(x.astype(np.float32), np.float32, HBM), dge_mode=nisa.dge_mode.hwdge
        )


def test_dma_compute_sum_and_scatter_add(sim):
    a, b = RNG.standard_normal((4, 8)).astype(np.float32), RNG.standard_normal((4, 8)).astype(np.float32)
    dst = new((4, 8), np.float32, HBM)
    nisa.dma_compute(dst, [tile(a), tile(b, np.float32, HBM)], nl.add)
    np.testing.assert_allclose(val(dst), a + b, rtol=1e-6)
    table = tile(np.zeros((6, 8)), np.float32, HBM)
    idx = tile(np.array([[1], [4], [2], [5]], np.int32), np.int32)
    view = table.ap([[8, 4], [1, 8]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(view, [view, tile(a)], nl.add)
    np.testing.assert_allclose(val(table)[[1, 4, 2, 5]], a, rtol=1e-6)
    with pytest.raises(HardwareLimitError, match=r"only scales of 1\.0"):
        nisa.dma_compute(dst, [tile(a), tile(b)], nl.add, scales=[2.0, 1.0])


def test_oob_skip_leaves_destination_rows_alone(sim):
    from nki_studio.sim.errors import SimulationError

    table = tile(np.arange(24, dtype=np.float32).reshape(6, 4), np.float32, HBM)
    idx = tile(np.array([[2], [0xFFFFFFFF], [5]], np.uint32), np.uint32)
    # gather: row 1 reads out of range -> skipped, dst keeps its -1s
    dst = tile(np.full((3, 4), -1.0))
    nisa.dma_copy(
        dst, table.ap([[4, 3], [1, 4]], vector_offset=idx, indirect_dim=0), oob_mode=nisa.oob_mode.skip
    )
    assert val(dst)[:, 0].tolist() == [8, -1, 20]
    # scatter: the invalid row is not written (KV-cache update pattern of nki-library)
    upd = tile(np.full((3, 4), 7.0))
    nisa.dma_copy(
        table.ap([[4, 3], [1, 4]], vector_offset=idx, indirect_dim=0), upd, oob_mode=nisa.oob_mode.skip
    )
    assert val(table)[:, 0].tolist() == [0, 4, 7, 12, 16, 7]
    with pytest.raises(SimulationError, match="out-of-bounds"):
        nisa.dma_copy(dst, table.ap([[4, 3], [1, 4]], vector_offset=idx, indirect_dim=0))


def test_oob_skip_keeps_integer_bits_and_rmw_scatter(sim):
    table = tile(np.array([[1 << 30], [7]], np.int32), np.int32, HBM)
    idx = tile(np.array([[0], [9]], np.int32), np.int32)
    dst = tile(np.array([[0], [-5]]), np.int32)
    nisa.dma_copy(
        dst, table.ap([[1, 2], [1, 1]], vector_offset=idx, indirect_dim=0), oob_mode=nisa.oob_mode.skip
    )
    assert raw(dst).tolist() == [[1 << 30], [-5]]
    acc = tile(np.zeros((3, 2)), np.float32, HBM)
    rows = tile(np.array([[2], [100]], np.int32), np.int32)
    view = acc.ap([[2, 2], [1, 2]], vector_offset=rows, indirect_dim=0)
    nisa.dma_compute(view, [view, tile(np.ones((2, 2)))], nl.add, oob_mode=nisa.oob_mode.skip)
    assert val(acc).tolist() == [[0, 0], [0, 0], [1, 1]]
