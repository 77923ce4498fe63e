"""Peak on-chip memory per partition from the interpreter's allocation facts (liveness sweep).

An allocation is live from its creation event to its last use (operand of an API call, view, store into it).
Allocations inside an unrolled loop are separate instances with their own liveness; inside a summarised loop
an allocation that is still used after the loop counts once per iteration (``Allocation.repeat``). Unknown
sizes count as 0 and an unknown dtype as 1 byte per element (the smallest NKI dtype), so every total is a
lower bound and a rule firing on it is not a guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from nki_studio.model.values import Allocation


@dataclass(frozen=True)
class Peak:
    """The largest simultaneous use of one buffer: its amount, where it is reached, and what is live there."""

    amount: int
    at: Allocation  # the allocation whose creation reaches the peak
    live: tuple[Allocation, ...]  # largest first


def psum_banks(alloc: Allocation, bank_bytes: int) -> int:
    """PSUM banks one allocation occupies (whole banks; PSUM tiles start on a bank boundary, language.md §6)."""
    size = alloc.min_bytes_per_partition() or 0
    return max(1, math.ceil(size / bank_bytes)) * alloc.repeat if size else 0


def sbuf_bytes(alloc: Allocation) -> int:
    """SBUF bytes per partition of an allocation, times the instances alive together."""
    return (alloc.min_bytes_per_partition() or 0) * alloc.repeat


def peak(allocations: list[Allocation], buffer: str, weight: Callable[[Allocation], int]) -> Peak | None:
    """The peak of ``weight`` summed over simultaneously live allocations of ``buffer`` (None if nothing)."""
    items = [a for a in allocations if a.buffer == buffer and weight(a) > 0]
    if not items:
        return None
    events: list[tuple[float, int, Allocation]] = []
    for a in items:
        events.append((a.seq, 1, a))
        events.append((max(a.seq, a.last_use) + 0.5, -1, a))
    events.sort(key=lambda e: (e[0], -e[1]))
    current = best = 0
    best_at: Allocation | None = None
    for _, sign, a in events:
        current += sign * weight(a)
        if sign > 0 and current > best:
            best, best_at = current, a
    assert best_at is not None
    point = best_at.seq
    live = sorted((a for a in items if a.seq <= point <= max(a.seq, a.last_use)), key=weight, reverse=True)
    return Peak(best, best_at, tuple(live))
