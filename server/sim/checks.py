"""Operand checks shared by the instruction implementations; each raises ``HardwareLimitError``
with the official simulator's message style ("<op> <role> partition dimension 256 exceeds maximum 128").
"""

from __future__ import annotations

from nki_studio.sim import context
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.tensor import NkiTensor


def tensor_arg(op: str, role: str, value: object) -> NkiTensor:
    """``value`` as an ``NkiTensor``, or an error naming the operand."""
    if not isinstance(value, NkiTensor):
        kind = type(value).__name__
        # nl.tiles/nl.blocks views are not operands (nki-0.7.md §2.6): the API pages pass ``grid.data``.
        hint = "; pass its .data" if kind in ("NkiTileGrid", "NkiBlockGrid") else ""
        raise HardwareLimitError(f"{op} {role} must be a tensor, not {kind}{hint}")
    return value


def free_size(t: NkiTensor) -> int:
    """Elements per partition of an on-chip view (product of the free dims)."""
    return t.size // t.shape[0] if t.shape and t.shape[0] else 0


def buffers(op: str, role: str, t: NkiTensor, allowed: tuple[str, ...]) -> None:
    """The operand's region kind ("sbuf", "psum", "hbm") must be in ``allowed``."""
    kind = t.buffer.kind
    if kind not in allowed:
        raise HardwareLimitError(
            f"{op} {role} must be in {' or '.join(a.upper() for a in allowed)}, not {kind.upper()}"
        )


def partitions(op: str, role: str, t: NkiTensor) -> int:
    """Partition count of an on-chip operand, checked against the target's maximum."""
    pmax = context.current().options.target.limits.partitions
    p = t.shape[0] if t.shape else 1
    if p > pmax:
        raise HardwareLimitError(f"{op} {role} partition dimension {p} exceeds maximum {pmax}")
    return p


def same_partitions(op: str, **operands: NkiTensor) -> int:
    """All operands span the same number of partitions (each within the maximum); returns it."""
    counts = {role: partitions(op, role, t) for role, t in operands.items()}
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{r}={c}" for r, c in counts.items())
        raise HardwareLimitError(f"{op} operands must span the same partitions: {detail}")
    return next(iter(counts.values()), 0)


def same_free_size(op: str, **operands: NkiTensor) -> int:
    """All operands have the same number of elements per partition; returns it."""
    sizes = {role: free_size(t) for role, t in operands.items()}
    if len(set(sizes.values())) > 1:
        detail = ", ".join(f"{r}={n}" for r, n in sizes.items())
        raise HardwareLimitError(f"{op} operands must have the same elements per partition: {detail}")
    return next(iter(sizes.values()), 0)
