"""The rewrite, construct by construct, on our own legacy kernels (source in, source out; no simulation)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from nki_studio.migrate.rewrite import Migration, NotMigratable, migrate_source

ROOT = Path(__file__).resolve().parents[2]
LEGACY = (
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n\n\n"
)
CURRENT = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n\n"


def migrate(body: str) -> Migration:
    return migrate_source(LEGACY + textwrap.dedent(body))


def body_of(m: Migration) -> str:
    assert m.text.startswith(CURRENT)
    return m.text[len(CURRENT) :]


def test_imports_become_the_nki_namespace() -> None:
    m = migrate("@nki.jit\ndef k(a):\n    return a\n")
    assert body_of(m) == "@nki.jit\ndef k(a):\n    return a\n"
    assert [c.construct for c in m.changes] == ["legacy import"] * 3
    assert m.source_version == "legacy" and not m.manual


def test_index_tiles_become_slices_and_their_definitions_go() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out):
            for i in nl.affine_range(2):
                i_p = i * 128 + nl.arange(128)[:, None]  # rows of this tile
                i_f = nl.arange(512)[None, :]
                t = nl.load(a[i_p, i_f])
                nl.store(out[i_p, i_f], value=t)
        """
    )
    assert body_of(m) == textwrap.dedent(
        """\
        @nki.jit
        def k(a, out):
            for i in range(2):
                t = nl.load(a[i * 128:i * 128 + 128, 0:512])
                nl.store(out[i * 128:i * 128 + 128, 0:512], value=t)
        """
    )


def test_mgrid_unpacked_and_as_an_object() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, b, out):
            i_p, i_f = nl.mgrid[0:128, 0:64]
            ix = nl.mgrid[0:128, 2:66]
            t = nl.load(a[i_p, i_f])
            u = nl.load(b[3, ix.p, ix.x])
            nl.store(out[i_p, i_f], value=t)
        """
    )
    assert "t = nl.load(a[0:128, 0:64])" in m.text
    assert "u = nl.load(b[3, 0:128, 2:2 + 64])" in m.text
    assert "mgrid" not in m.text and not m.manual


def test_offset_added_at_the_use_and_arange_with_start() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            i_f = nl.arange(4, 36)[None, :]
            return nl.load(a[nl.arange(64)[:, None], n + i_f])
        """
    )
    assert "nl.load(a[0:64, n + 4:n + 4 + 32])" in m.text


def test_a_transposed_index_tile_becomes_an_access_pattern() -> None:
    # no slice gives a[f, p] at (p, f) (this test listed it before index_patterns took two-dim transposed tiles)
    m = migrate(
        """\
        @nki.jit
        def k(a):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            return nl.load(a[i_f, i_p])
        """
    )
    assert (
        body_of(m) == "@nki.jit\ndef k(a):\n    return nl.load(a.ap(pattern=[[1, 128], [a.shape[1], 64]]))\n"
    )
    assert not m.manual


def test_masks_on_index_tiles_become_bounded_slices() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out, n):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            t = nl.load(a[i_p, i_f], mask=(i_p < n) & (i_f <= 31))
            nl.store(out[i_p, i_f], value=t,
                     mask=(i_p < n))
        """
    )
    assert "t = nl.load(a[0:min(128, n), 0:min(64, 31 + 1)])" in m.text
    assert "nl.store(out[0:min(128, n), 0:64], value=t)" in m.text
    assert not m.manual and "i_p" not in m.text


def test_masked_instructions_slice_their_full_extent_operands_to_the_bound() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, w, out, n):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            w_all = nl.load(w)
            for j in nl.affine_range(2):
                t = nl.load(a[j * 128 + i_p, i_f], mask=(j * 128 + i_p < n))
                u = nl.exp(t)
                v = nl.multiply(u, w_all, mask=(j * 128 + i_p < n))
                nl.store(out[j * 128 + i_p, i_f], value=v, mask=(j * 128 + i_p < n))
                s = nl.add(w_all, w_all, mask=(i_f < 40))
        """
    )
    # u comes from the bounded load (already short); w_all is a full 128-row tile: sliced to the same extent
    assert "v = nl.multiply(u, w_all[0:min(j * 128 + 128, n) - (j * 128)])" in m.text
    assert "nl.store(out[j * 128:min(j * 128 + 128, n), 0:64], value=v)" in m.text
    assert "s = nl.add(w_all[:, 0:min(64, 40)], w_all[:, 0:min(64, 40)])" in m.text
    assert not m.manual and "mask" not in m.text


def test_a_mask_held_in_a_name_is_read_through_it_and_its_definition_goes() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out, n):
            for i in nl.affine_range(2):
                ip = nl.arange(128)[:, None]
                rows = i * 128 + ip
                valid = rows < n
                both = valid & (i < 1)
                t = nl.load(a[rows], mask=valid)
                nl.store(out[rows], value=t, mask=both)
        """
    )
    assert "t = nl.load(a[i * 128:min(i * 128 + 128, n)])" in m.text
    assert "if i < 1: nl.store(out[i * 128:min(i * 128 + 128, n)], value=t)" in m.text
    assert not m.manual and "valid" not in m.text and "both" not in m.text


def test_masks_bound_explicit_slices_on_their_axes() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, b, n):
            i_p = nl.arange(128)[:, None, None] + 64
            i_w = nl.arange(8)[None, None, :]
            nisa.dma_copy(src=a[64:192, 0:4, 0:8], dst=b[3, :, 0:4, 0:8], mask=(i_p < n) & (i_w < 5))
        """
    )
    # the positions that are slices, in order, are the mask's axes (b's leading 3 is no axis)
    assert (
        "src=a[64:min(192, n), 0:4, 0:min(8, 5)], dst=b[3, 0:min(64 + 128, n) - 64, 0:4, 0:min(8, 5)])"
        in m.text
    )
    assert not m.manual


