"""Legacy index tiles in the value interpreter (``model.index_tiles``): the shape an ``nl.arange``/``nl.mgrid``
access selects, seen by the partition and capacity rules in legacy ``neuronxcc.nki`` code."""

from __future__ import annotations

import pytest
from nki_studio.core.findings import Finding
from nki_studio.model.index_tiles import IndexTile, arange, broadcast, indexed_shape, mgrid, tile_subscript
from nki_studio.model.targets import LEGACY, Target
from nki_studio.model.values import Const, Seq, SliceVal, const_int
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig

LEGACY_HEADER = "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"
FULL = SliceVal(Const(None), Const(None), Const(1))


def _legacy(body: str) -> list[Finding]:
    code = (
        LEGACY_HEADER + "@nki.jit\ndef kernel(a):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    )
    config = LintConfig(target=Target(nki_version=LEGACY), nki_version_set=True, select=("NKI3", "NKI4"))
    return lint_source(code, "/nonexistent/kernel.py", config)


def _ints(shape: tuple[object, ...] | None) -> tuple[int | None, ...] | None:
    return None if shape is None else tuple(const_int(d) for d in shape)  # type: ignore[arg-type]


def test_arange_and_new_axes() -> None:
    vector = arange([Const(4), Const(260)])
    assert isinstance(vector, IndexTile) and _ints(vector.shape) == (256,)
    column = tile_subscript(vector, Seq([FULL, Const(None)]))
    row = tile_subscript(vector, Seq([Const(None), FULL]))
    assert isinstance(column, IndexTile) and _ints(column.shape) == (256, 1)
    assert isinstance(row, IndexTile) and _ints(row.shape) == (1, 256)


def test_mgrid_tiles_and_broadcast() -> None:
    grid = mgrid(Seq([SliceVal(Const(0), Const(128), Const(1)), SliceVal(Const(0), Const(512), Const(1))]))
    assert isinstance(grid, Seq)
    shapes = [_ints(t.shape) for t in grid.items if isinstance(t, IndexTile)]
    assert shapes == [(128, 1), (1, 512)]
    assert _ints(broadcast([(Const(128), Const(1)), (Const(1), Const(512))])) == (128, 512)
    assert broadcast([(Const(128), Const(1)), (Const(64), Const(1))]) is None


def test_indexed_shape_follows_numpy_advanced_indexing() -> None:
    p, f = IndexTile((Const(128), Const(1))), IndexTile((Const(1), Const(512)))
    assert _ints(indexed_shape((Const(4), Const(128), Const(512)), [Const(2), p, f])) == (128, 512)
    assert _ints(indexed_shape(None, [p, f])) == (128, 512)
    assert (
        indexed_shape(None, [IndexTile((Const(128),)), f]) is None
    )  # 1-D arange: err_1d_arange_not_supported
    assert indexed_shape(None, [p, FULL]) is None  # slices mixed in: not modelled


def test_arange_partition_tile_over_128_is_reported() -> None:
    found = _legacy(
        "i_p = nl.arange(256)[:, None]\ni_f = nl.arange(512)[None, :]\nt = nl.load(a[i_p, i_f])\nreturn t"
    )
    assert [(f.code, f.span.line) for f in found] == [("NKI301", 10)]
    assert "(256, 512)" in found[0].message


@pytest.mark.parametrize("offset", ["k * 128 + i_p", "i_p + 128 * k", "nl.program_id(0) * 128 + i_p"])
def test_index_arithmetic_keeps_the_tile_shape(offset: str) -> None:
    ok = _legacy(
        f"i_p, i_f = nl.mgrid[0:128, 0:512]\nfor k in nl.affine_range(2):\n    t = nl.load(a[{offset}, i_f])"
    )
    assert ok == []
    bad = _legacy(
        f"i_p, i_f = nl.mgrid[0:130, 0:512]\nfor k in nl.affine_range(2):\n    t = nl.load(a[{offset}, i_f])"
    )
    assert [f.code for f in bad] == ["NKI301"]


def test_grid_fields_and_block_par_dim() -> None:
    found = _legacy("g = nl.mgrid[0:192, 0:64]\nt = nl.load(a[g.p, g.x])\nreturn t")
    assert [f.code for f in found] == ["NKI301"]
    blocks = _legacy("t = nl.ndarray((4, nl.par_dim(256), 64), dtype=nl.float32, buffer=nl.sbuf)\nreturn a")
    assert [f.code for f in blocks] == ["NKI301"]


def test_psum_blocks_are_one_tile_each() -> None:
    one_bank = "acc = nl.zeros((8, nl.par_dim(128), 512), dtype=np.float32, buffer=nl.psum)\nreturn a"
    assert _legacy(one_bank) == []
    two_banks = "acc = nl.zeros((8, nl.par_dim(128), 1024), dtype=np.float32, buffer=nl.psum)\nreturn a"
    assert "NKI403" in [f.code for f in _legacy(two_banks)]


def test_block_tensor_blocks_are_tiles() -> None:
    body = (
        "t = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)\n"
        "for b in nl.affine_range(4):\n"
        "    i_p, i_f = nl.mgrid[0:128, 0:512]\n"
        "    u = nl.exp(t[b, i_p, i_f])\n"
        "    v = nl.exp(t[b])\n"
        "return a"
    )
    assert _legacy(body) == []
    wide = body.replace("nl.mgrid[0:128, 0:512]", "nl.mgrid[0:256, 0:512]")
    found = _legacy(wide)  # the block is (128, 512): 256 index rows do not fit (the access and exp's result)
    assert {f.code for f in found} == {"NKI301"} and {f.span.line for f in found} == {11}


@pytest.mark.parametrize(
    ("mask", "reported"),
    [
        ("i_p < 128", None),  # the unmasked part spans 128 partitions
        ("i_p <= 127", None),
        ("128 > i_p", None),
        ("(i_p < 128) & (i_f < 256)", None),
        ("i_p < 200", "(200, 512)"),
        ("i_p >= 100", "(156, 512)"),
        ("i_f < 256", "(256, 256)"),  # a free-dim mask leaves the partitions
        ("i_p < n", "(256, 512)"),  # not a known bound: the whole tile
    ],
)
def test_a_masked_access_counts_only_its_unmasked_part(mask: str, reported: str | None) -> None:
    found = _legacy(
        "n = a.shape[0]\ni_p = nl.arange(256)[:, None]\ni_f = nl.arange(512)[None, :]\n"
        f"t = nl.load(a[i_p, i_f], mask=({mask}))\nnl.store(a[i_p, i_f], value=t, mask=({mask}))\nreturn a"
    )
    partition = [f for f in found if f.code == "NKI301"]
    if reported is None:
        assert partition == []
    else:
        assert partition and all(reported in f.message for f in partition)


def test_a_masked_offset_tile_keeps_what_its_values_allow() -> None:
    # i_p + 64 runs 64..319: i_p + 64 < 192 keeps 128 of them.
    ok = _legacy(
        "i_p, i_f = nl.mgrid[0:256, 0:64]\nt = nl.load(a[i_p + 64, i_f], mask=(i_p + 64 < 192))\nreturn t"
    )
    assert [f.code for f in ok] == []
    bad = _legacy(
        "i_p, i_f = nl.mgrid[0:256, 0:64]\nt = nl.load(a[i_p + 64, i_f], mask=(i_p + 64 < 256))\nreturn t"
    )
    assert [f.code for f in bad] == ["NKI301"] and "(192, 64)" in bad[0].message


def test_a_masked_free_range_counts_only_its_bytes_against_sbuf() -> None:
    # 128 x 65536 float32 = 256 KiB per partition when whole, over trn2's 224 KiB; masked to 32768: 128 KiB.
    body = (
        "i_p = nl.arange(128)[:, None]\ni_f = nl.arange(65536)[None, :]\n"
        "t = nl.load(a[i_p, i_f], dtype=nl.float32{mask})\nnl.store(a[i_p, i_f], value=t{mask})\nreturn a"
    )
    assert "NKI401" in [f.code for f in _legacy(body.format(mask=""))]
    assert "NKI401" not in [f.code for f in _legacy(body.format(mask=", mask=(i_f < 32768)"))]
