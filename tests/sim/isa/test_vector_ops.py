"""Element-wise Vector/GpSimd/Scalar instructions (isa.md §3.1-§3.3, §3.8-§3.11, §3.22)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import PSUM, new, raw, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(2)
BF16 = ml_dtypes.bfloat16


def test_tensor_tensor_fp32_math_rounded_to_bf16(sim):
    a = RNG.standard_normal((128, 256)).astype(np.float32)
    b = RNG.standard_normal((128, 256)).astype(np.float32)
    dst = new((128, 256), BF16)
    nisa.tensor_tensor(dst, tile(a, BF16), tile(b), op=nl.multiply)
    expect = (a.astype(BF16).astype(np.float32) * b).astype(BF16)
    assert raw(dst).view(np.uint16).tolist() == expect.view(np.uint16).tolist()
    assert sim.recorder.events[-1].engine == "vector"


def test_tensor_tensor_free_shapes_may_differ(sim):
    a = np.arange(24, dtype=np.float32).reshape(2, 12)
    dst = new((2, 3, 4))
    nisa.tensor_tensor(dst, tile(a), tile(a.reshape(2, 3, 4)), op=nl.add)
    np.testing.assert_array_equal(val(dst).reshape(2, 12), 2 * a)


def test_tensor_tensor_int32_exact_on_gpsimd(sim):
    a = np.array([[16777217, -5]], np.int32)
    b = np.array([[1, 3]], np.int32)
    dst = new((1, 2), np.int32)
    nisa.tensor_tensor(dst, tile(a, np.int32), tile(b, np.int32), op=nl.add)
    assert raw(dst).tolist() == [[16777218, -2]]  # exact, FP32 would round 16777218
    assert sim.recorder.events[-1].engine == "gpsimd"
    nisa.tensor_tensor(dst, tile(a, np.int32), tile(b, np.int32), op=nl.add, engine=nisa.engine.vector)
    assert raw(dst).tolist() == [[16777216, -2]]  # forced Vector: FP32 math


def test_bitvec_ops_on_raw_bits(sim):
    a = np.array([[0xF0F0, 0x00FF]], np.uint16)
    b = np.array([[0x0FF0, 0xFFFF]], np.uint16)
    dst = new((1, 2), np.uint16)
    nisa.tensor_tensor(dst, tile(a, np.uint16), tile(b, np.uint16), op=nl.bitwise_xor)
    assert raw(dst).tolist() == [[0xFF00, 0xFF00]]
    with pytest.raises(HardwareLimitError, match="integer dtype"):
        nisa.tensor_tensor(new((1, 2)), tile(a, np.uint16), tile(b, np.uint16), op=nl.bitwise_and)


def test_tensor_tensor_buffer_and_shape_checks(sim):
    a = tile(np.ones((4, 8)), buffer=PSUM)
    b = tile(np.ones((4, 8)), buffer=PSUM)
    with pytest.raises(HardwareLimitError, match="at most one of data1, data2 may be in PSUM"):
        nisa.tensor_tensor(new((4, 8)), a, b, op=nl.add)
    with pytest.raises(HardwareLimitError, match="same elements per partition"):
        nisa.tensor_tensor(new((4, 8)), tile(np.ones((4, 8))), tile(np.ones((4, 4))), op=nl.add)
    with pytest.raises(HardwareLimitError, match="same partitions"):
        nisa.tensor_tensor(new((4, 8)), tile(np.ones((2, 16))), tile(np.ones((4, 8))), op=nl.add)
    with pytest.raises(HardwareLimitError, match="GpSimd engine cannot access PSUM"):
        nisa.tensor_tensor(
            new((4, 8), buffer=PSUM),
            tile(np.ones((4, 8))),
            tile(np.ones((4, 8))),
            op=nl.add,
            engine=nisa.engine.gpsimd,
        )
    with pytest.raises(HardwareLimitError, match="is unary"):
        nisa.tensor_tensor(new((4, 8)), tile(np.ones((4, 8))), tile(np.ones((4, 8))), op=nl.abs)


def test_free_size_limit_on_psum(sim):
    with pytest.raises(HardwareLimitError, match="maximum on PSUM is 4096"):
        nisa.tensor_copy(new((1, 4097)), tile(np.ones((1, 4097)), BF16, buffer=PSUM))


def test_tensor_scalar_two_stages_reverse_and_vector_operand(sim):
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    v = RNG.standard_normal((8, 1)).astype(np.float32)
    dst = new((8, 32))
    nisa.tensor_scalar(
        dst, tile(x), op0=nl.subtract, operand0=tile(v), reverse0=True, op1=nl.multiply, operand1=3.0
    )
    np.testing.assert_allclose(val(dst), (v - x) * 3, rtol=1e-6)
    nisa.tensor_scalar(dst, tile(x), op0=nl.rsqrt, operand0=None, engine=nisa.engine.gpsimd)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(val(dst), 1 / np.sqrt(x), rtol=1e-6)
    nisa.tensor_scalar(dst, tile(x), op0=nl.maximum, operand0=0.0, op1=nl.minimum, operand1=0.5)
    np.testing.assert_allclose(val(dst), np.clip(x, 0, 0.5))


def test_tensor_scalar_rules(sim):
    t = tile(np.ones((4, 8)))
    with pytest.raises(HardwareLimitError, match="must be None or 0"):
        nisa.tensor_scalar(new((4, 8)), t, op0=nl.abs, operand0=2.0)
    with pytest.raises(HardwareLimitError, match=r"op0=nl\.square needs NeuronCore-v4"):
        nisa.tensor_scalar(new((4, 8)), t, op0=nl.square, operand0=None)
    with pytest.raises(HardwareLimitError, match="Scalar engine of trn2"):
        nisa.tensor_scalar(new((4, 8)), t, op0=nl.maximum, operand0=1.0, engine=nisa.engine.scalar)
    with pytest.raises(HardwareLimitError, match=r"\(4, 1\) tile"):
        nisa.tensor_scalar(new((4, 8)), t, op0=nl.add, operand0=tile(np.ones((4, 2))))
    with pytest.raises(HardwareLimitError, match="both be arithmetic or both bitvec"):
        nisa.tensor_scalar(new((4, 8)), t, op0=nl.add, operand0=1.0, op1=nl.bitwise_and, operand1=1)


def test_tensor_scalar_bitvec_shift(sim):
    x = np.array([[-16, 256]], np.int32)
    dst = new((1, 2), np.int32)
    nisa.tensor_scalar(
        dst, tile(x, np.int32), op0=nl.right_shift, operand0=2, op1=nl.bitwise_and, operand1=0xFFFF
    )
    assert raw(dst).tolist() == [[(0xFFFFFFF0 >> 2) & 0xFFFF, 64]]


def test_scalar_tensor_tensor(sim):
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    y = RNG.standard_normal((4, 16)).astype(np.float32)
    dst = new((4, 16))
    nisa.scalar_tensor_tensor(
        dst, tile(x), op0=nl.multiply, operand0=2.0, op1=nl.subtract, operand1=tile(y), reverse1=True
    )
    np.testing.assert_allclose(val(dst), y - 2 * x, rtol=1e-6)


def test_scalar_tensor_tensor_takes_the_dtype_nki_library_passes(sim):
    """``dtype=`` next to ``dst`` (nki-library's moe_cte): dst's dtype is the result's; another one warns."""
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    dst = new((4, 16))
    nisa.scalar_tensor_tensor(
        dst=dst, data=tile(x), op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=tile(x), dtype=nl.float32
    )
    np.testing.assert_allclose(val(dst), 3 * x, rtol=1e-6)
    assert not sim.warnings
    nisa.scalar_tensor_tensor(
        dst=dst, data=tile(x), op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=tile(x), dtype=nl.bfloat16
    )
    assert raw(dst).dtype == np.float32 and any("differs from dst's" in w for w in sim.warnings)


def test_tensor_copy_bit_exact_and_casting(sim):
    x = np.array([[np.nan, -0.0, 1e-40, 3.14159]], np.float32)
    dst = new((1, 4))
    nisa.tensor_copy(dst, tile(x))
    assert raw(dst).view(np.uint32).tolist() == x.view(np.uint32).tolist()
    ints = new((1, 4), np.int8)
    nisa.tensor_copy(ints, tile(np.array([[2.5, 3.5, -300.0, 127.4]], np.float32)))
    assert raw(ints).tolist() == [[2, 4, -128, 127]]  # RNE, saturating
    fp8 = new((1, 2), ml_dtypes.float8_e4m3fn)
    nisa.tensor_copy(fp8, tile(np.array([[1.0625, 0.3]], np.float32)))
    assert val(fp8).tolist() == [[1.0, np.float32(ml_dtypes.float8_e4m3fn(0.3))]]


def test_tensor_copy_scalar_engine_not_on_v2(trn1):
    with pytest.raises(HardwareLimitError, match="Scalar engine of NeuronCore-v2"):
        nisa.tensor_copy(new((1, 4)), tile(np.ones((1, 4))), engine=nisa.engine.scalar)


def test_tensor_copy_predicated(sim):
    dst = tile(np.zeros((2, 4)))
    src = tile(np.arange(8, dtype=np.float32).reshape(2, 4))
    pred = tile(np.array([[1, 0, 2, 0], [0, 0, 0, 1]]), np.uint8)
    nisa.tensor_copy_predicated(dst, src, pred)
    assert val(dst).tolist() == [[0, 0, 2, 0], [0, 0, 0, 7]]
    nisa.tensor_copy_predicated(dst, 9.0, pred, reverse_pred=True)
    assert val(dst).tolist() == [[0, 9, 2, 9], [9, 9, 9, 7]]
    with pytest.raises(HardwareLimitError, match="predicate dtype float32"):
        nisa.tensor_copy_predicated(dst, src, tile(np.ones((2, 4))))


def test_reciprocal(sim):
    dst = new((1, 3))
    nisa.reciprocal(dst, tile(np.array([[2.0, -4.0, 0.0]])))
    assert val(dst).tolist() == [[0.5, -0.25, np.inf]]


def test_exponential_with_reduce(trn3):
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    mx = x.max(axis=1, keepdims=True)
    dst, res = new((4, 8)), new((4, 1))
    nisa.exponential(
        dst, tile(x), max_value=tile(mx), reduce_res=res, reduce_cmd=nisa.reduce_cmd.reset_reduce
    )
    np.testing.assert_allclose(val(dst), np.exp(x - mx), rtol=1e-6)
    np.testing.assert_allclose(val(res)[:, 0], np.exp(x - mx).sum(axis=1), rtol=1e-5)
    nisa.exponential(
        dst,
        tile(x),
        max_value=tile(mx),
        reduce_res=res,
        reduce_cmd=nisa.reduce_cmd.load_reduce,
        reduce_init=1.0,
    )
    np.testing.assert_allclose(val(res)[:, 0], 1 + np.exp(x - mx).sum(axis=1), rtol=1e-5)


def test_exponential_is_trn3_only(sim):
    with pytest.raises(HardwareLimitError, match="NeuronCore-v4"):
        nisa.exponential(new((1, 2)), tile(np.ones((1, 2))))


def test_memset(sim):
    t = new((4, 3), np.int32)
    nisa.memset(t, 7)
    assert raw(t).tolist() == [[7] * 3] * 4
    b = new((2, 2), BF16, PSUM)
    nisa.memset(b, 1.0 / 3)
    assert np.all(val(b) == np.float32(BF16(1.0 / 3)))
    nisa.memset(
        t, 2.0
    )  # exact in int32: converted, with a warning (issue 14: never stricter than the toolchain)
    assert raw(t).tolist() == [[2] * 3] * 4 and any("integer literal" in w for w in sim.warnings)
    with pytest.raises(HardwareLimitError, match="GpSimd engine cannot access PSUM"):
        nisa.memset(b, 0.0, engine=nisa.engine.gpsimd)


def test_float32_mode_does_not_round_low_precision():
    from nki_studio.sim import context

    with context.session(precise=False):
        x = np.array([[1.0 + 2**-10, 3.14159]], np.float32)
        a = tile(x, BF16)
        out = new((1, 2), BF16)
        nisa.tensor_tensor(out, a, tile(np.zeros((1, 2))), op=nl.add)
        np.testing.assert_array_equal(val(out), x)  # kept in float32 storage, no bf16 rounding


def test_access_pattern_operands(sim):
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    t = tile(x)
    out = new((4, 4))
    # every 4th element of each partition, via a raw access pattern and via a strided slice
    nisa.tensor_copy(out, t.ap([[16, 4], [4, 4]]))
    np.testing.assert_array_equal(val(out), x[:, ::4])
    nisa.tensor_tensor(out, t[:, 1::4], t.ap([[16, 4], [4, 4]], offset=2), op=nl.add)
    np.testing.assert_array_equal(val(out), x[:, 1::4] + x[:, 2::4])
    # a permuted 3-D view as the destination
    d3 = new((4, 2, 8))
    nisa.tensor_copy(d3.permute((0, 2, 1)), tile(x.reshape(4, 8, 2)))
    np.testing.assert_array_equal(val(d3), x.reshape(4, 8, 2).transpose(0, 2, 1))


def test_memset_converts_inexact_floats_like_the_engines(sim):
    t = new((2, 2), np.int32)
    nisa.memset(t, 2.5)  # round to nearest even
    assert raw(t).tolist() == [[2, 2], [2, 2]]
    u = new((2, 2), np.uint32)
    nisa.memset(u, -1.0)  # saturates
    assert raw(u).tolist() == [[0, 0], [0, 0]]
    assert sum("not representable" in w for w in sim.warnings) == 2
