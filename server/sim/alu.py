"""ALU operators (isa.md §0.5) and activation functions (isa.md §0.6) as vectorised NumPy functions.

Both tables are keyed by the operator's public ``nl`` name (``"add"``, ``"exp"`` ...). An ``op=`` argument
resolves to its key through :func:`op_name`: the ``nl.*`` function objects of our ``nki.language`` carry
their public name as ``__name__`` (or ``nki_name``), legacy NumPy ufuncs (``np.add``, ``np.max``) and strings
map through the same names and a few aliases.

Arithmetic operators take and return float32 arrays (engines compute in FP32, isa.md §0.4); bitvec operators
take integer arrays and work on raw bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

F32 = np.float32
Array = np.ndarray
Binary = Callable[[Any, Any], Any]
Unary = Callable[[Any], Any]

ARITH = "arith"
BITVEC = "bitvec"


@dataclass(frozen=True)
class AluOp:
    """One ALU operator: how to apply it element-wise and how to reduce with it."""

    name: str
    kind: str  # ARITH or BITVEC
    arity: int  # 1 (unary, operand ignored) or 2
    fn: Callable[..., Any]
    reduce_fn: Callable[[Array, tuple[int, ...]], Array] | None = None  # None: not a reduction operator
    identity: float | None = None  # initial accumulator value on reset (isa.md §0.7)
    min_nc_version: int = 2  # first NeuronCore generation that has it (isa.md §0.11)

    @property
    def reducible(self) -> bool:
        """Whether the operator may be used as a reduction (the "Reduce" column of isa.md §0.5)."""
        return self.reduce_fn is not None

    def __call__(self, x: Any, y: Any = None) -> Any:
        return self.fn(x) if self.arity == 1 else self.fn(x, y)

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        """Reduce ``x`` over ``axes`` with this operator (callers resolved it with ``reduce=True``)."""
        assert self.reduce_fn is not None, f"{self.name} is not a reduction operator"
        return self.reduce_fn(x, axes)


def _f(x: Any) -> Any:
    """Compare results are 1.0/0.0 in FP32 (isa.md §0.4)."""
    return np.asarray(x, dtype=F32)


def _abs_max(x: Any, y: Any) -> Any:
    # Signed input with the larger magnitude; a tie returns y (isa.md §0.5).
    return np.where(np.abs(x) > np.abs(y), x, y)


def _abs_min(x: Any, y: Any) -> Any:
    return np.where(np.abs(x) < np.abs(y), x, y)


def _unsigned(x: Array) -> Array:
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "i" else x


def _right_shift(x: Any, y: Any) -> Any:
    # Logical shift on the bit pattern (isa.md §0.5): shift the unsigned view, then view back.
    xa = np.asarray(x)
    u = _unsigned(xa)
    shifted = np.right_shift(u, np.asarray(y).astype(u.dtype, copy=False))
    return shifted.view(xa.dtype) if xa.dtype.kind == "i" else shifted


def _left_shift(x: Any, y: Any) -> Any:
    xa = np.asarray(x)
    return np.left_shift(xa, np.asarray(y).astype(xa.dtype, copy=False))


def _fold_subtract(x: Array, axis: tuple[int, ...]) -> Array:
    # AMBIGUOUS (isa.md §3.4): subtract as a reduction is read as the left fold x0 - x1 - x2 ...
    flat = _move_to_last(x, axis)
    return flat[..., 0] - np.sum(flat[..., 1:], axis=-1, dtype=F32)


def _move_to_last(x: Array, axis: tuple[int, ...]) -> Array:
    """Bring ``axis`` (trailing dims) together as one last axis."""
    keep = [d for d in range(x.ndim) if d not in axis]
    moved = np.moveaxis(x, list(axis), list(range(len(keep), x.ndim)))
    return moved.reshape([x.shape[d] for d in keep] + [-1])


def _logical_reduce(kind: str) -> Callable[[Array, tuple[int, ...]], Array]:
    def reduce(x: Array, axis: tuple[int, ...]) -> Array:
        nz = x != 0
        if kind == "and":
            r = np.all(nz, axis=axis)
        elif kind == "or":
            r = np.any(nz, axis=axis)
        else:
            r = (np.count_nonzero(nz, axis=axis) % 2) == 1
        return np.asarray(r, dtype=F32)

    return reduce


def _ufunc_reduce(ufunc: np.ufunc) -> Callable[[Array, tuple[int, ...]], Array]:
    def reduce(x: Array, axis: tuple[int, ...]) -> Array:
        return np.asarray(ufunc.reduce(x, axis=axis))

    return reduce


def _abs_reduce(pick: Binary) -> Callable[[Array, tuple[int, ...]], Array]:
    def reduce(x: Array, axis: tuple[int, ...]) -> Array:
        flat = _move_to_last(x, axis)
        idx = np.argmax(np.abs(flat), axis=-1) if pick is _abs_max else np.argmin(np.abs(flat), axis=-1)
        return np.take_along_axis(flat, idx[..., None], axis=-1)[..., 0]

    return reduce


def _sum(x: Array, axis: tuple[int, ...]) -> Array:
    return np.asarray(np.sum(x, axis=axis, dtype=F32))


_OPS: dict[str, AluOp] = {
    op.name: op
    for op in (
        # bitvec (raw integer bits)
        AluOp("invert", BITVEC, 1, np.invert),
        AluOp("bitwise_and", BITVEC, 2, np.bitwise_and, _ufunc_reduce(np.bitwise_and), -1),
        AluOp("bitwise_or", BITVEC, 2, np.bitwise_or, _ufunc_reduce(np.bitwise_or), 0),
        AluOp("bitwise_xor", BITVEC, 2, np.bitwise_xor, _ufunc_reduce(np.bitwise_xor), 0),
        AluOp("left_shift", BITVEC, 2, _left_shift),
        AluOp("right_shift", BITVEC, 2, _right_shift),
        # arithmetic, FP32
        AluOp("add", ARITH, 2, np.add, _sum, 0.0),
        AluOp("subtract", ARITH, 2, np.subtract, _fold_subtract, 0.0),
        AluOp("multiply", ARITH, 2, np.multiply, _ufunc_reduce(np.multiply), 1.0),
        AluOp("maximum", ARITH, 2, np.maximum, _ufunc_reduce(np.maximum), -math.inf),
        AluOp("minimum", ARITH, 2, np.minimum, _ufunc_reduce(np.minimum), math.inf),
        AluOp("equal", ARITH, 2, lambda x, y: _f(np.equal(x, y))),
        AluOp("not_equal", ARITH, 2, lambda x, y: _f(np.not_equal(x, y))),
        AluOp("greater_equal", ARITH, 2, lambda x, y: _f(np.greater_equal(x, y))),
        AluOp("greater", ARITH, 2, lambda x, y: _f(np.greater(x, y))),
        AluOp("less_equal", ARITH, 2, lambda x, y: _f(np.less_equal(x, y))),
        AluOp("less", ARITH, 2, lambda x, y: _f(np.less(x, y))),
        AluOp("logical_and", ARITH, 2, lambda x, y: _f(np.logical_and(x, y)), _logical_reduce("and"), 1.0),
        AluOp("logical_or", ARITH, 2, lambda x, y: _f(np.logical_or(x, y)), _logical_reduce("or"), 0.0),
        AluOp("logical_xor", ARITH, 2, lambda x, y: _f(np.logical_xor(x, y)), _logical_reduce("xor"), 0.0),
        AluOp("logical_not", ARITH, 1, lambda x: _f(np.logical_not(x))),
        AluOp("power", ARITH, 2, np.power),
        # Identity of abs_max is 0 and of abs_min +inf *(implementation choice; isa.md §2.3 leaves it open)*.
        AluOp("abs_max", ARITH, 2, _abs_max, _abs_reduce(_abs_max), 0.0, min_nc_version=4),
        AluOp("abs_min", ARITH, 2, _abs_min, _abs_reduce(_abs_min), math.inf, min_nc_version=4),
        # nl.divide exists in the stub but is "not supported on hardware" (language.md §8); kept for nl helpers.
        AluOp("divide", ARITH, 2, np.divide),
        # unary arithmetic (operand ignored; isa.md §0.5)
        AluOp("abs", ARITH, 1, np.abs),
        AluOp("square", ARITH, 1, np.square),
        AluOp("relu", ARITH, 1, lambda x: np.maximum(x, F32(0))),
        AluOp("rsqrt", ARITH, 1, lambda x: F32(1) / np.sqrt(x)),
        AluOp("reciprocal", ARITH, 1, lambda x: F32(1) / x),
    )
}

# Names that reach us from NumPy ufuncs (legacy kernels), Python builtins or older spellings.
_ALIASES = {
    "max": "maximum",
    "amax": "maximum",
    "min": "minimum",
    "amin": "minimum",
    "absolute": "abs",
    "true_divide": "divide",
    "sum": "add",
    "prod": "multiply",
    "identity": "copy",
}


def op_name(op: object) -> str:
    """The public ``nl`` name an ``op=`` argument stands for (``nl.add``, ``np.add``, ``"add"`` -> ``"add"``)."""
    if isinstance(op, str):
        name = op
    else:
        name = getattr(op, "nki_name", None) or getattr(op, "__name__", None) or ""
        if not isinstance(name, str):
            name = ""
    name = name.rsplit(".", 1)[-1]
    return _ALIASES.get(name, name)


def alu_op(op: object) -> AluOp | None:
    """The ALU operator for ``op``, or None if it is not one."""
    return _OPS.get(op_name(op))


def alu_names() -> tuple[str, ...]:
    """All ALU operator names."""
    return tuple(_OPS)


# ---------------------------------------------------------------- activation functions (isa.md §0.6)

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def erf(x: Array) -> Array:
    """Error function, vectorised (Abramowitz & Stegun 7.1.26 in float64, |error| < 1.5e-7).

    NumPy has no erf and SciPy is not a dependency; the hardware uses its own (unpublished) polynomial, so
    an approximation below float32 resolution is as faithful as we can be.
    """
    z = np.asarray(x, dtype=np.float64)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.asarray(np.sign(z) * (1.0 - poly * np.exp(-a * a)), dtype=F32)


def _sigmoid(x: Array) -> Array:
    return np.asarray(F32(1) / (F32(1) + np.exp(-x)), dtype=F32)


def _phi(x: Array) -> Array:
    """Standard normal density."""
    return np.asarray(np.exp(F32(-0.5) * x * x) * F32(1.0 / math.sqrt(2.0 * math.pi)), dtype=F32)


def _gelu(x: Array) -> Array:
    return F32(0.5) * x * (F32(1) + erf(x / F32(_SQRT2)))


def _gelu_dx(x: Array) -> Array:
    return F32(0.5) * (F32(1) + erf(x / F32(_SQRT2))) + x * _phi(x)


def _gelu_tanh(x: Array) -> Array:
    return F32(0.5) * x * (F32(1) + np.tanh(F32(_SQRT_2_OVER_PI) * (x + F32(0.044715) * x * x * x)))


# Constant 1.702 of the sigmoid GELU approximation is *inferred* (isa.md §0.6 gives only the name).
_GELU_SIG_K = F32(1.702)


def _gelu_sigmoid(x: Array) -> Array:
    return x * _sigmoid(_GELU_SIG_K * x)


def _gelu_sigmoid_dx(x: Array) -> Array:
    s = _sigmoid(_GELU_SIG_K * x)
    return s + _GELU_SIG_K * x * s * (F32(1) - s)


def _silu_dx(x: Array) -> Array:
    s = _sigmoid(x)
    return s + x * s * (F32(1) - s)


def _softplus(x: Array) -> Array:
    return np.asarray(np.logaddexp(F32(0), x), dtype=F32)


Activation = Callable[[Array, Any], Array]

_ACTIVATIONS: dict[str, Activation] = {
    "copy": lambda x, p: x,
    "square": lambda x, p: x * x,
    "sigmoid": lambda x, p: _sigmoid(x),
    "relu": lambda x, p: np.maximum(x, F32(0)),
    "prelu": lambda x, p: np.where(x >= 0, x, x * p),
    "gelu": lambda x, p: _gelu(x),
    "gelu_dx": lambda x, p: _gelu_dx(x),
    "gelu_apprx_tanh": lambda x, p: _gelu_tanh(x),
    "gelu_apprx_sigmoid": lambda x, p: _gelu_sigmoid(x),
    "gelu_apprx_sigmoid_dx": lambda x, p: _gelu_sigmoid_dx(x),
    "silu": lambda x, p: x * _sigmoid(x),
    "silu_dx": lambda x, p: _silu_dx(x),
    "tanh": lambda x, p: np.tanh(x),
    "softplus": lambda x, p: _softplus(x),
    "mish": lambda x, p: x * np.tanh(_softplus(x)),
    "erf": lambda x, p: erf(x),
    "erf_dx": lambda x, p: F32(2.0 / math.sqrt(math.pi)) * np.exp(-x * x),
    "exp": lambda x, p: np.exp(x),
    "log": lambda x, p: np.log(x),
    # isa.md §0.6: the Scalar engine does no range reduction for sin outside [-pi, pi]; its polynomial is
    # unknown, so we return exact sin everywhere (documented in docs/simulator.md, "ISA choices").
    "sin": lambda x, p: np.sin(x),
    "arctan": lambda x, p: np.arctan(x),
    "sqrt": lambda x, p: np.sqrt(x),
    "rsqrt": lambda x, p: F32(1) / np.sqrt(x),
    "reciprocal": lambda x, p: F32(1) / x,
    "sign": lambda x, p: np.sign(x),
    "abs": lambda x, p: np.abs(x),
}


def activation_fn(op: object) -> Activation | None:
    """The activation function for ``op`` (``nl.exp``, ``nl.copy`` ...), or None if it is not one."""
    return _ACTIVATIONS.get(op_name(op))


def activation_names() -> tuple[str, ...]:
    """All activation function names."""
    return tuple(_ACTIVATIONS)


def is_bypass(op: object) -> bool:
    """``nl.bypass`` (pass-through stage of ``activate2``) or None."""
    return op is None or op_name(op) == "bypass"
