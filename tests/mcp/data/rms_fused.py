"""Test kernel: the same residual add + RMSNorm as rms_plain.py with fused instructions: the square and its
row sum in one activation_reduce, normalise-and-scale in one scalar_tensor_tensor."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

EPS = 1e-5


def reference(a, b, gamma):
    s = a.astype(np.float32) + b.astype(np.float32)
    inv = 1.0 / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + np.float32(1e-5))
    return (s * inv * gamma.astype(np.float32)).astype(a.dtype)


# nki-studio: simulate a=bfloat16[256,512] b=bfloat16[256,512] gamma=bfloat16[512] reference=reference seed=11
@nki.jit
def rms_fused(a, b, gamma):
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
        total = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=sq, op=nl.square, data=s, reduce_op=nl.add, reduce_res=total)
        mean = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mean, data=total, op0=nl.multiply, operand0=1.0 / cols, op1=nl.add, operand1=EPS)
        inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=inv, op=nl.rsqrt, data=mean)
        y = nl.ndarray((P, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=y, data=s, op0=nl.multiply, operand0=inv, op1=nl.multiply, operand1=g)
        nisa.dma_copy(dst=out[t * P:(t + 1) * P, :], src=y)
    return out
