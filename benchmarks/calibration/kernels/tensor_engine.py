"""Tensor-engine steps the calibration kernels share: K-accumulated matmuls into one PSUM tile, a result tile's
copy out of PSUM and its store, and the plain tiled matmul whose operand tiles are loaded in its innermost loop."""

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


def tiled_matmul(lhs_t_tile, rhs, m, dtype, tile_k=128, tile_m=128, tile_n=512):
    """A new HBM ``out[m, N] = lhsT.T @ rhs`` computed one [tile_m, tile_n] PSUM tile at a time (loops m, n, k),
    both operand tiles brought in the innermost loop: ``lhs_t_tile(mi, ki)`` gives the [tile_k, tile_m] SBUF
    stationary tile, the [tile_k, tile_n] moving tile is loaded from ``rhs``."""
    k, n = rhs.shape
    out = nl.ndarray((m, n), dtype=dtype, buffer=nl.shared_hbm)
    for mi in range(m // tile_m):
        for ni in range(n // tile_n):
            acc = nl.ndarray((tile_m, tile_n), dtype=nl.float32, buffer=nl.psum)
            for ki in range(k // tile_k):
                a = lhs_t_tile(mi, ki)
                b = nl.ndarray((tile_k, tile_n), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(
                    dst=b, src=rhs[ki * tile_k : (ki + 1) * tile_k, ni * tile_n : (ni + 1) * tile_n]
                )
                nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=ki > 0)
            store(out, acc, mi * tile_m, ni * tile_n)
    return out
