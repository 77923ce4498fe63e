"""``service.migration`` on a legacy kernel taking a shape tuple (nki-samples' transpose2d takes ``shape2D``): the
spec gives it as ``name=(a,b)`` and the proof simulates both versions with it."""

from __future__ import annotations

from pathlib import Path

from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

TRUSTED = Settings(trusted_workspace=True)

# Each row of x holds a (rows, cols) matrix flattened row-major; out holds each one's transpose, scaled by 2.
KERNEL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate x=float32[8,24] dims=(4,6)
@nki.jit
def flip_blocks(x, dims):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = dims
    parts = x.shape[0]
    t = nl.load(x)
    i_p = nl.arange(parts)[:, None, None]
    i_r = nl.arange(rows)[None, :, None]
    i_c = nl.arange(cols)[None, None, :]
    flipped = nl.ndarray((parts, rows * cols), dtype=x.dtype)
    flipped[i_p, i_c * rows + i_r] = nl.multiply(t[i_p, i_r * cols + i_c], 2.0)
    nl.store(out, value=flipped)
    return out
"""


def test_a_kernel_taking_a_shape_tuple_is_proven(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL, encoding="utf-8")
    result = migrate(str(path), TRUSTED)
    assert result["status"] == "proven", result["message"]
    (proof,) = result["proofs"]
    assert proof["kernel"] == "flip_blocks" and proof["equivalent"] and proof["inputs"] == 3
