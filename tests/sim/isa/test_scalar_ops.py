"""activation / activation_reduce / activate2 (isa.md §2): scale, bias, reduce registers, rounding."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from isa_tiles import PSUM, new, tile, val
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.errors import HardwareLimitError

RNG = np.random.default_rng(1)
BF16 = ml_dtypes.bfloat16


def test_activation_scale_bias_then_function_rounds_to_bf16(sim):
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    bias = RNG.standard_normal((128, 1)).astype(np.float32)
    dst = new((128, 64), BF16)
    nisa.activation(dst, nl.exp, tile(x), bias=tile(bias), scale=0.5)
    expect = np.exp(x * np.float32(0.5) + bias).astype(BF16).astype(np.float32)
    np.testing.assert_array_equal(val(dst), expect)
    assert sim.recorder.events[-1].engine == "scalar"


def test_activation_vector_scale_and_scalar_bias(sim):
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    s = np.arange(1, 5, dtype=np.float32).reshape(4, 1)
    dst = new((4, 8))
    nisa.activation(dst, nl.copy, tile(x), bias=1.0, scale=tile(s))
    np.testing.assert_allclose(val(dst), x * s + 1, rtol=1e-6)


def test_scalar_bias_needs_trn2(trn1):
    with pytest.raises(HardwareLimitError, match="scalar bias needs NeuronCore-v3"):
        nisa.activation(new((4, 8)), nl.copy, tile(np.ones((4, 8))), bias=1.0)


def test_reduce_registers_reset_reduce_then_reduce(sim):
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    res = new((8, 1))
    dst = new((8, 16))
    nisa.activation(
        dst, nl.square, tile(x), reduce_op=nl.add, reduce_res=res, reduce_cmd=nisa.reduce_cmd.reset_reduce
    )
    np.testing.assert_allclose(val(res)[:, 0], (x * x).sum(axis=1), rtol=1e-5)
    nisa.activation(
        dst, nl.square, tile(x), reduce_op=nl.add, reduce_res=res, reduce_cmd=nisa.reduce_cmd.reduce
    )
    np.testing.assert_allclose(val(res)[:, 0], 2 * (x * x).sum(axis=1), rtol=1e-5)
    # reset only: registers hold 0, nothing added
    nisa.activation(
        dst, nl.square, tile(x), reduce_op=nl.add, reduce_res=res, reduce_cmd=nisa.reduce_cmd.reset
    )
    assert np.all(val(res) == 0)


def test_reduce_without_reset_reads_nan_registers(sim):
    res = new((4, 1))
    nisa.activation(
        new((4, 2)),
        nl.copy,
        tile(np.ones((4, 2))),
        reduce_op=nl.add,
        reduce_res=res,
        reduce_cmd=nisa.reduce_cmd.reduce,
    )
    assert np.all(np.isnan(val(res)))


def test_reduce_res_aliasing_dst_keeps_the_reduction(sim):
    dst = new((4, 1))
    nisa.activation(
        dst,
        nl.copy,
        tile(np.full((4, 1), 3.0)),
        reduce_op=nl.add,
        reduce_res=dst,
        reduce_cmd=nisa.reduce_cmd.reset_reduce,
    )
    assert np.all(val(dst) == 3)


def test_activation_reduce_and_operand_checks(sim):
    x = RNG.standard_normal((16, 32)).astype(np.float32)
    res = new((16, 1))
    nisa.activation_reduce(new((16, 32), BF16), nl.relu, tile(x), reduce_op=nl.add, reduce_res=res)
    np.testing.assert_allclose(val(res)[:, 0], np.maximum(x, 0).sum(axis=1), rtol=1e-5)
    with pytest.raises(HardwareLimitError, match="elements per partition"):
        nisa.activation(new((16, 8)), nl.exp, tile(x))
    with pytest.raises(HardwareLimitError, match="not an activation function"):
        nisa.activation(new((16, 32)), nl.add, tile(x))
    with pytest.raises(HardwareLimitError, match="not supported here"):
        nisa.activation(
            new((16, 32)),
            nl.exp,
            tile(x),
            reduce_op=nl.maximum,
            reduce_res=res,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )


def test_activation_reads_and_writes_psum(sim):
    p = tile(np.full((2, 3), 4.0), buffer=PSUM)
    out = new((2, 3), buffer=PSUM)
    nisa.activation(out, nl.rsqrt, p)
    assert np.allclose(val(out), 0.5)


def test_activate2_stages_and_reduce(trn3):
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    dst = new((8, 16))
    res = new((8, 1))
    nisa.activate2(
        dst,
        nl.relu,
        tile(x),
        imm0=2.0,
        imm1=0.5,
        op0=nl.multiply,
        op1=nl.subtract,
        reverse1=True,
        reduce_op=nl.maximum,
        reduce_res=res,
        reduce_cmd=nisa.reduce_cmd.reset_reduce,
    )
    expect = np.maximum(0.5 - x * 2, 0)
    np.testing.assert_allclose(val(dst), expect, rtol=1e-6)
    np.testing.assert_allclose(val(res)[:, 0], expect.max(axis=1), rtol=1e-6)
    with pytest.raises(HardwareLimitError, match="not a supported pair"):
        nisa.activate2(dst, nl.relu, tile(x), imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.add)


def test_activate2_prelu_param_and_generation(trn3):
    x = np.array([[-2.0, 3.0]], np.float32)
    dst = new((1, 2))
    nisa.activate2(dst, nl.prelu, tile(x), imm0=0.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass, relu_param=0.25)
    assert val(dst).tolist() == [[-0.5, 3.0]]


def test_activate2_needs_trn3(sim):
    with pytest.raises(HardwareLimitError, match="NeuronCore-v4"):
        nisa.activate2(new((1, 2)), nl.copy, tile(np.ones((1, 2))), 0.0, 0.0, nl.bypass, nl.bypass)
