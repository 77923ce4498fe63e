"""Legacy block tensors the compiler allocates itself count block by block against SBUF/PSUM: an instruction's
operands are the blocks it reaches, not the whole tensor (Block Dimension Migration Guide: "the physical tiles may
not be alive in the memory simultaneously"); a modular allocation places all its tiles."""

from __future__ import annotations

import numpy as np
import pytest
from nki_studio.sim.errors import HardwareLimitError

# 16 matmul results of 2 KiB per partition each (32 KiB: twice the PSUM) kept in one PSUM block tensor, then
# reduced block by block, as nki-samples' attention tutorial (v3) keeps its q @ k tiles.
BLOCKS = """
@nki.jit
def psum_blocks(a, b):
    # a: (128, 128) stationary, b: (128, 512) moving; out[i] = row max of (i + 1) * a.T @ b
    out = nl.ndarray((16, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    qk = nl.ndarray((16, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    sa = nl.load(a)
    sb = nl.load(b)
    for i in nl.affine_range(16):
        qk[i, :, :] = nisa.nc_matmul(nl.multiply(sa, i + 1.0), sb)
    for i in nl.affine_range(16):
        row = nisa.tensor_reduce(op=nl.max, data=qk[i], axis=1, keepdims=True)
        nl.store(out[i], value=row)
    return out


@nki.jit
def zero_blocks(b):
    # a zero-filled PSUM block tensor of 32 KiB per partition: each block is filled on its own; out = b + 0
    out = nl.ndarray((16, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((16, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    sb = nl.load(b)
    for i in nl.affine_range(16):
        nl.store(out[i], value=nl.add(acc[i], sb))
    return out


@nki.jit
def placed_blocks(a, b):
    # the same tiles in a modular allocation: 16 placed tiles do not fit the 16 KiB PSUM
    out = nl.ndarray((16, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    qk = nl.ndarray((16, nl.par_dim(128), 512), dtype=nl.float32,
                    buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(16,)))
    sa = nl.load(a)
    sb = nl.load(b)
    for i in nl.affine_range(16):
        qk[i, :, :] = nisa.nc_matmul(sa, sb)
    for i in nl.affine_range(16):
        nl.store(out[i], value=nisa.tensor_reduce(op=nl.max, data=qk[i], axis=1, keepdims=True))
    return out
"""
SOURCE = "import neuronxcc.nki.compiler as ncc\n" + BLOCKS


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    return rng.random((128, 128), np.float32), rng.random((128, 512), np.float32)


def test_psum_block_tensor_larger_than_psum_runs_block_by_block(legacy):
    a, b = _inputs()
    result = legacy(SOURCE, a, b, kernel_name="psum_blocks")
    expected = np.stack([((i + 1) * (a.T @ b)).max(axis=1, keepdims=True) for i in range(16)])
    np.testing.assert_allclose(result.outputs[0], expected, rtol=1e-5)
    # an instruction's operands are one 2 KiB block; the program-order peak (all 16 blocks live) is a warning
    assert result.report.psum is not None and result.report.psum.peak_bytes == 16 * 2048
    assert any("PSUM capacity exceeded" in w and "in program order" in w for w in result.warnings)


def test_zero_filled_psum_block_tensor_counts_a_block_at_its_creation(legacy):
    _, b = _inputs()
    result = legacy(SOURCE, b, kernel_name="zero_blocks")
    np.testing.assert_array_equal(result.outputs[0], np.broadcast_to(b, (16, 128, 512)))


def test_a_modular_allocation_places_all_its_tiles(legacy):
    a, b = _inputs()
    with pytest.raises(HardwareLimitError, match="PSUM capacity exceeded"):
        legacy(SOURCE, a, b, kernel_name="placed_blocks")
