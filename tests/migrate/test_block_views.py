"""A view of a block-dim tile that keeps block dims, passed to a function of the file (nki-samples' flash-attention
backward: ``compute_rowsum(dy_o_sum=dy_o_sum[h])`` of a ``(H, N, par_dim(P), 1)`` tile, which writes
``dy_o_sum[i, :, 0]``): the callee's subscripts move their partition index first as the caller's do
(``migrate.block_dims``); rewritten, then simulated in both versions and compared."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.protocol.migration import MigrationResult

LEGACY = (
    "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n"
    "import neuronxcc.nki.isa as nisa\n\n\n"
)

# The helper receives one head's (N, par_dim(128), 1) view and writes each block's row sums into it.
ROW_SUMS = """\
@nki.jit(mode='trace')
def row_sums(sums, rows, n):
    for i in nl.affine_range(n):
        t = nl.load(rows[i])
        sums[i, :, 0] = nisa.tensor_reduce(np.add, data=t, axis=(1,), dtype=nl.float32)


# nki-studio: simulate x=float32[2,3,128,64]
@nki.jit
def heads(x):
    out = nl.ndarray((2, 3, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    sums = nl.ndarray((2, 3, nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    for h in nl.affine_range(2):
        row_sums(sums=sums[h], rows=x[h], n=3)
    for h in nl.affine_range(2):
        for i in nl.affine_range(3):
            nl.store(out[h, i], value=sums[h, i])
    return out
"""


def test_the_callee_of_a_block_view_indexes_it_partition_first() -> None:
    m = migrate_source(LEGACY + ROW_SUMS)
    assert not m.manual
    assert "sums = nl.ndarray((128, 2, 3, 1), dtype=nl.float32, buffer=nl.sbuf)" in m.text
    assert "row_sums(sums=sums[:, h], rows=x[h], n=3)" in m.text
    assert "dst=sums[:, i, 0]" in m.text  # the callee's block index follows its partition index
    assert "value=sums[:, h, i]" in m.text


def test_a_view_keeping_two_blocks_and_one_keeping_none() -> None:
    m = migrate_source(
        LEGACY
        + textwrap.dedent(
            """\
            @nki.jit(mode='trace')
            def fill(acc, plain, v):
                acc[1, 0, :, :] = nl.copy(v)
                plain[:, :] = nl.copy(v)


            @nki.jit
            def k(a):
                acc = nl.ndarray((2, 2, 3, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
                flat = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
                fill(acc[0], flat[1], nl.load(a))
                nl.store(a, value=acc[0, 1, 0])
                return a
            """
        )
    )
    assert not m.manual
    assert "acc[:, 1, 0, :] = nl.copy(v)" in m.text  # two blocks left: (2, 3, P, F) -> (P, 2, 3, F)
    assert "plain[:, :] = nl.copy(v)" in m.text  # none left: the legacy (P, F) layout already
    assert "fill(acc[:, 0], flat[:, 1], nl.load(a))" in m.text


def test_a_block_view_the_callee_uses_otherwise_stays_listed() -> None:
    m = migrate_source(
        LEGACY
        + ROW_SUMS.replace(
            "    for i in nl.affine_range(n):\n", "    print(sums.shape)\n    for i in nl.affine_range(n):\n"
        )
    )
    assert "nl.par_dim" in {s.construct for s in m.manual}


def test_a_block_view_passed_to_a_helper_is_migrated_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(LEGACY + ROW_SUMS)
    # the helper is proven through its caller, whose proof ran it
    assert {p["kernel"]: (p["equivalent"], p["through"]) for p in result["proofs"]} == {
        "heads": (True, []),
        "row_sums": (True, ["heads"]),
    }