@pytest.mark.parametrize(
    ("mask", "reason"),
    [
        ("offset < n", "bounds a combination of index tiles (a flat offset"),
        ("row_mask(ip, n)", "the mask comes from a call (`row_mask(ip, n)`)"),
        ("ip >= jf", "compares index tiles with each other"),
        ("ip > 3", "only `index tile < bound` (or <=) masks are rewritten"),
    ],
)
def test_masks_that_are_no_slice_are_listed_with_the_reason(mask: str, reason: str) -> None:
    m = migrate(
        f"""\
        @nki.jit
        def k(a, n):
            ip = nl.arange(128)[:, None]
            jf = nl.arange(64)[None, :]
            offset = 64 * ip + jf
            return nl.load(a[ip, jf], mask={mask})
        """
    )
    assert [(s.line, s.construct) for s in m.manual if s.construct == "mask="] == [(11, "mask=")]
    assert reason in next(s.recipe for s in m.manual if s.construct == "mask=")


def test_a_mask_whose_index_tiles_index_no_operand_is_listed_not_dropped() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out, n):
            ip = nl.arange(128)[:, None]
            nl.store(out[0, 0], value=a, mask=(ip < n))
        """
    )
    assert "mask=(ip < n)" in m.text
    assert "index none of the call's operands" in next(s.recipe for s in m.manual if s.construct == "mask=")


def test_a_mask_repeated_on_a_nested_call_goes_with_the_outer_one_another_is_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out):
            for i in nl.affine_range(4):
                x = nl.load(a[i])
                nl.store(out[i], value=nl.exp(x, mask=(i < 3)), mask=(i < 3))
                nl.store(out[i], value=nl.exp(x, mask=(i < 2)))
        """
    )
    assert "if i < 3: nl.store(out[i], value=nl.exp(x))" in m.text
    assert [(s.line, s.construct) for s in m.manual] == [(11, "mask=")]
    assert "nested" in m.manual[0].recipe


def test_fields_of_a_configuration_parameter_are_element_independent() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out, cfg):
            for i in nl.affine_range(4):
                t = nl.load(a[i])
                nl.store(out[i], value=t, mask=(i * 128 < cfg.seq_len))
        """
    )
    assert "if i * 128 < cfg.seq_len: nl.store(out[i], value=t)" in m.text and not m.manual


def test_block_dims_fold_into_the_free_dims() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            blocks = nl.ndarray((2, 3, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            flat = nl.zeros((nl.par_dim(128), 64), dtype=a.dtype)
            for b in nl.affine_range(2):
                for c in nl.affine_range(3):
                    blocks[b, c, i_p, i_f] = nl.load(a[i_p, i_f])
                    nl.store(out[i_p, i_f], value=blocks[b, c])
            return flat
        """
    )
    assert "blocks = nl.ndarray((128, 2, 3, 64), dtype=a.dtype, buffer=nl.sbuf)" in m.text
    assert "blocks[0:128, b, c, 0:64] = nl.load(a[0:128, 0:64])" in m.text
    assert "value=blocks[:, b, c])" in m.text and "flat = nl.zeros((128, 64), dtype=a.dtype)" in m.text
    assert not m.manual and "par_dim" not in m.text


def test_block_dims_used_other_than_by_subscripts_are_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            u = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            u[...] = 0
            return t
        """
    )
    assert [(s.line, s.construct) for s in m.manual] == [(8, "nl.par_dim"), (9, "nl.par_dim")]
    assert "nl.par_dim(128)" in m.text


def test_value_returning_isa_calls_become_allocations_and_dst_calls() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, b, c):
            x = nisa.nc_matmul(a, b)
            y = nisa.activation(nl.exp, x, dtype=nl.bfloat16)
            c[...] = nisa.tensor_copy(y)
            z = nisa.tensor_reduce(nl.add, y, axis=1)
            w = nisa.tensor_reduce(nl.max, c, axis=(2, 3), keepdims=True, dtype=nl.float32)
            v = nisa.tensor_reduce(nl.max, c, axis=(2,))
            u = nisa.tensor_reduce(nl.max, c, axis=-1)
        """
    )
    body = body_of(m).splitlines()
    assert body[2] == (
        "    x = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.psum); "
        "nisa.nc_matmul(dst=x, stationary=a, moving=b)"
    )
    assert body[3] == (
        "    y = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf); nisa.activation(dst=y, op=nl.exp, data=x)"
    )
    assert body[4] == "    nisa.tensor_copy(dst=c[...], src=y)"
    # tensor_reduce keeps the partition dim and the dims before the reduced ones (a lone partition dim as (P, 1))
    assert body[5] == (
        "    z = nl.ndarray((y.shape[0], 1), dtype=y.dtype, buffer=nl.sbuf); "
        "nisa.tensor_reduce(dst=z, op=nl.add, data=y, axis=1)"
    )
    assert body[6] == (
        "    w = nl.ndarray((c.shape[0], c.shape[1], 1, 1), dtype=nl.float32, buffer=nl.sbuf); "
        "nisa.tensor_reduce(dst=w, op=nl.max, data=c, axis=(2, 3), keepdims=True)"
    )
    assert body[7].startswith("    v = nl.ndarray((c.shape[0], c.shape[1]), dtype=c.dtype, buffer=nl.sbuf); ")
    # a negative axis needs the rank, unknown here: listed with the recipe
    assert [(s.line, s.construct) for s in m.manual] == [(14, "nisa.tensor_reduce value")]


