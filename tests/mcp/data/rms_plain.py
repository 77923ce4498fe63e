"""Test kernel: residual add + RMSNorm, one instruction per step (the "plain" variant of the agent loop).

    s = a + b;  out = s * rsqrt(mean(s^2) + EPS) * gamma
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

EPS = 1e-5  # the kernel's epsilon; the agent-loop test writes a copy with a wrong one


def reference(a, b, gamma):
    s = a.astype(np.float32) + b.astype(np.float32)
    inv = 1.0 / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + np.float32(1e-5))
    return (s * inv * gamma.astype(np.float32)).astype(a.dtype)


# nki-studio: simulate a=bfloat16[256,512] b=bfloat16[256,512] gamma=bfloat16[512] reference=reference seed=11
@nki.jit
def rms_plain(a, b, gamma):
    rows, cols = a.shape
    P = 128
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    g = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=gamma.reshape((1, cols)).broadcast(0, P))
    for t in range(rows // P):
        at = nl.ndarray((P, cols), dtype=a.dtype, buffer=nl.sbuf)
        bt = nl.ndarray((P, cols), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=at, src=a[t * P:(t + 1) * P, :])
        nisa.dma_copy(dst=bt, src=b[t * P:(t + 1) * P, :])
        s = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=s, data1=at, data2=bt, op=nl.add)
        sq = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=sq, data1=s, data2=s, op=nl.multiply)
        total = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=total, op=nl.add, data=sq, axis=1)
        mean = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mean, data=total, op0=nl.multiply, operand0=1.0 / cols, op1=nl.add, operand1=EPS)
        inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=inv, op=nl.rsqrt, data=mean)
        normed = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=normed, data=s, op0=nl.multiply, operand0=inv)
        y = nl.ndarray((P, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=y, data1=normed, data2=g, op=nl.multiply)
        nisa.dma_copy(dst=out[t * P:(t + 1) * P, :], src=y)
    return out
