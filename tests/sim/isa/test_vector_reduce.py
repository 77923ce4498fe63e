"""Vector reductions, scans, statistics and selects (isa.md §3.4-§3.7, §3.12-§3.15)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(4)
BF16 = ml_dtypes.bfloat16
CMD = nisa.reduce_cmd


def test_tensor_reduce_trailing_axes_keepdims_negate(sim):
    x = RNG.standard_normal((8, 3, 4, 5)).astype(np.float32)
    d1 = new((8, 3, 4))
    nisa.tensor_reduce(d1, nl.add, tile(x), axis=3)
    np.testing.assert_allclose(val(d1), x.sum(axis=3), rtol=1e-5, atol=1e-6)
    d2 = new((8, 3, 1, 1))
    nisa.tensor_reduce(d2, nl.maximum, tile(x), axis=(2, 3), negate=True, keepdims=True)
    np.testing.assert_array_equal(val(d2), -x.max(axis=(2, 3), keepdims=True))
    with pytest.raises(HardwareLimitError, match="trailing free dims"):
        nisa.tensor_reduce(new((8, 4, 5)), nl.add, tile(x), axis=1)
    with pytest.raises(HardwareLimitError, match="cannot be used as a reduction"):
        nisa.tensor_reduce(new((8, 3, 4)), nl.equal, tile(x), axis=3)
    with pytest.raises(HardwareLimitError, match="elements per partition"):
        nisa.tensor_reduce(new((8, 2)), nl.add, tile(x), axis=3)


def test_tensor_reduce_bitvec_and_subtract_fold(sim):
    x = np.array([[0b1100, 0b1010, 0b0110]], np.int32)
    d = new((1, 1), np.int32)
    nisa.tensor_reduce(d, nl.bitwise_or, tile(x, np.int32), axis=1)
    assert raw(d).tolist() == [[0b1110]]
    f = new((1, 1))
    nisa.tensor_reduce(f, nl.subtract, tile(np.array([[10.0, 3.0, 2.0]])), axis=1)
    assert val(f).tolist() == [[5.0]]


def test_tensor_tensor_scan_linear_recurrence_and_cumsum(sim):
    a = RNG.uniform(0.5, 1.0, (4, 16)).astype(np.float32)
    b = RNG.standard_normal((4, 16)).astype(np.float32)
    init = RNG.standard_normal((4, 1)).astype(np.float32)
    dst = new((4, 16))
    nisa.tensor_tensor_scan(dst, tile(a), tile(b), tile(init), op0=nl.multiply, op1=nl.add)
    expect = np.empty_like(a)
    prev = init[:, 0]
    for i in range(16):
        prev = a[:, i] * prev + b[:, i]
        expect[:, i] = prev
    np.testing.assert_allclose(val(dst), expect, rtol=1e-5)
    nisa.tensor_tensor_scan(dst, tile(a), tile(b), 1.0, op0=nl.add, op1=nl.add)
    np.testing.assert_allclose(val(dst), 1 + np.cumsum(a + b, axis=1), rtol=1e-5)
    nisa.tensor_tensor_scan(dst, tile(a), tile(b), 0.0, op0=nl.add, op1=nl.subtract, reverse1=True)
    prev = np.zeros(4, np.float32)
    for i in range(16):
        prev = b[:, i] - (a[:, i] + prev)
        expect[:, i] = prev
    np.testing.assert_allclose(val(dst), expect, rtol=1e-5, atol=1e-6)


def test_tensor_scalar_reduce_commands(sim):
    x = RNG.standard_normal((8, 10)).astype(np.float32)
    dst, res = new((8, 10)), new((8, 1))
    nisa.tensor_scalar_reduce(dst, tile(x), op0=nl.multiply, operand0=2.0, reduce_op=nl.add, reduce_res=res)
    np.testing.assert_allclose(val(res)[:, 0], 2 * x.sum(axis=1), rtol=1e-5, atol=1e-6)
    nisa.tensor_scalar_reduce(
        dst,
        tile(x),
        op0=nl.add,
        operand0=0.0,
        reduce_op=nl.maximum,
        reduce_res=res,
        reduce_cmd=CMD.load_reduce,
        reduce_init=100.0,
        reduce_res_negate=True,
    )
    assert np.all(val(res) == -100)
    nisa.tensor_scalar_reduce(
        dst, tile(x), op0=nl.add, operand0=0.0, reduce_op=nl.maximum, reduce_res=res, reduce_cmd=CMD.reduce
    )
    assert np.all(val(res) == 100)  # the registers kept +100
    with pytest.raises(HardwareLimitError, match="reduce_init must be given exactly"):
        nisa.tensor_scalar_reduce(dst, tile(x), op0=nl.add, operand0=0.0, reduce_op=nl.add, reduce_init=1.0)


def test_tensor_scalar_cumulative(sim):
    ones = np.ones((2, 64), np.float32)
    dst = new((2, 64))
    nisa.tensor_scalar_cumulative(dst, tile(ones), op0=nl.add, op1=nl.add, imm0=0.0)
    np.testing.assert_array_equal(val(dst), np.cumsum(ones, axis=1))
    nisa.tensor_scalar_cumulative(dst, tile(ones), op0=nl.add, op1=nl.add, imm0=0.0, reduce_cmd=CMD.reduce)
    np.testing.assert_array_equal(val(dst), 64 + np.cumsum(ones, axis=1))
    nisa.tensor_scalar_cumulative(
        dst, tile(ones), op0=nl.add, op1=nl.add, imm0=0.0, imm1=1.0, reduce_cmd=CMD.load_reduce
    )
    np.testing.assert_array_equal(val(dst), 1 + np.cumsum(ones, axis=1))
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    nisa.tensor_scalar_cumulative(dst[:, 0:8], tile(x), op0=nl.multiply, op1=nl.maximum, imm0=2.0)
    np.testing.assert_array_equal(val(dst)[:, 0:8], np.maximum.accumulate(2 * x, axis=1))
    with pytest.raises(HardwareLimitError, match="dtype int32"):
        nisa.tensor_scalar_cumulative(new((2, 8), np.int32), tile(x), op0=nl.add, op1=nl.add, imm0=0.0)


def test_bn_stats_and_bn_aggr_match_numpy(sim):
    x = RNG.standard_normal((16, 2, 255)).astype(np.float32) * 3 + 1
    stats = new((16, 2, 6))
    for j in range(2):
        nisa.bn_stats(stats[:, j, :], tile(x[:, j, :]))
    out = new((16, 2))
    nisa.bn_aggr(out, stats)
    flat = x.reshape(16, -1).astype(np.float64)
    np.testing.assert_allclose(val(out)[:, 0], flat.mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(val(out)[:, 1], flat.var(axis=1), rtol=1e-5)
    s = val(stats)[0, 0]
    assert s[0] == 128 and s[3] == 127
    with pytest.raises(HardwareLimitError, match="maximum is 512"):
        nisa.bn_stats(new((16, 6)), tile(np.ones((16, 513))))


def test_select_reduce(sim):
    on_true = RNG.standard_normal((4, 6)).astype(np.float32)
    pred = (RNG.random((4, 6)) > 0.5).astype(np.uint8)
    dst, res = new((4, 6)), new((4, 1))
    nisa.select_reduce(
        dst, tile(pred, np.uint8), tile(on_true), -1.0, reduce_res=res, reduce_cmd=CMD.reset_reduce
    )
    expect = np.where(pred != 0, on_true, -1.0)
    np.testing.assert_array_equal(val(dst), expect)
    np.testing.assert_array_equal(val(res)[:, 0], expect.max(axis=1))
    nisa.select_reduce(dst, tile(pred, np.uint8), tile(on_true), -1.0, reverse_pred=True)
    np.testing.assert_array_equal(val(dst), np.where(pred == 0, on_true, -1.0))


def test_range_select_chains_across_tiles(sim):
    x = RNG.standard_normal((2, 16)).astype(np.float32)
    lo = tile(np.array([[2.0], [5.0]]))
    hi = tile(np.array([[20.0], [9.0]]))
    res = new((2, 1))
    out = new((2, 8), BF16)
    for k in range(2):
        nisa.range_select(
            out,
            tile(x[:, 8 * k : 8 * k + 8]),
            nl.greater_equal,
            nl.less,
            lo,
            hi,
            reduce_cmd=CMD.reset_reduce if k == 0 else CMD.reduce,
            reduce_res=res,
            range_start=8 * k,
        )
    idx = np.arange(16)
    mask = np.stack([(idx >= 2) & (idx < 20), (idx >= 5) & (idx < 9)])
    np.testing.assert_array_equal(val(res)[:, 0], np.where(mask, x, -np.inf).max(axis=1))
    assert val(out)[1, 1] == -np.inf  # FP32_MIN becomes -inf in bf16
    with pytest.raises(HardwareLimitError, match="FP32_MIN"):
        nisa.range_select(out, tile(x[:, :8]), nl.less, nl.less, lo, hi, on_false_value=0.0)


def test_range_select_needs_trn2(trn1):
    with pytest.raises(HardwareLimitError, match="NeuronCore-v3"):
        nisa.range_select(new((1, 2)), tile(np.ones((1, 2))), nl.less, nl.less, 0.0, 1.0)


def test_scan_prefix_sum_idiom_is_exactly_sequential_fp32(sim):
    b = RNG.standard_normal((4, 300)).astype(np.float32) * 1e3
    init = np.float32(0.1)
    dst = new((4, 300))
    nisa.tensor_tensor_scan(dst, tile(np.ones((4, 300))), tile(b), float(init), op0=nl.multiply, op1=nl.add)
    expect = np.empty_like(b)
    prev = np.full(4, init, np.float32)
    for i in range(300):
        prev = (prev * np.float32(1) + b[:, i]).astype(np.float32)
        expect[:, i] = prev
    np.testing.assert_array_equal(val(dst), expect)
