"""``service.migration`` on a named result of an element-wise call under a whole-instruction mask (flash
attention's ``intermediate = nl.add(..., mask=diagonal)``): migrated and proven."""

from __future__ import annotations

from pathlib import Path

from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

# The masked sum is stored only where its mask holds, elsewhere the plain tile is: the proof runs the conditional
# expression (the sum, or an unwritten tile of the operands' broadcast shape) under 0.7 and compares every block.
BANDED = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate x=float32[4,128,64] b=float32[128,64]
@nki.jit
def banded(x, b):
    out = nl.ndarray((4, 128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    bias = nl.load(b)
    for i in nl.affine_range(4):
        t = nl.load(x[i])
        on = i >= 2
        s = nl.add(t, bias, dtype=nl.float32, mask=on)
        nl.store(out[i], value=t)
        nl.store(out[i], value=s, mask=on)
    return out
"""


def test_a_masked_named_result_is_migrated_and_proven(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(BANDED, encoding="utf-8")
    result = migrate(str(path), Settings(trusted_workspace=True))
    assert result["status"] == "proven", result["message"]
    assert (
        "if on else nl.ndarray(np.broadcast_shapes(t.shape, bias.shape), dtype=nl.float32"
        in result["migrated"]
    )
