"""Behaviour of individual rules beyond their documented examples: fix safety, version splits, no false
alarms on unknown values."""

from __future__ import annotations

from nki_studio.core.findings import Severity
from nkilint_testutil import apply_fix, codes, lint, parses

HEAD = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"


def only(code: str, text: str, version: str = "0.7") -> list:  # type: ignore[type-arg]
    return [f for f in lint(text, version) if f.code == code]


def test_dynamic_range_fix_only_when_safe() -> None:
    uses_after = HEAD + (
        "@nki.jit\ndef k(x, n):\n    for i in nl.dynamic_range(n):\n        last = i\n    return last\n"
    )
    assert [f.fix for f in only("NKI202", uses_after)] == [None]
    with_break = (
        HEAD + "@nki.jit\ndef k(x, n):\n    for i in nl.dynamic_range(n):\n        break\n    return x\n"
    )
    assert [f.fix for f in only("NKI202", with_break)] == [None]
    stepped = HEAD + (
        "@nki.jit\ndef k(x, n):\n    for j in nl.dynamic_range(2, n, 2):  # keep\n"
        "        nisa.dma_copy(dst=x, src=x)\n    return x\n"
    )
    (f,) = only("NKI202", stepped)
    fixed = apply_fix(stepped, f.fix)  # type: ignore[arg-type]
    assert parses(fixed) and "def _j_body(j):  # keep" in fixed and "nl.fori_loop(2, n, _j_body, 2)" in fixed
    assert only("NKI202", fixed) == []


def test_removed_isa_parameters() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(a, b, p, r, s):\n"
        "    nisa.nc_matmul(dst=p, stationary=a, moving=b, psumAccumulateFlag=1)\n"
        "    nisa.register_move(r, imm=42)\n    nisa.sendrecv(s, use_gpsimd_dma=True)\n    return p\n"
    )
    found = only("NKI206", text)
    assert len(found) == 3 and all(f.fix for f in found)
    fixed = text
    for f in sorted(found, key=lambda f: f.span.line, reverse=True):
        fixed = apply_fix(fixed, f.fix)  # type: ignore[arg-type]
    assert "nisa.nc_matmul(dst=p, stationary=a, moving=b)" in fixed
    assert "register_move(r, src=42)" in fixed and "dma_engine=nisa.dma_engine.gpsimd_dma" in fixed
    assert only("NKI206", fixed) == []


def test_legacy_namespace_import_rewrites_and_severity() -> None:
    text = (
        "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nfrom neuronxcc.nki.isa import "
        "nc_matmul\n\n\n@nki.jit\ndef k(x):\n    y = nl.exp(x)\n    return nl.exp(y)\n"
    )
    found = only("NKI208", text)
    imports = [f for f in found if f.span.line <= 3]
    assert [f.severity for f in imports] == [Severity.WARNING] * 3
    news = sorted(f.fix.edits[0].new_text for f in imports if f.fix)
    assert news == ["from nki.isa import nc_matmul", "import nki", "import nki.language as nl"]
    # The errors sit where kernel code uses the legacy names: the decorator, and the first ``nl`` only.
    uses = [
        (f.span.line, f.severity, f.fix.edits[0].new_text if f.fix else None)
        for f in found
        if f.span.line > 3
    ]
    assert uses == [(6, Severity.ERROR, "import nki"), (8, Severity.ERROR, "import nki.language as nl")]
    assert [f.severity for f in only("NKI208", text, "0.3")] == [Severity.WARNING] * 3
    assert only("NKI208", text, "legacy") == []


def test_is_none_allowed_and_is_fixed() -> None:
    text = (
        HEAD
        + "@nki.jit\ndef k(x, b=None, c=1):\n    if b is None and c is not 2:\n        pass\n    return x\n"
    )
    (f,) = only("NKI107", text, "0.6")
    assert f.fix is not None and apply_fix(text, f.fix).count("c != 2") == 1
    assert only("NKI107", text, "0.7") == []


