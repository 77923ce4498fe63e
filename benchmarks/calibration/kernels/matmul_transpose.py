"""The on-device-transpose matmul of aws-neuron/neuron-agentic-development
``skills/neuron-nki-profile-querying/references/investigations/redundant_te_transposes.md`` (worked example,
2048^3 BF16, measured on Trn2): ``C[M, N] = A[M, K] @ rhs[K, N]`` with each [128, 128] tile of A transposed on the
Tensor engine (``nc_transpose`` into PSUM, copied to SBUF) before its matmul. Our own kernel, written after the
page's code excerpt (same loops and tiles: m 16, n 4, k 16 at 2048^3; not the same instruction stream). The
page's V1 (lhsT pre-transposed, no ``nc_transpose``) is the same loop nest as the ladder's ``matmul_v0``, which the
suite runs for it.
"""

import nki
import nki.isa as nisa
import nki.language as nl
from tensor_engine import tiled_matmul

TILE_K = 128
TILE_M = 128
TILE_N = 512


@nki.jit
def matmul_with_transpose(a, rhs):
    def load_transposed(mi, ki):
        a_tile = nl.ndarray((TILE_M, TILE_K), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_tile, src=a[mi * TILE_M : (mi + 1) * TILE_M, ki * TILE_K : (ki + 1) * TILE_K])
        a_t = nl.ndarray((TILE_K, TILE_M), dtype=a.dtype, buffer=nl.psum)
        nisa.nc_transpose(dst=a_t, data=a_tile, engine=nisa.engine.tensor)
        lhs_t = nl.ndarray((TILE_K, TILE_M), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=lhs_t, src=a_t)
        return lhs_t

    return tiled_matmul(load_transposed, rhs, a.shape[0], a.dtype, TILE_K, TILE_M, TILE_N)
