"""Tensor-engine steps the calibration kernels share: K-accumulated matmuls into one PSUM tile, and a result
tile's copy out of PSUM and its store."""

import nki.isa as nisa
import nki.language as nl


def store(out, acc, m0, n0):
    """PSUM -> SBUF copy of a result tile (rounding to the output dtype) and its store at ``out[m0:, n0:]``."""
    m, n = acc.shape
    res = nl.ndarray((m, n), dtype=out.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out[m0 : m0 + m, n0 : n0 + n], src=res)


def matmul_sum(stationaries, movings):
    """A new PSUM tile [M, N] = sum over k of ``stationaries[k].T @ movings[k]`` (one ``nc_matmul`` per K tile,
    the first overwriting, the others accumulating)."""
    acc = nl.ndarray((stationaries[0].shape[1], movings[0].shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k, (stationary, moving) in enumerate(zip(stationaries, movings, strict=True)):
        nisa.nc_matmul(dst=acc, stationary=stationary, moving=moving, accumulate=k > 0)
    return acc
