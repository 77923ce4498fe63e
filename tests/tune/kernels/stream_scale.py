"""A streamed element-wise kernel for tune tests: y = 2 * x + 1, TILE_F columns at a time through BUFS SBUF
slots. Larger tiles mean fewer, larger DMAs; more slots let the next load overlap the current compute.
TILE_F=1536 does not divide 4096: that variant leaves the tail unwritten and fails its reference."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

TILE_F = 256
BUFS = 1


def ref_scale(x):
    return (2.0 * x.astype(np.float32) + 1.0).astype(x.dtype)


# nki-studio: tune TILE_F=128,256,512,1024,1536 BUFS=1..3 if TILE_F * BUFS <= 3072
# nki-studio: simulate x=float32[128,4096] reference=ref_scale seed=3
@nki.jit
def stream_scale_kernel(x):
    p, d = x.shape
    out = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.shared_hbm)
    inp = nl.ndarray((p, BUFS * TILE_F), dtype=x.dtype, buffer=nl.sbuf)
    res = nl.ndarray((p, BUFS * TILE_F), dtype=x.dtype, buffer=nl.sbuf)
    for i in range(d // TILE_F):
        s = (i % BUFS) * TILE_F
        nisa.dma_copy(dst=inp[:, s : s + TILE_F], src=x[:, i * TILE_F : (i + 1) * TILE_F])
        nisa.tensor_scalar(
            dst=res[:, s : s + TILE_F],
            data=inp[:, s : s + TILE_F],
            op0=nl.multiply,
            operand0=2.0,
            op1=nl.add,
            operand1=1.0,
        )
        nisa.dma_copy(dst=out[:, i * TILE_F : (i + 1) * TILE_F], src=res[:, s : s + TILE_F])
    return out