def test_tensor_rules_ignore_parameters_and_unknowns() -> None:
    text = HEAD + (
        "import numpy as np\n\n@nki.jit\ndef k(x, flag):\n    if x:\n        pass\n"
        "    n = np.prod(x.shape)\n    y = np.asarray(x)\n    t = nl.ndarray((128, 4), dtype=x.dtype, "
        "buffer=nl.sbuf)\n    u = t[0:64, :]\n    while u:\n        pass\n    z = np.sum(u)\n    return x\n"
    )
    assert [f.span.line for f in only("NKI111", text)] == [16]
    assert [f.span.line for f in only("NKI110", text)] == [18]


def test_nested_jit_severity_by_version() -> None:
    text = HEAD + "@nki.jit\ndef sub(x):\n    return x\n\n\n@nki.jit\ndef k(x):\n    return sub(x)\n"
    (f,) = only("NKI113", text, "0.6")
    assert f.severity is Severity.WARNING and [r.span.line for r in f.related] == [6]
    assert [f.severity for f in only("NKI113", text, "0.7")] == [Severity.INFO]


def test_list_kernel_arg_at_call_site() -> None:
    text = HEAD + "@nki.jit\ndef k(x, dims):\n    return x\n\n\ndef host(x):\n    return k[2](x, [1])\n"
    (f,) = only("NKI115", text, "0.6")
    assert f.severity is Severity.ERROR and apply_fix(text, f.fix).endswith("k[2](x, (1,))\n")  # type: ignore[arg-type]
    assert [g.severity for g in only("NKI115", text, "0.7")] == [Severity.WARNING]
    assert len(only("NKI211", text, "0.7")) == 1 and only("NKI211", text, "0.6") == []


def test_class_rules() -> None:
    text = HEAD + (
        "from enum import Enum\n\n\nclass Mode(Enum):\n    A = 1\n\n\nclass Base(nl.NKIObject):\n"
        "    pass\n\n\nclass Child(Base):\n    pass\n\n\nclass Unused:\n    pass\n\n\n"
        "@nki.jit\ndef k(x):\n    m = Mode.A\n    c = Child()\n    return x\n"
    )
    found = only("NKI104", text, "0.6")
    assert len(found) == 1 and "subclasses user class Base" in found[0].message
    assert only("NKI104", text, "0.7") == []


def test_removed_api_fixes() -> None:
    text = (
        HEAD
        + "k2 = nki.trace\n\n\n@nki.jit\ndef k(x):\n    lo = nl.fp32.min\n    i = nl.arange(128)\n    return x\n"
    )
    found = only("NKI209", text)
    assert sorted(f.span.line for f in found) == [6, 11, 12]
    fixed = text
    for f in sorted((f for f in found if f.fix), key=lambda f: f.span.line, reverse=True):
        fixed = apply_fix(fixed, f.fix)  # type: ignore[arg-type]
    assert "k2 = nki.jit" in fixed and "lo = -3.4028235e+38" in fixed


def test_static_range_only_from_0_6_and_legacy_untouched() -> None:
    text = HEAD + "@nki.jit\ndef k(x):\n    for i in nl.static_range(2):\n        pass\n    return x\n"
    assert only("NKI201", text, "0.5") == [] and len(only("NKI201", text, "0.6")) == 1
    legacy = (
        "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef k(x):\n"
        "    for i in nl.affine_range(2):\n        pass\n    return x\n"
    )
    assert "NKI201" not in codes(lint(legacy, "0.6"))


def test_divide_fix() -> None:
    text = HEAD + "@nki.jit\ndef k(a, b):\n    q = nl.divide(a, b, dtype=nl.float32)\n    return q\n"
    (f,) = only("NKI212", text)
    assert "nl.multiply(a, nl.reciprocal(b), dtype=nl.float32)" in apply_fix(text, f.fix)  # type: ignore[arg-type]


def test_while_register_and_register_control_flow() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x, s):\n    r = nisa.register_alloc()\n    n = int(r)\n    while r:\n"
        "        nisa.register_load(r, s)\n    return x\n"
    )
    assert [f.span.line for f in only("NKI112", text)] == [9]
    assert [f.severity for f in only("NKI203", text, "0.6")] == [Severity.WARNING]
    assert [f.severity for f in only("NKI203", text, "0.7")] == [Severity.ERROR]


