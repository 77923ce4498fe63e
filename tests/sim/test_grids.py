"""NKI 0.7 tile/block grids (nki-0.7.md §2.6): views in tile coordinates, allocators, .data operands."""

import numpy as np
import pytest
from nki_studio.sim import context, dropin
from nki_studio.sim import isa as nisa
from nki_studio.sim import language as nl
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.tensor import from_array, to_array

RNG = np.random.default_rng(7)


@pytest.fixture
def sess():
    with context.session() as ctx:
        yield ctx


def hbm(values):
    return from_array(values, nl.shared_hbm)[0]


def test_tiles_shape_coordinates_and_clamped_remainder(sess):
    src = hbm(np.arange(300 * 600, dtype=np.float32).reshape(300, 600))
    grid = nl.tiles(src, tile_shape=(128, 256))
    assert isinstance(grid, nl.NkiTileGrid) and isinstance(grid, nl.NkiGrid)
    assert grid.shape == (3, 3) and grid.element_shape == (300, 600) and grid.is_remainder
    assert grid.index_step_elements == (128, 256) and grid.tile_shape == (128, 256)
    cell = grid[1, 2]
    assert isinstance(cell, nl.NkiTileGrid) and cell.shape == ()
    assert cell.element_shape == (128, 600 - 512) and cell.is_remainder
    assert np.array_equal(to_array(cell.data), to_array(src)[128:256, 512:600])
    assert not grid[0, 0].is_remainder and grid[0, 0].element_shape == (128, 256)
    row = grid[2, :]
    assert row.shape == (3,) and row.element_shape == (300 - 256, 600)
    assert np.array_equal(to_array(row.data), to_array(src)[256:300])


def test_iterating_a_grid_walks_its_first_dim(sess):
    grid = nl.tiles(hbm(np.zeros((300, 256), np.float32)), tile_shape=(128, 128))
    rows = list(grid)
    assert len(rows) == 3 and rows[2].shape == (2,) and rows[2].element_shape == (44, 256)
    with pytest.raises(SimulationError, match="out of range"):
        grid[3, 0]


def test_a_gapped_selection_has_no_single_operand(sess):
    grid = nl.tiles(hbm(np.zeros((256, 1024), np.float32)), tile_shape=(128, 256))
    every_other = grid[:, ::2]
    assert every_other.shape == (2, 2) and every_other.index_step_elements == (128, 512)
    assert every_other.element_shape == (256, 512) and not every_other.is_data_representable
    with pytest.raises(SimulationError, match="not one access pattern"):
        _ = every_other.data
    assert every_other[:, 1].is_data_representable  # one tile column again


def test_grid_cells_copied_by_dma_match_numpy(sess):
    values = RNG.random((256, 512), np.float32)
    src, dst = hbm(values), hbm(np.zeros((256, 512), np.float32))
    src_t, dst_t = nl.tiles(src, tile_shape=(128, 256)), nl.tiles(dst, tile_shape=(128, 256))
    for i in range(src_t.shape[0]):
        for j in range(src_t.shape[1]):
            cell = src_t[i, j]
            t = nl.ndarray(cell.element_shape, dtype=src.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t.data, src=cell.data)
            nisa.dma_copy(dst=dst_t[i, j].data, src=t)
    assert np.array_equal(to_array(dst), values)


def test_a_grid_is_not_an_instruction_operand(sess):
    grid = nl.tiles(hbm(np.zeros((128, 256), np.float32)), tile_shape=(128, 128))
    t = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    with pytest.raises(HardwareLimitError, match=r"NkiTileGrid; pass its \.data"):
        nisa.dma_copy(dst=t, src=grid[0, 0])


def test_blocks_group_tiles_and_tiles_of_a_block_are_its_interior(sess):
    values = RNG.random((512, 1024), np.float32)
    grid = nl.blocks(hbm(values), tile_shape=(128, 256), block_shape=(2, 2))
    assert isinstance(grid, nl.NkiBlockGrid) and grid.shape == (2, 2) and grid.block_shape == (2, 2)
    assert grid.index_step_elements == (256, 512)
    block = grid[1, 0]
    assert block.element_shape == (256, 512)
    assert np.array_equal(to_array(block.data), values[256:512, 0:512])
    inner = nl.tiles(block)
    assert inner.shape == (2, 2) and inner.tile_shape == (128, 256)
    assert np.array_equal(to_array(inner[1, 1].data), values[384:512, 256:512])


