"""A kernel in the style of nki-library's MoE helpers, for the stubs type-check test: per-row scales applied on the
way out of PSUM with ``nisa.scalar_tensor_tensor(..., dtype=...)`` next to ``dst`` (the library passes the
output dtype explicitly), keyword arguments throughout and module-level tile constants."""

import nki
import nki.isa as nisa
import nki.language as nl

TILE_P = 128
TILE_F = 512


def scale_and_weight(
    dst: nl.ndarray, acc: nl.ndarray, scale: nl.ndarray, weight: nl.ndarray, dtype: nki.dtype
) -> None:
    """``dst = acc * scale * weight``: the (P, 1) scale broadcast along the free dim, then the full weight tile."""
    nisa.scalar_tensor_tensor(
        data=acc,
        op0=nl.multiply,
        operand0=scale,
        op1=nl.multiply,
        operand1=weight,
        dtype=dtype,
        dst=dst,
    )


@nki.jit
def scaled_accumulate(x: nl.ndarray, scale: nl.ndarray, weight: nl.ndarray) -> nl.ndarray:
    out = nl.ndarray((TILE_P, TILE_F), dtype=x.dtype, buffer=nl.shared_hbm)
    x_sb = nl.ndarray((TILE_P, TILE_F), dtype=x.dtype, buffer=nl.sbuf)
    scale_sb = nl.ndarray((TILE_P, 1), dtype=nl.float32, buffer=nl.sbuf)
    weight_sb = nl.ndarray((TILE_P, TILE_F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x[0:TILE_P, 0:TILE_F])
    nisa.dma_copy(dst=scale_sb, src=scale[0:TILE_P, 0:1])
    nisa.dma_copy(dst=weight_sb, src=weight[0:TILE_P, 0:TILE_F])
    result = nl.ndarray((TILE_P, TILE_F), dtype=x.dtype, buffer=nl.sbuf)
    scale_and_weight(result, x_sb, scale_sb, weight_sb, x.dtype)
    nisa.dma_copy(dst=out, src=result)
    return out
