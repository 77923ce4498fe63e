"""A kernel module written the NKI 0.7 way, for the stubs type-check test: per-kernel ``nki.compiler``
configuration, tile grids with ``.data`` operands, ``empty_like(..., transpose_axes=)``, ``scalar_load`` and
``nl.if_else`` with a scalar comparison (the documented forms of the 0.7 and ``latest`` API pages)."""

import nki
import nki.isa as nisa
import nki.language as nl
from nki.compiler import AddressRotation, CompileConfig, SpecializationConfig


def transpose_cell(cell: nl.NkiTileGrid, dst: nl.NkiTileGrid, enabled: nisa.NkiScalar) -> None:
    """One tile transposed through SBUF, doubled when ``enabled`` (a runtime condition)."""
    transposed = nl.empty_like(cell, buffer=nl.sbuf, transpose_axes=(1, 0))
    nisa.dma_transpose(dst=transposed.data, src=cell.data)

    def double() -> None:
        nisa.tensor_scalar(transposed.data, transposed.data, op0=nl.multiply, operand0=2.0)

    nl.if_else(enabled, double)
    nisa.dma_copy(dst=dst.data, src=transposed.data)


@nki.jit(
    compile_config=CompileConfig(dead_code_elim=True, address_rotation=AddressRotation.AUTO),
    specialization_config=SpecializationConfig(allow_nested_config_override=False),
)
def transpose_tiles(src: nl.ndarray, flag: nl.ndarray) -> nl.ndarray:
    rows, cols = src.shape
    out = nl.ndarray((cols, rows), dtype=src.dtype, buffer=nl.shared_hbm)
    src_tiles = nl.tiles(src, tile_shape=(128, 128))
    out_tiles = nl.tiles(out, tile_shape=(128, 128))
    flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=flag_sb, src=flag)
    enabled = nisa.scalar_load(flag_sb) > 0
    for i in range(src_tiles.shape[0]):
        for j in range(src_tiles.shape[1]):
            transpose_cell(src_tiles[i, j], out_tiles[j, i], enabled)
    return out