def test_untiled_leading_hbm_dims_are_indexed_one_slab_at_a_time(sess):
    values = RNG.random((3, 128, 512), np.float32)
    grid = nl.tiles(hbm(values), tile_shape=(128, 256))
    assert grid.shape == (3, 1, 2) and grid.index_step_elements == (1, 128, 256)
    slab = grid[2]
    assert slab.shape == (1, 2) and slab.element_shape == (128, 512)
    assert np.array_equal(to_array(slab[0, 1].data), values[2, :, 256:])


def test_alloc_tiles_on_chip_lays_tiles_side_by_side_and_counts_capacity(sess):
    grid = nl.alloc_tiles(tile_shape=(128, 64), element_shape=(256, 200), buffer=nl.sbuf, dtype=nl.float32)
    assert grid.shape == (2, 4) and grid.buffer is nl.sbuf and grid.is_remainder
    base = grid[0, 0].data
    # 2 x 4 tiles of 64 float32 columns each, on 128 partitions: 8 * 64 * 4 bytes per partition.
    assert base.storage.shape == (128, 8 * 64)
    write(grid[1, 3].data, np.full((128, 200 - 192), 5.0, np.float32))
    assert grid[1, 3].data.shape == (128, 8)
    assert (read(grid[1, 3].data) == 5.0).all()
    # A row of tiles is contiguous along the free axis; a column spans > 128 partitions: not one operand.
    assert grid[1, 0:2].data.shape == (128, 128)
    assert not grid[:, 0].is_data_representable
    with pytest.raises(HardwareLimitError, match="at most 128 partitions"):
        nl.alloc_tiles(tile_shape=(256, 64), element_shape=(256, 64), buffer=nl.sbuf, dtype=nl.float32)


def test_allocator_argument_errors_are_the_documented_exception_types(sess):
    with pytest.raises(TypeError):
        nl.alloc_tiles(tile_shape=[128, 64], element_shape=(128, 64), buffer=nl.sbuf, dtype=nl.float32)
    with pytest.raises(TypeError):
        nl.alloc_tiles(tile_shape=(128, 64), element_shape=(128, 64), buffer="sbuf", dtype=nl.float32)
    with pytest.raises(ValueError, match="positive"):
        nl.alloc_tiles(tile_shape=(128, 0), element_shape=(128, 64), buffer=nl.sbuf, dtype=nl.float32)
    with pytest.raises(ValueError, match="at least 2 dims"):
        nl.alloc_tiles(tile_shape=(128,), element_shape=(128, 64), buffer=nl.sbuf, dtype=nl.float32)
    with pytest.raises(ValueError, match="rank of tile_shape"):
        nl.alloc_blocks(
            tile_shape=(128, 64), block_shape=(2,), element_shape=(128, 64), buffer=nl.sbuf, dtype=nl.float32
        )


def test_alloc_blocks_in_hbm_and_empty_like_keeps_the_grid(sess):
    grid = nl.alloc_blocks(
        tile_shape=(128, 128),
        block_shape=(1, 2),
        element_shape=(256, 640),
        buffer=nl.shared_hbm,
        dtype=nl.bfloat16,
    )
    assert grid.shape == (2, 3) and grid.is_remainder and grid.element_shape == (256, 640)
    like = nl.empty_like(grid[:, 1:], buffer=nl.sbuf)
    assert isinstance(like, nl.NkiBlockGrid) and like.buffer is nl.sbuf and like.dtype == grid.dtype
    assert like.shape == (2, 2) and like.element_shape == (256, 384) and like.is_remainder
    gapped = nl.tiles(grid)[:, ::2]
    packed = nl.empty_like(gapped)
    assert isinstance(packed, nl.NkiTileGrid) and packed.shape == gapped.shape
    assert packed.element_shape == (256, 384) and packed.is_data_representable
    one = nl.empty_like(nl.tiles(grid)[1, 4])
    assert one.shape == () and one.element_shape == (128, 128)


