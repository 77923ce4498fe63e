"""Spec gives a and b but not the defaulted middle parameter: b must not land in scale."""
import numpy as np
import nki
import nki.language as nl


def ref(a, scale=2.0, b=None):
    return (a.astype(np.float32) * scale + b.astype(np.float32)).astype(a.dtype)


# nki-studio: simulate a=float32[128,64] b=float32[128,64] reference=ref
@nki.jit
def k(a, scale=2.0, b=None):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.add(nl.multiply(nl.load(a), scale), nl.load(b)))
    return out
