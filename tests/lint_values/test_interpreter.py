"""The compile-time interpreter: values, derivations, loops, helpers, asserts, robustness, public helpers."""

from __future__ import annotations

import time

from nki_studio.model.analysis import describe_allocations, infer_kernel_inputs, interpret_source
from nki_studio.model.targets import Target, parse_generation
from valtest import HEADER, only, run


def test_message_names_the_derivation() -> None:
    code = "TILE = 128\n\n@nki.jit\ndef k(a):\n    t = nl.ndarray((TILE * 2, 4), dtype=nl.float32)\n"
    (f,) = only(run(code), "NKI301")
    assert "256 = TILE*2 (TILE=128) > 128" in f.message
    assert f.span.line == 9 and f.severity.value == "error"


def test_shape_from_assert_and_unpacking() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    assert a.shape == (256, 64)\n    P, F = a.shape\n"
        "    t = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf)\n"
    )
    (f,) = only(run(code), "NKI301")
    assert "256 = P" in f.message and "a.shape[0]=256" in f.message


def test_unknown_shape_never_fires() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    P, F = a.shape\n    t = nl.ndarray((P * 2, F), dtype=nl.float32)\n"
        "    u = nl.ndarray((a.shape[0], 8), dtype=nl.float32, buffer=nl.psum)\n"
    )
    assert run(code) == []


def test_helper_interpreted_per_call_site() -> None:
    code = (
        "def make(n):\n    return nl.ndarray((n, 8), dtype=nl.float32, buffer=nl.sbuf)\n\n"
        "@nki.jit\ndef k(a):\n    x = make(64)\n    y = make(64 * 4)\n"
    )
    (f,) = only(run(code), "NKI301")
    assert f.span.line == 6  # inside the helper
    assert "256 = n (n=64*4)" in f.message
    assert [r.span.line for r in f.related] == [11]  # the call that passed 256


def test_loop_variable_takes_range_values_and_slices_are_sized() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    assert a.shape == (512, 64)\n"
        "    for i in range(3):\n        t = nl.load(a[0:(i + 1) * 64, :])\n"
    )
    (f,) = only(run(code), "NKI301")
    assert "192 = (i+1)*64 (i=2)" in f.message and "result of nl.load" in f.message


def test_slices_of_a_known_dim_are_clamped_like_python() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    t = nl.ndarray((128, 64), dtype=nl.float32)\n"
        "    nisa.memset(dst=t[0:256, :], value=0.0)\n    nisa.memset(dst=t[-300:, 0:8], value=0.0)\n"
    )
    assert only(run(code), "NKI301") == []


def test_long_loop_is_summarised_and_loop_carried_values_forgotten() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    n = 64\n    for i in range(1000):\n        n = n + 64\n"
        "        t = nl.ndarray((n, 8), dtype=nl.float32)\n"
    )
    assert only(run(code), "NKI301") == []  # n is loop-carried: unknown in the representative iteration


def test_tile_size_and_nc_version_follow_the_target() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    if nisa.get_nc_version() == nisa.nc_version.gen4:\n"
        "        t = nl.ndarray((nl.tile_size.pmax + 1, 8), dtype=nl.float32)\n"
    )
    assert only(run(code, target="trn2"), "NKI301") == []
    (f,) = only(run(code, target="trn3"), "NKI301")
    assert "129 = nl.tile_size.pmax+1" in f.message


def test_kernel_assert_helper_and_dataclass_config() -> None:
    code = (
        "def kernel_assert(cond, msg):\n    assert cond, msg\n\nclass Cfg(nl.NKIObject):\n    tile: int = 512\n\n"
        "@nki.jit\ndef k(a):\n    kernel_assert(a.shape == (128, 1024), 'shape')\n    cfg = Cfg()\n"
        "    t = nl.ndarray((cfg.tile, a.shape[1]), dtype=nl.float32)\n"
    )
    (f,) = only(run(code), "NKI301")
    assert "512" in f.message


def test_odd_code_degrades_instead_of_raising() -> None:
    code = (
        "def rec(n):\n    return rec(n + 1)\n\n@nki.jit\ndef k(a, *args, **kw):\n    x = rec(1)\n"
        "    y = [z for z in a if z] + (lambda q: q)(3)\n    w = 1 / 0\n    v = 'a' * 10 ** 12\n"
        "    del x\n    while True:\n        pass\n    u = x[::0]\n    s = {1: 2}[1]\n"
        "    try:\n        t = nl.ndarray((w, 2 ** 100), dtype=nl.float32)\n    finally:\n        pass\n"
    )
    started = time.perf_counter()
    assert run(code) == []
    assert time.perf_counter() - started < 5


def test_describe_allocations_and_infer_inputs() -> None:
    code = HEADER + (
        "@nki.jit\ndef k(a, b, eps=1e-6):\n    assert a.shape == (128, 512)\n"
        "    assert a.dtype == nl.bfloat16\n"
        "    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)\n"
        "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n    return out\n"
    )
    allocs = describe_allocations(code, "/nonexistent/k.py", Target())
    assert [(a.span.line, a.shape, a.dtype, a.buffer, a.bytes_per_partition) for a in allocs] == [
        (9, (128, 512), "bfloat16", "sbuf", 1024),
        (10, (128, 512), "bfloat16", "shared_hbm", None),
    ]
    assert infer_kernel_inputs(code, "/nonexistent/k.py", "k") == {"a": ((128, 512), "bfloat16"), "b": None}


