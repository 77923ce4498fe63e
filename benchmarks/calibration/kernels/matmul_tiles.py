"""The undersized-tile matmuls of aws-neuron/neuron-agentic-development
``skills/neuron-nki-profile-querying/references/investigations/te_inefficiency.md`` (worked example, measured on
Trn2): one [128, 128] stationary and one [128, 512] moving BF16 tile loaded once, then 2048 ``nc_matmul``.
Our own kernels, written after the page's code excerpt. The page does not show how results leave PSUM; each
kernel here copies out and stores its last section's result (one [128, 512] tile, inferred) so that the
output can be checked.

- ``matmul_mixed_tiles`` (the page's V0): four sections of 512 matmuls: M = 32, N = 64, K = 32, then peak tiles.
- ``matmul_peak_tiles`` (V1): 2048 matmuls at K = 128, M = 128, N = 512.
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import store

REPEAT = 512  # matmuls per section
SECTIONS = 4


def _load(lhsT, rhs):
    stat = nl.ndarray(lhsT.shape, dtype=lhsT.dtype, buffer=nl.sbuf)
    mov = nl.ndarray(rhs.shape, dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=stat, src=lhsT)
    nisa.dma_copy(dst=mov, src=rhs)
    return stat, mov


def _repeat(dst, stationary, moving):
    for _ in range(REPEAT):
        nisa.nc_matmul(dst=dst, stationary=stationary, moving=moving)


@nki.jit
def matmul_mixed_tiles(lhsT, rhs):
    out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    stat, mov = _load(lhsT, rhs)
    _repeat(nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.psum), stat[0:128, 0:32], mov)  # M = 32
    _repeat(nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum), stat, mov[0:128, 0:64])  # N = 64
    _repeat(
        nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum), stat[0:32, 0:128], mov[0:32, 0:512]
    )  # K = 32
    peak = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    _repeat(peak, stat, mov)
    store(out, peak, 0, 0)
    return out


@nki.jit
def matmul_peak_tiles(lhsT, rhs):
    out = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    stat, mov = _load(lhsT, rhs)
    peak = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for _ in range(SECTIONS):
        _repeat(peak, stat, mov)
    store(out, peak, 0, 0)
    return out
