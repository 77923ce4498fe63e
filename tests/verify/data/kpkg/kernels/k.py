"""A kernel inside a package: its helper comes from a relative import (``from ..helpers import ...``)."""

import nki
import nki.language as nl

from ..helpers import TILE, ref_double  # noqa: F401  (ref_double: the spec's reference)


# nki-studio: simulate a=float32[128,128] reference=ref_double seed=3
@nki.jit
def double(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for j in range(a.shape[1] // TILE):
        t = nl.load(a[:, j * TILE : (j + 1) * TILE])
        nl.store(out[:, j * TILE : (j + 1) * TILE], nl.add(t, t))
    return out