def test_value_returning_calls_into_a_tile_of_their_dtype_and_annotated_results() -> None:
    m = migrate(
        """\
        import neuronxcc.nki.typing as nt

        @nki.jit
        def k(a, b):
            s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            s[:, :] = nisa.tensor_copy(a, dtype=nl.float32)
            s[:, :] = nisa.tensor_copy(a, dtype=nl.bfloat16)
            q: nt.tensor[128, 64] = nisa.tensor_copy(b)
            b[0, :, :] = nisa.tensor_copy(a, dtype=b.dtype)
        """
    )
    body = body_of(m).splitlines()
    # dtype= is the tile's own: the instruction casts to it when it writes the tile
    assert body[5] == "    nisa.tensor_copy(dst=s[:, :], src=a)"
    assert body[7] == (
        "    q: nt.tensor[128, 64] = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf); nisa.tensor_copy(dst=q, src=b)"
    )
    assert body[8] == "    nisa.tensor_copy(dst=b[0, :, :], src=a)"
    # another dtype rounded the result twice (to bfloat16, then to the tile's float32): a result of that dtype,
    # then copied into the tile (was listed before the flash-attention backward's selects needed it)
    assert body[6] == (
        "    tensor_copy_value = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf); "
        "nisa.tensor_copy(dst=tensor_copy_value, src=a); nisa.tensor_copy(dst=s[:, :], src=tensor_copy_value)"
    )
    assert m.manual == ()


def test_isa_queries_returning_values_in_0_7_too_are_not_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            if nisa.get_nc_version() >= nisa.nc_version.gen3:
                a = a
            x = nisa.iota(nl.arange(4)[None, :] * nl.arange(4)[None, :], dtype=nl.int32)  # not affine: listed
        """
    )
    assert "nisa.iota value" in [s.construct for s in m.manual]
    assert not [s for s in m.manual if "get_nc_version" in s.construct]


def test_matrix_products_added_into_psum_become_accumulating_nc_matmul_calls() -> None:
    m = migrate(
        """\
        psum_mod = nki.compiler.psum.mod_alloc

        @nki.jit
        def k(a, b, out):
            acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
            rot = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=psum_mod(base_bank=0))
            sb = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            for i in nl.affine_range(2):
                acc += nl.matmul(a[i], b[i], transpose_x=True)
                acc[...] += nisa.nc_matmul(a[i], b[i], is_moving_onezero=True)
                acc += nisa.nc_matmul(stationary=a[i], moving=b[i])
                acc += nl.matmul(a[i], b[i])
                sb += nl.matmul(a[i], b[i], transpose_x=True)
                rot[i] += nisa.nc_matmul(a[i], b[i])
        """
    )
    body = body_of(m).splitlines()[2:]  # the psum_mod alias line goes (its one call is replaced)
    assert body[5] == "        nisa.nc_matmul(dst=acc, stationary=a[i], moving=b[i], accumulate=True)"
    assert body[6] == (
        "        nisa.nc_matmul(dst=acc[...], stationary=a[i], moving=b[i], is_moving_onezero=True, accumulate=True)"
    )
    assert body[7] == "        nisa.nc_matmul(dst=acc, stationary=a[i], moving=b[i], accumulate=True)"
    # without transpose_x the stationary operand is a's transpose, and an SBUF accumulator cannot be a matmul's
    # destination: both stay the in-place tensor_tensor of the operators pass
    assert body[8].startswith("        nisa.tensor_tensor(dst=acc, data1=acc, data2=nl.matmul(")
    assert body[9].startswith("        nisa.tensor_tensor(dst=sb, data1=sb, data2=nl.matmul(")
    # rot is allocated without values: legacy += opened an accumulation group (first write overwrites), which 0.7's
    # default accumulate=None infers the same way; accumulate=True would add to never-written PSUM
    assert body[10] == "        nisa.nc_matmul(dst=rot[:, i], stationary=a[i], moving=b[i])"
    assert not [s for s in m.manual if "value" in s.construct]  # (the mod_alloc placement is another pass's)


def test_other_masks_are_listed() -> None:
    m = migrate(
        "@nki.jit\ndef k(a, n):\n    i_p = nl.arange(128)[:, None]\n    return nl.load(a[i_p], mask=(n > i_p))\n"
    )
    assert ("mask=") in {s.construct for s in m.manual}


def test_tile_operators_become_nl_calls() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, b):
            x = nl.load(a)
            y = nl.exp(nl.load(b))
            z = -(x + y * 2.0) / (x - 1)
            return z >= y
        """
    )
    assert "z = nl.divide(nl.negative(nl.add(x, nl.multiply(y, 2.0))), nl.subtract(x, 1))" in m.text
    assert "return nl.greater_equal(z, y)" in m.text


