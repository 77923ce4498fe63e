"""The rewrite of value-returning ISA calls used inside expressions, nl.mgrid grids and nl.finfo (source in,
source out; the proofs are in tests/service/test_migration_values.py)."""

from __future__ import annotations

import textwrap

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.model.targets import Generation
from test_rewrite import body_of, migrate


def test_a_value_under_a_condition_stays_listed_and_one_used_once_is_made_first() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, flag):
            x = nl.load(a)
            y = nl.exp(nisa.nc_transpose(x)) if flag else x
            z = nl.exp(nisa.tensor_reduce(nl.add, nisa.nc_transpose(x), axis=(1,)))
            return y, z
        """
    )
    body = body_of(m).splitlines()
    assert body[3] == "    y = nl.exp(nisa.nc_transpose(x)) if flag else x"
    # the inner call first (its result is the outer one's operand), then the outer one, on the same line
    assert body[4].startswith("    nc_transpose_value = nl.ndarray((x.shape[1], x.shape[0]),")
    assert body[4].endswith(
        "nisa.tensor_reduce(dst=tensor_reduce_value, op=nl.add, data=nc_transpose_value, axis=(1,)); "
        "z = nl.exp(tensor_reduce_value)"
    )
    assert [(s.line, s.construct) for s in m.manual] == [(9, "nisa.nc_transpose value")]


def test_a_grid_with_an_axis_no_index_uses_and_finfo_without_numpy_are_listed() -> None:
    m = migrate_source(
        textwrap.dedent(
            """\
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl


            @nki.jit
            def k(a):
                t = nl.load(a)
                g = nl.mgrid[0:128, 0:4, 0:2]
                low = nl.finfo(t.dtype).min
                return nl.copy(t[g.p, g.x, 0])
            """
        )
    )
    assert "nl.mgrid[0:128, 0:4, 0:2]" in m.text and "t[g.p, g.x, 0]" in m.text
    assert {(s.line, s.construct) for s in m.manual} == {(8, "nl.mgrid"), (9, "nl.finfo")}


def test_fp32_min_becomes_its_literal_and_lazy_initialization_goes() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            t = nl.full((128, 4), fill_value=nl.fp32.min, dtype=nl.float32, lazy_initialization=False)
            low = 2 * nisa.fp32.min
            return t
        """
    )
    body = body_of(m).splitlines()
    assert body[2] == "    t = nl.full((128, 4), fill_value=-3.4028235e+38, dtype=nl.float32)"
    assert body[3] == "    low = 2 * (-3.4028235e+38)"
    assert [(c.line, c.construct) for c in m.changes if c.construct == "nl.fp32.min"] == [
        (8, "nl.fp32.min"),
        (9, "nl.fp32.min"),
    ]
    assert not m.manual and ("lazy_initialization=", 8) in {(c.construct, c.line) for c in m.changes}


def test_reductions_over_free_axes_with_a_gap_are_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            t = nl.load(a)
            i0, i1, i2, i3 = nl.mgrid[0:128, 0:4, 0:2, 0:8]
            pooled = nl.sum(t[i0, 2 * i1 + i2, i3], axis=[1, 3])
            r = nisa.tensor_reduce(nl.add, t, (1, 3))
            s = nl.max(t, axis=[2, 3])
            kept = nl.sum(t[i0, 2 * i1 + i2, i3], axis=[1, 3], keepdims=True)
            named = nl.min(t, axis=(1, 3))
            return pooled, r, s, kept, named
        """
    )
    # the index tiles still become an access pattern; a grid view of known rank has its reduced dims permuted
    # last, the other axes are the user's to lay out (keepdims would keep them permuted; a name's rank is unknown)
    assert "t.ap(pattern=" in m.text
    assert ".permute((0, 2, 1, 3)), axis=[2, 3])" in m.text
    assert [(s.line, s.construct) for s in m.manual] == [
        (11, "nisa.tensor_reduce axes not contiguous"),
        (11, "nisa.tensor_reduce value"),  # no result shape for such axes either
        (13, "nl.sum axes not contiguous"),
        (14, "nl.min axes not contiguous"),
    ]


def test_a_legacy_perf_mode_string_becomes_the_enum_member_and_a_simulated_platform_target_goes() -> None:
    m = migrate_source(
        textwrap.dedent(
            """\
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa


            @nki.jit(platform_target="trn2")
            def k(a, b, acc):
                i_k, i_t, i_m = nl.mgrid[0:128, 0:2, 0:128]
                x = nl.load(a[i_k, i_t * 128 + i_m])
                i_k, i_t, i_n = nl.mgrid[0:128, 0:2, 0:512]
                y = nl.load(b[i_k, i_t * 512 + i_n])
                nisa.nc_matmul(x, y, perf_mode="double_row_gen3", dst=acc)
            """
        ),
        platform=Generation.GEN3,
    )
    assert m.text.splitlines()[5] == "@nki.jit"
    assert "perf_mode=nisa.matmul_perf_mode.double_row" in m.text
    # i_k is bound twice to the same grid axis: either binding reads the same indices, both go
    assert "a.ap(pattern=[[a.shape[1], 128], [128, 2], [1, 128]])" in m.text and "mgrid" not in m.text
    assert not m.manual
    other = migrate_source(m.original, platform=Generation.GEN2)
    assert [s.construct for s in other.manual] == ["platform_target="]


def test_a_value_written_in_a_nested_function_keeps_the_enclosing_allocations_dtype() -> None:
    # the attention tutorial's v8a-v11 write their closures' tiles this way (a regression the corpus run caught)
    m = migrate(
        """\
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)

            def fill(i):
                t[:, :] = nisa.tensor_copy(a, dtype=nl.bfloat16)

            fill(0)
        """
    )
    assert "nisa.tensor_copy(dst=t[:, :], src=a)" in m.text and not m.manual
