"""Legacy PSUM block tiles the compiler allocates itself become lists of tiles (``migrate.block_dims``): each
block stays an allocation of its own, as the legacy compiler allocated it, where the folded tensor would be one
allocation larger than PSUM."""

from __future__ import annotations

import textwrap

from nki_studio.migrate.rewrite import Migration, migrate_source

LEGACY = (
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n\n\n"
)


def migrate(body: str) -> Migration:
    return migrate_source(LEGACY + textwrap.dedent(body))


def test_a_psum_block_tile_becomes_a_list_of_tiles() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, b, out):
            acc = nl.ndarray((4, 2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
            sa = nl.load(a)
            sb = nl.load(b)
            for i in nl.affine_range(4):
                for j in nl.affine_range(2):
                    acc[i, j, :, :] = nisa.nc_matmul(sa, sb)
                    nl.store(out[i, j], value=nl.copy(acc[i, j]))
            return out
        """
    )
    assert not m.manual and "par_dim" not in m.text
    assert (
        "acc = [[nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(2)] for _ in range(4)]"
        in m.text
    )
    assert "nisa.nc_matmul(dst=acc[i][j][:, :], stationary=sa, moving=sb)" in m.text
    assert "acc[i][j]" in m.text.split("nl.store(", 1)[1]


def test_psum_block_tiles_sliced_over_blocks_sbuf_tiles_and_modular_ones_fold() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out):
            sliced = nl.ndarray((4, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.psum)
            kept = nl.ndarray((4, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
            for i in nl.affine_range(4):
                kept[i] = nl.load(a)
            sliced[0:4] = nl.copy(kept[0])
            nl.store(out, value=nl.copy(sliced[1]))
            return out
        """
    )
    assert "sliced = nl.ndarray((128, 4, 64), dtype=nl.float32, buffer=nl.psum)" in m.text
    assert "kept = nl.ndarray((128, 4, 64), dtype=nl.float32, buffer=nl.sbuf)" in m.text
    assert "for _ in range" not in m.text
