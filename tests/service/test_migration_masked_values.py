"""``service.migration`` on a named result of an element-wise call under a whole-instruction mask (flash
attention's ``intermediate = nl.add(..., mask=diagonal)``): migrated and proven."""

from __future__ import annotations

import sys
from pathlib import Path

from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "migrate"))
from masked_kernels import BANDED, BANDED_INPUTS, LEGACY


def test_a_masked_named_result_is_migrated_and_proven(tmp_path: Path) -> None:
    """The proof runs the conditional expression (the sum, or an unwritten tile of the operands' broadcast shape)
    under 0.7 and compares every block."""
    path = tmp_path / "kernel.py"
    path.write_text(LEGACY + BANDED, encoding="utf-8")
    result = migrate(str(path), Settings(trusted_workspace=True), inputs=BANDED_INPUTS)
    assert result["status"] == "proven", result["message"]
    assert (
        "if on else nl.ndarray(np.broadcast_shapes(t.shape, bias.shape), dtype=nl.float32"
        in result["migrated"]
    )
