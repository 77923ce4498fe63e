"""SwiGLU MLP, (silu(x @ W_gate) * (x @ W_up)) @ W_down, FP32: our own translation to the current ``nki`` API of
AccelOpt NKIBench ``kernels/swiglu_M4096_N3072_K1024_0.py`` (legacy ``neuronxcc.nki``, compiler-generated, with
its spill written out as an HBM scratch tensor).

Same three phases, loop nests, tiles and instructions. 1: per 1024-column block of W_gate eight [128, 1024] loads,
per 512-row M block four [128, 8 x 128] loads of x and 32 on-chip transposes (``tensor_engine.transpose``), then per
128-column N tile eight accumulating matmuls giving gate^T [128 (n), 512 (m)], copied to SBUF. 2: the same for
W_up (x loaded and transposed again, as in the legacy kernel), then per tile exp(-g) on the Scalar engine,
``1 + e``, its reciprocal, ``g * r`` and the product with up^T read from PSUM, stored to the HBM scratch (the
legacy ``_spill_163``). 3: the 24 [128, 1024] tiles of W_down loaded once; per 512-row M block the 24 spilled
[128, 512] tiles reloaded, then per (128-row tile, 512-column half) 24 accumulating matmuls, a copy and per tile
a [128, 1024] store. Input layout as the benchmark's ``transform_to_nki_inputs``: ``x[M, K]`` ->
``[M // 512, 4, 128, K // 128, 128]``, ``w_up``/``w_gate`` ``[K, N]`` -> ``[K // 128, 128, N]``, ``w_down[N, K]`` ->
``[N // 128, 128, K]``; output ``[M // 128, 128, K]``.
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import load_identity, matmul_sum, transpose

P = 128
BLOCK = 1024  # N columns per weight block
M_TILES = 4  # 128-row tiles per M block (512 rows)
HALF = 512


def _x_transposed(x, mb, kt, ident):
    """x's 512-row block ``mb`` transposed: per K tile one [128 (k), 512 (m)] SBUF tile."""
    x_t = [nl.ndarray((P, M_TILES * P), dtype=nl.float32, buffer=nl.sbuf) for _ in range(kt)]
    for i3 in range(M_TILES):
        rows = nl.ndarray((P, kt, P), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=rows, src=x[mb, i3])
        for i4 in range(kt):
            transpose(rows[:, i4, :], ident, dst=x_t[i4][:, i3 * P : (i3 + 1) * P])
    return x_t


@nki.jit
def swiglu_kernel(x, w_up, w_down, w_gate):
    mb_count, _, _, kt, _ = x.shape
    _, _, n = w_up.shape
    nt, _, k = w_down.shape
    out = nl.ndarray((mb_count * M_TILES, P, k), dtype=nl.float32, buffer=nl.shared_hbm)
    spill = nl.ndarray((n // BLOCK, BLOCK // P, mb_count, P, HALF), dtype=nl.float32, buffer=nl.hbm)
    zero = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    ident = load_identity()
    gate = {}
    for i0 in range(n // BLOCK):
        wg = []
        for i1 in range(kt):
            t = nl.ndarray((P, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=w_gate[i1, :, i0 * BLOCK : (i0 + 1) * BLOCK])
            wg.append(t)
        for i2 in range(mb_count):
            x_t = _x_transposed(x, i2, kt, ident)
            for i5 in range(BLOCK // P):
                acc = matmul_sum([t[:, i5 * P : (i5 + 1) * P] for t in wg], x_t)
                g = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=g, op=nl.copy, data=acc)
                gate[i0, i5, i2] = g
    for i7 in range(n // BLOCK):
        wu = []
        for i8 in range(kt):
            t = nl.ndarray((P, BLOCK), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=w_up[i8, :, i7 * BLOCK : (i7 + 1) * BLOCK])
            wu.append(t)
        for i9 in range(mb_count):
            x_t = _x_transposed(x, i9, kt, ident)
            for i12 in range(BLOCK // P):
                up = matmul_sum([t[:, i12 * P : (i12 + 1) * P] for t in wu], x_t)
                g = gate[i7, i12, i9]
                e = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=e, op=nl.exp, data=g, bias=zero, scale=-1.0)
                d = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=d, data=e, op0=nl.add, operand0=1.0, reverse0=True)
                r = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.reciprocal(dst=r, data=d)
                s = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=s, data1=g, data2=r, op=nl.multiply)
                h = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=h, data1=s, data2=up, op=nl.multiply)
                nisa.dma_copy(dst=spill[i7, i12, i9], src=h)
    wd = []
    for i in range(nt):
        t = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=w_down[i])
        wd.append(t)
    for i16 in range(mb_count):
        h_t = []
        for i17 in range(n // BLOCK):
            for i18 in range(BLOCK // P):
                t = nl.ndarray((P, HALF), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=spill[i17, i18, i16])
                h_t.append(t)
        for i19 in range(M_TILES):
            res = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
            for i20 in range(k // HALF):
                acc = matmul_sum(
                    [t[:, i19 * P : (i19 + 1) * P] for t in h_t],
                    [t[:, i20 * HALF : (i20 + 1) * HALF] for t in wd],
                )
                nisa.activation(dst=res[:, i20 * HALF : (i20 + 1) * HALF], op=nl.copy, data=acc)
            nisa.dma_copy(dst=out[i16 * M_TILES + i19], src=res)
    return out
