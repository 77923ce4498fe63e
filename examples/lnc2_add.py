"""Element-wise add split over the two logical cores of an LNC=2 launch.

Each core handles half of the rows, chosen with nl.program_id; both write the same shared-HBM output.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


def ref_add(a, b):
    """FP32 sum rounded to the input dtype."""
    return (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype)


# nki-studio: simulate a=bfloat16[512,256] b=bfloat16[512,256] reference=ref_add seed=7 lnc=2
@nki.jit
def lnc2_add_kernel(a, b):
    n, d = a.shape
    p = nl.tile_size.pmax
    out = nl.ndarray((n, d), dtype=a.dtype, buffer=nl.shared_hbm)
    rows = n // nl.num_programs(0)
    first = nl.program_id(0) * rows
    for t in range(rows // p):
        r = first + t * p
        at = nl.ndarray((p, d), dtype=a.dtype, buffer=nl.sbuf)
        bt = nl.ndarray((p, d), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=at, src=a[r:r + p, :])
        nisa.dma_copy(dst=bt, src=b[r:r + p, :])
        ct = nl.ndarray((p, d), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=ct, data1=at, data2=bt, op=nl.add)
        nisa.dma_copy(dst=out[r:r + p, :], src=ct)
    return out
