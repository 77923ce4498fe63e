"""migrate.spmd_grids: a kernel launched on a multi-axis legacy grid loops over it (source in, source out), and
the grids it cannot carry over stay listed."""

from __future__ import annotations

import textwrap

import pytest
from nki_studio.migrate.rewrite import migrate_source
from nki_studio.migrate.spmd_grids import grid_parameters, launch_grids

LEGACY = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"
CURRENT = "import nki\nimport nki.language as nl\n\n\n"

GRID = """\
@nki.jit
def scale(x, y):
    \"\"\"x * (column block + 1) + row block, one program per 128 x 64 block.\"\"\"
    # one output every program writes
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0) * 128
    c = nl.program_id(axis=1) * 64
    t = nl.load(x[r:r + 128, c:c + 64])
    nl.store(out[r:r + 128, c:c + 64], value=t * (nl.program_id(1) + 1) + nl.program_id(0) * nl.num_programs(1))
    return out


def launch(a, b):
    rows = a.shape[0] // 128
    return scale[rows, a.shape[1] // 64](a, y=b)
"""


def test_a_two_axis_grid_becomes_loops_in_the_kernel_and_its_launch_drops_the_bracket() -> None:
    m = migrate_source(LEGACY + GRID)
    assert not m.manual
    assert m.text == CURRENT + textwrap.dedent(
        """\
        @nki.jit
        def scale(x, y):
            \"\"\"x * (column block + 1) + row block, one program per 128 x 64 block.\"\"\"
            # one output every program writes
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            for pid_0 in range(x.shape[0] // 128):  # was the launch grid scale[rows, a.shape[1] // 64]: one iteration per program
                for pid_1 in range(x.shape[1] // 64):
                    r = pid_0 * 128
                    c = pid_1 * 64
                    t = nl.load(x[r:r + 128, c:c + 64])
                    nl.store(out[r:r + 128, c:c + 64], value=nl.add(nl.multiply(t, pid_1 + 1), pid_0 * (x.shape[1] // 64)))
            return out


        def launch(a, b):
            rows = a.shape[0] // 128
            return scale(a, y=b)
        """
    )
    assert launch_grids(LEGACY + GRID) == {"scale": (("x", "y"), ("x.shape[0] // 128", "x.shape[1] // 64"))}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("    return out\n", "    return t\n"), "a per-program tile returned"),
        (("r = nl.program_id(0) * 128", "r = helper() * 128"), "a grid read in a helper others call too"),
    ],
)
def test_grids_the_rewrite_cannot_carry_over_stay_listed(change: tuple[str, str], why: str) -> None:
    helper = "\n\ndef helper():\n    return nl.program_id(0)\n\n\ndef other():\n    return helper()\n"
    m = migrate_source(LEGACY + GRID.replace(*change) + helper)
    listed = {s.construct for s in m.manual}
    assert "SPMD grid" in listed and "nl.program_id axis > 0" in listed, why
    assert "for pid_0" not in m.text


def test_a_local_tile_named_like_a_kernel_is_not_a_launch() -> None:
    source = (
        GRID
        + "\n\n@nki.jit\ndef t(a):\n    return a\n\n\ndef use(x):\n    t = nl.load(x)\n    return t[:, 0]\n"
    )
    assert "SPMD grid" not in {s.construct for s in migrate_source(LEGACY + source).manual}


def test_launches_whose_extents_are_the_callers_own_pass_them_as_parameters() -> None:
    # a module constant, and two launches that disagree: no extent in the kernel's parameters, so it takes them
    source = GRID.replace("rows = a.shape[0] // 128", "rows = ROWS").replace(
        "return scale[", "scale[2, 2](a, y=b)\n    return scale["
    )
    m = migrate_source(LEGACY + source)
    assert not m.manual
    assert "def scale(x, y, *, num_programs_0, num_programs_1):" in m.text
    assert "for pid_0 in range(num_programs_0):" in m.text and "pid_0 * num_programs_1" in m.text
    assert "    scale(a, y=b, num_programs_0=2, num_programs_1=2)\n" in m.text
    assert "return scale(a, y=b, num_programs_0=rows, num_programs_1=a.shape[1] // 64)" in m.text
    assert launch_grids(LEGACY + source) == {}
    assert grid_parameters(LEGACY + source) == {"scale": ("num_programs_0", "num_programs_1")}


