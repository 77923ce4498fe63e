"""Running sum along each row with the Vector engine's tensor_tensor_scan.

scan(op0=multiply, op1=add) over data0 = ones, data1 = x computes c[i] = 1 * c[i-1] + x[i]. Column tiles
are chained by passing the last column of the previous tile as the next tile's initial value.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

COLS = 512  # free-dim tile width


def ref_cumsum(x):
    """Sequential FP32 running sum along axis 1 (same order as the scan)."""
    return np.cumsum(x.astype(np.float32), axis=1, dtype=np.float32).astype(x.dtype)


# nki-studio: simulate x=float32[256,1024] reference=ref_cumsum seed=7
@nki.jit
def cumsum_kernel(x):
    n, d = x.shape
    p = nl.tile_size.pmax
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    ones = nl.ndarray((p, COLS), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    for i in range(n // p):
        carry = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=carry, value=0.0)
        for j in range(d // COLS):
            xt = nl.ndarray((p, COLS), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=xt, src=x[i * p:(i + 1) * p, j * COLS:(j + 1) * COLS])
            acc = nl.ndarray((p, COLS), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor_scan(dst=acc, data0=ones, data1=xt, initial=carry, op0=nl.multiply, op1=nl.add)
            nisa.tensor_copy(dst=carry, src=acc[:, COLS - 1:COLS])
            nisa.dma_copy(dst=out[i * p:(i + 1) * p, j * COLS:(j + 1) * COLS], src=acc)
    return out