def test_removed_mask_and_isa_dtype_keywords() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(a, t):\n    nisa.tensor_copy(dst=t, src=a, mask=None)\n"
        "    nisa.activation(dst=t, op=nl.exp, data=a, dtype=nl.float32)\n    y = nl.exp(a, dtype=nl.float32)\n"
        "    return t\n"
    )
    assert sorted(f.span.line for f in only("NKI206", text)) == [8, 9]


def test_module_state_mutation_only() -> None:
    text = HEAD + (
        "CACHE = {}\nLIMITS = [1, 2]\n\n\n@nki.jit\ndef k(x):\n    n = LIMITS[0]\n    CACHE['k'] = n\n"
        "    LIMITS.append(3)\n    local = []\n    local.append(1)\n    return x\n"
    )
    assert sorted(f.span.line for f in only("NKI123", text)) == [13, 14]


def test_frontend_custom_reported_once_per_statement() -> None:
    text = 'import os\n\nold = os.environ.setdefault("NKI_COMPILER_FRONTEND", "parser")\nos.environ["X"] = "custom"\n'
    assert [f.span.line for f in only("NKI213", text)] == [3]
    assert only("NKI213", text, "0.6") == []


def test_simulate_kernel_fix() -> None:
    text = "import nki\n\n\ndef run(k, a, b):\n    return nki.simulate_kernel(k, a, b=b)\n"
    (f,) = only("NKI209", text)
    assert apply_fix(text, f.fix).endswith("return nki.simulate(k)(a, b=b)\n")  # type: ignore[arg-type]


REGISTERS = HEAD + (
    "@nki.jit\ndef k(x, c):\n    n = nisa.scalar_load(c)\n"  # line 8
    "    while n > 0:\n        pass\n"  # 9
    "    assert n != 3\n"  # 11
    "    y = bool(n - 1)\n"  # 12
    "    m = x.shape[0] if x.shape[0] > 1 or n is None else 2\n"  # 13: Python values and identity
    "    def body(i):\n        j = i * 2\n        if j:\n            pass\n"  # 14-17
    "        if not -i:\n            pass\n"  # 18-19
    "        if x.shape[0] > 0:\n            pass\n"  # 20-21
    "    nl.fori_loop(0, n, body)\n"  # 22
    "    def again(r):\n        if r == 1:\n            pass\n        return r\n"  # 23-26
    "    nl.while_loop(n, again)\n    return x\n"
)


def test_register_comparisons_arithmetic_and_loop_parameters() -> None:
    found = only("NKI112", REGISTERS)
    assert [(f.span.line, f.span.column) for f in found] == [
        (9, 11),
        (11, 12),
        (12, 14),
        (16, 12),
        (18, 16),
        (24, 12),
    ]
    assert "comparison is traced" in found[0].message and "cannot use its value" in found[2].message
    # A function that is not passed to a device loop gets no register parameter.
    plain = only("NKI112", REGISTERS.replace("nl.fori_loop(0, n, body)", "body(1)"))
    assert [f.span.line for f in plain] == [9, 11, 12, 24]


def test_register_comparison_in_06_dynamic_range_loop() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x, n):\n    for i in nl.dynamic_range(n):\n        if i > 0 and n:\n"
        "            pass\n    return x\n"
    )
    (f,) = only("NKI112", text, "0.6")
    assert (f.span.line, f.severity) == (9, Severity.ERROR) and "`i > 0`" in f.message


def test_register_range_bound_fix_and_version() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x, c):\n    n = nisa.register_alloc()\n    nisa.register_load(n, c)\n"
        "    for j in nl.sequential_range(1, n * 2, 2):\n        nisa.dma_copy(dst=x, src=x)\n"
        "    for q in range(4, n):\n        last = q\n    return last\n"
    )
    first, second = only("NKI127", text)
    assert first.fix is not None and second.fix is None  # `last` is used after the loop: no safe rewrite
    fixed = apply_fix(text, first.fix)
    assert parses(fixed) and "nl.fori_loop(1, n * 2, _j_body, 2)" in fixed
    assert len(only("NKI127", fixed)) == 1
    assert [f.fix for f in only("NKI127", text, "0.5")] == [None, None]  # no fori_loop before 0.6
    assert "nl.dynamic_range" in only("NKI127", text, "0.5")[0].message


