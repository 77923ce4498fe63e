"""Python operators on tiles (``a + b``, ``acc += nl.matmul(...)``, ``-a``) and ``tile.broadcast_to``: legacy API only.

Legacy kernels combine tiles with operators, each meaning the ``nl`` function of the same name (``+`` is
``nl.add``, ``*`` is ``nl.multiply`` ...) [v2.26.1 NKI tutorials, e.g. tensor addition's ``c_tile = a_tile +
b_tile``; nki.language.loop_reduce: "consider simply using the += operator"]. ``x += y`` updates ``x`` in place
(a PSUM tile accumulates). Since ``nki.*`` 0.2.0 tiles have no operators (deprecations.md E): under a current
NKI version an operator is an error naming its ``nl`` replacement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from nki_studio.sim import context
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.legacy.detect import legacy_semantics

if TYPE_CHECKING:
    from nki_studio.sim.tensor import NkiTensor

_SYMBOLS = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "power": "**",
    "negative": "-",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
    "broadcast_to": ".broadcast_to",
}


def _apply(name: str, *operands: object) -> NkiTensor:
    from nki_studio.sim.language import broadcast_to
    from nki_studio.sim.language.elementwise import FUNCTIONS

    ctx = context.current_or_none()
    if ctx is not None and not legacy_semantics():
        args = ", ".join("a" if i == 0 else "b" for i in range(len(operands)))
        raise SimulationError(
            f"the tile operator {_SYMBOLS[name]} is legacy neuronxcc.nki API (NKI {ctx.options.nki_version} tiles "
            f"have no operators): write nl.{name}({args}) or an nisa instruction"
        )
    if name == "broadcast_to":
        return broadcast_to(cast("NkiTensor", operands[0]), operands[1])
    result: NkiTensor = FUNCTIONS[name](*operands)
    return result


def _in_place(target: NkiTensor, name: str, other: object) -> NkiTensor:
    from nki_studio.sim.isa.tensor_ops import accumulate_into
    from nki_studio.sim.memory import MemoryRegion
    from nki_studio.sim.tensor import NkiTensor, read, write

    if (
        name == "add"
        and target.buffer is MemoryRegion.psum
        and isinstance(other, NkiTensor)
        and legacy_semantics()
    ):
        # ``psum_tile += nisa.nc_matmul(...)`` is a matmul accumulation group: the first write to a PSUM element
        # overwrites it, later ones add (isa.md §1.1, ``accumulate=None``); the legacy matmul kernels rely on it
        # with an uninitialised nl.ndarray PSUM tile (nki-samples' fused RMSNorm-QKV).
        accumulate_into("psum +=", target, read(other), None)
        return target
    write(target, read(_apply(name, target, other)))
    return target


def _binary(name: str, reverse: bool = False) -> Any:
    def method(self: NkiTensor, o: object) -> NkiTensor:
        return _apply(name, o, self) if reverse else _apply(name, self, o)

    method.__name__ = f"{'r' if reverse else ''}{name}"
    return method


def _augmented(name: str) -> Any:
    def method(self: NkiTensor, o: object) -> NkiTensor:
        return _in_place(self, name, o)

    method.__name__ = f"i{name}"
    return method


class TileOperators:
    """The legacy operators, mixed into ``NkiTensor``."""

    __slots__ = ()

    __add__, __radd__, __iadd__ = _binary("add"), _binary("add", True), _augmented("add")
    __sub__, __rsub__, __isub__ = _binary("subtract"), _binary("subtract", True), _augmented("subtract")
    __mul__, __rmul__, __imul__ = _binary("multiply"), _binary("multiply", True), _augmented("multiply")
    __truediv__, __rtruediv__, __itruediv__ = _binary("divide"), _binary("divide", True), _augmented("divide")
    __pow__ = _binary("power")
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")

    def __neg__(self) -> NkiTensor:
        return _apply("negative", self)

    def broadcast_to(self, shape: tuple[int, ...]) -> NkiTensor:
        """``tile.broadcast_to(shape)``: ``nl.broadcast_to(tile, shape)`` (a legacy tile method, e.g. the
        RMSNorm tutorial's ``g_tile.broadcast_to((128, n))``)."""
        return _apply("broadcast_to", self, shape)
