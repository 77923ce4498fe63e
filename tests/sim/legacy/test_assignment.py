"""``t[...] = call(...)`` in legacy kernels: the call writes into ``t`` (no temporary tile; ``loop_reduce`` reads
``t``), vs NumPy and the PSUM capacity."""

from __future__ import annotations

import numpy as np
import pytest
from nki_studio.sim.errors import HardwareLimitError

# All eight 2 KiB PSUM banks placed by hand; each matmul result is assigned (or accumulated) into one of them.
FULL_PSUM = """
import neuronxcc.nki.compiler as ncc
from neuronxcc.nki.language import par_dim


@nki.jit
def eight_banks(a, b):
    # a: (128, 128) stationary, b: (128, 512) moving; out[i] = (i + 1) * a.T @ b for i < 4 (assigned),
    # (i + 2) * a.T @ b for i >= 4 (an accumulation group of two)
    out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    banks = nl.ndarray((8, par_dim(128), 512), dtype=nl.float32,
                       buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(8,)))
    sa = nl.load(a)
    sb = nl.load(b)
    for i in nl.sequential_range(4):
        banks[i, :, :] = nisa.nc_matmul(nl.multiply(sa, i + 1.0), sb)
    for i in nl.sequential_range(4, 8):
        banks[i, :, :] += nisa.nc_matmul(nl.multiply(sa, i + 1.0), sb)
        banks[i, :, :] += nisa.nc_matmul(sa, sb)
    for i in nl.sequential_range(8):
        nl.store(out[i], value=nl.copy(banks[i, :, :]))
    return out


@nki.jit
def kept_result(a, b):
    # The result is used by a later instruction before it is assigned: a tile of its own beside the eight banks.
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    banks = nl.ndarray((8, par_dim(128), 512), dtype=nl.float32,
                       buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(8,)))
    sa = nl.load(a)
    sb = nl.load(b)
    product = nisa.nc_matmul(sa, sb)
    banks[0, :, :] = nisa.tensor_copy(product)
    banks[1, :, :] = product
    nl.store(out, value=nl.copy(banks[1, :, :]))
    return out
"""


def test_assigned_matmul_results_take_no_psum_of_their_own(legacy):
    rng = np.random.default_rng(11)
    a, b = rng.random((128, 128), np.float32), rng.random((128, 512), np.float32)
    out = legacy(FULL_PSUM, a, b, kernel_name="eight_banks").outputs[0]
    expected = np.stack([(i + 1 + (i >= 4)) * (a.T @ b) for i in range(8)])
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_a_result_used_before_its_assignment_is_a_tile_of_its_own(legacy):
    rng = np.random.default_rng(12)
    a, b = rng.random((128, 128), np.float32), rng.random((128, 512), np.float32)
    with pytest.raises(HardwareLimitError, match="PSUM capacity exceeded"):
        legacy(FULL_PSUM, a, b, kernel_name="kept_result")


def test_loop_reduce_assigned_into_a_tile_accumulates_into_that_tile(legacy):
    # Two query tiles reduced over two key tiles from one line, the key loop outside: each call site's previous
    # result belongs to the other query tile, the destination is the tile assigned to.
    source = """
    @nki.jit
    def reduce_over_keys(x):
        # x: (2 keys, 2 queries, 128, 64); out[q] = x[0, q] + x[1, q]
        out = nl.ndarray((2, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((2, nl.par_dim(128), 64), dtype=nl.float32)
        for k in nl.affine_range(2):
            for q in nl.affine_range(2):
                tile = nl.load(x[k, q])
                acc[q, :, :] = nl.loop_reduce(tile, op=np.add, loop_indices=(k,), dtype=nl.float32)
        for q in nl.affine_range(2):
            nl.store(out[q], value=acc[q, :, :])
        return out
    """
    x = np.random.default_rng(13).random((2, 2, 128, 64), np.float32)
    np.testing.assert_allclose(legacy(source, x).outputs[0], x[0] + x[1], rtol=1e-6)


# A mask that holds nowhere (or on part of the tile) leaves the assigned tensor's masked-off elements as they were:
# the instruction writes into the tensor [v2.26.1 NKI API Masking: the predicate "controls whether/how this
# instruction is executed"].
MASKED_INTO = """
@nki.jit
def masked_into(a):
    out = nl.ndarray((3, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    ip, jf = nl.mgrid[0:128, 0:64]
    for i in nl.sequential_range(3):
        t = nl.load(a)
        t[ip, jf] = nl.multiply(t[ip, jf], 2.0, mask=(i < 1))
        t[ip, jf] = nl.add(t[ip, jf], 1.0, mask=(jf < 16) & (i < 2))
        nl.store(out[i], value=t)
    return out
"""


