"""Element-wise ``nl`` math, activation, comparison, logical and bitwise helpers (language.md §8).

Each public function carries its ``nl`` name as ``__name__``, so it also works as an ``op=`` argument of
ISA instructions (``alu.op_name``). The maths comes from ``nki_studio.sim.alu``; the few language-level
functions the ISA tables lack (``cos``, ``floor``...) use NumPy directly. Engines recorded in the trace:
ALU operators on Vector, activation functions on Scalar, ``rsqrt``/``power`` on GpSimd (language.md §8).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from nki_studio.model.nki_api import (
    LANGUAGE_ACTIVATIONS,
    LANGUAGE_BINARY,
    LANGUAGE_OPERATOR_CONSTANTS,
    LANGUAGE_UNARY_MATH,
)
from nki_studio.sim import alu
from nki_studio.sim.errors import NotImplementedInSimulator
from nki_studio.sim.language._ops import elementwise
from nki_studio.sim.tensor import NkiTensor

_F32 = np.float32

# Language-level maths with no ISA table entry (sin here has range reduction, language.md §8).
_EXTRA_UNARY: dict[str, Callable[[Any], Any]] = {
    "negative": np.negative,
    "cos": np.cos,
    "tan": np.tan,
    "ceil": np.ceil,
    "floor": np.floor,
    "trunc": np.trunc,
    "sin": np.sin,
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
}
_EXTRA_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "fmod": np.fmod,  # C-style remainder (sign of x); simulation only on hardware
    "mod": np.mod,  # Python-style remainder (sign of y); simulation only
}
_GPSIMD = frozenset({"rsqrt", "power"})


def _unary_fn(name: str) -> tuple[Callable[[Any], Any], str, bool]:
    if name in _EXTRA_UNARY:
        return _EXTRA_UNARY[name], "scalar" if name in ("sin", "exp", "log", "tanh") else "vector", False
    op = alu.alu_op(name)
    if op is not None:
        return op.fn, "gpsimd" if name in _GPSIMD else "vector", op.kind == alu.BITVEC
    act = alu.activation_fn(name)
    if act is None:  # pragma: no cover - table and name list are kept in sync by tests
        raise NotImplementedInSimulator(f"nl.{name}")
    return (lambda x: act(x, None)), "gpsimd" if name in _GPSIMD else "scalar", False


def _make_unary(name: str) -> Callable[..., NkiTensor]:
    def fn(x: NkiTensor, dtype: object = None, **_: object) -> NkiTensor:
        impl, engine, raw = _unary_fn(name)
        return elementwise(name, engine, impl, [x], dtype, raw=raw)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``nl.{name}(x, dtype=None)``: element-wise {name} of a tile (language.md §8)."
    return fn


def _make_binary(name: str) -> Callable[..., NkiTensor]:
    def fn(x: object, y: object, dtype: object = None, **_: object) -> NkiTensor:
        if name in _EXTRA_BINARY:
            impl, raw = _EXTRA_BINARY[name], False
        else:
            op = alu.alu_op(name)
            if op is None:  # pragma: no cover
                raise NotImplementedInSimulator(f"nl.{name}")
            impl, raw = op.fn, op.kind == alu.BITVEC
        engine = "gpsimd" if name in _GPSIMD else "vector"
        return elementwise(name, engine, impl, [x, y], dtype, raw=raw)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``nl.{name}(x, y, dtype=None)``: element-wise {name}; one operand may be a number."
    return fn


def _operator_token(name: str) -> Callable[..., Any]:
    def fn(*args: object, **kwargs: object) -> Any:
        raise NotImplementedInSimulator(
            f"nl.{name}", "it is an operator constant for ISA instructions, not a function"
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``nl.{name}``: operator constant for ISA ``op=`` arguments (language.md §13)."
    return fn


# The names and their arity are the stubs' (the generated ``nki_api``); the maths per name is above and in ``alu``.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{n: _make_unary(n) for n in (*LANGUAGE_UNARY_MATH, *LANGUAGE_ACTIVATIONS)},
    **{n: _make_binary(n) for n in LANGUAGE_BINARY},
    **{n: _operator_token(n) for n in LANGUAGE_OPERATOR_CONSTANTS},
}
