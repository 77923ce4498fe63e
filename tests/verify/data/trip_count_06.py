"""A 0.6-style kernel (nl.dynamic_range) with a simulate spec and no NKI version set (test data)."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


def ref_triple(x):
    return 3 * x


# nki-studio: simulate x=float32[2,8] reference=ref_triple seed=1
@nki.jit
def triple(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    x_sb = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)
    nisa.memset(dst=acc, value=0.0)
    for _ in nl.dynamic_range(3):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=x_sb, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out
