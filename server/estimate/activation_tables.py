"""Activation-table loads: the Scalar engine computes an activation function from a table it loads first, so
an activation whose function needs another table than the previous activation's on the same engine pays a
load (``constants.ACTIVATION_TABLE_LOAD``). The trace records each activation's function
(``TraceEvent.function``); the Scalar queue runs in trace order per (rank, core), so consecutive in the trace
is consecutive on the engine. Grouping activations of one table is what avoids the loads.
"""

from __future__ import annotations

from collections.abc import Sequence

from nki_studio.estimate import constants as K
from nki_studio.sim.trace import TraceEvent

# Functions measured to share one table: "t0={COPY,SQUARE,RECIPROCAL_SQRT}" (the source of
# ACTIVATION_TABLE_LOAD; sigmoid, silu, exp and softplus each had their own there). Every function not named
# here is taken to have a table of its own (inferred: no table map is published).
SHARED_TABLES: dict[str, str] = {"copy": "t0", "square": "t0", "rsqrt": "t0"}


def table_of(function: str) -> str:
    """The table an activation function is evaluated from (its own name when no sharing is known)."""
    return SHARED_TABLES.get(function, function)


def table_loads(events: Sequence[TraceEvent]) -> dict[int, float]:
    """Event index -> ns of the table load charged before that Scalar-engine activation (only the loads)."""
    loaded: dict[tuple[int, int], str] = {}  # (rank, core) -> the table in the engine
    out: dict[int, float] = {}
    ns = K.ACTIVATION_TABLE_LOAD.value
    for i, e in enumerate(events):
        if not e.function or e.engine != "scalar":
            continue
        key, table = (e.rank, e.core), table_of(e.function)
        if loaded.get(key) != table:
            out[i] = ns
            loaded[key] = table
    return out
