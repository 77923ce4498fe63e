"""SBUF/PSUM capacity: the program-order peak versus what one instruction needs (server/sim/memory.py).

The kernel below follows the pattern of nki-library's MoE blockwise matmul (bwmm_shard_on_I.py): every matmul
output tile of a projection is accumulated before any is copied out, so in program order 12 PSUM banks' worth
(24 KiB per partition) is live, though each instruction touches at most 2 KiB of PSUM. The library runs on
hardware, so the toolchain does not keep that order (neuronx-cc schedules and allocates after tracing; NKI's
own allocation falls back to it unless ``nki_alloc_fallback=False``): a warning by default, an error with the
fallback off, and still an error when one instruction's operands alone do not fit.
"""

import numpy as np
import pytest
from nki_studio.sim import api
from nki_studio.sim.errors import HardwareLimitError

KERNEL = """
import nki
import nki.isa as nisa
import nki.language as nl
from nki.compiler import CompileConfig

N_TILES = 12  # 12 x [128, 512] float32 = 24 KiB per partition, PSUM holds 16 KiB


def project(x, w):
    out = nl.ndarray((128, N_TILES * 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    w_sb = nl.ndarray((128, N_TILES * 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_sb, src=x)
    nisa.dma_copy(dst=w_sb, src=w)
    acc = []
    for i in range(N_TILES):
        acc.append(nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum))
    for i in range(N_TILES):  # every tile accumulated first ...
        nisa.nc_matmul(dst=acc[i], stationary=w_sb[:, i * 128 : (i + 1) * 128], moving=x_sb)
    res = nl.ndarray((128, N_TILES * 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in range(N_TILES):  # ... then copied out (no dependency keeps the copies after all matmuls)
        nisa.tensor_copy(dst=res[:, i * 512 : (i + 1) * 512], src=acc[i])
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def default_allocation(x, w):
    return project(x, w)


@nki.jit(compile_config=CompileConfig(nki_alloc_fallback=False))
def no_fallback(x, w):
    return project(x, w)


@nki.jit
def one_instruction_too_wide(x):
    out = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.psum)  # 16 KiB: all of PSUM
    b = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.psum)  # and its copy: twice PSUM in one instruction
    nisa.memset(dst=a, value=0.0)
    nisa.tensor_copy(dst=b, src=a)
    res = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=b)
    nisa.dma_copy(dst=out, src=res)
    return out
"""


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "moe_like.py"
    path.write_text(KERNEL)
    return str(path)


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (128, 512)).astype(np.float32)
    w = rng.uniform(-1, 1, (128, 12 * 128)).astype(np.float32)
    return x, w


def _bf16(a):
    import ml_dtypes

    return a.astype(ml_dtypes.bfloat16).astype(np.float32)


def test_a_program_order_peak_the_toolchain_reorders_warns_and_the_kernel_runs(kernel_file):
    x, w = _inputs()
    result = api.simulate(kernel_file, x, w, kernel_name="default_allocation", target="trn2")
    expected = np.concatenate([_bf16(w[:, i * 128 : (i + 1) * 128]).T @ _bf16(x) for i in range(12)], axis=1)
    assert np.allclose(result.output, expected, rtol=1e-3, atol=1e-3)
    notes = [w for w in result.report.warnings if "PSUM capacity exceeded" in w]
    assert len(notes) == 1 and "program order" in notes[0] and "of 16384 bytes" in notes[0]
    assert result.report.psum.peak_bytes == 12 * 2048  # the program-order peak is still reported


def test_with_the_allocation_fallback_off_the_same_peak_is_an_error_at_the_tensor_line(kernel_file):
    x, w = _inputs()
    with pytest.raises(HardwareLimitError) as info:
        api.simulate(kernel_file, x, w, kernel_name="no_fallback", target="trn2")
    assert "PSUM capacity exceeded: 18432 of 16384" in str(info.value)
    assert "nki_alloc_fallback=False" in str(info.value)
    assert (
        info.value.line
        == KERNEL.splitlines().index(
            "        acc.append(nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum))"
        )
        + 1
    )


def test_operands_of_one_instruction_over_capacity_are_still_an_error(kernel_file):
    with pytest.raises(HardwareLimitError) as info:
        api.simulate(kernel_file, np.zeros((128, 4), np.float32), kernel_name="one_instruction_too_wide")
    msg = str(info.value)
    assert "operands of one instruction need 32768 of 16384 bytes" in msg and "PSUM" in msg


def test_nki_alloc_fallback_is_honoured_not_listed_as_ignored():
    from nki_studio.sim.nki_compiler import CompileConfig, ignored_options, surfaces_allocation_oom

    assert surfaces_allocation_oom({"compile_config": CompileConfig(nki_alloc_fallback=False)})
    assert not surfaces_allocation_oom({"compile_config": CompileConfig(nki_alloc_fallback=True)})
    assert not surfaces_allocation_oom({})
    assert ignored_options({"compile_config": CompileConfig(nki_alloc_fallback=False)}) == []


def test_tensors_created_with_contents_are_not_one_instruction():
    from nki_studio.sim import context
    from nki_studio.sim.memory import MemoryRegion
    from nki_studio.sim.tensor import allocate

    # 9 x 2 KiB of PSUM filled at creation: live together in program order (a warning), but no one
    # instruction touches them all, so nothing refuses them ...
    with context.session() as ctx:
        for _ in range(9):
            allocate((128, 512), np.float32, MemoryRegion.psum, fill=0.0)
    assert any("PSUM capacity exceeded" in w for w in ctx.cores[0].memory.warnings)
    # ... while one such tensor over the capacity on its own is still an error.
    with pytest.raises(HardwareLimitError, match="operands of one instruction need 32768 of 16384"):
        with context.session():
            allocate((128, 8192), np.float32, MemoryRegion.psum, fill=0.0)
