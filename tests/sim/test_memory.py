"""SBUF/PSUM capacity model (server/sim/memory.py): live ranges from first to last access, peaks, budget."""

import numpy as np
import pytest
from nki_studio.model.targets import Generation, Target
from nki_studio.sim import context
from nki_studio.sim.access import write
from nki_studio.sim.errors import HardwareLimitError, ResourceLimitError
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import NkiTensor, allocate


def use(*tiles: NkiTensor) -> None:
    """One instruction that accesses every tile (they are live together at its stamp)."""
    context.issue("test.use", "vector")
    for t in tiles:
        write(t, 0.0)


def test_usage_counts_free_bytes_per_partition_over_every_view():
    with context.session() as ctx:
        t = allocate((128, 1024), np.float32, name="big")
        use(t[:, 0:8])  # an access through a view is an access of the storage
    mem = ctx.cores[0].memory
    assert mem.peaks["sbuf"].bytes_per_partition == 4096
    assert [a.name for a in mem.peaks["sbuf"].live] == ["big"]


def test_a_tensor_occupies_memory_from_its_first_to_its_last_access():
    with context.session() as ctx:
        a = allocate((128, 1024), np.float32, name="a")
        b = allocate((128, 1024), np.float32, name="b")
        never = allocate((128, 4096), np.float32, name="never")  # noqa: F841 - never accessed: occupies nothing
        use(a)
        use(a, b)  # a's last access: both live
        use(b)
        c = allocate((128, 2048), np.float32, name="c")
        use(b, c)  # a is still referenced but no longer used: free
    peak = ctx.cores[0].memory.peaks["sbuf"]
    assert peak.bytes_per_partition == 4096 + 8192
    assert [x.name for x in peak.live] == ["b", "c"]


def test_tiles_python_keeps_but_no_longer_uses_are_free():
    with context.session() as ctx:
        kept = []
        for _ in range(10):
            kept.append(allocate((128, 512), np.float32))
            use(kept[-1])
    assert ctx.cores[0].memory.peaks["sbuf"].bytes_per_partition == 2048


def test_sbuf_overflow_names_the_line_and_what_was_live():
    with pytest.raises(HardwareLimitError) as info, context.session(target=Target(Generation.GEN3)):
        keep = [allocate((128, 16 * 1024), np.float32, name=f"t{i}") for i in range(3)]
        keep.append(allocate((128, 16 * 1024), np.float32, name="one_too_many"))
        use(*keep)  # checked once the live ranges are complete, at the line of the tensor that went over
    msg = str(info.value)
    with open(__file__) as source:
        line = next(i for i, text in enumerate(source, 1) if 'name="one_too_many"))' in text)
    assert (info.value.file, info.value.line) == (__file__, line)
    assert "SBUF capacity exceeded" in msg and "229376" in msg and "t0 [128, 16384] float32" in msg


def test_psum_is_16_kib_per_partition_and_warn_mode_continues():
    with context.session(capacity="warn") as ctx:
        tiles = [allocate((128, 512), np.float32, MemoryRegion.psum) for _ in range(9)]
        use(*tiles)
    assert ctx.cores[0].memory.warnings and "PSUM capacity exceeded" in ctx.cores[0].memory.warnings[0]
    assert ctx.cores[0].memory.peaks["psum"].bytes_per_partition == 9 * 2048


def test_capacity_depends_on_generation():
    with pytest.raises(HardwareLimitError), context.session(target=Target(Generation.GEN2)):
        use(allocate((128, 200 * 1024), np.uint8))
    with context.session(target=Target(Generation.GEN4)):
        use(allocate((128, 200 * 1024), np.uint8))


def test_low_precision_tensors_count_their_own_size_in_float32_mode():
    with context.session(precise=False) as ctx:
        t = allocate((128, 100), "bfloat16")
        assert t.storage.data.dtype == np.float32
        use(t)
    assert ctx.cores[0].memory.peaks["sbuf"].bytes_per_partition == 200


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
        a = nl.ndarray((128, 1024), nl.float32, address=(0, 0))
        b = nl.ndarray((128, 1024), nl.float32, address=(0, 0))  # reuses a's bytes (allocator libraries do)
        c = nl.ndarray((128, 512), nl.float32, address=(0, 2048))
        use(a, b, c)
        with pytest.raises(HardwareLimitError, match="placed at address"):  # at creation: a static fact
            nl.ndarray((128, 1024), nl.float32, address=(0, 224 * 1024 - 100))
        loose = nl.ndarray((128, 256), nl.float32)
        use(a, b, c, loose)
    assert ctx.cores[0].memory.peaks["sbuf"].bytes_per_partition == 4096 + 1024
