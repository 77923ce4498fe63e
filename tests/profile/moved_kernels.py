"""Two versions of one kernel for the before/after tests (no pytest dependency): B removes a line above the hot
loop, inserts three (one of them an instruction) and doubles the loop's trip count, so the hot line moves from
line L to L + 2 and takes about twice the time. ``marker`` comments name the lines."""

from __future__ import annotations

A = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(x):
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    u = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_copy(dst=u, src=t)  # marker: removed
    for i in range(4):
        nisa.tensor_copy(dst=u, src=t)  # marker: hot
    nisa.dma_copy(dst=out, src=u)
    return out
"""
B = A.replace(
    "    nisa.tensor_copy(dst=u, src=t)  # marker: removed\n    for i in range(4):\n",
    "    # another copy before the loop, and the loop twice as long\n"
    "    v = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)\n"
    "    nisa.tensor_copy(dst=v, src=t)  # marker: added\n"
    "    for i in range(8):\n",
)


def marker_line(text: str, marker: str) -> int:
    """1-based line of ``# marker: <marker>``."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.endswith(f"# marker: {marker}"))
