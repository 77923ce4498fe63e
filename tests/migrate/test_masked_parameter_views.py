"""A named element-wise result under a whole-instruction mask whose only tile operand is a subscript of a parameter
(nki-samples' flash-attention backward core: ``offset_seed = nl.add(seed_local[0, 0], offset, mask=mask)``, the
seed tile passed in by the kernel): the result or an unwritten tile of that view's shape (``masked_values``);
rewritten, then simulated in both versions and compared."""

from __future__ import annotations

from collections.abc import Callable

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.protocol.migration import MigrationResult

# Each step's offset is added to the first element of the tile passed in, under a mask off for the first step.
SEEDED = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit(mode='trace')
def offset_first(seeds, out_row, step):
    on = step >= 1
    shifted = nl.add(seeds[0, 0], step * 3, mask=on)
    nl.store(out_row, value=shifted, mask=on)


# nki-studio: simulate x=float32[128,4]
@nki.jit
def steps(x):
    out = nl.ndarray((4, 1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    for step in nl.affine_range(4):
        nl.store(out[step], value=t[step:step + 1, 0:1])
        offset_first(t, out[step], step)
    return out
"""


def test_a_parameter_view_operand_gives_the_masked_off_shape() -> None:
    m = migrate_source(SEEDED)
    assert not m.manual
    assert (
        "    shifted = nl.add(seeds[0, 0], step * 3) if on else "
        "nl.ndarray(seeds[0, 0].shape, dtype=seeds[0, 0].dtype, buffer=nl.sbuf)\n"
    ) in m.text


def test_a_bare_parameter_operand_stays_listed() -> None:
    m = migrate_source(SEEDED.replace("nl.add(seeds[0, 0], step * 3,", "nl.add(seeds, step * 3,"))
    assert [s.construct for s in m.manual] == ["mask="]


def test_a_masked_result_of_a_parameter_view_is_migrated_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(SEEDED)
    assert {p["kernel"]: (p["equivalent"], p["through"]) for p in result["proofs"]} == {
        "steps": (True, []),
        "offset_first": (True, ["steps"]),
    }