def test_in_place_operator_updates_the_tile_with_tensor_tensor() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            acc = nl.zeros((128, 512), dtype=nl.float32)
            acc += nl.load(a) * 3
            return acc
        """
    )
    assert "nisa.tensor_tensor(dst=acc, data1=acc, data2=nl.multiply(nl.load(a), 3), op=nl.add)" in m.text


def test_tile_broadcast_method_becomes_nl_broadcast_to() -> None:
    m = migrate("@nki.jit\ndef k(g):\n    t = nl.load(g)\n    return t.broadcast_to((128, 64)) * t\n")
    assert "return nl.multiply(nl.broadcast_to(t, (128, 64)), t)" in m.text


def test_python_numbers_are_not_tiles() -> None:
    m = migrate("@nki.jit\ndef k(a):\n    n = a.shape[0] // 128 + 1\n    n += 2\n    return n * 4\n")
    assert "n = a.shape[0] // 128 + 1\n    n += 2\n    return n * 4" in m.text


def test_iterators_become_range() -> None:
    m = migrate(
        "@nki.jit\ndef k(a):\n    for i in nl.sequential_range(4):\n        for j in nl.static_range(1, 3):\n"
        "            pass\n"
    )
    assert "for i in range(4):\n        for j in range(1, 3):" in m.text


def test_entry_points_become_jit_and_simulate() -> None:
    source = """\
        import numpy as np
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl
        from torch_neuronx import nki_jit


        @nki.baremetal(save_neff_name="k.neff")
        def k(a):
            return a


        @nki_jit
        def j(a):
            return a


        @nki.jit(mode="simulation")
        def s(a):
            return a


        def run(a):
            return nki.simulate_kernel(nki.baremetal(s), a)
        """
    m = migrate_source(textwrap.dedent(source))
    assert "torch_neuronx" not in m.text
    assert m.text.count("@nki.jit\n") == 3
    assert "return nki.simulate(nki.jit(s))(a)" in m.text


def test_platform_target_is_a_manual_step() -> None:
    m = migrate('@nki.jit(platform_target="trn2")\ndef k(a):\n    return a\n')
    assert [s.construct for s in m.manual] == ["platform_target="]


@pytest.mark.parametrize(
    ("line", "construct"),
    [
        ("return nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32)", "nl.par_dim"),
        ("t = nisa.exp(a)", "nisa.exp value"),
        ("t = nl.static_cast(a, nl.bfloat16)", "nl.static_cast"),
        ("nl.store(a, value=b, mask=(c < 3))", "mask="),
        ("for i in nl.dynamic_range(3):\n        pass", "nl.dynamic_range"),
    ],
)
def test_constructs_left_to_the_user_are_listed_with_their_line_and_recipe(line: str, construct: str) -> None:
    m = migrate(f"@nki.jit\ndef k(a, b, c):\n    {line}\n")
    assert [(s.line, s.construct) for s in m.manual] == [(8, construct)]
    assert m.manual[0].recipe


def test_spmd_grid_launch_is_listed() -> None:
    m = migrate("@nki.jit\ndef k(a):\n    return a\n\n\ndef run(a):\n    return k[2, 2](a)\n")
    assert [s.construct for s in m.manual] == ["SPMD grid"]


def test_formatting_and_comments_outside_rewrites_are_kept() -> None:
    source = (
        LEGACY
        + "# a comment\n@nki.jit\ndef k(a):   # odd spacing kept\n    x = nl.load(a)  # load\n    return x\n"
    )
    assert migrate_source(source).text == CURRENT + source[len(LEGACY) :]


def test_unparsable_file() -> None:
    with pytest.raises(NotMigratable) as err:
        migrate_source("import neuronxcc.nki as nki\ndef k(:\n")
    assert err.value.kind == "unparsable" and "line 2" in str(err.value)


def test_half_migrated_file() -> None:
    with pytest.raises(NotMigratable) as err:
        migrate_source("import nki\nimport neuronxcc.nki.language as nl\n")
    assert err.value.kind == "mixed" and "line 2" in str(err.value)


# Our own files written for NKI < 0.7 on purpose, and what makes them so.
_PRE_07 = {
    "examples/deprecated_loop.py": "nl.affine_range",  # the editor walkthrough's deprecation warning
    "tests/verify/data/trip_count_06.py": "nl.dynamic_range",  # a 0.6-style kernel
}


def _own_kernel_files() -> list[Path]:
    files = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    return [
        f
        for f in files
        if "import nki" in f.read_text(encoding="utf-8") and "neuronxcc" not in f.read_text(encoding="utf-8")
    ]


@pytest.mark.parametrize("path", _own_kernel_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_our_own_nki_07_files_migrate_as_a_no_op(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        m = migrate_source(text)
    except NotMigratable as exc:
        assert exc.kind == "unparsable"  # deliberately broken test data
        return
    rel = str(path.relative_to(ROOT))
    if rel in _PRE_07:
        assert _PRE_07[rel] in {c.construct for c in m.changes} | {s.construct for s in m.manual}
    else:
        assert m.text == text and not m.manual and not m.changes


def test_an_index_tile_form_the_rewrite_does_not_know_is_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            i_p = nl.arange(0, 8, 2)[:, None]
            return nl.load(a[i_p])
        """
    )
    assert [(s.line, s.construct) for s in m.manual] == [(8, "nl.arange")]


