"""Run-time scalar values: ``nisa.VirtualRegister`` (0.6) and ``NkiScalar`` (0.7), and ``index_value``.

Registers hold a concrete int in simulation. To keep simulation faithful to what compiles, Python control
flow on them is refused (``bool``/``int``/``range`` raise ``TypeError``, nki-0.7.md §4.2), except the
deprecated NKI <= 0.6 ``while reg:`` form, which is accepted with a warning when the target is 0.6.
"""

from __future__ import annotations

from typing import Any

from nki_studio.model import toolchain_rejections as rejects
from nki_studio.model.targets import NkiVersion
from nki_studio.sim import context
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.rejections import toolchain_rejects

_INT_RANGES = {"int32": (-(1 << 31), 1 << 32), "int64": (-(1 << 63), 1 << 64)}


def _wrap(value: int, dtype: str) -> int:
    low, span = _INT_RANGES[dtype]
    return (value - low) % span + low


class VirtualRegister:
    """A 32-bit engine register (isa.md §7). ``frozen`` registers (loop induction variables) are read-only."""

    def __init__(self, state: int | None = None, frozen: bool = False) -> None:
        self.value = None if state is None else _wrap(int(state), "int32")
        self.frozen = frozen

    def sim_value(self) -> int:
        """The register's current value; reading an unset register is an error (but 0 in an untaken
        ``nl.if_else`` branch, where the load that would have set it did not run)."""
        if self.value is None:
            if context.untaken():
                return 0
            raise SimulationError("read of an uninitialised register (register_alloc() without a value)")
        return self.value

    def set(self, value: int) -> None:
        """Assign (register_move / register_load); frozen registers refuse (AssertionError since 0.4.0)."""
        if self.frozen:
            raise SimulationError("cannot write a loop induction register (it is frozen)")
        self.value = _wrap(int(value), "int32")

    def __bool__(self) -> bool:
        ctx = context.current_or_none()
        if ctx is not None and ctx.options.nki_version < NkiVersion(0, 7):
            toolchain_rejects(rejects.WHILE_REGISTER_DEPRECATED)
            return self.sim_value() != 0
        raise TypeError(
            "a VirtualRegister has no Python truth value under NKI >= 0.7 tracing; use nl.while_loop"
        )

    def __index__(self) -> int:
        raise TypeError(
            "a VirtualRegister is a device value: use it as .ap(scalar_offset=...) or a loop bound"
        )

    def __repr__(self) -> str:
        return f"VirtualRegister(value={self.value})"


class NkiScalar:
    """An NKI 0.7 scalar (int32/int64) with two's-complement wrapping arithmetic (nki-0.7.md §4.2)."""

    def __init__(self, value: int, dtype: str = "int32", is_comparison: bool = False) -> None:
        if dtype not in _INT_RANGES:
            raise SimulationError(f"NkiScalar dtype must be int32 or int64, not {dtype}")
        self.value = _wrap(int(value), dtype)
        self.dtype = dtype
        self.is_comparison = is_comparison

    def sim_value(self) -> int:
        """The concrete value held in simulation."""
        return self.value

    def _other(self, other: object) -> int:
        if isinstance(other, NkiScalar):
            if other.dtype != self.dtype:
                raise TypeError(f"NkiScalar {self.dtype} combined with {other.dtype}")
            return other.value
        if isinstance(other, int) and not isinstance(other, bool):
            return other
        raise TypeError(f"NkiScalar operand must be a Python int or NkiScalar, not {type(other).__name__}")

    def _arith(self, other: object, fn: Any, name: str) -> NkiScalar:
        if self.dtype == "int64" and name not in ("+", "-", "*"):
            raise TypeError(f"int64 NkiScalar supports only + - *, not {name}")
        return NkiScalar(fn(self.value, self._other(other)), self.dtype)

    def _cmp(self, other: object, fn: Any) -> NkiScalar:
        if self.dtype == "int64":
            raise TypeError("int64 NkiScalar values cannot be compared")
        return NkiScalar(int(fn(self.value, self._other(other))), "int32", is_comparison=True)

    def __add__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a + b, "+")

    def __radd__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: b + a, "+")

    def __sub__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a - b, "-")

    def __rsub__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: b - a, "-")

    def __mul__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a * b, "*")

    def __rmul__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: b * a, "*")

    def __floordiv__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a // b, "//")

    def __mod__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a % b, "%")

    def __lshift__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a << b, "<<")

    def __rshift__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a >> b, ">>")

    def __and__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a & b, "&")

    def __or__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a | b, "|")

    def __xor__(self, o: object) -> NkiScalar:
        return self._arith(o, lambda a, b: a ^ b, "^")

    def __neg__(self) -> NkiScalar:
        return NkiScalar(-self.value, self.dtype)

    def __lt__(self, o: object) -> NkiScalar:
        return self._cmp(o, lambda a, b: a < b)

    def __le__(self, o: object) -> NkiScalar:
        return self._cmp(o, lambda a, b: a <= b)

    def __gt__(self, o: object) -> NkiScalar:
        return self._cmp(o, lambda a, b: a > b)

    def __ge__(self, o: object) -> NkiScalar:
        return self._cmp(o, lambda a, b: a >= b)

    def __eq__(self, o: object) -> NkiScalar:  # type: ignore[override]
        return self._cmp(o, lambda a, b: a == b)

    def __ne__(self, o: object) -> NkiScalar:  # type: ignore[override]
        return self._cmp(o, lambda a, b: a != b)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise TypeError("an NkiScalar has no Python truth value (tracing parity); use nl.while_loop")

    def __index__(self) -> int:
        raise TypeError("an NkiScalar is a device value; use it as .ap(scalar_offset=...) or a loop bound")

    def __int__(self) -> int:
        raise TypeError("an NkiScalar is a device value and cannot become a Python int")

    def __repr__(self) -> str:
        return f"NkiScalar({self.value}, {self.dtype})"


def index_value(value: object) -> int:
    """The concrete int behind an index/offset: Python int, NumPy integer, register, NkiScalar or 1-element tile."""
    if isinstance(value, bool):
        raise TypeError("a bool is not an index")
    if isinstance(value, int):
        return value
    getter = getattr(value, "sim_value", None)
    if getter is not None:
        return int(getter())
    try:
        import numpy as np

        if isinstance(value, np.integer):
            return int(value)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    raise TypeError(f"not an index: {value!r}")
