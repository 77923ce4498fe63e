"""NKI3xx-NKI5xx beyond the documented examples: generations, versions, liveness, config, engines."""

from __future__ import annotations

from valtest import only, run

MATMUL = """
@nki.jit
def k(a, b):
    lhs = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    rhs = nl.ndarray((128, {n}), dtype=nl.bfloat16, buffer=nl.sbuf)
    acc = nl.ndarray((128, {n}), dtype=nl.{dst}, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
"""


def test_matmul_limits_per_generation() -> None:
    assert only(run(MATMUL.format(n=1024, dst="float32"), target="trn2"), "NKI501")
    assert not only(run(MATMUL.format(n=1024, dst="float32"), target="trn3"), "NKI501")
    assert only(run(MATMUL.format(n=8192, dst="float32"), target="trn3"), "NKI501")
    assert not only(run(MATMUL.format(n=8192, dst="bfloat16"), target="trn3"), "NKI501")


def test_matmul_dst_dtype_per_generation_and_bank_exemption() -> None:
    assert only(run(MATMUL.format(n=512, dst="bfloat16"), target="trn2"), "NKI502")
    assert not only(run(MATMUL.format(n=512, dst="bfloat16"), target="trn3"), "NKI502")
    assert only(run(MATMUL.format(n=1024, dst="float32"), target="trn2"), "NKI403")
    assert not only(run(MATMUL.format(n=1024, dst="float32"), target="trn3"), "NKI403")


def test_matmul_contraction_mismatch_and_positional_operands() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    s = nl.ndarray((64, 128), dtype=nl.bfloat16)\n"
        "    m = nl.ndarray((128, 256), dtype=nl.bfloat16)\n"
        "    d = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.psum)\n    nisa.nc_matmul(d, s, m)\n"
    )
    (f,) = only(run(code), "NKI501")
    assert "K=64" in f.message and "K=128" in f.message


def test_legacy_value_returning_isa_call_is_not_bound_to_the_new_signature() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    s = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)\n"
        "    m = nl.ndarray((128, 256), dtype=nl.bfloat16)\n    r = nisa.nc_matmul(s, m)\n"
    )
    assert not only(run(code), "NKI504")


def test_sbuf_liveness_ends_at_last_use_and_reserved_margin() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    x = nl.ndarray((128, 36864), dtype=nl.float32)\n"
        "    nisa.memset(dst=x, value=0.0)\n    y = nl.ndarray((128, 24576), dtype=nl.float32)\n"
        "    nisa.memset(dst=y, value=0.0)\n"
    )
    assert not only(run(code), "NKI401")  # x is dead before y is allocated: peak 144 KiB
    live = code + "    nisa.tensor_copy(dst=y, src=x[:, 0:24576])\n"
    (f,) = only(run(live), "NKI401")
    assert "224 KiB" in f.message and len(f.related) == 2
    assert f.span.line == 9  # where the peak is reached: y's allocation
    assert not only(run(live, target="trn3"), "NKI401")  # 256 KiB on trn3
    assert only(run(live, target="trn3", reserved=64 * 1024), "NKI401")


def test_loop_allocations_count_once_unless_kept_after_the_loop() -> None:
    per_iteration = (
        "@nki.jit\ndef k(a):\n    for i in range(64):\n"
        "        t = nl.ndarray((128, 16384), dtype=nl.float32)\n        nisa.memset(dst=t, value=0.0)\n"
    )
    assert not only(run(per_iteration), "NKI401")
    kept = (
        "@nki.jit\ndef k(a):\n    tiles = []\n    for i in range(64):\n"
        "        t = nl.ndarray((128, 1024), dtype=nl.float32)\n        nisa.memset(dst=t, value=0.0)\n"
        "        tiles.append(t)\n    for i in range(64):\n        nisa.memset(dst=tiles[i], value=1.0)\n"
    )
    (f,) = only(run(kept), "NKI401")
    assert "256 KiB" in f.message and "x64" in f.message


def test_psum_bank_count() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    ps = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for i in range(8)]\n"
        "    for p in ps:\n        nisa.memset(dst=p, value=0.0)\n"
    )
    assert not only(run(code), "NKI402")  # exactly 8 banks
    (f,) = only(run(code.replace("range(8)", "range(9)")), "NKI402")
    assert "9 banks" in f.message


def test_operand_shape_mismatch_free_size() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    x = nl.ndarray((128, 512), dtype=nl.float32)\n"
        "    y = nl.ndarray((128, 256), dtype=nl.float32)\n    nisa.tensor_copy(dst=y, src=x)\n"
        "    nisa.tensor_copy(dst=y, src=x[:, 0:256])\n"
    )
    (f,) = only(run(code), "NKI503")
    assert f.span.line == 9 and "elements per partition differ" in f.message


