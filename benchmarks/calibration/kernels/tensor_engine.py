"""Tensor-engine steps the calibration kernels share: K-accumulated matmuls into one PSUM tile, and on-chip
transposes as the legacy NKIBench kernels spell them: a matmul of the tile against an identity
(``is_moving_onezero``), copied PSUM -> SBUF on the Scalar engine (``activation(copy)``: the measured engine
times of the matmul kernels show the compiler puts the legacy ``nl.copy`` there, Vector ~0; inferred).
"""

import nki.isa as nisa
import nki.language as nl
import numpy as np

P = 128


def load_identity():
    """The [128, 128] FP32 identity in SBUF, loaded once from a shared constant."""
    hbm = nl.shared_constant(np.identity(P, dtype=np.float32))
    ident = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ident, src=hbm)
    return ident


def transpose(view, ident, dst=None):
    """The [128, f] FP32 SBUF ``view`` transposed into ``dst`` ([f, 128] SBUF; a new tile when not given)."""
    p, f = view.shape
    tp = nl.ndarray((f, p), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=tp, stationary=view, moving=ident, is_moving_onezero=True)
    if dst is None:
        dst = nl.ndarray((f, p), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=dst, op=nl.copy, data=tp)
    return dst


def matmul_sum(stationaries, movings):
    """A new PSUM tile [M, N] = sum over k of ``stationaries[k].T @ movings[k]`` (one ``nc_matmul`` per K tile,
    the first overwriting, the others accumulating)."""
    acc = nl.ndarray((stationaries[0].shape[1], movings[0].shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k, (stationary, moving) in enumerate(zip(stationaries, movings, strict=True)):
        nisa.nc_matmul(dst=acc, stationary=stationary, moving=moving, accumulate=k > 0)
    return acc