def test_three_dimensional_index_tiles_become_slices() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            i_p = nl.arange(8)[:, None, None]
            i_h = nl.arange(4)[None, :, None] + 2
            i_w = nl.arange(16)[None, None, :]
            return nl.load(a[i_p, i_h, i_w])
        """
    )
    assert "return nl.load(a[0:8, 2:2 + 4, 0:16])" in m.text
    assert not m.manual and "arange" not in m.text


def test_masks_that_do_not_depend_on_the_element_become_an_if() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out):
            n = a.shape[0]
            t = nl.ndarray((nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            for i in nl.affine_range(4):
                t[...] = nl.load(a[i], mask=(i * 128 < n))
                nl.store(out[i], value=t, mask=i < 3)
        """
    )
    assert "if i * 128 < n: t[...] = nl.load(a[i])\n" in m.text
    assert "if i < 3: nl.store(out[i], value=t)\n" in m.text
    assert "mask" not in m.text and not m.manual


def test_a_mask_name_that_may_be_none_keeps_none_as_no_mask() -> None:
    m = migrate(
        """\
        def helper(x, acc, i, j, causal):
            mask = i * 128 >= j * 128 if causal else None
            acc[...] = nl.exp(x, mask=mask)
        """
    )
    assert "if mask is None or mask: acc[...] = nl.exp(x)\n" in m.text and not m.manual


def test_bounds_and_element_independent_conditions_split() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out):
            rows = a.shape[0]
            ip, jf = nl.mgrid[0:128, 0:64]
            for i in nl.affine_range(2):
                t = nl.load(a[i * 128 + ip, jf])
                nl.store(out[i * 128 + ip, jf], value=t, mask=(jf < 32) & (i * 128 < rows))
        """
    )
    assert (
        "if i * 128 < rows: nl.store(out[i * 128:i * 128 + 128, 0:min(64, 32)], value=t[:, 0:min(64, 32)])"
        in (m.text)
    )
    assert not m.manual


def test_scalar_mask_on_a_shared_line_and_on_a_named_result() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, x):
            for i in nl.affine_range(2):
                u = nisa.tensor_copy(x, mask=(i < 1))
                v = nl.exp(x, mask=(i < 1))
        """
    )
    assert "nisa.tensor_copy(dst=u, src=x) if i < 1 else None" in m.text
    # the name would be unbound where the mask is off; `x` is a kernel argument (HBM), not a tile, so no
    # allocation of its shape is made for it (masked_values): listed
    assert [s.construct for s in m.manual] == ["mask="]


def test_a_kernel_parameter_compared_is_not_taken_for_a_scalar() -> None:
    m = migrate("@nki.jit\ndef k(a, b, c):\n    nl.store(a, value=b, mask=(c < 3))\n")
    assert "mask=(c < 3)" in m.text and [s.construct for s in m.manual] == ["mask="]


def test_direct_allocation_becomes_the_compilers() -> None:
    source = """\
        import functools
        import neuronxcc.nki.compiler as ncc


        def bank(idx, bank_map):
            return bank_map[idx]


        @ncc.enable_stack_allocator(log_level=10)
        @nki.jit
        def k(a):
            s = nl.ndarray((4, nl.par_dim(128), 64), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
            p = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=ncc.psum.alloc(functools.partial(bank, bank_map={})))
            q = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=2))
            return a
        """
    m = migrate(source)
    assert "s = nl.ndarray((128, 4, 64), dtype=a.dtype, buffer=nl.sbuf)" in m.text
    assert "p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)" in m.text
    assert "q = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)" in m.text
    assert "enable_stack_allocator" not in m.text and "mod_alloc" not in m.text
    assert not m.manual
    assert {c.construct for c in m.changes} >= {"mod_alloc", "alloc", "enable_stack_allocator"}


def test_module_level_allocator_aliases_are_replaced_where_called_and_go() -> None:
    m = migrate(
        """\
        sb_mod = nki.compiler.sbuf.mod_alloc
        psum_mod = nki.compiler.psum.mod_alloc


        class Allocator:
            def allocate(self, n):
                return sb_mod(base_addr=0, num_free_tiles=(n,))


        @nki.compiler.skip_middle_end_transformations
        @nki.jit
        def k(a):
            s = nl.ndarray((128, 64), dtype=a.dtype, buffer=Allocator().allocate(2))
            p = nl.ndarray((128, 512), dtype=nl.float32, buffer=psum_mod(base_bank=0, num_bank_tiles=(1,)))
            return a
        """
    )
    body = body_of(m)
    assert "compiler" not in body and "_mod" not in body
    assert "        return nl.sbuf\n" in body
    assert "p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)" in body
    assert body.count("@") == 1 and not m.manual
    assert {c.construct for c in m.changes} >= {"mod_alloc", "skip_middle_end_transformations"}