def test_buffer_rules_gpsimd_and_two_psum_inputs() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
        "    q = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
        "    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)\n"
        "    nisa.tensor_copy(dst=s, src=p, engine=nisa.engine.gpsimd)\n"
        "    nisa.tensor_copy(dst=s, src=p, engine=nisa.engine.vector)\n"
        "    nisa.tensor_tensor(dst=s, data1=p, data2=q, op=nl.add)\n"
        "    nisa.iota(dst=p, pattern=[[1, 512]], offset=0)\n"
    )
    lines = sorted(f.span.line for f in only(run(code), "NKI504"))
    assert lines == [10, 12, 13]


def test_output_buffer_rule_version_scope_and_tuple_returns() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    o1 = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)\n"
        "    o2 = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.private_hbm)\n    return o1, o2\n"
    )
    (f,) = only(run(code), "NKI505")
    assert f.span.line == 8 and "private_hbm" in f.message
    assert not only(run(code, version="0.2"), "NKI505")


def test_partition_dim_through_load_and_reported_once_per_allocation() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    assert a.shape == (512, 64)\n    t = nl.load(a)\n"
        "    u = nl.ndarray((256, 64), dtype=nl.float32)\n    nisa.memset(dst=u, value=0.0)\n"
        "    nisa.memset(dst=u[0:256, :], value=0.0)\n"
    )
    found = only(run(code), "NKI301")
    assert [f.span.line for f in found] == [8, 9]
    assert "result of nl.load" in found[0].message


def test_noqa_suppresses_value_rules() -> None:
    code = "@nki.jit\ndef k(a):\n    t = nl.ndarray((256, 4), dtype=nl.float32)  # noqa: NKI301\n"
    assert run(code, select="NKI3") == []


def test_unknown_dtype_counts_one_byte_per_element() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    x = nl.ndarray((128, 160000), dtype=a.dtype)\n"
        "    y = nl.ndarray((128, 70000), dtype=a.dtype)\n    nisa.tensor_copy(dst=y, src=x[:, 0:70000])\n"
    )
    (f,) = only(run(code), "NKI401")
    assert "at least" in f.message and "dtype unknown" in f.message
    assert not only(run(code.replace("160000", "150000")), "NKI401")  # 150000 + 70000 B < 224 KiB


def test_allocations_on_both_sides_of_an_unknown_if_are_not_added_up() -> None:
    code = (
        "@nki.jit\ndef k(a, flag):\n    tiles = []\n    for b in range(8):\n        if flag:\n"
        "            tiles.append(nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum))\n        else:\n"
        "            tiles.append(nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum))\n"
        "    for t in tiles:\n        nisa.memset(dst=t, value=0.0)\n"
    )
    assert not only(run(code), "NKI402")  # 8 banks on either path, not 16
    more = code.replace(
        "    for t in tiles:",
        "    extra = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
        "    nisa.memset(dst=extra, value=0.0)\n    for t in tiles:",
    )
    (f,) = only(run(more), "NKI402")
    assert "9 banks" in f.message


def test_nl_matmul_limits_and_contraction() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    x = nl.ndarray((128, 64), dtype=nl.bfloat16)\n"
        "    y = nl.ndarray((128, 1024), dtype=nl.bfloat16)\n    z = nl.matmul(x, y, transpose_x=True)\n"
        "    w = nl.matmul(x, y[0:64, 0:512])\n"
    )
    found = only(run(code), "NKI501")
    assert [(f.span.line, "y free size 1024 > 512" in f.message) for f in found] == [(9, True)]
    bad_k = code.replace("y[0:64, 0:512]", "y[:, 0:512]")
    assert any("contraction differs" in f.message for f in only(run(bad_k), "NKI501"))


def test_legacy_block_dims_before_par_dim() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    q = nl.ndarray((256, 2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)\n"
        "    nisa.memset(dst=q[0, 0], value=0.0)\n    nisa.memset(dst=q, value=0.0)\n"
    )
    assert run(code) == []  # 256 blocks, not 256 partitions; 256*2*64*4 B = 128 KiB per partition
    (f,) = only(run(code.replace("(256, 2,", "(512, 2,")), "NKI401")  # 256 KiB > 224 KiB
    assert "(128, 512, 2, 64)" in f.message


def test_reductions_need_matching_partitions_only() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    x = nl.ndarray((128, 512), dtype=nl.float32)\n"
        "    r = nl.ndarray((128, 1), dtype=nl.float32)\n    s = nl.ndarray((64, 1), dtype=nl.float32)\n"
        "    nisa.tensor_reduce(dst=r, op=nl.add, data=x, axis=1)\n"
        "    nisa.tensor_reduce(dst=s, op=nl.add, data=x, axis=1)\n"
    )
    (f,) = only(run(code), "NKI503")
    assert f.span.line == 11 and "partition dims differ" in f.message


def test_dma_reading_psum_is_an_error_writing_it_a_warning() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
        "    nisa.dma_copy(dst=p, src=a)\n    nisa.dma_copy(dst=a, src=p)\n"
    )
    found = sorted((f.span.line, f.severity.value) for f in only(run(code), "NKI504"))
    assert found == [(8, "warning"), (9, "error")]
