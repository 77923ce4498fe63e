"""migrate.operators on a function of the file whose parameters are tiles because every call of it passes tiles
(nki-samples' rotary core): its tile operators become ``nl.*`` calls, and the kernel calling it is proven."""

from __future__ import annotations

from collections.abc import Callable

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.protocol.migration import MigrationResult

LEGACY = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"

# Our own legacy kernel: the helper combines the tiles its caller loaded with operators, a number among them, and
# passes one of them on to a second helper (a chain).
ROTATE = """\
def halves(x_tile, c_tile, s_tile, out_tile):
    n = x_tile.shape[-1]
    out_tile[:, : n // 2] = x_tile[:, : n // 2] * c_tile[:, : n // 2] + (
        -1 * x_tile[:, n // 2 :] * s_tile[:, : n // 2]
    )
    scale(out_tile[:, n // 2 :], x_tile[:, : n // 2] * s_tile[:, n // 2 :])


def scale(dst, part):
    dst[...] = part * 2.0


@nki.jit
def rotate(x, c, s):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        x_tile = nl.load(x[i * 128:(i + 1) * 128, :])
        c_tile = nl.load(c[i * 128:(i + 1) * 128, :])
        s_tile = nl.load(s[i * 128:(i + 1) * 128, :])
        out_tile = nl.ndarray(x_tile.shape, dtype=x_tile.dtype, buffer=nl.sbuf)
        halves(x_tile, c_tile, s_tile, out_tile)
        nl.store(out[i * 128:(i + 1) * 128, :], value=out_tile)
    return out
"""


def test_operators_on_tile_parameters_become_nl_calls() -> None:
    m = migrate_source(LEGACY + ROTATE)
    assert not m.manual
    assert (
        "out_tile[:, : n // 2] = nl.add(nl.multiply(x_tile[:, : n // 2], c_tile[:, : n // 2]), "
        "nl.multiply(nl.multiply(-1, x_tile[:, n // 2 :]), s_tile[:, : n // 2]))"
    ) in m.text
    assert "scale(out_tile[:, n // 2 :], nl.multiply(x_tile[:, : n // 2], s_tile[:, n // 2 :]))" in m.text
    assert "    dst[...] = nl.multiply(part, 2.0)\n" in m.text  # passed on: a tile there too


def test_a_parameter_some_call_passes_a_number_is_not_a_tile() -> None:
    source = LEGACY + ROTATE + "\n\ndef host(a):\n    return scale([0.0], 3.0)\n"
    m = migrate_source(source)
    assert "    dst[...] = part * 2.0\n" in m.text
    assert "nl.multiply(nl.multiply(-1, x_tile[:, n // 2 :])" in m.text  # halves' callers all pass tiles


def test_the_kernel_calling_it_is_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    result = prove_migration(LEGACY + ROTATE, inputs="x=float32[256,64] c=float32[256,64] s=float32[256,64]")
    assert [p["equivalent"] for p in result["proofs"] if p["kernel"] == "rotate"] == [True]