def test_grid_operands_selections_lists_and_data() -> None:
    text = HEAD.replace("\n\n\n", "\nimport nki.collectives as ncc\n\n\n") + (
        "@nki.jit\ndef k(x, rg):\n"  # 8
        "    out = nl.ndarray((512, 1024), dtype=x.dtype, buffer=nl.shared_hbm)\n"
        "    g = nl.alloc_tiles(tile_shape=(128, 512), element_shape=(512, 1024), buffer=nl.sbuf, dtype=x.dtype)\n"
        "    b = nl.blocks(x, tile_shape=(128, 512), block_shape=(2, 2))\n"  # 11
        "    e = nl.empty_like(g)\n"  # a grid keeps its type
        "    inner = nl.tiles(b[0, 0])\n"  # grids are fine where a grid is taken
        "    for i in range(g.shape[0]):\n"
        "        cell = g[i, 0]\n"
        "        nisa.dma_copy(dst=cell, src=x)\n"  # 16
        "        nisa.dma_copy(dst=e[i, 0].data, src=inner[0, 0])\n"  # 17
        "        y = nl.exp(cell.data)\n"
        "    ncc.all_gather(srcs=[g], dsts=[out], replica_group=rg, collective_dim=0)\n"  # 19
        "    return out\n"
    )
    found = only("NKI507", text)
    assert [(f.span.line, f.fix.edits[0].new_text if f.fix else None) for f in found] == [
        (16, "cell.data"),
        (17, "inner[0, 0].data"),
        (19, "g.data"),
    ]
    fixed = text
    for f in reversed(found):
        fixed = apply_fix(fixed, f.fix)  # type: ignore[arg-type]
    assert only("NKI507", fixed) == []
    assert only("NKI507", text, "0.6") == []


def test_collective_prepare_trigger_pairing() -> None:
    text = "import nki\nimport nki.collectives as ncc\nimport nki.language as nl\n\n\n" + (
        "@nki.jit\ndef k(src, dst, meta, rg, n):\n"  # 6-7
        "    a = ncc.all_to_all_v_prepare([src], [dst], rg, meta)\n"
        "    b = ncc.all_gather_v_prepare([src], [dst], rg, meta)\n"  # 9: a still waits
        "    ncc.all_to_all_v_trigger(a)\n    ncc.all_gather_v_trigger(b)\n"
        "    ncc.all_gather_v_trigger(b)\n"  # 12: second trigger
        "    ncc.all_to_all_v_prepare([src], [dst], rg, meta)\n"  # 13: discarded
        "    c = ncc.all_gather_v_prepare([src], [dst], rg, meta)\n"  # 14: the discarded one holds the slot
        "    for i in range(n):\n        ncc.all_gather_v_trigger(c)\n"  # 16: different loops
        "    for i in range(n):\n        d = ncc.all_to_all_v_prepare([src], [dst], rg, meta)\n"
        "        ncc.all_to_all_v_trigger(d)\n"  # fine: same loop body
        "    ncc.all_to_all_v_trigger(ncc.all_to_all_v_prepare([src], [dst], rg, meta))\n"  # fine
        "    ncc.all_to_all_v_trigger(ncc.all_gather_v_prepare([src], [dst], rg, meta))\n"  # 21: wrong kind
        "    e = ncc.all_gather_v_prepare([src], [dst], rg, meta)\n"  # 22: never triggered
        "    f = ncc.all_to_all_v_prepare([src], [dst], rg, meta)\n"  # 23: e waits; f is handed on
        "    return f\n"
    )
    found = only("NKI508", text)
    assert [f.span.line for f in found] == [9, 12, 13, 14, 16, 21, 22, 23]
    wrong = found[5]
    assert wrong.fix is not None and "ncc.all_gather_v_trigger(ncc.all_gather_v_prepare" in apply_fix(
        text, wrong.fix
    )
    assert found[0].related and found[0].related[0].span.line == 8
    assert only("NKI508", text, "0.6") == []


