"""2-D transpose out[j, i] = x[i, j] in 128 x 128 blocks on the Tensor engine (nc_transpose into PSUM)."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


def ref_transpose(x):
    """NumPy reference."""
    return np.ascontiguousarray(x.T)


# nki-studio: simulate x=bfloat16[256,384] reference=ref_transpose seed=7
@nki.jit
def transpose_kernel(x):
    rows, cols = x.shape
    b = nl.tile_size.pmax
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(rows // b):
        for j in range(cols // b):
            blk = nl.ndarray((b, b), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk, src=x[i * b:(i + 1) * b, j * b:(j + 1) * b])
            tp = nl.ndarray((b, b), dtype=x.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=tp, data=blk, engine=nisa.engine.tensor)
            res = nl.ndarray((b, b), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=tp)
            nisa.dma_copy(dst=out[j * b:(j + 1) * b, i * b:(i + 1) * b], src=res)
    return out
