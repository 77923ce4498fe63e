"""A kernel for tune tests whose MODE=1 variant never ends and MODE=2 variant allocates without bound: the
job limits kill both, they are reported as failed, and MODE=0 is still ranked."""

import nki
import nki.isa as nisa
import nki.language as nl

MODE = 0


def ref_copy(x):
    return x


# nki-studio: tune MODE=0,1,2
# nki-studio: simulate x=float32[128,512] reference=ref_copy seed=1
@nki.jit
def misbehaving_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    if MODE == 1:
        spin = 0
        while spin >= 0:
            spin = spin + 1
    if MODE == 2:
        hog = nl.ndarray((128, 1 << 33), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=hog[:, 0:512], src=x)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    return out
