"""NKI513 (jit configuration), NKI512 (grid shapes) and NKI132 (fori/while body side effects): each documented
constraint fires on the construct that breaks it and stays silent on the documented forms."""

from __future__ import annotations

from nkilint_testutil import lint

HEADER = (
    "import os\nimport nki\nimport nki.isa as nisa\nimport nki.language as nl\n"
    "from nki.compiler import AddressRotation, CompileConfig, SpecializationConfig\n\n\n"
)
BODY = (
    "def kernel(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n"
)


def _found(code: str, rule: str, version: str = "0.7") -> list[tuple[int, str, str]]:
    return [(f.span.line, f.severity.value, f.message) for f in lint(code, version) if f.code == rule]


def test_jit_config_options_types_and_keywords() -> None:
    code = (
        HEADER
        + (
            "@nki.jit(\n"
            "    compile_config=CompileConfig(barrier_check=1, address_rotation=True, opt_level=3),\n"
            "    specialization_config=CompileConfig(dead_code_elim=False),\n"
            ")\n"
        )
        + BODY
    )
    found = _found(code, "NKI513")
    messages = [m for _, _, m in found]
    assert any("CompileConfig.barrier_check takes a bool, not 1" in m for m in messages), found
    assert any(
        "address_rotation takes an nki.compiler.AddressRotation member, not True" in m for m in messages
    )
    unknown = [f for f in found if "`opt_level` is not an NKI 0.7 CompileConfig option" in f[2]]
    assert len(unknown) == 1 and unknown[0][1] == "warning"
    assert any(
        "specialization_config=...) takes an nki.compiler.SpecializationConfig, not CompileConfig" in m
        for m in messages
    )
    assert len(found) == 4
    good = (
        HEADER
        + (
            "@nki.jit(\n"
            "    compile_config=CompileConfig(barrier_check=True, address_rotation=AddressRotation.DISABLE),\n"
            "    specialization_config=SpecializationConfig(allow_nested_config_override=False),\n"
            ")\n"
        )
        + BODY
    )
    assert _found(good, "NKI513") == []
    assert _found(code, "NKI513", "0.6") == []  # nki.compiler is 0.7


def test_jit_config_prefetch_ring_conflict_and_lnc_degrees() -> None:
    code = (
        HEADER.replace(
            "\n\n\n",
            '\nos.environ["NKI_PREFETCH_RING_SIZE"] = "4"\n'
            'os.environ.setdefault("NEURON_LOGICAL_NC_CONFIG", "4")\n\n\n',
        )
        + ("@nki.jit(compile_config=CompileConfig(prefetch_auto=True))\n")
        + BODY
        + "\n\ndef run(x):\n    return kernel[3](x)\n"
    )
    messages = [m for _, _, m in _found(code, "NKI513")]
    assert any("mutually exclusive" in m for m in messages), messages
    assert any("kernel[3]: the LNC degree of a launch is 1 or 2" in m for m in messages)
    assert any("NEURON_LOGICAL_NC_CONFIG='4'" in m for m in messages)
    fine = (
        HEADER.replace("\n\n\n", '\nos.environ["NEURON_LOGICAL_NC_CONFIG"] = "2"\n\n\n')
        + ("@nki.jit(compile_config=CompileConfig(prefetch_auto=True))\n")
        + BODY
        + "\n\ndef run(x):\n    return kernel[2](x)\n"
    )
    assert _found(fine, "NKI513") == []


