"""The blocking-tiled BF16 matmul ladder of aws-neuron/neuron-agentic-development
``skills/neuron-nki-profile-querying/references/example-bounds-analysis.md``: ``C[M, N] = lhsT[K, M].T @ rhs[K, N]``,
measured on Trn2 at 4096^3. Our own kernels, written after that page's description and code excerpts (V0 is
shown almost whole; V1 and V2 as the structural change and the block sizes of the measured tables, BM=8, BN=2),
so the comparison is of the same algorithm, not of the same instruction stream.

- ``matmul_v0``: 128 x 128 stationary and 128 x 512 moving tiles, both loaded in the innermost loop (m, n, k).
- ``matmul_v1``: lhsT tiles loaded once per 8-tile M block, rhs tiles once per (M block, 2-tile N block).
- ``matmul_v2``: as V1 with [128, 1024] row loads (one transfer covers the block width) sliced by the matmuls.

Every version copies each [128, 512] PSUM result to SBUF and stores it.
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import matmul_sum, store, tiled_matmul

TILE_K = 128
TILE_M = 128
TILE_N = 512
BM = 8  # M tiles per block
BN = 2  # N tiles per block


@nki.jit
def matmul_v0(lhsT, rhs):
    def load(mi, ki):
        a = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=lhsT[ki * TILE_K : (ki + 1) * TILE_K, mi * TILE_M : (mi + 1) * TILE_M])
        return a

    return tiled_matmul(load, rhs, lhsT.shape[1], lhsT.dtype, TILE_K, TILE_M, TILE_N)


@nki.jit
def matmul_v1(lhsT, rhs):
    k, m = lhsT.shape
    _, n = rhs.shape
    kt = k // TILE_K
    out = nl.ndarray((m, n), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in range(m // (BM * TILE_M)):
        a = []
        for bm in range(BM):
            m0 = (mb * BM + bm) * TILE_M
            row = []
            for ki in range(kt):
                t = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=lhsT[ki * TILE_K : (ki + 1) * TILE_K, m0 : m0 + TILE_M])
                row.append(t)
            a.append(row)
        for nb in range(n // (BN * TILE_N)):
            b = []
            for bn in range(BN):
                n0 = (nb * BN + bn) * TILE_N
                col = []
                for ki in range(kt):
                    t = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=rhs[ki * TILE_K : (ki + 1) * TILE_K, n0 : n0 + TILE_N])
                    col.append(t)
                b.append(col)
            for bm in range(BM):
                for bn in range(BN):
                    acc = matmul_sum(a[bm], b[bn])
                    store(out, acc, (mb * BM + bm) * TILE_M, (nb * BN + bn) * TILE_N)
    return out


@nki.jit
def matmul_v2(lhsT, rhs):
    k, m = lhsT.shape
    _, n = rhs.shape
    kt = k // TILE_K
    block_m, block_n = BM * TILE_M, BN * TILE_N
    out = nl.ndarray((m, n), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in range(m // block_m):
        a = []
        for ki in range(kt):
            t = nl.ndarray((TILE_K, block_m), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=lhsT[ki * TILE_K : (ki + 1) * TILE_K, mb * block_m : (mb + 1) * block_m])
            a.append(t)
        for nb in range(n // block_n):
            b = []
            for ki in range(kt):
                t = nl.ndarray((TILE_K, block_n), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(
                    dst=t, src=rhs[ki * TILE_K : (ki + 1) * TILE_K, nb * block_n : (nb + 1) * block_n]
                )
                b.append(t)
            for bm in range(BM):
                for bn in range(BN):
                    acc = matmul_sum(
                        [t[:, bm * TILE_M : (bm + 1) * TILE_M] for t in a],
                        [t[:, bn * TILE_N : (bn + 1) * TILE_N] for t in b],
                    )
                    store(out, acc, mb * block_m + bm * TILE_M, nb * block_n + bn * TILE_N)
    return out
