"""A plain BF16 RMSNorm (issue 29 why-item 8): y = x / sqrt(mean(x^2) + eps) * weight, statistics in FP32 and
one rounding to BF16 at the end. Correct, so the scale-aware oracle must pass it."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

EPS = 1e-6


def ref_rmsnorm(x, weight):
    """NumPy reference in FP32, rounded once to x's dtype."""
    xf = x.astype(np.float32)
    rms = np.sqrt(np.mean(xf * xf, axis=1, keepdims=True) + np.float32(EPS))
    return (xf / rms * weight.astype(np.float32)).astype(x.dtype)


# nki-studio: simulate x=bfloat16[256,512] weight=bfloat16[512] reference=ref_rmsnorm seed=3
@nki.jit
def rmsnorm(x, weight):
    n, d = x.shape
    p = nl.tile_size.pmax
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    w = nl.ndarray((p, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w, src=weight.reshape((1, d)).broadcast(0, p))
    for i in range(n // p):
        xt = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[i * p:(i + 1) * p, :])
        sq = nl.ndarray((p, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=sq, data1=xt, data2=xt, op=nl.multiply)
        ss = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=ss, op=nl.add, data=sq, axis=1)
        ms = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=ms, data=ss, op0=nl.multiply, operand0=1.0 / d, op1=nl.add, operand1=EPS)
        rstd = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=ms)
        xn = nl.ndarray((p, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=xn, data=xt, op0=nl.multiply, operand0=rstd)
        y = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=y, data1=xn, data2=w, op=nl.multiply)
        nisa.dma_copy(dst=out[i * p:(i + 1) * p, :], src=y)
    return out
