"""A device-side loop with ``nl.fori_loop`` (valid for NKI 0.6 and 0.7): y = 2 * x + 1 per [128, 512] tile.

The loop body is emitted once and runs ``x.shape[0]`` times on the device. The loop variable is a runtime
value (a VirtualRegister on 0.6, an NkiScalar on 0.7), so it is only used as a ``scalar_offset`` of access
patterns: with ``indirect_dim=0`` the offset is scaled by the size of one [128, 512] slab of the 3-D input.
Tensors allocated in the body are not used after the loop; the body returns nothing.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


def ref_scale_shift(x):
    """NumPy reference: 2 * x + 1 in FP32, rounded to x's dtype."""
    return (x.astype(np.float32) * 2.0 + 1.0).astype(x.dtype)


# nki-studio: simulate x=float32[4,128,512] reference=ref_scale_shift seed=7
@nki.jit
def scale_shift_kernel(x):
    t, p, d = x.shape
    assert p == nl.tile_size.pmax
    out = nl.ndarray((t, p, d), dtype=x.dtype, buffer=nl.shared_hbm)

    def body(i):
        tile = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x.ap([[d, p], [1, d]], scalar_offset=i, indirect_dim=0))
        res = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=tile, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=1.0)
        nisa.dma_copy(dst=out.ap([[d, p], [1, d]], scalar_offset=i, indirect_dim=0), src=res)

    nl.fori_loop(0, t, body)
    return out
