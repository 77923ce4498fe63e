"""x @ W + z -> RMSNorm (weight g, epsilon), FP32: our own translation to the current ``nki`` API of AccelOpt
NKIBench ``kernels/matmul_add_rmsnorm_M4096_N2048_K2048_0.py`` (legacy ``neuronxcc.nki``, hand-written with
``nl.*`` operators the compiler lowers).

Per 128-row tile: a [128, K] load of x, per 512-column N block sixteen accumulating matmuls and a PSUM -> SBUF
copy into the row, then a [128, N] load of z, the sum, square, row sum, ``/ N + eps``, rsqrt, the scaling by
it and by g (broadcast to all partitions) and a [128, N] store. Choices where the legacy source leaves the
instruction stream to the compiler (inferred): ``nl.matmul`` of the row-major x tile needs it transposed, done
once per 128-column K chunk on the Tensor engine and copied to SBUF; W is loaded once (the source's loop nest
loads it per row tile; the measured HBM reads, 98.1 MB against 83.9 MB for x + z + W once, show the compiler
kept most of it on chip); ``/ N`` and ``+ eps`` are one ``tensor_scalar``; ``nl.copy`` runs on the Scalar
engine. Inputs ``(x, w, z, g)``: ``x[M, K]``, ``w[K, N]``, ``z[M, N]``, ``g[N]``.
"""

import nki
import nki.isa as nisa
import nki.language as nl
from rms_rows import rmsnorm_rows
from tensor_engine import load_identity, matmul_sum, transpose

P = 128
TILE_N = 512
EPS = 1e-5


@nki.jit
def matmul_add_rmsnorm_kernel(x, w, z, g):
    m, k = x.shape
    _, n = w.shape
    kt = k // P
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ident = load_identity()
    gt = nl.ndarray((P, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=gt, src=g.reshape((1, n)).broadcast(0, P))
    wt = []
    for kk in range(kt):
        t = nl.ndarray((P, n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=w[kk * P : (kk + 1) * P, :])
        wt.append(t)
    for i in range(m // P):
        rows = slice(i * P, (i + 1) * P)
        xt = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[rows, :])
        x_t = [transpose(xt[:, kk * P : (kk + 1) * P], ident) for kk in range(kt)]
        h = nl.ndarray((P, n), dtype=nl.float32, buffer=nl.sbuf)
        for nn in range(n // TILE_N):
            cols = slice(nn * TILE_N, (nn + 1) * TILE_N)
            acc = matmul_sum(x_t, [t[:, cols] for t in wt])
            nisa.activation(dst=h[:, cols], op=nl.copy, data=acc)
        zt = nl.ndarray((P, n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=zt, src=z[rows, :])
        a = nl.ndarray((P, n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=a, data1=h, data2=zt, op=nl.add)
        y = rmsnorm_rows(a, gt, EPS)
        nisa.dma_copy(dst=out[rows, :], src=y)
    return out
