"""Legacy gathers (a tile of row numbers in a subscript, vision.py's resize kernel pattern) -> ``vector_select``, a
mask through the name holding the view cutting its rows; rewritten and proven on a ragged last tile."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.protocol.migration import MigrationResult

# Our own: rows of a (2, 50, 64) input gathered into 150 output rows (row r reads row r % 50), two 128-row tiles.
GATHER = """\
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


# nki-studio: simulate data=float32[2,50,64]
@nki.jit
def k(data):
    out = nl.ndarray((2, 150, 64), dtype=data.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(2):
        for t in nl.affine_range(2):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            pos = t * 128 + i_p
            pos_iota = nisa.iota(pos, dtype=nl.int32)
            rows = nl.mod(pos_iota, 50, dtype=nl.int32)
            valid = pos < 150
            addr = data[b, rows, i_f]
            x = nl.load(addr, mask=valid)
            nl.store(out[b, pos, i_f], value=x, mask=valid)
    return out
"""


def test_a_gather_becomes_vector_select_with_its_rows_cut_to_the_mask() -> None:
    m = migrate_source(GATHER)
    assert not m.manual, m.manual
    assert "addr = data[b, :, 0:64].vector_select(0, rows[0:min(t * 128 + 128, 150) - (t * 128)])" in m.text
    assert "x = nl.load(addr)" in m.text


def test_a_gather_without_a_mask_selects_every_row() -> None:
    text = textwrap.dedent(
        """\
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        @nki.jit
        def k(data, idx):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            rows = nl.load(idx[i_p, nl.arange(1)[None, :]])
            return nl.load(data[rows, i_f])
        """
    )
    assert "nl.load(data[:, 0:64].vector_select(0, rows))" in migrate_source(text).text


def test_a_masked_gather_is_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    prove_migration(GATHER, "gather.py")
