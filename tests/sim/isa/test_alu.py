"""ALU operator and activation tables (isa.md §0.5, §0.6) against NumPy/math oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nki_studio.sim import alu


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


@pytest.mark.parametrize(
    ("name", "x", "y", "expected"),
    [
        ("add", f32(1, 2), f32(3, -4), f32(4, -2)),
        ("subtract", f32(1, 2), f32(3, -4), f32(-2, 6)),
        ("multiply", f32(1.5, 2), f32(2, -4), f32(3, -8)),
        ("maximum", f32(1, 5), f32(3, -4), f32(3, 5)),
        ("minimum", f32(1, 5), f32(3, -4), f32(1, -4)),
        ("equal", f32(1, 5), f32(1, -4), f32(1, 0)),
        ("not_equal", f32(1, 5), f32(1, -4), f32(0, 1)),
        ("greater", f32(1, 5), f32(1, -4), f32(0, 1)),
        ("greater_equal", f32(1, 5), f32(1, 6), f32(1, 0)),
        ("less", f32(1, 5), f32(2, -4), f32(1, 0)),
        ("less_equal", f32(1, 5), f32(1, -4), f32(1, 0)),
        ("logical_and", f32(1, 0, 2), f32(3, 1, 0), f32(1, 0, 0)),
        ("logical_or", f32(1, 0, 0), f32(0, 1, 0), f32(1, 1, 0)),
        ("logical_xor", f32(1, 0, 1), f32(0, 1, 1), f32(1, 1, 0)),
        ("power", f32(2, 3), f32(3, 2), f32(8, 9)),
        ("abs_max", f32(-3, 2, 2), f32(1, -5, -2), f32(-3, -5, -2)),  # tie returns y
        ("abs_min", f32(-3, 2, 2), f32(1, -5, -2), f32(1, 2, -2)),
    ],
)
def test_binary_arith(name: str, x: np.ndarray, y: np.ndarray, expected: np.ndarray) -> None:
    op = alu.alu_op(name)
    assert op is not None and op.kind == alu.ARITH
    got = op(x, y)
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float32), expected)


def test_unary_ops_ignore_operand() -> None:
    x = f32(-4, 4)
    assert alu.alu_op("abs")(x, 7).tolist() == [4, 4]
    assert alu.alu_op("square")(x).tolist() == [16, 16]
    assert alu.alu_op("relu")(x).tolist() == [0, 4]
    np.testing.assert_allclose(alu.alu_op("rsqrt")(f32(4, 16)), [0.5, 0.25])
    np.testing.assert_allclose(alu.alu_op("reciprocal")(f32(4, -8)), [0.25, -0.125])


def test_bitvec_on_raw_bits() -> None:
    x = np.array([-8, 0x0F0F], dtype=np.int32)
    assert alu.alu_op("bitwise_and")(x, np.int32(0xFF)).tolist() == [0xF8, 0x0F]
    # logical right shift of a negative int32 fills with zeros
    assert alu.alu_op("right_shift")(np.array([-8], np.int32), np.array([28], np.int32)).tolist() == [15]
    assert alu.alu_op("left_shift")(np.array([3], np.uint8), np.array([7], np.uint8)).tolist() == [128]
    assert alu.alu_op("invert")(np.array([0], np.uint16)).tolist() == [0xFFFF]


def test_reductions_and_identities() -> None:
    x = np.array([[1, -5, 3], [2, 2, -7]], dtype=np.float32)
    ax = (1,)
    assert alu.alu_op("add").reduce_fn(x, ax).tolist() == [-1, -3]
    assert alu.alu_op("subtract").reduce_fn(x, ax).tolist() == [3, 7]
    assert alu.alu_op("multiply").reduce_fn(x, ax).tolist() == [-15, -28]
    assert alu.alu_op("maximum").reduce_fn(x, ax).tolist() == [3, 2]
    assert alu.alu_op("abs_max").reduce_fn(x, ax).tolist() == [-5, -7]
    assert alu.alu_op("logical_xor").reduce_fn(x, ax).tolist() == [1, 1]
    assert alu.alu_op("maximum").identity == -math.inf
    assert alu.alu_op("multiply").identity == 1.0
    assert not alu.alu_op("equal").reducible


def test_names_resolve_from_functions_ufuncs_and_strings() -> None:
    def add(a: object, b: object) -> None: ...

    assert alu.op_name(add) == "add"
    assert alu.op_name(np.add) == "add"
    assert alu.op_name(np.max) == "maximum"
    assert alu.op_name("nl.minimum") == "minimum"
    assert alu.alu_op(object()) is None
    assert alu.activation_fn("nope") is None


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("exp", np.exp),
        ("tanh", np.tanh),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
        ("silu", lambda x: x / (1 + np.exp(-x))),
        ("gelu", lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
        (
            "gelu_apprx_tanh",
            lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        ),
        ("erf", np.vectorize(math.erf)),
        ("softplus", lambda x: np.log1p(np.exp(x))),
        ("mish", lambda x: x * np.tanh(np.log1p(np.exp(x)))),
        ("copy", lambda x: x),
        ("square", np.square),
        ("relu", lambda x: np.maximum(x, 0)),
        ("sign", np.sign),
        ("arctan", np.arctan),
    ],
)
def test_activation_functions(name: str, ref: object) -> None:
    x = np.linspace(-4, 4, 101, dtype=np.float32)
    fn = alu.activation_fn(name)
    assert fn is not None
    got = fn(x, 0.0)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=2e-6, atol=3e-7)


def test_prelu_uses_param_and_positive_ranges() -> None:
    x = f32(-2, 3)
    assert alu.activation_fn("prelu")(x, np.float32(0.5)).tolist() == [-1, 3]
    np.testing.assert_allclose(alu.activation_fn("rsqrt")(f32(4), 0.0), [0.5])
