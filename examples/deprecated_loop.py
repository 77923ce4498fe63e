"""A valid kernel that still uses the deprecated ``nl.affine_range`` iterator (rule NKI201).

Kept on purpose for the editor walkthrough: the linter shows a deprecation warning on ``nl.affine_range`` with a
quick fix that replaces it by ``range`` (same arguments, same meaning since NKI 0.3).
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


def ref_double(x):
    """NumPy reference: 2 * x."""
    return (x.astype(np.float32) * 2.0).astype(x.dtype)


# nki-studio: simulate x=float32[256,128] reference=ref_double seed=7
@nki.jit
def double_kernel(x):
    n, d = x.shape
    p = nl.tile_size.pmax
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n // p):
        xt = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[i * p:(i + 1) * p, :])
        yt = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=yt, data=xt, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[i * p:(i + 1) * p, :], src=yt)
    return out
