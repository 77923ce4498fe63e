"""Test kernel that never ends: the simulation must be stopped by the worker's timeout."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np


def reference(x):
    return x


# nki-studio: simulate x=float32[128,64] reference=reference
@nki.jit
def spin(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    n = 0
    while n >= 0:
        nisa.dma_copy(dst=t, src=x)
        n += 1
    nisa.dma_copy(dst=out, src=t)
    return out