def test_a_masked_call_assigned_into_a_tensor_writes_only_where_its_mask_holds(legacy):
    a = np.random.default_rng(13).random((128, 64), np.float32)
    out = legacy(MASKED_INTO, a, kernel_name="masked_into").outputs[0]
    expected = np.stack([a * 2, a, a])
    expected[0, :, :16] += 1
    expected[1, :, :16] += 1
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_loop_reduce_into_an_unwritten_tile_starts_over_at_the_first_iteration(legacy):
    # The compiler-generated pattern (AccelOpt NKIBench rmsnorm_matmul): an nl.ndarray nothing wrote, reduced
    # into per row tile over the inner loop; its unwritten (NaN) values must not enter the first step.
    source = """
    @nki.jit
    def row_sums(x):
        # x: (2 row tiles, 4 column tiles, 128, 64); out[q] = row sums of x[q, :] over all column tiles
        out = nl.ndarray((2, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((2, nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
        for q in nl.affine_range(2):
            for k in nl.affine_range(4):
                part = nisa.tensor_reduce(nl.add, data=nl.load(x[q, k]), axis=[1])
                acc[q, nl.arange(128)[:, None], 0] = nl.loop_reduce(part, op=np.add, loop_indices=[k])
            nl.store(out[q], value=acc[q, :, :])
        return out
    """
    x = np.random.default_rng(14).random((2, 4, 128, 64), np.float32)
    expected = x.sum(axis=(1, 3))[..., None]
    np.testing.assert_allclose(legacy(source, x).outputs[0], expected, rtol=1e-5)


def test_a_masked_off_loop_reduce_leaves_its_destination(legacy):
    # A mask that holds nowhere for a key tile (nki-samples' flash-attention backward: causal tiles above the
    # diagonal): the reduction skips that tile, as any masked instruction writing into a tensor.
    source = """
    @nki.jit
    def below_diagonal(x):
        # x: (4 key tiles, 128, 64); out = x[0] + x[1] + x[2] (the last key tile masked off)
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((nl.par_dim(128), 64), dtype=nl.float32)
        for k in nl.affine_range(4):
            tile = nl.load(x[k])
            acc[:, :] = nl.loop_reduce(tile, op=np.add, loop_indices=(k,), mask=(k < 3))
        nl.store(out, value=acc[:, :])
        return out
    """
    x = np.random.default_rng(15).random((4, 128, 64), np.float32)
    np.testing.assert_allclose(legacy(source, x).outputs[0], x[:3].sum(axis=0), rtol=1e-6)


# A value-returning call assigned into a block of a block tensor, nisa's and nl's alike.
INTO_BLOCKS = """
from neuronxcc.nki.language import par_dim


@nki.jit
def into_blocks(x):
    out = nl.ndarray((2, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((2, par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((2, par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        a[i] = nl.load(x[i])
        b[i] = nisa.activation(op=nl.exp, data=a[i])
        nl.store(out[i], value=b[i])
    return out
"""


def test_the_trace_records_an_assigned_call_writing_its_target(legacy):
    x = np.ones((2, 128, 512), np.float32)
    result = legacy(INTO_BLOCKS, x, kernel_name="into_blocks", trace=True)
    np.testing.assert_allclose(result.outputs[0], np.exp(x), rtol=1e-6)
    trace = list(result.trace)
    loads = [e for e in trace if e.op == "nisa.dma_copy" and e.operands[0].buffer == "sbuf"]
    exps = [e for e in trace if e.op == "nisa.activation"]
    stores = [e for e in trace if e.op == "nisa.dma_copy" and e.operands[0].buffer == "hbm"]
    block = 512 * 4
    for i, (load, exp, store) in enumerate(zip(loads, exps, stores, strict=True)):
        # each instruction writes the block its result is assigned to, and the next one reads that block
        assert (load.operands[0].storage, load.operands[0].byte_start) == (exp.operands[1].storage, i * block)
        assert (exp.operands[0].storage, exp.operands[0].byte_start) == (store.operands[1].storage, i * block)
        assert {o.block_bytes for o in (load.operands[0], exp.operands[0])} == {block}
