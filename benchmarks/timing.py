"""Best-of-N timing for the benchmark scripts: the least of ``repeat`` timed calls, the figure other load on the
machine disturbs least."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(
    fn: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, Any]:
    """The least time ``clock`` measures over ``repeat`` calls of ``fn`` (seconds), and the last call's value."""
    best, value = float("inf"), None
    for _ in range(repeat):
        t = clock()
        value = fn()
        best = min(best, clock() - t)
    return best, value