def test_float_loop_bounds_and_fixes() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x, n, m):\n    half = n / 2\n    q = n // 2\n"  # 6-9
        "    for i in range(half):\n        pass\n"  # 10: a name only ever a float
        "    for i in nl.affine_range(4.0):\n        pass\n"  # 12
        "    for i in range(0, (n + 1) / 2 + 1, 1):\n        pass\n"  # 14
        "    def body(i):\n        pass\n"
        "    nl.fori_loop(0, float(n), body)\n"  # 18
        "    nl.fori_loop(0, upper=m / 2, body_fun=body)\n"  # 19
        "    for i in range(q):\n        pass\n"  # int: fine
        "    for i in range(m * 1.5):\n        pass\n"  # 22
        "    return x\n"
    )
    found = only("NKI128", text)
    assert [f.span.line for f in found] == [10, 12, 14, 18, 19, 22]
    assert [f.fix is not None for f in found] == [False, True, True, False, True, False]
    fixed = text
    for f in reversed(found):
        if f.fix is not None:
            fixed = apply_fix(fixed, f.fix)
    assert (
        "nl.affine_range(4)" in fixed and "range(0, (n + 1) // 2 + 1, 1)" in fixed and "upper=m // 2" in fixed
    )
    assert [f.span.line for f in only("NKI128", fixed)] == [10, 18, 22]


def test_int64_fori_bound() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x, c):\n"
        "    t64 = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)\n"
        "    t32 = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)\n"
        "    big = nisa.scalar_load(t64)\n    small = nisa.scalar_load(src=t32)\n"  # 10-11
        "    def body(i):\n        pass\n"
        "    nl.fori_loop(0, big * 2 + 1, body)\n"  # 14
        "    nl.fori_loop(small, small + 4, body)\n"  # 15: int32, fine
        "    big = small\n    nl.fori_loop(0, big, body)\n"  # 17: rebound to an int32 scalar
        "    return x\n"
    )
    assert [f.span.line for f in only("NKI129", text)] == [14]


def test_int64_fori_bound_through_a_module_constant_or_a_dtype_string() -> None:
    """Library code names its dtypes once at module level; a constant bound twice (or shadowed) is not followed."""
    text = HEAD + (
        "WIDE = nl.int64\nNARROW = nl.int32\nTWICE = nl.int64\nTWICE = nl.int32\n\n\n"  # 6-9
        "@nki.jit\ndef k(x, NARROW):\n"  # 13: the parameter shadows the constant
        "    ta = nl.ndarray((1, 1), dtype=WIDE, buffer=nl.sbuf)\n    a = nisa.scalar_load(ta)\n"
        "    tb = nl.ndarray((1, 1), dtype='int64', buffer=nl.sbuf)\n    b = nisa.scalar_load(tb)\n"
        "    tc = nl.ndarray((1, 1), dtype=TWICE, buffer=nl.sbuf)\n    c = nisa.scalar_load(tc)\n"
        "    td = nl.ndarray((1, 1), dtype=NARROW, buffer=nl.sbuf)\n    d = nisa.scalar_load(td)\n"
        "    def body(i):\n        pass\n"
        "    nl.fori_loop(0, a, body)\n    nl.fori_loop(0, b, body)\n"  # 20, 21
        "    nl.fori_loop(0, c, body)\n    nl.fori_loop(0, d, body)\n"  # 22, 23: unknown
        "    return x\n"
    )
    assert [f.span.line for f in only("NKI129", text)] == [24, 25]


