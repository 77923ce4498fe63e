"""migrate.spmd_grids: a kernel launched on a multi-axis legacy grid loops over it (source in, source out), and
the grids it cannot carry over stay listed."""

from __future__ import annotations

import textwrap

import pytest
from nki_studio.migrate.rewrite import migrate_source
from nki_studio.migrate.spmd_grids import launch_grids

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
        (("rows = a.shape[0] // 128", "rows = ROWS"), "an extent from a module constant"),
        (("return scale[", "scale[2, 2](a, y=b)\n    return scale["), "two launches that disagree"),
        (("    return out\n", "    return t\n"), "a per-program tile returned"),
        (("r = nl.program_id(0) * 128", "r = helper() * 128"), "a grid read in a helper"),
    ],
)
def test_grids_the_rewrite_cannot_carry_over_stay_listed(change: tuple[str, str], why: str) -> None:
    helper = "\n\ndef helper():\n    return nl.program_id(0)\n"
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
