"""Peak on-chip memory per partition from the interpreter's allocation facts (liveness sweep).

An allocation is live from its creation event to its last use (operand of an API call, view, store into it).
Allocations inside an unrolled loop are separate instances with their own liveness; inside a summarised loop
an allocation that is still used after the loop counts once per iteration (``Allocation.repeat``). Unknown
sizes count as 0 and an unknown dtype as 1 byte per element (the smallest NKI dtype), so every total is a
lower bound and a rule firing on it is not a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nki_studio.model.values import Allocation


@dataclass(frozen=True)
class Peak:
    """The largest simultaneous use of one buffer: its amount, where it is reached, and what is live there."""

    amount: int
    at: Allocation  # the allocation whose creation reaches the peak
    live: tuple[Allocation, ...]  # largest first


def capacity_share(used_bytes: int, capacity_bytes: int, buffer: str) -> str:
    """``104.6% of SBUF per partition``: how the hover and the capacity rules state a use against the buffer's
    whole per-partition capacity (one wording, so the editor's two views show the same figure)."""
    region = f"{buffer.upper()} per partition"
    if used_bytes.bit_length() > 64:  # a shape of hundreds of dims: past any float, and past any use
        return f"far over 100% of {region}"
    return f"{100.0 * used_bytes / capacity_bytes:.1f}% of {region}"


def psum_banks(alloc: Allocation, bank_bytes: int) -> int:
    """PSUM banks one allocation occupies (whole banks; PSUM tiles start on a bank boundary, language.md §6)."""
    size = alloc.min_bytes_per_partition() or 0
    return max(1, -(-size // bank_bytes)) * alloc.repeat if size else 0  # int ceil: sizes may be huge


def sbuf_bytes(alloc: Allocation) -> int:
    """SBUF bytes per partition of an allocation, times the instances alive together."""
    return (alloc.min_bytes_per_partition() or 0) * alloc.repeat


def peak(allocations: list[Allocation], buffer: str, weight: Callable[[Allocation], int]) -> Peak | None:
    """The peak of ``weight`` summed over simultaneously live allocations of ``buffer`` (None if nothing).

    Allocations on different sides of an unknown ``if`` are never counted together: at each allocation the
    live set is reduced greedily (largest first) to allocations that can all exist at once, so the result
    stays a lower bound of a real execution.
    """
    weights: dict[int, int] = {}  # id(allocation) -> weight, computed once (sizes come from shape products)
    for a in allocations:
        if a.buffer == buffer:
            w = weight(a)
            if w > 0:
                weights[id(a)] = w
    items = [a for a in allocations if id(a) in weights]
    if not items:
        return None

    def size(a: Allocation) -> int:
        return weights[id(a)]

    # Sweep for the conflict-ignoring total at each allocation: an upper bound used to order and prune.
    events: list[tuple[float, int, Allocation]] = []
    for a in items:
        events.append((a.seq, 1, a))
        events.append((max(a.seq, a.last_use) + 0.5, -1, a))
    events.sort(key=lambda e: (e[0], -e[1]))
    current = 0
    upper: list[tuple[int, Allocation]] = []
    for _, sign, a in events:
        current += sign * size(a)
        if sign > 0:
            upper.append((current, a))
    upper.sort(key=lambda e: -e[0])
    best: Peak | None = None
    by_size = sorted(items, key=size, reverse=True)
    for bound, at in upper:
        if best is not None and bound <= best.amount:
            break
        live = [a for a in by_size if a.seq <= at.seq <= max(a.seq, a.last_use)]
        chosen = [at]
        for a in live:
            if a is not at and not any(a.excludes(c) for c in chosen):
                chosen.append(a)
        total = sum(size(a) for a in chosen)
        if best is None or total > best.amount:
            best = Peak(total, at, tuple(sorted(chosen, key=size, reverse=True)))
    return best
