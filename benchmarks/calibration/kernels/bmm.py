"""Batched matmul C[b] = A[b] @ B[b] with K = 64, FP32: our own translation to the current ``nki`` API of AccelOpt
NKIBench ``kernels/bmm_B16_M4096_K64_N4096_0.py`` (legacy ``neuronxcc.nki``, compiler-generated).

Same loop nest, tile shapes and dtypes: per batch and 1024-column N block a [64, 1024] load of B; per 1024-row
M block eight [128, 64] loads of A, each transposed on the Tensor engine (a matmul against an identity) and
copied PSUM -> SBUF into a [64, 1024] tile; then per 128-row M tile and 512-column half one K=64 matmul, a
PSUM -> SBUF copy, and a [128, 1024] store. As in the legacy loop order, A is loaded again for every N block.
PSUM -> SBUF copies (legacy ``nl.copy``) run on the Scalar engine (``activation(copy)``), where the measured
engine times show them (Vector ~0; inferred). Inputs ``lhs[B, M, K]``, ``rhs[B, K, N]``; output
``[B, M // 128, 128, N]``.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

P = 128
BLOCK = 1024
TILE_N = 512


@nki.jit
def bmm_kernel(lhs, rhs):
    b, m, k = lhs.shape
    _, _, n = rhs.shape
    out = nl.ndarray((b, m // P, P, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ident_hbm = nl.shared_constant(np.identity(P, dtype=np.float32))
    ident = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ident, src=ident_hbm)
    for i0 in range(b):
        for i1 in range(n // BLOCK):
            bt = nl.ndarray((k, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=bt, src=rhs[i0, :, i1 * BLOCK : (i1 + 1) * BLOCK])
            for i2 in range(m // BLOCK):
                a_t = nl.ndarray(
                    (k, BLOCK), dtype=nl.float32, buffer=nl.sbuf
                )  # A block transposed: [K, 1024 rows]
                for i3 in range(BLOCK // P):
                    r0 = i2 * BLOCK + i3 * P
                    at = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=at, src=lhs[i0, r0 : r0 + P, :])
                    tp = nl.ndarray((k, P), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=tp, stationary=at, moving=ident, is_moving_onezero=True)
                    nisa.activation(dst=a_t[:, i3 * P : (i3 + 1) * P], op=nl.copy, data=tp)
                for i4 in range(BLOCK // P):
                    res = nl.ndarray((P, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
                    for i5 in range(BLOCK // TILE_N):
                        acc = nl.ndarray((P, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        nisa.nc_matmul(
                            dst=acc,
                            stationary=a_t[:, i4 * P : (i4 + 1) * P],
                            moving=bt[:, i5 * TILE_N : (i5 + 1) * TILE_N],
                        )
                        nisa.activation(dst=res[:, i5 * TILE_N : (i5 + 1) * TILE_N], op=nl.copy, data=acc)
                    nisa.dma_copy(
                        dst=out[i0, i2 * (BLOCK // P) + i4, :, i1 * BLOCK : (i1 + 1) * BLOCK], src=res
                    )
    return out