def test_an_allocator_alias_read_other_than_by_calls_stays() -> None:
    m = migrate("SB = nki.compiler.sbuf.mod_alloc\nPLACES = [SB]\n")
    assert "SB = nki.compiler.sbuf.mod_alloc" in m.text


def test_later_launch_grid_axes_are_listed() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            i = nl.program_id(0) + nl.program_id(axis=1) * nl.num_programs(0)
            return a
        """
    )
    assert [(s.line, s.construct) for s in m.manual] == [(8, "nl.program_id axis > 0")]


def test_psum_results_read_by_a_matmul_or_a_store_are_copied_to_sbuf() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(q, v, out):
            qk = nl.matmul(q, v, transpose_x=True)
            e = nl.exp(qk)
            v_t = nl.transpose(v)
            acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nl.store(out, value=nl.matmul(e, v_t))
            nl.store(out[acc], value=acc)
            nl.store(out, value=nl.copy(nl.transpose(v)))
        """
    )
    body = body_of(m)
    assert "    qk = nl.matmul(q, v, transpose_x=True)\n" in body  # read by nl.exp only: PSUM is fine
    assert "    v_t = nl.copy(nl.transpose(v))\n" in body
    assert "    nl.store(out, value=nl.copy(nl.matmul(e, v_t)))\n" in body
    assert "    nl.store(out[acc], value=nl.copy(acc))\n" in body  # the destination is not read
    assert "    nl.store(out, value=nl.copy(nl.transpose(v)))\n" in body  # already copied


def test_direct_allocation_outside_buffer_is_listed() -> None:
    m = migrate(
        """\
        import neuronxcc.nki.compiler as ncc

        SB = ncc.sbuf.mod_alloc


        @nki.jit
        def k(a):
            placed = ncc.sbuf.mod_alloc(base_addr=0)
            return a
        """
    )
    assert [s.construct for s in m.manual] == ["mod_alloc"]


def test_block_dims_passed_to_a_helper_fold_there_too() -> None:
    m = migrate(
        """\
        def fill(dst, b, src):
            dst[b, :, :] = nl.load(src, dtype=dst.dtype)


        @nki.jit
        def k(a):
            t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            for b in nl.affine_range(2):
                fill(t, b, a)
                fill(dst=t, b=b, src=a)
            return t[0]
        """
    )
    assert "t = nl.ndarray((128, 2, 64), dtype=a.dtype, buffer=nl.sbuf)" in m.text
    assert "dst[:, b, :] = nl.load(src, dtype=dst.dtype)" in m.text and "t[:, 0]" in m.text
    assert not m.manual


def test_a_helper_also_given_a_plain_tile_keeps_the_block_dims() -> None:
    m = migrate(
        """\
        def fill(dst, b, src):
            dst[b, :, :] = nl.load(src)


        @nki.jit
        def k(a):
            t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            u = nl.ndarray((2, 128, 64), dtype=a.dtype, buffer=nl.sbuf)
            fill(t, 0, a)
            fill(u, 0, a)
            return t.shape
        """
    )
    assert "dst[b, :, :]" in m.text and [s.construct for s in m.manual] == ["nl.par_dim"]


def test_a_shape_built_from_lists_folds() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            t = nl.ndarray([2] + [nl.par_dim(a.shape[0]), a.shape[1]], dtype=a.dtype, buffer=nl.sbuf)
            t[1, :, :] = nl.load(a)
            return t[1]
        """
    )
    assert "t = nl.ndarray((a.shape[0], 2, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)" in m.text
    assert "t[:, 1, :] = nl.load(a)" in m.text and not m.manual


def test_block_dims_used_in_a_nested_function_fold_there_too() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
            u = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)

            def fill(b):
                t[b, :, :] = nl.load(a)

            def own(t):
                return t[0]

            def rebinds():
                nonlocal u
                u = None

            fill(1)
            return own(a), t[1], u[0]
        """
    )
    assert "t = nl.ndarray((128, 2, 64), dtype=a.dtype, buffer=nl.sbuf)" in m.text
    # the closure's subscript moves; a parameter named t is another variable, untouched
    assert "t[:, b, :] = nl.load(a)" in m.text and "return t[0]" in m.text and "t[:, 1]" in m.text
    # a nested function rebinding the tile (nonlocal) is not followed: listed
    assert [(s.line, s.construct) for s in m.manual] == [(9, "nl.par_dim")]