def test_user_class_equality_classes_and_comparisons() -> None:
    text = (
        "import dataclasses\nfrom dataclasses import dataclass\nfrom typing import NamedTuple\n\n"
        "import nki\nimport nki.language as nl\n\n\n"
        "class Plain:\n    pass\n\n\nclass Child(Plain):\n    pass\n\n\n"  # 9, 13: identity ==
        "class WithEq(nl.NKIObject):\n    def __eq__(self, other):\n        return True\n\n\n"  # 17
        "class InheritsEq(WithEq):\n    pass\n\n\n"  # 22
        "@dataclass\nclass Data:\n    n: int = 0\n\n\n"
        "@dataclasses.dataclass(eq=False)\nclass NoEq:\n    n: int = 0\n\n\n"  # 32: identity ==
        "class Pair(NamedTuple):\n    a: int\n    b: int\n\n\n"  # tuple ==
        "@nki.jit\ndef kernel(x, cfg: Child):\n"  # 41-42
        "    a, b = Plain(), Plain()\n"  # unpacking: not followed
        "    p = Plain()\n    q = Plain()\n    n1, n2 = NoEq(), NoEq()\n"  # 44-46
        "    e1 = InheritsEq()\n    e2 = InheritsEq()\n    d1 = Data()\n    t1 = Pair(1, 2)\n"  # 47-50
        "    r1 = p == q\n"  # 51
        "    r2 = cfg != Child()\n"  # 52
        "    r3 = p in (q, cfg)\n"  # 53
        "    r4 = e1 == e2 or d1 == Data() or t1 == Pair(1, 2) or a == b or p == 3\n"  # 54: none
        "    r5 = NoEq() == NoEq()\n"  # 55
        "    q = p\n    r6 = p == q\n"  # 56-57: q is p now (not followed)
        "    return x\n"
    )
    found = only("NKI125", text)
    assert [f.span.line for f in found] == [51, 52, 53, 55]
    assert "compares Plain instances" in found[0].message and "@dataclass or __eq__" in found[0].message
    assert only("NKI125", text, "0.6") == []


def test_unnamed_version_follows_the_code() -> None:
    dyn = HEAD + (
        "@nki.jit\ndef k(x, n):\n    for i in nl.dynamic_range(n):\n        pass\n"
        "    def body(i):\n        nisa.dma_copy(dst=x, src=x.ap([[1, 1]], scalar_offset=i * 2))\n"
        "    nl.fori_loop(0, n, body)\n    return x\n"
    )
    found = lint(dyn)  # no version named: the 0.7 fallback gives way to the code's 0.6 API
    (f202,) = [f for f in found if f.code == "NKI202"]
    assert f202.severity == Severity.WARNING and "assumed from nl.dynamic_range on line 8" in f202.message
    assert "NKI124" in codes(found)  # a 0.6-only rule runs
    assert [f.severity for f in only("NKI202", dyn)] == [Severity.ERROR]  # 0.7 named
    both = dyn.replace("    return x\n", "    s = nisa.scalar_load(x)\n    return x\n")
    assert [f.severity for f in lint(both) if f.code == "NKI202"] == [
        Severity.ERROR
    ]  # 0.7 API too: stays 0.7


def test_loop_body_parameter_is_a_register_only_where_the_loop_sees_the_function() -> None:
    text = (
        HEAD
        + (
            "@nki.jit\ndef k1(x, n):\n    def body(i):\n        if i:\n            pass\n"  # 6-10
            "    nl.fori_loop(0, n, body)\n    return x\n\n\n"
            "@nki.jit\ndef k2(x):\n    def body(flag):\n        if flag:\n            pass\n"  # 15-19: not a loop body
            "    body(True)\n    return x\n"
        )
    )
    assert [f.span.line for f in only("NKI112", text)] == [9]


