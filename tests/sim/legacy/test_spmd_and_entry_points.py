"""Legacy SPMD grids, block dimensions, ``loop_reduce`` and entry points (``baremetal``, ``simulate_kernel``,
``benchmark``, ``nki_jit``, ``ncc`` allocators), vs NumPy."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest
from nki_studio.sim.errors import SimulationError

GRID_ADD = """
import neuronxcc.nki.compiler as ncc
from neuronxcc.nki import baremetal, benchmark, simulate_kernel  # imported, partly unused: must not stop a run
from torch_neuronx import nki_jit


@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.program_id(0) * 32 + nl.arange(32)[:, None]
    i_f = nl.program_id(axis=1) * 16 + nl.arange(16)[None, :]
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]) + nl.load(b[i_p, i_f]))
    return out


def launch(a, b):
    return add_kernel[a.shape[0] // 32, a.shape[1] // 16](a, b)


def launch_sharded(a, b):
    return add_kernel[nl.spmd_dim(a.shape[0] // 64, nl.nc(2)), a.shape[1] // 16](a, b)


@nki.jit
def grid_shape(x):
    out = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.shared_hbm)
    ids = nisa.iota(nl.arange(4)[None, :] * 0 + nl.num_programs(0) * 100 + nl.num_programs(1) * 10 + nl.program_ndim(), dtype=nl.int32)
    nl.store(out, value=ids)
    return out


def run_grid_shape(x):
    return simulate_kernel(baremetal(grid_shape)[3, 2], x)


@nki_jit
@ncc.skip_middle_end_transformations
def blocks_sum(x):
    # x: (B*128, F); blocks of a par_dim tile in a mod_alloc'd buffer, summed with loop_reduce.
    out = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    nb = x.shape[0] // 128
    tiles = nl.ndarray((nb, nl.par_dim(128), x.shape[1]), dtype=nl.float32,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(nb,)))
    i_p, i_f = nl.mgrid[0:128, 0:x.shape[1]]
    for b in nl.affine_range(nb):
        tiles[b, i_p, i_f] = nl.load(x[b * 128 + i_p, i_f])
    for b in nl.sequential_range(nb):
        total = nl.loop_reduce(tiles[b], op=np.add, loop_indices=[b], dtype=nl.float32)
    nl.store(out, value=total)
    return out


def run_blocks(x):
    return baremetal(blocks_sum)(x)


def run_benchmark(x):
    bench = benchmark(warmup=2, iters=3)(blocks_sum)
    bench(x)
    return bench.benchmark_result.nc_latency.get_latency_percentile(50)
"""


def test_two_dimensional_grid_with_program_ids(legacy_call):
    rng = np.random.default_rng(6)
    a, b = rng.random((96, 48), np.float32), rng.random((96, 48), np.float32)
    np.testing.assert_array_equal(legacy_call(GRID_ADD, "launch", a, b), a + b)
    np.testing.assert_array_equal(legacy_call(GRID_ADD, "launch_sharded", a[:64], b[:64]), a[:64] + b[:64])


def test_grid_queries_through_baremetal_and_simulate_kernel(legacy_call):
    # num_programs(0) = 3, num_programs(1) = 2, program_ndim() = 2
    assert legacy_call(GRID_ADD, "run_grid_shape", np.zeros(1, np.float32)).tolist() == [[322] * 4]


def test_par_dim_blocks_mod_alloc_and_loop_reduce(legacy_call):
    x = np.random.default_rng(7).random((3 * 128, 40), np.float32)
    expected = x.reshape(3, 128, 40).sum(axis=0)
    np.testing.assert_allclose(legacy_call(GRID_ADD, "run_blocks", x), expected, rtol=1e-6)


def test_simulate_on_the_file_infers_the_legacy_version(legacy):
    x = np.ones((128, 8), np.float32)
    result = legacy(GRID_ADD, x, kernel_name="blocks_sum")
    assert result.report.nki_version == "legacy"
    assert any("neuronxcc.nki" in w for w in result.warnings)


def test_benchmark_runs_the_kernel_but_has_no_device_latency(legacy_call):
    with pytest.raises(SimulationError, match="needs a Neuron device"):
        legacy_call(GRID_ADD, "run_benchmark", np.ones((128, 8), np.float32))


def test_mod_alloc_rotates_blocks_over_its_tiles(legacy):
    # 4 blocks over num_free_tiles=(2,): block 2 is block 0's tile, so reading block 0 after writing block 2 sees
    # block 2's values; the SBUF peak holds 2 tiles, not 4.
    source = """
    import neuronxcc.nki.compiler as ncc

    @nki.jit
    def rotate(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        blocks = nl.ndarray((4, nl.par_dim(128), 64), dtype=nl.float32,
                            buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
        blocks[0] = nl.load(x[0:128, :])
        blocks[2] = nl.load(x[128:256, :])
        nl.store(out, value=nl.copy(blocks[0]))
        return out
    """
    x = np.random.default_rng(13).random((256, 64), np.float32)
    result = legacy(source, x)
    np.testing.assert_array_equal(result.outputs[0], x[128:256])
    assert (
        result.report.sbuf is not None and result.report.sbuf.peak_bytes <= 3 * 64 * 4
    )  # 2 rotating tiles + copy


def test_launch_inputs_are_offered_to_watchers_before_the_run(legacy_call, tmp_path):
    from nki_studio.sim import launch_log

    seen: list[launch_log.LaunchInputs] = []

    def stop(inputs: launch_log.LaunchInputs) -> None:
        seen.append(inputs)
        raise KeyboardInterrupt  # a watcher that wants the inputs only stops the launch

    a = np.zeros((64, 32), np.float32)
    b = np.zeros((64, 32), ml_dtypes.bfloat16)
    with launch_log.watching_inputs(stop), pytest.raises(KeyboardInterrupt):
        legacy_call(GRID_ADD, "launch", a, b)  # a grid launch: the kernel's own file and parameters
    assert [(s.kernel, s.file, s.spec()) for s in seen] == [
        ("add_kernel", str(tmp_path / "legacy_kernel.py"), "a=float32[64,32] b=bfloat16[64,32]")
    ]
    assert launch_log._described(3) == "3" and launch_log._described(True) == "true"
    # a tuple of integers is a shape argument (nki-samples' transpose2d); other tuples are not spec values
    assert launch_log._described((1, 2)) == "(1,2)" and launch_log._described((3,)) == "(3,)"
    # None is a spec value too (nki-samples' flash attention tests pass seed=None)
    assert launch_log._described((1, 0.5)) is None and launch_log._described(None) == "none"
    np.testing.assert_array_equal(legacy_call(GRID_ADD, "launch", a, a), a + a)  # no watcher left: it runs


@dataclasses.dataclass(frozen=True)
class LaunchConfig:
    """A configuration dataclass like nki-samples' FlashConfig (this module stands for the kernel's)."""

    size: int = 2048
    training: bool = True
    dtype_name: str = ""


def test_a_dataclass_argument_is_described_by_the_fields_it_changes():
    from nki_studio.sim import launch_log
    from nki_studio.verify.spec import InstanceSpec, parse_value

    assert launch_log._described(LaunchConfig(), __name__) == "LaunchConfig()"
    text = launch_log._described(LaunchConfig(size=512, training=False), __name__)
    assert text == "LaunchConfig(size=512,training=false)"
    assert parse_value(text) == InstanceSpec("LaunchConfig", (("size", 512), ("training", False)))
    # a string field changed, or a class the kernel's module does not name: left out, as strings are
    assert launch_log._described(LaunchConfig(dtype_name="bfloat16"), __name__) is None
    assert launch_log._described(LaunchConfig(), "some_other_module") is None


GRID_FROM_ARGUMENTS = """
import neuronxcc.nki.compiler as ncc
from nki_studio.sim.legacy.spmd import ArgumentGrid


@nki.jit
def add_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.program_id(0) * 32 + nl.arange(32)[:, None]
    i_f = nl.program_id(1) * 16 + nl.arange(16)[None, :]
    total = nl.load(a[i_p, i_f])
    for i in nl.sequential_range(2, directives=ncc.no_reorder()):
        total = total + nl.load(b[i_p, i_f])
    nl.store(out[i_p, i_f], value=total)
    return out


add_rows = ArgumentGrid(add_rows, lambda a, b: (a.shape[0] // 32, a.shape[1] // 16))
"""


def test_a_grid_computed_from_the_arguments_runs_every_program_and_loop_directives_are_taken(legacy):
    # what migrate's proof runs: the original kernel on the grid its launch site gives
    rng = np.random.default_rng(8)
    a, b = rng.random((64, 48), np.float32), rng.random((64, 48), np.float32)
    result = legacy(GRID_FROM_ARGUMENTS, a, b, kernel_name="add_rows")
    np.testing.assert_array_equal(result.output, a + b + b)
