"""C = A.T @ B with A given as [K, M], FP32: our own translation to the current ``nki`` API of AccelOpt NKIBench
``kernels/transpose_matmul_M4096_K2048_N10944_0.py`` (legacy ``neuronxcc.nki``, compiler-generated).

Same loop nest, tile shapes and dtypes: per 1024-row M block, sixteen [128, 1024] loads of A; per 1024-column N
block sixteen [128, 1024] loads of B, then per (128-row M tile, 512-column half) sixteen accumulating matmuls
into one PSUM bank, a PSUM -> SBUF copy and a [128, 1024] store. The legacy kernel masks the last, partial N
block (10944 = 10.6875 x 1024); here it is a narrower slice. Input layout as the benchmark's
``transform_to_nki_inputs``: ``lhs[K, M]`` -> ``[128, K // 128, M]``, ``rhs[K, N]`` -> ``[128, K // 128, N]``
(contraction index ``p * (K // 128) + k``); output ``[M // 128, 128, N]``.

PSUM -> SBUF copies (legacy ``nl.copy``) run on the Scalar engine (``activation(copy)``): the measured profile
shows no Vector time for them, so the compiler put them there (inferred from the engine times).
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import matmul_sum

BLOCK = 1024
TILE_M = 128
TILE_N = 512


@nki.jit
def transpose_matmul_kernel(lhs, rhs):
    p, kt, m = lhs.shape
    _, _, n = rhs.shape
    out = nl.ndarray((m // TILE_M, p, n), dtype=nl.float32, buffer=nl.shared_hbm)
    for i0 in range(m // BLOCK):
        a = []
        for i1 in range(kt):
            t = nl.ndarray((p, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=lhs[:, i1, i0 * BLOCK : (i0 + 1) * BLOCK])
            a.append(t)
        for i2 in range((n + BLOCK - 1) // BLOCK):
            c0 = i2 * BLOCK
            w = min(BLOCK, n - c0)
            b = []
            for i3 in range(kt):
                t = nl.ndarray((p, w), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=rhs[:, i3, c0 : c0 + w])
                b.append(t)
            for i4 in range(BLOCK // TILE_M):
                res = nl.ndarray((TILE_M, w), dtype=nl.float32, buffer=nl.sbuf)
                for i5 in range((w + TILE_N - 1) // TILE_N):
                    n0 = i5 * TILE_N
                    wn = min(TILE_N, w - n0)
                    acc = matmul_sum(
                        [t[:, i4 * TILE_M : (i4 + 1) * TILE_M] for t in a], [t[:, n0 : n0 + wn] for t in b]
                    )
                    nisa.activation(dst=res[:, n0 : n0 + wn], op=nl.copy, data=acc)
                nisa.dma_copy(dst=out[i0 * (BLOCK // TILE_M) + i4, :, c0 : c0 + w], src=res)
    return out
