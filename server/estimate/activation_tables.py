"""Activation-table loads: the Scalar engine computes an activation function from a table it loads first, so
an activation whose function needs another table than the previous activation's on the same engine pays a
load (``constants.ACTIVATION_TABLE_LOAD``). The trace records each activation's function
(``TraceEvent.function``); the Scalar queue runs in trace order per (rank, core), so consecutive in the trace
is consecutive on the engine. Grouping activations of one table is what avoids the loads.
"""

from __future__ import annotations

import numpy as np
from nki_studio.estimate import constants as K
from nki_studio.sim.trace_columns import CompactTrace

# Functions measured to share one table: "t0={COPY,SQUARE,RECIPROCAL_SQRT}" (the source of
# ACTIVATION_TABLE_LOAD; sigmoid, silu, exp and softplus each had their own there). Every function not named
# here is taken to have a table of its own (inferred: no table map is published).
SHARED_TABLES: dict[str, str] = {"copy": "t0", "square": "t0", "rsqrt": "t0"}


def table_of(function: str) -> str:
    """The table an activation function is evaluated from (its own name when no sharing is known)."""
    return SHARED_TABLES.get(function, function)


def table_loads(trace: CompactTrace) -> dict[int, float]:
    """Event index -> ns of the table load charged before that Scalar-engine activation (only the loads)."""
    engines, functions = trace.event_table("engine"), trace.event_table("function")
    if "scalar" not in engines:
        return {}
    active = trace.event("engine") == engines.index("scalar")
    if "" in functions:
        active &= trace.event("function") != functions.index("")
    idx = np.flatnonzero(active)  # the activations: few next to the whole trace, so a plain loop
    loaded: dict[tuple[int, int], str] = {}  # (rank, core) -> the table in the engine
    out: dict[int, float] = {}
    ns = K.ACTIVATION_TABLE_LOAD.value
    codes, ranks, cores = trace.event("function")[idx], trace.event("rank")[idx], trace.event("core")[idx]
    for i, code, rank, core in zip(idx.tolist(), codes.tolist(), ranks.tolist(), cores.tolist(), strict=True):
        key, table = (rank, core), table_of(functions[code])
        if loaded.get(key) != table:
            out[i] = ns
            loaded[key] = table
    return out