def test_int64_scalar_rules_follow_dtypes_through_code() -> None:
    text = (
        HEAD
        + (
            "@nki.jit\ndef k(x, c, hbm):\n"  # 6-7
            "    t64 = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)\n"
            "    t32 = nl.ndarray((1, 1), dtype=nl.int32)\n"  # 9: default buffer sbuf
            "    big = nisa.scalar_load(t64)\n    small = nisa.scalar_load(src=t32)\n"  # 10-11
            "    a = big < 3\n    b = small < 3\n    c2 = 0 == big * 2\n    d = big is None\n"  # 12-15: 12, 14
            "    m = big + small\n    big += small\n    ok = small * 4 + 1\n"  # 16-18: 16, 17
            "    sb = nl.ndarray((128, 64), dtype=nl.float32)\n"  # 19
            "    v1 = sb.ap([[64, 1], [1, 64]], scalar_offset=nisa.scalar_load(t64))\n"  # 20
            "    v2 = sb.ap([[64, 1], [1, 64]], scalar_offset=small)\n"  # 21: int32, fine
            "    v3 = hbm.ap([[64, 1], [1, 64]], scalar_offset=nisa.scalar_load(t64))\n"  # 22: unknown (HBM param)
            "    h = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)\n"
            "    v4 = h.ap([[64, 1], [1, 64]], scalar_offset=nisa.scalar_load(t64) * 64)\n"  # 24: HBM, fine
            "    def body(i):\n"
            "        w = sb.ap([[64, 1], [1, 64]], scalar_offset=nisa.scalar_load(t64) + i)\n"  # 26: closure
            "        s = nisa.scalar_load(t32)\n        s += nisa.scalar_load(t32)\n"  # 27-28 fine
            "    nl.fori_loop(0, small, body)\n"
            "    nisa.scalar_store(t32, nisa.scalar_load(t64))\n"  # 30: width
            "    nisa.scalar_store(t64, nisa.scalar_load(t64))\n"  # 31: fine
            "    sb = t64\n    v5 = sb.ap([[1, 1], [1, 1]], scalar_offset=nisa.scalar_load(t64))\n"  # 32-33 rebound
            "    return x\n"
        )
    )
    assert [f.span.line for f in only("NKI130", text)] == [12, 14]
    assert [f.span.line for f in only("NKI131", text)] == [16, 17, 30]
    assert [f.span.line for f in only("NKI509", text)] == [20, 26, 33]
    assert all(not only(code, text, "0.6") for code in ("NKI130", "NKI131", "NKI509"))
    (store,) = [f for f in only("NKI131", text) if f.span.line == 30]
    assert "int64 NkiScalar" in store.message and "nl.int32 tile" in store.message
    assert "SBUF tensor `sb`" in only("NKI509", text)[0].message


def test_scalar_tile_dtype_shape_and_buffer() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x):\n"  # 6-7
        "    u32 = nl.ndarray((1, 1), dtype=nl.uint32, buffer=nl.sbuf)\n"
        "    u64 = nl.zeros((1, 1), dtype=nl.uint64, buffer=nl.hbm)\n"
        "    f = nl.ndarray((1, 1), nl.float32, nl.sbuf)\n"  # positional dtype and buffer
        "    wide = nl.ndarray((1, 4), dtype=nl.int32, buffer=nl.sbuf)\n"
        "    ps = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.psum)\n"
        "    good = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)\n"
        "    a = nisa.scalar_load(u32)\n    b = nisa.scalar_load(src=u64)\n"  # 14-15
        "    c = nisa.scalar_load(f)\n    d = nisa.scalar_load(wide)\n"  # 16-17
        "    e = nisa.scalar_load(ps)\n    g = nisa.scalar_load(good)\n"  # 18-19 (19 fine)
        "    h = nisa.scalar_load(wide[0:1, 0:1])\n"  # 20: a one-element view, shape not judged
        "    nisa.scalar_store(u32, g)\n    nisa.scalar_store(good, g)\n"  # 21-22 (22 fine)
        "    nisa.scalar_load(x)\n"  # parameter: unknown
        "    return x\n"
    )
    found = only("NKI510", text)
    assert [f.span.line for f in found] == [14, 15, 16, 17, 18, 21]
    assert "use nl.int32" in found[0].message and "use nl.int64" in found[1].message
    assert "1x4" in found[3].message and "PSUM" in found[4].message
    assert found[5].message.startswith("scalar_store destination `u32`")
    assert only("NKI510", text, "0.6") == []


def test_empty_like_transpose_axes_orders_and_fix() -> None:
    text = HEAD + (
        "@nki.jit\ndef k(x, axes):\n"  # 6-7
        "    a = nl.empty_like(x, transpose_axes=(1, 0))\n"
        "    b = nl.empty_like(x, transpose_axes=[0, 2, 1])\n"  # 9
        "    c = nl.empty_like(x, transpose_axes=(0, 1, 2, 3, 4))\n"  # 10: no allowed order of rank 5
        "    d = nl.empty_like(x, transpose_axes=axes)\n"  # not literal
        "    return x\n"
    )
    found = only("NKI511", text)
    assert [f.span.line for f in found] == [9, 10]
    assert found[0].fix is not None and found[1].fix is None
    fixed = apply_fix(text, found[0].fix)
    assert "transpose_axes=(2, 1, 0)" in fixed and [f.span.line for f in only("NKI511", fixed)] == [10]
    assert only("NKI511", text, "0.6") == []
