"""(x + z) -> RMSNorm (weight g, epsilon) -> @ W, FP32: our own translation to the current ``nki`` API of AccelOpt
NKIBench ``kernels/add_rmsnorm_matmul_M4096_N2048_K1024_0.py`` (legacy ``neuronxcc.nki``, hand-written with
``nl.*`` operators the compiler lowers).

Per 128-row tile: loads of x and z, their sum, square, row sum, ``/ K + eps``, rsqrt, the scaling by it and by
g (broadcast to all partitions), then per 512-column N block eight accumulating matmuls, a PSUM -> SBUF copy and
a [128, 512] store. Choices where the legacy source leaves the instruction stream to the compiler (inferred):
``nl.matmul`` of the row-major tile needs it transposed, done once per 128-column K chunk on the Tensor engine
(a matmul against an identity) and copied to SBUF; W is loaded once, not per row tile as the source's loop
nest reads, because the measured HBM reads (42.0 MB = x + z + W) show the compiler hoisted those loads; ``/ K``
and ``+ eps`` are one ``tensor_scalar``; ``nl.copy`` runs on the Scalar engine. Inputs ``(x, w, z, g)``:
``x[M, K]``, ``w[K, N]``, ``z[M, K]``, ``g[K]`` (the benchmark's ``eps`` is the constant below).
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
def add_rmsnorm_matmul_kernel(x, w, z, g):
    m, k = x.shape
    _, n = w.shape
    kt = k // P
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ident = load_identity()
    gt = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=gt, src=g.reshape((1, k)).broadcast(0, P))
    wt = []
    for kk in range(kt):
        t = nl.ndarray((P, n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=w[kk * P : (kk + 1) * P, :])
        wt.append(t)
    for i in range(m // P):
        rows = slice(i * P, (i + 1) * P)
        xt = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[rows, :])
        zt = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=zt, src=z[rows, :])
        a = nl.ndarray((P, k), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=a, data1=xt, data2=zt, op=nl.add)
        y = rmsnorm_rows(a, gt, EPS)
        y_t = [transpose(y[:, kk * P : (kk + 1) * P], ident) for kk in range(kt)]
        for nn in range(n // TILE_N):
            cols = slice(nn * TILE_N, (nn + 1) * TILE_N)
            acc = matmul_sum(y_t, [t[:, cols] for t in wt])
            res = nl.ndarray((P, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=res, op=nl.copy, data=acc)
            nisa.dma_copy(dst=out[rows, cols], src=res)
    return out
