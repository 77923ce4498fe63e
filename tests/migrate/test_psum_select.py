"""``nisa.affine_select`` selecting from a PSUM tile (nki-samples' flash-attention backward: ``on_true_tile=
qk_psum[:, :]``, the q @ k product): 0.7 reads ``on_true_tile`` from SBUF only (isa.md §4.2), so the read is copied
there (``psum_results``); rewritten, then simulated in both versions and compared."""

from __future__ import annotations

from collections.abc import Callable

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.protocol.migration import MigrationResult

# A causal select of a product accumulated in PSUM.
CAUSAL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,128] b=float32[128,128]
@nki.jit
def causal(a, b):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    product = nl.zeros((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.psum)
    product[:, :] += nisa.nc_matmul(nl.load(a), nl.load(b))
    iq, ik = nl.mgrid[0:128, 0:128]
    res = nl.ndarray((nl.par_dim(128), 128), dtype=nl.float32, buffer=nl.sbuf)
    res[:, :] = nisa.affine_select(pred=(iq >= ik), on_true_tile=product[:, :], on_false_value=-9984.0,
                                   dtype=nl.float32)
    nl.store(out, value=res)
    return out
"""


def test_a_psum_on_true_tile_is_copied_to_sbuf() -> None:
    m = migrate_source(CAUSAL)
    assert not m.manual
    assert "on_true_tile=nl.copy(product[:, :])" in m.text


def test_a_select_from_psum_is_migrated_and_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    prove_migration(CAUSAL)