def test_value_returning_dma_transpose_partition_reduce_and_memset() -> None:
    m = migrate(
        """\
        import numpy as np

        @nki.jit
        def k(a, b):
            t = nl.load(a)
            x = nisa.dma_transpose(t)
            y = nisa.dma_transpose(b[0:4, :, :], axes=(2, 1, 0))
            r = nisa.tensor_partition_reduce(np.add, t)
            z = nisa.memset((nl.par_dim(128), 1), value=0.5, dtype=nl.float32)
            q = nisa.memset((2, nl.par_dim(128), 4), 1, nl.int32, engine=nisa.vector_engine)
            q[1] = nl.load(a)
            x[:, 0:2] = nisa.memset((128, 2), 0.0, dtype=x.dtype)
            w = nisa.memset((2, nl.par_dim(128), 4), 0.0, nl.float32)
            u = nisa.dma_transpose(t, axes=order)
            return w.shape
        """
    )
    body = body_of(m).splitlines()
    assert body[5] == (
        "    x = nl.ndarray(tuple(reversed(t.shape)), dtype=t.dtype, buffer=nl.sbuf); nisa.dma_transpose(dst=x, src=t)"
    )
    assert body[6].startswith(
        "    y = nl.ndarray((b[0:4, :, :].shape[2], b[0:4, :, :].shape[1], b[0:4, :, :].shape[0]),"
    )
    assert body[7] == (
        "    r = nl.ndarray((1, *t.shape[1:]), dtype=t.dtype, buffer=nl.sbuf); "
        "nisa.tensor_partition_reduce(dst=r, op=np.add, data=t)"
    )
    # memset allocates its result: a par_dim marker goes, block dims fold like an nl.ndarray's
    assert (
        body[8]
        == "    z = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf); nisa.memset(dst=z, value=0.5)"
    )
    assert body[9] == (
        "    q = nl.ndarray((128, 2, 4), dtype=nl.int32, buffer=nl.sbuf); "
        "nisa.memset(dst=q, value=1, engine=nisa.vector_engine)"
    )
    assert body[10] == "    q[:, 1] = nl.load(a)" and body[11] == "    nisa.memset(dst=x[:, 0:2], value=0.0)"
    # a block-dim memset result whose layout is read (.shape) and axes that are not literal: listed
    assert [(s.line, s.construct) for s in m.manual] == [
        (18, "nisa.memset value"),
        (18, "nl.par_dim"),
        (19, "nisa.dma_transpose value"),
    ]


def test_a_value_written_into_a_rebound_name_takes_the_reaching_allocations_dtype() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, b):
            for i in nl.affine_range(2):
                s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
                s[:, :] = nisa.tensor_copy(a, dtype=nl.float32)
            s = nl.load(b)
            t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            for i in nl.affine_range(2):
                t[:, :] = nisa.tensor_copy(a, dtype=nl.float32)
                t = nl.load(b)
            t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            if b is None:
                t = nl.load(a)
            t[:, :] = nisa.tensor_copy(a, dtype=nl.float32)
        """
    )
    body = body_of(m)
    assert "    nisa.tensor_copy(dst=s[:, :], src=a)" in body
    # rebound later in the loop (the next iteration sees the load) and in a branch: t's dtype is not known, so
    # the value is made in its own dtype and copied (cast) into t (was listed before)
    made = (
        "tensor_copy_value = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf); "
        "nisa.tensor_copy(dst=tensor_copy_value, src=a); nisa.tensor_copy(dst=t[:, :], src=tensor_copy_value)"
    )
    assert body.count(made) == 2
    assert m.manual == ()


def test_three_dim_index_tiles_become_access_patterns() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, out, n):
            t = nl.load(a)
            i_p = nl.arange(128)[:, None, None]
            i_a = nl.arange(6)[None, :, None] + n
            i_b = nl.arange(8)[None, None, :]
            out[i_p, i_b * 6 + i_a] = nl.copy(t[i_p, 2 * (i_a - n) * 4 + i_b])
            j_p = nl.arange(128)[:, None, None]
            j_a = nl.arange(6)[None, :, None]
            nl.store(out[j_p, j_a], value=t)
        """
    )
    body = body_of(m).splitlines()
    # t[p, a * 8 + b]: grid axis a steps 8 elements of t's flat storage, b one; the offset n of i_a gives n * 6
    assert body[3] == (
        "    out.ap(pattern=[[out.shape[1], 128], [1, 6], [6, 8]], offset=n)[...] = "
        "nl.copy(t.ap(pattern=[[t.shape[1], 128], [2 * 4, 6], [1, 8]], offset=n * 2 * 4 - n * 2 * 4))"
    )
    assert "i_p =" not in m.text and "i_b =" not in m.text
    # a grid axis no index uses (j's third, of extent 1) is a plain 3-D tile: slices (index_tiles), nothing listed
    assert body[4] == "    nl.store(out[0:128, 0:6], value=t)"
    assert not m.manual


