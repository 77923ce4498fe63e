"""A kernel module in the style of public NKI libraries, for the stubs type-check test: ``nl.ndarray`` and
``nki.dtype`` as annotations, the ISA enums from ``nki.isa.constants``, NumPy dtypes, integer DGE modes,
string perf modes, an int core list, version comparisons and ``nl.bool``."""

from dataclasses import dataclass

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np
from nki.isa.constants import dge_mode, oob_mode


@dataclass
class TileConfig(nl.NKIObject):
    rows: int
    cols: int
    compute_dtype: nki.dtype = nl.bfloat16


def load_tile(src: nl.ndarray, cfg: TileConfig, row: int) -> nl.ndarray:
    """One row block of ``src`` into SBUF, in the compute dtype."""
    tile = nl.ndarray((cfg.rows, cfg.cols), dtype=cfg.compute_dtype, buffer=nl.sbuf, name=None)
    nisa.dma_copy(dst=tile, src=src[row * cfg.rows : (row + 1) * cfg.rows, 0 : cfg.cols], dge_mode=2)
    return tile


def scale(dst: nl.ndarray, tile: nl.ndarray, factor: float) -> None:
    nisa.tensor_scalar(dst=dst, data=tile, op0=nl.multiply, operand0=factor)


@nki.jit
def scaled_matmul(lhs_t: nl.ndarray, rhs: nl.ndarray) -> nl.ndarray:
    k, m = lhs_t.shape
    _, n = rhs.shape
    out = nl.ndarray((m, n), dtype=np.float32, buffer=nl.shared_hbm)
    cfg = TileConfig(rows=k, cols=m)
    lhs = load_tile(lhs_t, cfg, 0)
    rhs_tile = nl.ndarray((k, n), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=rhs_tile, src=rhs, dge_mode=dge_mode.unknown)
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    perf = "double_row" if nisa.get_nc_version() >= nisa.nc_version.gen3 else "none"
    nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs_tile, perf_mode=perf)
    res = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    scale(res, res, 0.5)
    nisa.core_barrier(out, (0))
    nisa.dma_copy(dst=out, src=res, oob_mode=oob_mode.skip)
    return out


def mask_of(src: nl.ndarray, keep: bool = True) -> nl.ndarray:
    """A byte mask: ``nl.bool`` as real kernels spell it, next to the stub's own (builtin) bool parameters."""
    mask = nl.ndarray(src.shape, dtype=nl.bool if keep else nl.bool_, buffer=nl.sbuf)
    flag: bool = nl.is_sbuf(nl.sbuf) and not mask.is_indirect()
    total = nl.ndarray((src.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=total, op=nl.add, data=src, axis=1, keepdims=flag)
    return mask
