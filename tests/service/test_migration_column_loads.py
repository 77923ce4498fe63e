"""``service.migration`` on loads of a column (``nl.load(s[c0:c1, j])``: a slice, then an integer), which the
legacy ``nl.load`` made a ``(P, 1)`` tile: rewritten to keep that shape and proven by simulating both versions."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from nki_studio.protocol.migration import MigrationResult

# Rows of x scaled by columns of s and of w (one per loop step), the columns loaded through a loop index, an
# expression, an index tile next to a literal and a 3-D tensor's batch and column indices.
COLUMNS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate x=float32[256,64] s=float32[256,3] w=float32[2,256,4]
@nki.jit
def k(x, s, w):
    rows, cols = x.shape
    _, n = s.shape
    batches, _, m = w.shape
    out = nl.ndarray((n, rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    for t in nl.affine_range(rows // 128):
        xt = nl.load(x[t * 128:(t + 1) * 128, 0:cols])
        last = nl.load(s[t * 128:(t + 1) * 128, n - 1])
        first = nl.load(s[t * 128 + i_p, 0])
        wide = nl.load(w[batches - 1, t * 128:(t + 1) * 128, m - 1])
        for j in nl.affine_range(n):
            col = nl.load(src=s[t * 128:(t + 1) * 128, j])
            y1 = nisa.activation(op=nl.copy, data=xt, scale=col)
            y2 = nisa.activation(op=nl.copy, data=y1, scale=last)
            y3 = nisa.activation(op=nl.copy, data=y2, scale=first)
            y4 = nisa.activation(op=nl.copy, data=y3, scale=wide)
            nl.store(out[j, t * 128:(t + 1) * 128, 0:cols], y4)
    return out
"""


def test_column_loads_keep_their_legacy_shape_and_are_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(textwrap.dedent(COLUMNS))
    migrated = result["migrated"]
    assert "last = nl.load(s[t * 128:(t + 1) * 128, n - 1:(n - 1) + 1])" in migrated
    assert "first = nl.load(s[t * 128:t * 128 + 128, 0:1])" in migrated
    assert "wide = nl.load(w[batches - 1, t * 128:(t + 1) * 128, m - 1:(m - 1) + 1])" in migrated
    assert "col = nl.load(src=s[t * 128:(t + 1) * 128, j:j + 1])" in migrated