def test_affine_select_predicates_become_its_0_7_operands() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, q0, k0):
            t = nl.load(a)
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            r = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            r[i_p, i_f] = nisa.affine_select(pred=(q0 + i_p >= k0 + 2 * i_f), on_true_tile=t[i_p, i_f], on_false_value=-9984.0, dtype=nl.float32)
            s = nisa.affine_select(i_f < 8, t, 0.0)
            pred = i_p == i_f
            u = nisa.affine_select(pred, t, 0.0)
        """
    )
    body = body_of(m).splitlines()
    assert body[4] == (
        "    nisa.affine_select(dst=r[0:128, 0:64], pattern=[[-2, 64]], channel_multiplier=1, on_true_tile=t[0:128, "
        "0:64], on_false_value=-9984.0, cmp_op=nl.greater_equal, offset=q0 - k0)"
    )
    assert body[5] == (
        "    s = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf); nisa.affine_select(dst=s, pattern=[[1, 64]], "
        "channel_multiplier=0, on_true_tile=t, on_false_value=0.0, cmp_op=nl.less, offset=-8)"
    )
    # a predicate held in a name: read through it, its definition (and the index tiles') deleted
    assert body[6] == (
        "    u = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf); nisa.affine_select(dst=u, pattern=[[-1, 64]], "
        "channel_multiplier=1, on_true_tile=t, on_false_value=0.0, cmp_op=nl.equal, offset=0)"
    )
    assert len(body) == 7 and not m.manual


def test_iota_expressions_become_its_0_7_operands() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, n):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            pos = n * 128 + i_p
            x = nisa.iota(pos, dtype=nl.int32)
            y = nisa.iota(i_p * 64 + i_f, nl.float32)
            z = nisa.iota(3 * i_f, dtype=nl.int32)
            w = nisa.iota(i_p * i_f, dtype=nl.int32)
        """
    )
    body = body_of(m).splitlines()
    # a partition tile alone gives a (P, 1) result; pos, used no more, goes
    assert body[4] == (
        "    x = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf); "
        "nisa.iota(dst=x, pattern=[[0, 1]], offset=n * 128, channel_multiplier=1)"
    )
    assert body[5].endswith("nisa.iota(dst=y, pattern=[[1, 64]], offset=0, channel_multiplier=64)")
    assert body[6].startswith("    z = nl.ndarray((1, 64), dtype=nl.int32, buffer=nl.sbuf); ")
    # not affine: listed, with the tiles it keeps
    assert sorted(s.construct for s in m.manual) == [
        "index tile `i_f`",
        "index tile `i_p`",
        "nisa.iota value",
    ]


def test_an_affine_select_reading_psum_reads_an_sbuf_copy() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:128, 0:512]
            s = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
            t = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
            t[:, :] = nisa.affine_select(pred=i_p >= i_f, on_true_tile=s, on_false_value=-9984.0)
            u = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
            u[:, :] = nisa.affine_select(pred=i_p >= i_f, on_true_tile=t, on_false_value=-9984.0)
            return u
        """
    )
    assert "on_true_tile=nl.copy(s)" in m.text and "on_true_tile=t," in m.text


def test_affine_select_predicates_held_in_names_read_elsewhere_stay() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, q0, k0):
            i_p, i_f = nl.mgrid[0:128, 0:64]
            q_pos = q0 + i_p
            k_pos = k0 + i_f
            causal = q_pos >= k_pos
            t = nl.load(a)
            u = nisa.affine_select(pred=causal, on_true_tile=t, on_false_value=0.0)
            v = nl.where(causal, u, t)
            return v
        """
    )
    assert "pattern=[[-1, 64]], channel_multiplier=1" in m.text and "offset=q0 - k0" in m.text
    assert "causal = " in m.text  # still read by nl.where: kept, its index tiles listed
    assert {s.construct for s in m.manual} >= {"index tile `q_pos`", "index tile `k_pos`"}


def test_affine_select_predicates_on_mgrid_positions_become_its_0_7_operands() -> None:
    m = migrate(
        """\
        @nki.jit
        def k(a, q0, k0):
            t = nl.load(a)
            i_q_p, i_q_f = nl.mgrid[0:128, 8:72]
            pred = q0 * 128 + i_q_p >= k0 * 64 + i_q_f
            u = nisa.affine_select(pred, t, 0.0)
            return u
        """
    )
    assert not m.manual and "mgrid" not in m.text
    assert (
        "pattern=[[-1, 72 - 8]], channel_multiplier=1" in m.text and "offset=q0 * 128 - k0 * 64 - 8" in m.text
    )


@pytest.mark.parametrize(
    "text",
    [
        LEGACY
        + "@nki.jit\ndef k(a):\n    for i in nl.affine_range(2):\n        t = nl.load(a)\n    return a\n",
        CURRENT + "@nki.jit\ndef k(a):\n    for i in nl.affine_range(2):\n        pass\n    return a\n",
        CURRENT + "@nki.jit(mode='simulation')\ndef k(a):\n    return a\n",
        CURRENT + "@nki.jit\ndef k(a):\n    for i in range(2):\n        pass\n    return a\n",
    ],
    ids=["legacy", "current iterator", "current entry point", "nothing to migrate"],
)
def test_first_change_tells_whether_the_migration_changes_the_text(text: str) -> None:
    whole, first = migrate_source(text), migrate_source(text, first_change=True)
    assert first.changed == whole.changed
    # stopped at the first changing round: what it changed is part of the whole migration's changes
    assert set(first.changes) <= set(whole.changes)


def test_first_change_stops_after_the_first_changing_pass() -> None:
    text = (
        LEGACY
        + "@nki.jit\ndef k(a):\n    for i in nl.affine_range(2):\n        t = nl.load(a)\n    return a\n"
    )
    whole, first = migrate_source(text), migrate_source(text, first_change=True)
    assert {c.construct for c in whole.changes} >= {"nl.affine_range", "legacy import"}
    assert [c.construct for c in first.changes] == ["nl.affine_range"]  # iterators run before imports
