"""RMSNorm (no weight, no epsilon) then C = norm(X) @ W, FP32: our own translation to the current ``nki`` API of
AccelOpt NKIBench ``kernels/rmsnorm_matmul_M4096_N2048_K1024_0.py`` (legacy ``neuronxcc.nki``,
compiler-generated).

Same loop nest, tile shapes, dtypes and one instruction per legacy step. Per 8-tile M block: per 128-row tile a
[128, 1024] load, per 512-column half ``activation(square)``, ``tensor_scalar(* 1/K)`` and ``tensor_reduce``,
the two partial sums added (the legacy ``nl.loop_reduce``), ``activation(rsqrt)``, the same tile loaded again,
per half ``tensor_scalar(* rstd)`` and four on-chip transposes (a Tensor-engine matmul against an identity) each
copied PSUM -> SBUF; then per 1024-column N block eight [128, 1024] loads of W (reloaded for every M block, as
in the legacy kernel) and per (M tile, 512-column half) eight accumulating matmuls, a PSUM -> SBUF copy and a
[128, 1024] store. Input layout as the benchmark's ``transform_to_nki_inputs``: ``x[M, K]`` ->
``[M // 128, 128, K]``, ``w[K, N]`` -> ``[K // 128, 128, N]``; output ``[M // 128, 128, N]``.

PSUM -> SBUF copies (legacy ``nl.copy``) run on the Scalar engine (``activation(copy)``): the measured profile
shows no Vector time for them, so the compiler put them there (inferred from the engine times).
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import load_identity, matmul_sum, transpose

P = 128
TILES_PER_BLOCK = 8
BLOCK_N = 1024
TILE_N = 512
HALF = 512


@nki.jit
def rmsnorm_matmul_kernel(x, w):
    mt, p, k = x.shape
    kt, _, n = w.shape
    out = nl.ndarray((mt, p, n), dtype=nl.float32, buffer=nl.shared_hbm)
    zero = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    ident = load_identity()
    halves = k // HALF
    chunks = HALF // P  # K tiles per half
    for i0 in range(mt // TILES_PER_BLOCK):
        xn_t = []  # per M tile: the normalised tile transposed, one [128 (k), 128 (m)] tile per K tile
        for i1 in range(TILES_PER_BLOCK):
            row = i0 * TILES_PER_BLOCK + i1
            xt = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=xt, src=x[row])
            partial = []
            for i2 in range(halves):
                sq = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=sq, op=nl.square, data=xt[:, i2 * HALF : (i2 + 1) * HALF], bias=zero)
                sc = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=sc, data=sq, op0=nl.multiply, operand0=1.0 / k)
                s = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=sc, axis=1)
                partial.append(s)
            ms = partial[0]
            for s in partial[1:]:
                acc_s = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=acc_s, data1=ms, data2=s, op=nl.add)
                ms = acc_s
            rstd = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=rstd, op=nl.rsqrt, data=ms, bias=zero)
            xt2 = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=xt2, src=x[row])
            tiles = []
            for i3 in range(halves):
                xn = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(
                    dst=xn, data=xt2[:, i3 * HALF : (i3 + 1) * HALF], op0=nl.multiply, operand0=rstd
                )
                for i4 in range(chunks):
                    tiles.append(transpose(xn[:, i4 * P : (i4 + 1) * P], ident))
            xn_t.append(tiles)
        for i5 in range(n // BLOCK_N):
            wt = []
            for kk in range(kt):
                t = nl.ndarray((P, BLOCK_N), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=w[kk, :, i5 * BLOCK_N : (i5 + 1) * BLOCK_N])
                wt.append(t)
            for i8 in range(TILES_PER_BLOCK):
                res = nl.ndarray((P, BLOCK_N), dtype=nl.float32, buffer=nl.sbuf)
                for i9 in range(BLOCK_N // TILE_N):
                    acc = matmul_sum(xn_t[i8], [t[:, i9 * TILE_N : (i9 + 1) * TILE_N] for t in wt])
                    nisa.activation(dst=res[:, i9 * TILE_N : (i9 + 1) * TILE_N], op=nl.copy, data=acc)
                nisa.dma_copy(
                    dst=out[i0 * TILES_PER_BLOCK + i8, :, i5 * BLOCK_N : (i5 + 1) * BLOCK_N], src=res
                )
    return out
