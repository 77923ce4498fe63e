"""Python operators on tiles (``a + b``, ``acc += nl.matmul(...)``, ``-a``) and ``tile.broadcast_to``: legacy API only.

Legacy kernels combine tiles with operators, each meaning the ``nl`` function of the same name (``+`` is
``nl.add``, ``*`` is ``nl.multiply`` ...) [v2.26.1 NKI tutorials, e.g. tensor addition's ``c_tile = a_tile +
b_tile``; nki.language.loop_reduce: "consider simply using the += operator"]. ``x += y`` updates ``x`` in place
(a PSUM tile accumulates). Since ``nki.*`` 0.2.0 tiles have no operators (deprecations.md E): under a current
NKI version an operator is an error naming its ``nl`` replacement.
"""

from __future__ import annotations

import sys
from typing import cast

from nki_studio.sim import context
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.isa.tensor_ops import accumulate_into
from nki_studio.sim.language import broadcast_to
from nki_studio.sim.language.elementwise import FUNCTIONS
from nki_studio.sim.legacy.assignment import written_into
from nki_studio.sim.legacy.detect import legacy_semantics
from nki_studio.sim.legacy_hooks import register
from nki_studio.sim.memory import MemoryRegion
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
    ctx = context.current_or_none()
    if ctx is not None and not legacy_semantics():
        args = ", ".join("a" if i == 0 else "b" for i in range(len(operands)))
        raise SimulationError(
            f"the tile operator {_SYMBOLS[name]} is legacy neuronxcc.nki API (NKI {ctx.options.nki_version} tiles "
            f"have no operators): write nl.{name}({args}) or an nisa instruction"
        )
    if name == "broadcast_to":
        return broadcast_to(cast(NkiTensor, operands[0]), operands[1])
    result: NkiTensor = FUNCTIONS[name](*operands)
    return result


def _in_place(target: NkiTensor, name: str, other: object) -> NkiTensor:
    if (
        name == "add"
        and target.buffer is MemoryRegion.psum
        and isinstance(other, NkiTensor)
        and legacy_semantics()
    ):
        # ``psum_tile += nisa.nc_matmul(...)`` is a matmul accumulation group: the first write to a PSUM element
        # overwrites it, later ones add (isa.md §1.1, ``accumulate=None``); the legacy matmul kernels rely on it
        # with an uninitialised nl.ndarray PSUM tile (nki-samples' fused RMSNorm-QKV). The matmul accumulated into
        # the target itself: its result tile is no memory of its own.
        written_into(other, target)
        accumulate_into("psum +=", target, read(other), None)
        return target
    write(target, read(_apply(name, target, other)))
    return target


def apply(name: str, *operands: object) -> NkiTensor:
    """``nl.<name>(*operands)`` for a tile operator (``legacy_hooks.Operators``)."""
    return _apply(name, *operands)


def in_place(target: NkiTensor, name: str, other: object) -> NkiTensor:
    """``target <op>= other`` (``legacy_hooks.Operators``)."""
    return _in_place(target, name, other)


register(operator_hook=sys.modules[__name__])