def test_grids_in_a_kernel_run_through_the_drop_in(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(
        "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n"
        "@nki.jit\ndef double(src):\n"
        "    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)\n"
        "    s, d = nl.tiles(src, tile_shape=(128, 96)), nl.tiles(dst, tile_shape=(128, 96))\n"
        "    buf = nl.alloc_tiles(tile_shape=(128, 96), element_shape=(128, 200), buffer=nl.sbuf, dtype=src.dtype)\n"
        "    for j in range(s.shape[1]):\n"
        "        nisa.dma_copy(dst=buf[0, j].data, src=s[0, j].data)\n"
        "        nisa.tensor_scalar(dst=buf[0, j].data, data=buf[0, j].data, op0=nl.multiply, operand0=2.0)\n"
        "        nisa.dma_copy(dst=d[0, j].data, src=buf[0, j].data)\n"
        "    return dst\n"
    )
    module = dropin.load_module(str(path))
    x = RNG.random((128, 200), np.float32)
    with dropin.installed():
        out = module.double(x)
    assert np.allclose(out, 2 * x)


def test_grid_operands_have_the_footprints_the_estimate_reads(tmp_path):
    from nki_studio.sim import api

    path = tmp_path / "k.py"
    path.write_text(
        "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n"
        "@nki.jit\ndef stage(src):\n"
        "    s = nl.tiles(src, tile_shape=(128, 64))\n"
        "    buf = nl.alloc_tiles(tile_shape=(128, 64), element_shape=(128, 192), buffer=nl.sbuf, dtype=src.dtype)\n"
        "    for j in range(s.shape[1]):\n"
        "        nisa.dma_copy(dst=buf[0, j].data, src=s[0, j].data)\n"
        "    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)\n"
        "    nisa.dma_copy(dst=out, src=buf.data)\n"
        "    return out\n"
    )
    x = RNG.random((128, 192), np.float32)
    result = api.simulate(str(path), x, trace=True)
    assert np.array_equal(result.output, x)  # the whole grid is one operand: tiles side by side = the row
    copies = [e for e in result.trace if e.op == "nisa.dma_copy"]
    dsts = [next(o for o in e.operands if o.role == "dst") for e in copies[:3]]
    assert {o.storage for o in dsts} == {dsts[0].storage} and dsts[0].storage >= 0
    assert [(o.part_start, o.part_end, o.byte_start, o.byte_end) for o in dsts] == [
        (0, 128, 256 * j, 256 * (j + 1)) for j in range(3)
    ]
    srcs = [next(o for o in e.operands if o.role == "src") for e in copies[:3]]
    assert [(o.byte_start, o.row_bytes) for o in srcs] == [(256 * j, 256) for j in range(3)]
    assert result.report.sbuf is not None and result.report.sbuf.peak_bytes == 192 * 4


def test_tiles_over_a_gapped_selection_number_its_cells_densely(sess):
    values = np.arange(256 * 1024, dtype=np.float32).reshape(256, 1024)
    grid = nl.tiles(hbm(values), tile_shape=(128, 256))
    every_other = grid[:, ::2]  # tile columns 0 and 2: elements 0..255 and 512..767
    again = nl.tiles(every_other, tile_shape=(128, 128))
    assert again.shape == (2, 4) and again.element_shape == (256, 512)
    expect = np.concatenate([values[:, 0:256], values[:, 512:768]], axis=1)
    for i in range(2):
        for j in range(4):
            cell = again[i, j]
            assert np.array_equal(
                to_array(cell.data), expect[128 * i : 128 * (i + 1), 128 * j : 128 * (j + 1)]
            )
    straddling = again[0, 1:3]  # the last 128 of tile 0 and the first 128 of tile 2: a gap between them
    assert not straddling.is_data_representable
    blocks = nl.blocks(every_other, tile_shape=(128, 128), block_shape=(1, 2))
    assert blocks.shape == (2, 2)
    assert np.array_equal(to_array(blocks[1, 1].data), values[128:256, 512:768])


def test_empty_like_with_transpose_axes_transposes_each_tile(sess):
    values = RNG.random((256, 384), np.float32).astype(np.float32)
    src = nl.tiles(hbm(values), tile_shape=(128, 128))
    cell = src[1, 2]
    dst = nl.empty_like(cell, buffer=nl.sbuf, transpose_axes=(1, 0))
    assert isinstance(dst, nl.NkiTileGrid) and dst.buffer is nl.sbuf
    assert dst.element_shape == (128, 128) and dst.data.shape == (128, 128)
    nisa.dma_transpose(dst=dst.data, src=cell.data)
    assert np.array_equal(to_array(dst.data), values[128:256, 256:384].T)
    edge = nl.tiles(hbm(np.zeros((200, 96), np.float32)), tile_shape=(128, 64))[1, 1]  # clamped (72, 32)
    assert nl.empty_like(edge, buffer=nl.sbuf, transpose_axes=(1, 0)).element_shape == (32, 72)
    with pytest.raises(ValueError, match=r"supported order is \(1, 0\)"):
        nl.empty_like(cell, buffer=nl.sbuf, transpose_axes=(0, 1))
    wide = nl.tiles(hbm(np.zeros((128, 512), np.float32)), tile_shape=(128, 512))[0, 0]
    with pytest.raises(HardwareLimitError, match="extent of 512 the partition dim"):
        nl.empty_like(wide, buffer=nl.sbuf, transpose_axes=(1, 0))
    assert not sess.warnings
    nl.empty_like(cell, buffer=nl.shared_hbm, transpose_axes=(1, 0))
    assert any("prepares an SBUF destination" in w for w in sess.warnings)
