"""Batched matmul C[b] = A[b] @ B[b] with K = 64, FP32: our own translation to the current ``nki`` API of AccelOpt
NKIBench ``kernels/bmm_B16_M4096_K64_N4096_0.py`` (legacy ``neuronxcc.nki``, compiler-generated).

Same loop nest, tile shapes and dtypes: per batch and 1024-column N block a [64, 1024] load of B; per 1024-row
M block eight [128, 64] loads of A, each transposed on the Tensor engine (a matmul against an identity) and
copied PSUM -> SBUF (``tensor_engine.transpose``); then per 128-row M tile and 512-column half one K=64 matmul, a
PSUM -> SBUF copy, and a [128, 1024] store. As in the legacy loop order, A is loaded again for every N block.
PSUM -> SBUF copies (legacy ``nl.copy``) run on the Scalar engine (``activation(copy)``), where the measured
engine times show them (Vector ~0; inferred). Inputs ``lhs[B, M, K]``, ``rhs[B, K, N]``; output
``[B, M // 128, 128, N]``.
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import load_identity, transpose

P = 128
BLOCK = 1024
TILE_N = 512


@nki.jit
def bmm_kernel(lhs, rhs):
    b, m, k = lhs.shape
    _, _, n = rhs.shape
    out = nl.ndarray((b, m // P, P, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ident = load_identity()
    for i0 in range(b):
        for i1 in range(n // BLOCK):
            bt = nl.ndarray((k, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=bt, src=rhs[i0, :, i1 * BLOCK : (i1 + 1) * BLOCK])
            for i2 in range(m // BLOCK):
                a_t = []  # A block transposed: one [K, 128 rows] tile per M tile
                for i3 in range(BLOCK // P):
                    r0 = i2 * BLOCK + i3 * P
                    at = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=at, src=lhs[i0, r0 : r0 + P, :])
                    a_t.append(transpose(at, ident))
                for i4 in range(BLOCK // P):
                    res = nl.ndarray((P, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
                    for i5 in range(BLOCK // TILE_N):
                        acc = nl.ndarray((P, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        nisa.nc_matmul(
                            dst=acc,
                            stationary=a_t[i4],
                            moving=bt[:, i5 * TILE_N : (i5 + 1) * TILE_N],
                        )
                        nisa.activation(dst=res[:, i5 * TILE_N : (i5 + 1) * TILE_N], op=nl.copy, data=acc)
                    nisa.dma_copy(
                        dst=out[i0, i2 * (BLOCK // P) + i4, :, i1 * BLOCK : (i1 + 1) * BLOCK], src=res
                    )
    return out