# Launched only elsewhere (a unit test's ``blocks[b, h](...)``), with what flash attention's kernels do around the
# grid: a defaulted parameter, an output allocated only when training, a grid-rank assert, returns under ``if``.
UNLAUNCHED = """\
@nki.jit
def blocks(x, training=True):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    if training:
        twice = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    else:
        twice = None
    assert nl.program_ndim() == 2, "a 2-axis grid"
    r = nl.program_id(0) * 128
    c = nl.program_id(axis=1) * 64
    t = nl.load(x[r:r + 128, c:c + 64])
    nl.store(out[r:r + 128, c:c + 64], value=t)
    scale = 1.0 + nl.num_programs(1)  # the same in every program: computed once
    if training:
        nl.store(twice[r:r + 128, c:c + 64], value=t * scale)
    if training:
        return out, twice
    return out
"""


def test_a_kernel_launched_only_elsewhere_takes_its_grid_extents_as_parameters() -> None:
    m = migrate_source(LEGACY + UNLAUNCHED)
    assert not m.manual
    assert m.text == CURRENT + textwrap.dedent(
        """\
        @nki.jit
        def blocks(x, training=True, *, num_programs_0, num_programs_1):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            if training:
                twice = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            else:
                twice = None
            assert 2 == 2, "a 2-axis grid"
            scale = 1.0 + num_programs_1  # the same in every program: computed once
            for pid_0 in range(num_programs_0):  # was the launch grid [num_programs_0, num_programs_1] (callers: `blocks[e0, e1](...)` must become `blocks(..., num_programs_0=e0, num_programs_1=e1)`): one iteration per program
                for pid_1 in range(num_programs_1):
                    r = pid_0 * 128
                    c = pid_1 * 64
                    t = nl.load(x[r:r + 128, c:c + 64])
                    nl.store(out[r:r + 128, c:c + 64], value=t)
                    if training:
                        nl.store(twice[r:r + 128, c:c + 64], value=nl.multiply(t, scale))
            if training:
                return out, twice
            return out
        """
    )
    detail = next(c.detail for c in m.changes if "takes its grid extents" in c.detail)
    assert "`blocks[e0, e1](...)` must become `blocks(..., num_programs_0=e0, num_programs_1=e1)`" in detail


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("    scale = 1.0", "    twice = t\n    scale = 1.0"), "a name returned that a program rebinds"),
        (("out = nl.ndarray(x.shape", "out = nl.ndarray(t.shape"), "a shared output sized per program"),
        (("    return out\n", "    return t\n"), "a per-program tile returned"),
    ],
)
def test_unlaunched_grids_the_rewrite_cannot_carry_over_stay_listed(
    change: tuple[str, str], why: str
) -> None:
    m = migrate_source(LEGACY + UNLAUNCHED.replace(*change))
    assert "nl.program_id axis > 0" in {s.construct for s in m.manual}, why
    assert "for pid_0" not in m.text and "num_programs_0" not in m.text


def test_a_helper_reading_the_grid_point_takes_it_as_parameters() -> None:
    # flash attention's backward core reads nl.program_id(0/1) of the kernel calling it
    helper = "\n\ndef column(width):\n    assert nl.program_ndim() == 2\n    return nl.program_id(axis=1) * width\n"
    m = migrate_source(
        LEGACY + UNLAUNCHED.replace("c = nl.program_id(axis=1) * 64", "c = column(64)") + helper
    )
    assert not m.manual
    assert "            c = column(64, pid_1=pid_1)\n" in m.text
    assert "def column(width, *, pid_1):\n    assert 2 == 2\n    return pid_1 * width\n" in m.text
