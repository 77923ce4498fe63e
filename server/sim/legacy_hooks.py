"""Where the legacy API (``sim.legacy``) plugs into the tensor model.

Tensors call these hooks for what only the legacy API has (indexing with ``nl.arange`` index tiles and block
dimensions; Python operators on tiles; a value-returning call's result assigned into a tensor); the legacy modules
register the implementations when they are imported (``sim.legacy.indexing``, ``sim.legacy.operators``, both
imported by ``sim.api``; ``sim.legacy.assignment``, imported with the legacy ``isa`` and ``language``). So ``tensor`` and ``views`` never
import the legacy modules, which import them: no import cycle. Before registration no legacy value can exist
(index tiles come from ``sim.legacy``), so indexing takes the current path, and an operator on a tile is the
current API's error naming its ``nl`` function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from nki_studio.sim.errors import SimulationError

if TYPE_CHECKING:
    from nki_studio.sim.tensor import NkiTensor


class Indexing(Protocol):
    """Legacy indexing (``sim.legacy.indexing``)."""

    def handles(self, tensor: NkiTensor, keys: tuple[object, ...]) -> bool:
        """True when ``keys`` need the legacy indexing (index tiles, block dimensions)."""

    def index(self, tensor: NkiTensor, keys: tuple[object, ...]) -> NkiTensor:
        """``tensor[keys]`` with legacy semantics."""


class Results(Protocol):
    """Assignment of legacy value-returning calls' results (``sim.legacy.assignment``)."""

    def assign(self, target: NkiTensor, value: object) -> bool:
        """``target[...] = value``: True when done the legacy way, False for the ordinary copy."""


class Operators(Protocol):
    """Legacy tile operators (``sim.legacy.operators``)."""

    def apply(self, name: str, *operands: object) -> NkiTensor:
        """``nl.<name>(*operands)`` for an operator (or the current API's error)."""

    def in_place(self, target: NkiTensor, name: str, other: object) -> NkiTensor:
        """``target <op>= other``."""


indexing: Indexing | None = None
operators: Operators | None = None
results: Results | None = None


def register(
    *,
    index_hook: Indexing | None = None,
    operator_hook: Operators | None = None,
    result_hook: Results | None = None,
) -> None:
    """Install the legacy implementations (called by the legacy modules when imported)."""
    global indexing, operators, results
    indexing = index_hook or indexing
    operators = operator_hook or operators
    results = result_hook or results


def _ops(symbol: str, name: str) -> Operators:
    if operators is None:
        raise SimulationError(
            f"the tile operator {symbol} is legacy neuronxcc.nki API: write nl.{name}(a, b)"
        )
    return operators


def _binary(name: str, symbol: str, reverse: bool = False) -> object:
    def method(self: NkiTensor, o: object) -> NkiTensor:
        ops = _ops(symbol, name)
        return ops.apply(name, o, self) if reverse else ops.apply(name, self, o)

    method.__name__ = f"__{'r' if reverse else ''}{name}__"
    return method


def _augmented(name: str, symbol: str) -> object:
    def method(self: NkiTensor, o: object) -> NkiTensor:
        return _ops(symbol + "=", name).in_place(self, name, o)

    method.__name__ = f"__i{name}__"
    return method


class TileOperators:
    """The legacy operators, mixed into ``NkiTensor`` (each the ``nl`` function of the same name)."""

    __slots__ = ()

    __add__, __radd__, __iadd__ = _binary("add", "+"), _binary("add", "+", True), _augmented("add", "+")
    __sub__, __rsub__, __isub__ = (
        _binary("subtract", "-"),
        _binary("subtract", "-", True),
        _augmented("subtract", "-"),
    )
    __mul__, __rmul__, __imul__ = (
        _binary("multiply", "*"),
        _binary("multiply", "*", True),
        _augmented("multiply", "*"),
    )
    __truediv__, __rtruediv__, __itruediv__ = (
        _binary("divide", "/"),
        _binary("divide", "/", True),
        _augmented("divide", "/"),
    )
    __pow__ = _binary("power", "**")
    __lt__, __le__ = _binary("less", "<"), _binary("less_equal", "<=")
    __gt__, __ge__ = _binary("greater", ">"), _binary("greater_equal", ">=")

    def __neg__(self) -> NkiTensor:
        return _ops("-", "negative").apply("negative", self)

    def broadcast_to(self, shape: tuple[int, ...]) -> NkiTensor:
        """``tile.broadcast_to(shape)``: ``nl.broadcast_to(tile, shape)`` (a legacy tile method, e.g. the
        RMSNorm tutorial's ``g_tile.broadcast_to((128, n))``)."""
        return _ops(".broadcast_to", "broadcast_to").apply("broadcast_to", self, shape)
