"""A composable kernel: a helper function (inlined by NKI) and an ``NKIObject`` configuration class.

``TileConfig`` carries compile-time settings, including the activation function, passed as a value; the
kernel hands it to ``apply_tile``, which the compiler inlines at each call site. y = act(x * scale).
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


class TileConfig(nl.NKIObject):
    """Compile-time settings of the kernel (classes used in kernels derive from NKIObject only)."""

    def __init__(self, rows, scale, act):
        self.rows = rows
        self.scale = scale
        self.act = act


def apply_tile(dst, src, cfg):
    """dst = cfg.act(src * cfg.scale) on the Scalar engine."""
    nisa.activation(dst=dst, op=cfg.act, data=src, scale=cfg.scale)


def ref_scaled_relu(x):
    """NumPy reference: relu(0.5 * x) in FP32, rounded to x's dtype."""
    return np.maximum(x.astype(np.float32) * 0.5, 0.0).astype(x.dtype)


# nki-studio: simulate x=float32[256,256] reference=ref_scaled_relu seed=7
@nki.jit
def scaled_relu_kernel(x):
    cfg = TileConfig(rows=nl.tile_size.pmax, scale=0.5, act=nl.relu)
    n, d = x.shape
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(n // cfg.rows):
        xt = nl.ndarray((cfg.rows, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[i * cfg.rows:(i + 1) * cfg.rows, :])
        yt = nl.ndarray((cfg.rows, d), dtype=x.dtype, buffer=nl.sbuf)
        apply_tile(yt, xt, cfg)
        nisa.dma_copy(dst=out[i * cfg.rows:(i + 1) * cfg.rows, :], src=yt)
    return out