def test_helper_in_another_file_reports_at_the_call_site(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "helpers.py").write_text(
        HEADER + "def buf(n):\n    return nl.ndarray((n, 4), dtype=nl.float32)\n"
    )
    kernel = tmp_path / "kern.py"
    code = "from .helpers import buf\n\n@nki.jit\ndef k(a):\n    x = buf(300)\n"
    kernel.write_text(HEADER + code)
    (f,) = only(run(code, path=str(kernel)), "NKI301")
    assert f.span.line == 9 and f.path == str(kernel)
    assert "300" in f.message and f.related[0].path.endswith("helpers.py")


def test_interpretation_is_fast_on_a_big_generated_module() -> None:
    body = "".join(
        f"@nki.jit\ndef k{i}(a):\n    assert a.shape == (128, 2048)\n"
        f"    for j in range(16):\n        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)\n"
        f"        nisa.dma_copy(dst=t, src=a[:, j * 128:(j + 1) * 128])\n"
        f"        p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
        f"        nisa.tensor_copy(dst=p, src=t)\n\n"
        for i in range(150)
    )
    facts = interpret_source(HEADER + body, "/nonexistent/big.py", Target(parse_generation("trn2")))
    assert facts is not None and len(facts.kernels()) == 150
    assert all(r.complete for r in facts.roots)


def test_nested_function_reads_variables_at_call_time() -> None:
    code = (
        "@nki.jit\ndef k(a):\n    n = 512\n    def body():\n"
        "        return nl.ndarray((n, 4), dtype=nl.float32)\n    n = 64\n    t = body()\n"
    )
    assert only(run(code), "NKI301") == []  # Python closures bind late: n is 64 when body() runs
    (f,) = only(run(code.replace("n = 64", "n = 256")), "NKI301")
    assert "256" in f.message


def test_infer_inputs_through_unpacked_dims_and_shape_index_asserts() -> None:
    code = HEADER + (
        "@nki.jit\ndef k(a, b, c):\n    P, F = a.shape\n    assert P == 128\n    assert F == 512\n"
        "    M, N = b.shape\n    assert b.shape[0] == 64 and N == 32\n    K = c.shape[0]\n"
        "    assert K == 4\n    t = nl.ndarray((P, F), dtype=nl.float32)\n"
    )
    assert infer_kernel_inputs(code, "/nonexistent/k.py", "k") == {
        "a": ((128, 512), None),
        "b": ((64, 32), None),
        "c": None,
    }  # c's rank is unknown


def test_never_raises_on_ordinary_python_every_function_as_a_root() -> None:
    """Host code (this project's own modules) is full of constructs kernels never use; every function is
    interpreted as a root and must degrade to unknown, never raise."""
    import ast
    import pathlib

    from nki_studio.model.analysis import interpret
    from nki_studio.model.kernels import discover

    root = pathlib.Path(__file__).resolve().parents[2] / "server"
    files = sorted(root.glob("model/*.py")) + sorted(root.glob("nkilint/**/*.py"))
    assert len(files) > 20
    roots = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        facts = interpret(discover(text, str(path), tree, extra_roots=names), Target())
        roots += len(facts.roots)
    assert roots > 100


def test_writes_under_unknown_ifs_and_summarised_loops_are_not_trusted() -> None:
    code = (
        "class Cfg(nl.NKIObject):\n    tile: int = 128\n\n@nki.jit\ndef k(a, flag):\n    cfg = Cfg()\n"
        "    if flag:\n        cfg.tile = 256\n    parts = []\n    if flag:\n        parts.append(1)\n"
        "    else:\n        parts.append(2)\n    n = len(parts) * 128\n"
        "    for i in range(100):\n        cfg.tile = 64 * (i + 1)\n"
        "    a1 = nl.ndarray((n, 4), dtype=nl.float32)\n    a2 = nl.ndarray((cfg.tile, 4), dtype=nl.float32)\n"
    )
    assert only(run(code), "NKI301") == []  # len(parts) is 1, cfg.tile is unknown after the loop
    sure = code.replace("    if flag:\n        cfg.tile = 256\n", "    cfg.tile = 256\n").replace(
        "    for i in range(100):\n        cfg.tile = 64 * (i + 1)\n", ""
    )
    (f,) = only(run(sure), "NKI301")
    assert "256" in f.message  # the a2 allocation: the write is certain


def test_an_interpreter_crash_costs_one_kernel_not_the_lint_run(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from nki_studio.model import interpreter

    def boom(self, fn, args):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated interpreter bug")

    monkeypatch.setattr(interpreter.Interpreter, "run_function", boom)
    facts = interpret_source(HEADER + "@nki.jit\ndef k(a):\n    pass\n", "/nonexistent/k.py", Target())
    assert facts is not None and [r.complete for r in facts.roots] == [False]
    assert run("@nki.jit\ndef k(a):\n    t = nl.ndarray((256, 4), dtype=nl.float32)\n") == []
