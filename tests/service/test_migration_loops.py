"""``service.migration`` on loops: a kernel launched on a multi-axis legacy grid (the original simulated on the grid
its launch site gives, the migrated kernel as 0.7 launches it: once, looping over the grid itself), and a loop under
a ``no_reorder`` directive."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nki_studio.protocol.migration import MigrationResult
from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

# Every program writes its own block with values that depend on its grid point: a proof that ran the original as
# one program (0, 0) would leave the other blocks unwritten and differ from the migrated loops.
GRID = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate x=float32[256,192] y=float32[256,192]
@nki.jit
def scale(x, y):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0) * 128
    c = nl.program_id(axis=1) * 64
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(x[r + i_p, c + i_f])
    u = nl.load(y[r + i_p, c + i_f])
    nl.store(out[r + i_p, c + i_f], value=t * (nl.program_id(1) + 1) + u * nl.num_programs(1) + nl.program_id(0))
    return out


def launch(a, b):
    rows = a.shape[0] // 128
    return scale[rows, a.shape[1] // 64](a, b)
"""


# Launched only by another file (a unit test's ``blocks[2, 3](x)``): the migrated kernel takes its grid extents as
# parameters, which the inputs give; the original is launched on that grid. Its helper reads the grid point: it
# takes it as a parameter.
UNLAUNCHED_GRID = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def blocks(x, training=True):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    if training:
        twice = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    else:
        twice = None
    assert nl.program_ndim() == 2, f"expected a 2-axis grid, got {nl.program_ndim()}"
    r = nl.program_id(0) * 128
    c = column(64)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(x[r + i_p, c + i_f])
    u = t * (nl.program_id(1) + 1) + nl.program_id(0) * nl.num_programs(1)
    nl.store(out[r + i_p, c + i_f], value=u)
    if training:
        nl.store(twice[r + i_p, c + i_f], value=u * 2)
    if training:
        return out, twice
    return out


def column(width):
    return nl.program_id(axis=1) * width
"""


NO_REORDER = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[4,128,64]
@nki.jit
def running_sum(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(4, directives=nki.compiler.no_reorder()):
        acc[...] = acc * 0.5 + nl.load(a[i])
    nl.store(out, value=acc)
    return out
"""


def test_a_two_axis_grid_kernel_is_proven_against_its_grid_launch(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(GRID)
    assert [(p["kernel"], p["equivalent"]) for p in result["proofs"]] == [("scale", True)]
    assert "program_id" not in result["migrated"] and "scale(a, b)" in result["migrated"]


def test_a_kernel_launched_elsewhere_is_proven_on_the_grid_its_inputs_give(
    tmp_path: Path, prove_migration: Callable[..., MigrationResult]
) -> None:
    result = prove_migration(UNLAUNCHED_GRID, inputs="x=float32[256,192] num_programs_0=2 num_programs_1=3")
    assert [(p["kernel"], p["equivalent"]) for p in result["proofs"]] == [("blocks", True)]
    assert "def blocks(x, training=True, *, num_programs_0, num_programs_1):" in result["migrated"]
    assert "def column(width, *, pid_1):" in result["migrated"]
    # without the grid the migrated kernel has no inputs: nothing is claimed
    unproven = migrate(
        str(tmp_path / "kernel.py"), Settings(trusted_workspace=True), inputs="x=float32[256,192]"
    )
    assert unproven["status"] == "not_proven" and not unproven["proofs"]


def test_a_loop_under_no_reorder_is_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(NO_REORDER)
    assert "with nl.no_reorder():" in result["migrated"] and "range(4)" in result["migrated"]


# a multi-line iterator under a multi_buffer directive (nki-samples' rmsnorm_quant has one), a tile allocated per
# iteration
MULTI_BUFFER = """\
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[4,128,64]
@nki.jit
def buffered_sum(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(
        4, directives=ncc.multi_buffer(2)
    ):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        t[...] = nl.load(a[i]) * 2.0
        acc[...] = acc + t
    nl.store(out, value=acc)
    return out
"""


def test_a_loop_under_multi_buffer_is_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(MULTI_BUFFER)
    assert "multi_buffer" not in result["migrated"] and "for i in range(4):" in result["migrated"]