def _kernel(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return HEADER + "@nki.jit\ndef kernel(x):\n" + lines + "    return x\n"


def test_grid_allocation_shapes_follow_the_documented_constraints() -> None:
    code = _kernel(
        """
a = nl.alloc_tiles(tile_shape=(128.0, 64), element_shape=(128, 256), buffer=nl.sbuf, dtype=x.dtype)
b = nl.alloc_tiles(tile_shape=(128, 0), element_shape=(128, 256), buffer=nl.sbuf, dtype=x.dtype)
c = nl.alloc_tiles(tile_shape=(2, 128, 64), element_shape=(128, 256), buffer=nl.shared_hbm, dtype=x.dtype)
d = nl.alloc_blocks(tile_shape=(128, 64), block_shape=(2,), element_shape=(128, 256), buffer=nl.sbuf, dtype=x.dtype)
e = nl.alloc_tiles(tile_shape=(256, 64), element_shape=(256, 256), buffer=nl.sbuf, dtype=x.dtype)
f = nl.tiles(x, tile_shape=(128,))
"""
    )
    found = _found(code, "NKI512")
    lines = {line: m for line, _, m in found}
    first = code.splitlines().index("def kernel(x):") + 2
    assert "must be Python ints, not 128.0" in lines[first]
    assert "must be positive, got 0" in lines[first + 1]
    assert "more dims than element_shape" in lines[first + 2]
    assert "block_shape (2,) must have the rank of tile_shape" in lines[first + 3]
    assert "spans tile_shape[0] = 256 partitions" in lines[first + 4]
    assert "at least 2 dims" in lines[first + 5]
    assert len(found) == 6
    assert _found(code, "NKI512", "0.6") == []


def test_grid_selections_stay_within_the_grid_and_remainders_are_fine() -> None:
    code = _kernel(
        """
g = nl.alloc_tiles(tile_shape=(128, 128), element_shape=(128, 400), buffer=nl.sbuf, dtype=x.dtype)
nisa.memset(dst=g[0, 3].data, value=0.0)
nisa.memset(dst=g[0, 4].data, value=0.0)
nisa.memset(dst=g[0, ::-1].data, value=0.0)
nisa.memset(dst=g[0, 0, 0].data, value=0.0)
"""
    )
    found = _found(code, "NKI512")
    assert [m for _, _, m in found] == [
        "grid index 4 is out of range for a grid dim of 4 (shape (1, 4))",
        "grid slices take a positive step, got -1",
        "3 indices for a grid of shape (1, 4)",
    ], found
    blocks = _kernel(
        """
g = nl.alloc_blocks(tile_shape=(128, 128), block_shape=(1, 2), element_shape=(128, 640), buffer=nl.sbuf, dtype=x.dtype)
nisa.memset(dst=g[0, 2].data, value=0.0)
nisa.memset(dst=g[0, 3].data, value=0.0)
"""
    )
    assert [m for _, _, m in _found(blocks, "NKI512")] == [
        "grid index 3 is out of range for a grid dim of 3 (shape (1, 3))"
    ]


LOOP = """
import nki
import nki.isa as nisa
import nki.language as nl

log = []


@nki.jit
def kernel(x, n):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    seen = []
    count = 0
    stats = {"steps": 0}

    def body(i):
        nonlocal count
        t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)   # local: fine
        names = []
        names.append("t")                                         # a local list: fine
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=out, src=t)
        seen.append(i)
        log.append(i)
        count += 1
        stats["steps"] += 1
        print(i)

    nl.fori_loop(0, n, body)

    def again(r):
        seen.clear()
        return r

    nl.while_loop(n, again)
    print(len(seen))                                              # outside a body: NKI120's
    return out
"""


def test_loop_body_python_state_changes_once() -> None:
    found = _found(LOOP, "NKI132")
    lines = LOOP.splitlines()
    flagged = sorted(lines[line - 1].strip().split("#")[0].strip() for line, _, _ in found)
    assert flagged == sorted(
        ["seen.append(i)", "log.append(i)", "count += 1", 'stats["steps"] += 1', "print(i)", "seen.clear()"]
    ), found
    assert all(sev == "warning" for _, sev, _ in found)
    prints = [f for f in lint(LOOP, "0.7") if f.code == "NKI120"]
    assert [f.span.line for f in prints] == [
        next(k for k, t in enumerate(lines, 1) if "print(len(seen))" in t)
    ]
    assert _found(LOOP, "NKI132", "0.6") == []  # the parser front end does not run the body as Python
    assert len([f for f in lint(LOOP, "0.6") if f.code == "NKI120"]) == 2


IF_ELSE = (
    HEADER
    + """@nki.jit
def kernel(x, flag):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=flag_sb, src=flag)
    ran = []
    count = 0
    on_device = nisa.scalar_load(flag_sb) > 0

    def then_branch():
        nonlocal count
        nisa.dma_copy(dst=out, src=x)                             # device work: fine
        ran.append("then")
        count += 1
        print("then")

    def else_branch():
        ran.append("else")

    def compile_time():
        ran.append("static")                                      # a Python condition: only one is called

    nl.if_else(on_device, then_branch, else_branch)
    nl.if_else(nisa.scalar_load(flag_sb) * 2, then_fn=else_branch)
    nl.if_else(True, compile_time)
    nl.if_else(flag, compile_time)                                # a parameter: kind unknown, not reported
    print(ran)                                                    # outside a callback: NKI120's
    return out
"""
)


def test_if_else_callback_python_state_changes_for_both_branches() -> None:
    found = _found(IF_ELSE, "NKI133")
    lines = IF_ELSE.splitlines()
    flagged = sorted(lines[line - 1].strip().split("#")[0].strip() for line, _, _ in found)
    assert flagged == sorted(['ran.append("then")', "count += 1", 'print("then")', 'ran.append("else")']), (
        found
    )
    assert all(sev == "warning" and "whichever branch the device takes" in m for _, sev, m in found)
    prints = [f.span.line for f in lint(IF_ELSE, "0.7") if f.code == "NKI120"]
    assert prints == [
        next(k for k, t in enumerate(lines, 1) if "print(ran)" in t)
    ]  # the callback's is NKI133's
    assert _found(IF_ELSE, "NKI133", "0.6") == []  # nl.if_else is a 0.7 (tracer) API


def test_a_comparison_of_a_scalar_load_is_a_register() -> None:
    # The if_else page's own form, `nisa.scalar_load(t) > 0` bound to a name: a device value, so a Python `if`
    # on it is NKI112's (it was unknown while only names bound to a register counted as operands).
    code = HEADER + (
        "@nki.jit\ndef kernel(x, flag):\n"
        "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
        "    flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)\n"
        "    nisa.dma_copy(dst=flag_sb, src=flag)\n"
        "    positive = nisa.scalar_load(flag_sb) > 0\n"
        "    shape_ok = x.shape[0] > 0\n"
        "    if positive:\n        nisa.dma_copy(dst=out, src=x)\n"
        "    if shape_ok:\n        nisa.dma_copy(dst=out, src=x)\n"
        "    return out\n"
    )
    lines = code.splitlines()
    found = [line for line, _, _ in _found(code, "NKI112")]
    assert found == [next(k for k, t in enumerate(lines, 1) if t.strip() == "if positive:")]
