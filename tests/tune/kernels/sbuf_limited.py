"""A row-block kernel for tune tests whose best variant is limited by SBUF: y = x * 3, ROWS_F columns of x
loaded per DMA into BUFS slots of an input and an output tile. Each step moves more bytes per DMA, so larger
blocks are estimated faster, until 2 * BUFS * ROWS_F * 4 bytes per partition no longer fit the 224 KiB of a
trn2 partition (NKI401 prunes those before simulation). Only the block size is searched: with BUFS=2, the
overlap of small double-buffered blocks can beat one large block (the estimate's DMA queues model that), which
is not what this kernel is for."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

ROWS_F = 2048
BUFS = 1


def ref_triple(x):
    return x * np.float32(3.0)


# nki-studio: tune ROWS_F=2048,4096,8192,16384,32768
# nki-studio: simulate x=float32[128,65536] reference=ref_triple seed=5
@nki.jit
def sbuf_limited_kernel(x):
    p, d = x.shape
    out = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.shared_hbm)
    inp = nl.ndarray((128, BUFS * ROWS_F), dtype=nl.float32, buffer=nl.sbuf)
    res = nl.ndarray((128, BUFS * ROWS_F), dtype=nl.float32, buffer=nl.sbuf)
    for i in range(d // ROWS_F):
        s = (i % BUFS) * ROWS_F
        nisa.dma_copy(dst=inp[:, s : s + ROWS_F], src=x[:, i * ROWS_F : (i + 1) * ROWS_F])
        nisa.tensor_scalar(
            dst=res[:, s : s + ROWS_F], data=inp[:, s : s + ROWS_F], op0=nl.multiply, operand0=3.0
        )
        nisa.dma_copy(dst=out[:, i * ROWS_F : (i + 1) * ROWS_F], src=res[:, s : s + ROWS_F])
    return out
