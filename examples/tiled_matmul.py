"""Tiled matrix multiply C = A @ B on the Tensor engine, with A given transposed (a_t = A.T, [K, M]).

``nc_matmul`` computes ``stationary[K, M].T @ moving[K, N]`` into PSUM with K <= 128, M <= 128 and
N <= 512 (one FP32 PSUM bank), so C is produced in [128, 512] tiles, accumulating over K tiles in PSUM,
then copied to SBUF (rounding to the output dtype) and stored to HBM.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

TILE_K = 128
TILE_M = 128
TILE_N = 512


def ref_matmul(a_t, b):
    """NumPy reference: FP32 products and sums, FP32 result."""
    return a_t.astype(np.float32).T @ b.astype(np.float32)


# nki-studio: simulate a_t=bfloat16[256,256] b=bfloat16[256,512] reference=ref_matmul seed=7
@nki.jit
def tiled_matmul_kernel(a_t, b):
    k, m = a_t.shape
    k2, n = b.shape
    assert k == k2
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    for mi in range(m // TILE_M):
        for ni in range(n // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for ki in range(k // TILE_K):
                lhs = nl.ndarray((TILE_K, TILE_M), dtype=a_t.dtype, buffer=nl.sbuf)
                rhs = nl.ndarray((TILE_K, TILE_N), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhs, src=a_t[ki * TILE_K:(ki + 1) * TILE_K, mi * TILE_M:(mi + 1) * TILE_M])
                nisa.dma_copy(dst=rhs, src=b[ki * TILE_K:(ki + 1) * TILE_K, ni * TILE_N:(ni + 1) * TILE_N])
                nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs, accumulate=ki > 0)
            res = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[mi * TILE_M:(mi + 1) * TILE_M, ni * TILE_N:(ni + 1) * TILE_N], src=res)
    return out
