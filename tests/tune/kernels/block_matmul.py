"""A tiled matmul with block factors for tune tests: C = A @ B with A given transposed (a_t = A.T, [K, M]).

TILE_K is the contraction per nc_matmul (the partition dimension: at most 128), TILE_N the moving free size
(at most 512 with an FP32 PSUM destination, one bank). Larger legal tiles issue fewer, larger instructions and
DMAs; TILE_K=256 exceeds the 128 partitions and TILE_N=1024 the moving free size, both refused by lint.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

TILE_K = 64
TILE_M = 128
TILE_N = 128


def ref_matmul(a_t, b):
    return a_t.astype(np.float32).T @ b.astype(np.float32)


# nki-studio: tune TILE_K=32,64,128,256 TILE_N=128,256,512,1024
# nki-studio: simulate a_t=bfloat16[256,128] b=bfloat16[256,1024] reference=ref_matmul seed=7
@nki.jit
def block_matmul_kernel(a_t, b):
    k, m = a_t.shape
    _, n = b.shape
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    for mi in range(m // TILE_M):
        for ni in range(n // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for ki in range(k // TILE_K):
                lhs = nl.ndarray((TILE_K, TILE_M), dtype=a_t.dtype, buffer=nl.sbuf)
                rhs = nl.ndarray((TILE_K, TILE_N), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(
                    dst=lhs, src=a_t[ki * TILE_K : (ki + 1) * TILE_K, mi * TILE_M : (mi + 1) * TILE_M]
                )
                nisa.dma_copy(
                    dst=rhs, src=b[ki * TILE_K : (ki + 1) * TILE_K, ni * TILE_N : (ni + 1) * TILE_N]
                )
                nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs, accumulate=ki > 0)
            res = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[mi * TILE_M : (mi + 1) * TILE_M, ni * TILE_N : (ni + 1) * TILE_N], src=res)
    return out
