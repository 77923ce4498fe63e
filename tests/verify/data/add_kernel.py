"""Tensor add kernel with a simulate spec (test data for tests/verify)."""
import numpy as np

import nki
import nki.language as nl


def ref_add(a, b):
    return (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype)


# nki-studio: simulate a=bfloat16[128,512] b=bfloat16[128,512] reference=ref_add seed=1
@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta = nl.load(a)
    tb = nl.load(b)
    nl.store(out, nl.add(ta, tb))
    return out


def make_ab():
    """inputs= function: the argument tuple, full control (ones and twos, so the sum is exactly 3)."""
    import ml_dtypes

    return (np.ones((128, 64), ml_dtypes.bfloat16), np.full((128, 64), 2, ml_dtypes.bfloat16))
