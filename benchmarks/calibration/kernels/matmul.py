"""C = A @ B, FP32: our own translation to the current ``nki`` API of AccelOpt NKIBench
``kernels/matmul_M4096_N12288_K5120_0.py`` (legacy ``neuronxcc.nki``, compiler-generated).

Same loop nest, tile shapes and dtypes: per 1024-column N block, forty [128, 1024] loads of B; per 128-row M
tile five [128, 8 x 128] loads of A, forty on-chip transposes (a Tensor-engine matmul against an identity,
``is_moving_onezero``, as the legacy kernel spells it) each copied PSUM -> SBUF, then per 512-column half forty
accumulating matmuls, a PSUM -> SBUF copy, and one [128, 1024] store. Input layout as the benchmark's
``transform_to_nki_inputs``: ``lhs[M, K]`` -> ``[M // 128, 128, K // 128, 128]``, ``rhs[K, N]`` ->
``[K // 128, 128, N]``; output ``[M // 128, 128, N]``.

PSUM -> SBUF copies (legacy ``nl.copy``) run on the Scalar engine (``activation(copy)``): the measured profile
shows no Vector time for them, so the compiler put them there (inferred from the engine times).
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import load_identity, matmul_sum, transpose

P = 128
BLOCK = 1024
TILE_N = 512
K_GROUP = 8  # K tiles per A load (one [128, 1024] transfer)


@nki.jit
def matmul_kernel(lhs, rhs):
    mt, p, kt, _ = lhs.shape
    _, _, n = rhs.shape
    out = nl.ndarray((mt, p, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ident = load_identity()
    for i0 in range(n // BLOCK):
        b = []
        for i in range(kt):
            t = nl.ndarray((P, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=rhs[i, :, i0 * BLOCK : (i0 + 1) * BLOCK])
            b.append(t)
        for i3 in range(mt):
            a_t = []  # A tile transposed: [128 (k), 128 (m)] per K tile
            for i4 in range(kt // K_GROUP):
                rows = nl.ndarray((P, K_GROUP, P), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=rows, src=lhs[i3, :, i4 * K_GROUP : (i4 + 1) * K_GROUP, :])
                for i5 in range(K_GROUP):
                    a_t.append(transpose(rows[:, i5, :], ident))
            res = nl.ndarray((P, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            for i6 in range(BLOCK // TILE_N):
                acc = matmul_sum(a_t, [t[:, i6 * TILE_N : (i6 + 1) * TILE_N] for t in b])
                nisa.activation(dst=res[:, i6 * TILE_N : (i6 + 1) * TILE_N], op=nl.copy, data=acc)
            nisa.dma_copy(dst=out[i3, :, i0 * BLOCK : (i0 + 1) * BLOCK], src=res)
    return out
