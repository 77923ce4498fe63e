"""``service.migration`` on masks: named masks, three-dimensional index tiles cutting explicit slices, and masks
repeated on nested calls, each rewritten and proven on a ragged last tile by simulating both versions."""

from __future__ import annotations

from collections.abc import Callable

# The mask is held in a name (vision.py's resize kernel pattern): read through it, its definition deleted.
NAMED = """\
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[200,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(math.ceil(a.shape[0] / 128)):
        ip = nl.arange(128)[:, None]
        jf = nl.arange(64)[None, :]
        rows = i * 128 + ip
        valid = rows < a.shape[0]
        x = nl.load(a[rows, jf], mask=valid)
        nl.store(out[rows, jf], value=nl.exp(x), mask=valid)
    return out
"""


def _unmasked(migrated: str) -> str:
    """``migrated``, after asserting that no mask or index tile is left in it."""
    assert "mask" not in migrated and "arange" not in migrated
    return migrated


def test_a_mask_held_in_a_name_is_proven(proven: Callable[[str], str]) -> None:
    migrated = _unmasked(proven(NAMED))
    assert "x = nl.load(a[i * 128:min(i * 128 + 128, a.shape[0]), 0:64])" in migrated
    assert "valid" not in migrated


# Three-dimensional index tiles bound explicit slices (nki-samples' adaptive_avg_pool2d pattern): the slice
# positions of each operand, in order, are the mask's axes; 200 rows end in a 72-row tile.
THREE_D = """\
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[200,4,6]
@nki.jit
def k(a):
    R, H, W = a.shape
    out = nl.ndarray((R, H, W), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(2):
        base = t * 128
        i_p = nl.arange(128)[:, None, None] + base
        i_h = nl.arange(4)[None, :, None]
        i_w = nl.arange(6)[None, None, :]
        buf = nl.zeros((128, H, W), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(src=a[base:base + 128, 0:H, 0:W], dst=buf[:, 0:4, 0:6],
                      mask=(i_p < R) & (i_h < H) & (i_w < W - 1))
        s = nl.multiply(buf[:, :, :], 2.0, mask=(i_p < R))
        nl.store(out[base:base + 128, :, :], value=s, mask=(i_p < R))
    return out
"""


def test_three_dimensional_index_tiles_bounding_explicit_slices_are_proven(
    proven: Callable[[str], str],
) -> None:
    migrated = _unmasked(proven(THREE_D))
    assert "src=a[base:min(base + 128, R), 0:min(4, H), 0:min(6, W - 1)]" in migrated
    assert "dst=buf[0:min(base + 128, R) - base, 0:min(4, H), 0:min(6, W - 1)]" in migrated
    assert "nl.store(out[base:min(base + 128, R), :, :], value=s)" in migrated


# A mask repeated on a call nested in the masked one: both go under one `if`.
NESTED = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[4,128,32]
@nki.jit
def k(a):
    out = nl.zeros(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        x = nl.load(a[i])
        nl.store(out[i], value=nl.exp(x, mask=(i < 3)), mask=(i < 3))
    return out
"""


def test_a_mask_repeated_on_a_nested_call_is_proven(proven: Callable[[str], str]) -> None:
    assert "if i < 3: nl.store(out[i], value=nl.exp(x))" in _unmasked(proven(NESTED))
