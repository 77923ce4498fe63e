"""RMSNorm twice: right (epsilon inside the square root) and deliberately wrong (epsilon outside).

EPS is large on purpose: with N(0, 1) inputs the mean square is ~1, so the misplaced epsilon changes every
row by a visible amount (with 1e-6 no oracle could tell the two apart).
"""
import numpy as np

import nki
import nki.language as nl

EPS = 0.25


def ref_rmsnorm(x):
    xf = x.astype(np.float32)
    ms = np.mean(xf * xf, axis=1, keepdims=True)
    return (xf / np.sqrt(ms + np.float32(EPS))).astype(x.dtype)


def _rms(x, eps_inside):
    p, d = x.shape
    out = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.shared_hbm)
    xt = nl.load(x)
    sq = nl.multiply(xt, xt, dtype=nl.float32)
    ms = nl.multiply(nl.sum(sq, axis=1, keepdims=True), 1.0 / d)
    if eps_inside:
        den = nl.sqrt(nl.add(ms, EPS))
    else:
        den = nl.add(nl.sqrt(ms), EPS)
    nl.store(out, nl.divide(xt, den, dtype=x.dtype))
    return out


# nki-studio: simulate x=bfloat16[128,512] reference=ref_rmsnorm seed=3
@nki.jit
def rmsnorm_ok(x):
    return _rms(x, True)


# nki-studio: simulate x=bfloat16[128,512] reference=ref_rmsnorm seed=3
@nki.jit
def rmsnorm_eps_outside(x):
    return _rms(x, False)
