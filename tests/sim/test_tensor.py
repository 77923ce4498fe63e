"""NkiTensor views (language.md §5), read/write, strict mode and sentinels."""

import numpy as np
import pytest
from nki_studio.sim import context
from nki_studio.sim.access import out_of_bounds, read, write
from nki_studio.sim.errors import HardwareLimitError, SimulationError, UninitializedReadError
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import allocate, ds


@pytest.fixture
def sess():
    with context.session() as ctx:
        yield ctx


def filled(shape, buffer=MemoryRegion.sbuf, dtype=np.float32):
    t = allocate(shape, dtype, buffer)
    write(t, np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    return t


def test_fresh_tensor_layout_and_sentinels(sess):
    t = allocate((128, 64), np.float32)
    assert t.strides == (64, 1) and t.offset == 0 and t.buffer is MemoryRegion.sbuf
    assert np.isnan(read(t)).all()
    i = allocate((4, 4), np.int32)
    assert (read(i, raw=True) == 4).all()


def test_on_chip_int_indexing_keeps_partition_dim_and_two_dims(sess):
    t = allocate((64, 64, 64), np.float32)
    assert t[0, :, :].shape == (1, 64, 64)
    assert t[:, 0, 10].shape == (64, 1)
    assert t[0, 0, 10].shape == (1, 1)
    assert t[..., 3].shape == (64, 64)


def test_hbm_int_indexing_drops_dims_like_numpy(sess):
    h = filled((4, 8, 16), MemoryRegion.shared_hbm)
    assert h[1].shape == (8, 16)
    assert h[1, 2, 3].shape == (1,)
    assert read(h[1, 2:4, ds(3, 2)]).tolist() == [[163.0, 164.0], [179.0, 180.0]]


def test_slices_are_bounds_checked(sess):
    t = allocate((128, 64), np.float32)
    with pytest.raises(SimulationError, match="out of bounds"):
        t[:, 0:65]
    with pytest.raises(SimulationError, match="out of bounds"):
        t[:, ds(60, 8)]


def test_writes_through_views_are_visible_everywhere(sess):
    t = filled((8, 8))
    write(t[2:4, ds(1, 3)], 0.0)
    full = read(t)
    assert (full[2:4, 1:4] == 0).all() and full[2, 0] == 16 and full[4, 1] == 33


def test_read_is_read_only(sess):
    t = filled((4, 4))
    with pytest.raises(ValueError):
        read(t)[0, 0] = 1


def test_ap_pattern_example_from_the_docs(sess):
    t = filled((16, 16))
    a = t.ap([[16, 16], [1, 8]], offset=8)
    assert a.shape == (16, 8)
    assert np.array_equal(read(a), read(t[0:16, 8:16]))


def test_ap_rejects_partition_skipping_and_out_of_storage(sess):
    t = allocate((16, 32), np.float32)
    with pytest.raises(HardwareLimitError):
        t.ap([[64, 8], [1, 32]])
    h = filled((4, 4), MemoryRegion.shared_hbm)
    past = h.ap([[4, 4], [1, 5]])  # built and measured freely (issue 14): only an access fails
    assert past.shape == (4, 5)
    with pytest.raises(SimulationError, match="outside the storage"):
        read(past)


def test_ap_scalar_offset_uses_base_shape_and_vector_offset_gathers_rows(sess):
    h = filled((6, 4), MemoryRegion.shared_hbm)
    assert read(h.ap([[4, 2], [1, 4]], scalar_offset=3)).tolist() == read(h[3:5]).tolist()
    idx = allocate((3, 1), np.int32)
    write(idx, np.array([[5], [0], [2]]))
    g = h.ap([[4, 3], [1, 4]], vector_offset=idx)
    assert np.array_equal(read(g), read(h)[[5, 0, 2]])
    assert g.is_indirect()


def test_ap_dtype_reinterprets_storage(sess):
    t = allocate((2, 4), np.int32)
    write(t, np.full((2, 4), 0x3F80_0000, np.int64))  # float32 bit pattern of 1.0
    v = t.ap([[4, 2], [1, 4]], dtype=np.float32)
    assert (read(v) == 1.0).all()


def test_view_methods(sess):
    t = filled((4, 6))
    assert t.slice(1, 2, 6, 2).shape == (4, 2)
    assert t.select(1, 3).shape == (4, 1)
    assert filled((4, 6), MemoryRegion.shared_hbm).select(1, 3).shape == (4,)
    assert t.expand_dim(1).shape == (4, 1, 6)
    assert t.expand_dim(1).squeeze_dim(1).shape == (4, 6)
    assert t.reshape_dim(1, (2, -1)).shape == (4, 2, 3)
    assert t.reshape_dim(1, (2, 3)).flatten_dims(1, 2).shape == (4, 6)
    assert t.reshape((4, 3, 2)).shape == (4, 3, 2)
    p = t.reshape_dim(1, (2, 3)).permute((0, 2, 1))
    assert np.array_equal(read(p), read(t).reshape(4, 2, 3).transpose(0, 2, 1))
    b = t[:, 0:1].broadcast(1, 5)
    assert np.array_equal(read(b), np.repeat(read(t)[:, :1], 5, axis=1))
    assert t.get_pattern() == [[6, 4], [1, 6]]
    assert t.is_contiguous() and not t[:, 0:6:2].is_contiguous()


def test_on_chip_views_cannot_touch_the_partition_dim(sess):
    t = allocate((4, 6), np.float32)
    with pytest.raises(HardwareLimitError):
        t.permute((1, 0))
    with pytest.raises(HardwareLimitError):
        t.reshape((6, 4))
    with pytest.raises(HardwareLimitError):
        t.select(0, 1)


def test_rearrange_matches_the_docs_example(sess):
    t = filled((128, 24))
    r = t.rearrange(("b", ("h", "w")), ("b", "w", "h"), {"h": 4})
    assert r.shape == (128, 6, 4)
    assert np.array_equal(read(r), read(t).reshape(128, 4, 6).transpose(0, 2, 1))


def test_view_dtype_scales_last_dim(sess):
    t = allocate((128, 64), np.float32)
    assert t.view(np.uint8).shape == (128, 256)


def test_reshape_of_non_contiguous_view_is_refused(sess):
    h = filled((8, 8), MemoryRegion.shared_hbm)
    with pytest.raises(SimulationError, match="non-contiguous"):
        h[:, 0:4].reshape((32,))


def test_setitem_copies_into_the_view(sess):
    t = allocate((4, 8), np.float32)
    src = filled((4, 4))
    t[:, 4:8] = src
    t[:, 0:4] = 1.5
    assert np.array_equal(read(t)[:, 4:], read(src)) and (read(t)[:, :4] == 1.5).all()


def test_write_rounds_to_the_destination_dtype_and_accumulates(sess):
    t = allocate((1, 2), np.int16)
    write(t, np.array([[2.5, 40000.0]], np.float32))
    assert read(t, raw=True).tolist() == [[2, 32767]]
    p = allocate((1, 2), np.float32, MemoryRegion.psum)
    write(p, np.array([[1.0, 2.0]], np.float32))
    write(p, np.array([[0.5, 0.5]], np.float32), accumulate=True)
    assert read(p).tolist() == [[1.5, 2.5]]


def test_strict_mode_names_the_line_of_a_read_of_unwritten_memory():
    with context.session(strict=True):
        t = allocate((4, 4), np.float32)
        write(t[0:2, :], 1.0)
        read(t[0:2, :])
        with pytest.raises(UninitializedReadError) as info:
            read(t)
    assert info.value.file == __file__ and "element [2, 0]" in str(info.value)


def test_partition_limit_on_allocation(sess):
    with pytest.raises(HardwareLimitError, match="partition dimension 256 exceeds maximum 128"):
        allocate((256, 4), np.float32)


def test_runtime_offset_out_of_range_is_masked_until_touched(sess):
    h = allocate((4, 8), np.float32, MemoryRegion.shared_hbm)
    write(h, 0.0)
    off = allocate((1, 1), np.int32)
    write(off, np.array([[-100]]))
    v = h.ap([[8, 2], [1, 8]], scalar_offset=off)
    mask = out_of_bounds(v)
    assert mask is not None and mask.all()
    with pytest.raises(SimulationError, match="out-of-bounds access"):
        read(v)
    with pytest.raises(SimulationError, match="out-of-bounds access"):
        write(v, 1.0)
    write(v, 1.0, where=~mask)  # oob_mode=skip: nothing written
    assert (read(v, oob_fill=0.0) == 0).all() and (read(h) == 0).all()


def test_write_where_selects_elements(sess):
    t = allocate((2, 4), np.float32)
    write(t, 0.0)
    keep = np.array([[True, False, True, False], [False, False, False, True]])
    write(t, np.arange(8, dtype=np.float32).reshape(2, 4), where=keep)
    assert read(t).tolist() == [[0, 0, 2, 0], [0, 0, 0, 7]]
