"""``service.migration`` on a named result of an element-wise call under a whole-instruction mask (flash
attention's ``intermediate = nl.add(..., mask=diagonal)``): migrated and proven."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from nki_studio.protocol.migration import MigrationResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "migrate"))
from masked_kernels import BANDED, BANDED_INPUTS, LEGACY


def test_a_masked_named_result_is_migrated_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    """The proof runs the conditional expression (the sum, or an unwritten tile of the operands' broadcast shape)
    under 0.7 and compares every block."""
    result = prove_migration(LEGACY + BANDED, inputs=BANDED_INPUTS)
    assert (
        "if on else nl.ndarray(np.broadcast_shapes(t.shape, bias.shape), dtype=nl.float32"
        in result["migrated"]
    )
