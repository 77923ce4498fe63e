"""SBUF/PSUM capacity model (server/sim/memory.py): allocation, release on last reference, peaks, budget."""

import gc

import numpy as np
import pytest
from nki_studio.model.targets import Generation, Target
from nki_studio.sim import context
from nki_studio.sim.errors import HardwareLimitError, ResourceLimitError
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import allocate


def test_usage_counts_free_bytes_per_partition_and_releases_with_the_last_view():
    with context.session() as ctx:
        mem = ctx.cores[0].memory
        t = allocate((128, 1024), np.float32, name="big")
        view = t[:, 0:8]
        assert mem.used["sbuf"] == 4096
        del t
        gc.collect()
        assert mem.used["sbuf"] == 4096  # the view keeps the storage alive
        del view
        gc.collect()
        assert mem.used["sbuf"] == 0
        assert mem.peaks["sbuf"].bytes_per_partition == 4096
        assert [a.name for a in mem.peaks["sbuf"].live] == ["big"]


def test_rebinding_in_a_loop_counts_two_live_tiles_at_most():
    with context.session() as ctx:
        for _ in range(10):
            t = allocate((128, 512), np.float32)  # noqa: F841 - rebinding releases the previous tile
        assert ctx.cores[0].memory.peaks["sbuf"].bytes_per_partition == 2 * 2048


def test_sbuf_overflow_names_the_line_and_what_was_live():
    with context.session(target=Target(Generation.GEN3)):
        keep = [allocate((128, 16 * 1024), np.float32, name=f"t{i}") for i in range(3)]
        with pytest.raises(HardwareLimitError) as info:
            keep.append(allocate((128, 16 * 1024), np.float32, name="one_too_many"))
    msg = str(info.value)
    assert info.value.file == __file__
    assert "SBUF capacity exceeded" in msg and "229376" in msg and "t0 [128, 16384] float32" in msg


def test_psum_is_16_kib_per_partition_and_warn_mode_continues():
    with context.session(capacity="warn") as ctx:
        tiles = [allocate((128, 512), np.float32, MemoryRegion.psum) for _ in range(9)]
        assert len(tiles) == 9
        assert ctx.cores[0].memory.warnings and "PSUM capacity exceeded" in ctx.cores[0].memory.warnings[0]
        assert ctx.cores[0].memory.peaks["psum"].bytes_per_partition == 9 * 2048


def test_capacity_depends_on_generation():
    with context.session(target=Target(Generation.GEN2)):
        with pytest.raises(HardwareLimitError):
            allocate((128, 200 * 1024), np.uint8)
    with context.session(target=Target(Generation.GEN4)):
        allocate((128, 200 * 1024), np.uint8)


def test_low_precision_tensors_count_their_own_size_in_float32_mode():
    with context.session(precise=False) as ctx:
        t = allocate((128, 100), "bfloat16")
        assert t.storage.data.dtype == np.float32
        assert ctx.cores[0].memory.used["sbuf"] == 200


def test_allocation_budget_bounds_all_regions():
    with context.session(allocation_budget=1 << 20):
        allocate((256, 256), np.float32, MemoryRegion.shared_hbm)
        with pytest.raises(ResourceLimitError, match="allocation budget exceeded"):
            allocate((1024, 1024), np.float32, MemoryRegion.shared_hbm)


def test_one_dimensional_on_chip_tensor_is_refused():
    with context.session(), pytest.raises(HardwareLimitError, match="at least 2-D"):
        allocate((128,), np.float32)


def test_explicitly_placed_tensors_count_their_address_ranges():
    import nki_studio.sim.language as nl

    with context.session() as ctx:
        mem = ctx.cores[0].memory
        a = nl.ndarray((128, 1024), nl.float32, address=(0, 0))
        b = nl.ndarray((128, 1024), nl.float32, address=(0, 0))  # reuses a's bytes (allocator libraries do)
        c = nl.ndarray((128, 512), nl.float32, address=(0, 2048))
        assert mem.used["sbuf"] == 4096
        loose = nl.ndarray((128, 256), nl.float32)
        assert mem.used["sbuf"] == 4096 + 1024
        with pytest.raises(HardwareLimitError, match="placed at address"):
            nl.ndarray((128, 1024), nl.float32, address=(0, 224 * 1024 - 100))
        assert (a, b, c, loose) and mem.used["sbuf"] == 5120
