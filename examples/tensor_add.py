"""Element-wise addition of two HBM tensors, 128 rows (partitions) at a time.

Each row tile is loaded into SBUF by DMA, added on the Vector engine and written back to the output, which
lives in shared HBM as every kernel output must.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


def ref_tensor_add(a, b):
    """NumPy reference: FP32 sum rounded once to a's dtype."""
    return (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype)


# nki-studio: simulate a=bfloat16[256,512] b=bfloat16[256,512] reference=ref_tensor_add seed=7
@nki.jit
def tensor_add_kernel(a, b):
    assert a.shape == b.shape
    n, d = a.shape
    p = nl.tile_size.pmax
    out = nl.ndarray((n, d), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(n // p):
        ta = nl.ndarray((p, d), dtype=a.dtype, buffer=nl.sbuf)
        tb = nl.ndarray((p, d), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta, src=a[i * p:(i + 1) * p, :])
        nisa.dma_copy(dst=tb, src=b[i * p:(i + 1) * p, :])
        s = nl.ndarray((p, d), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=s, data1=ta, data2=tb, op=nl.add)
        nisa.dma_copy(dst=out[i * p:(i + 1) * p, :], src=s)
    return out
