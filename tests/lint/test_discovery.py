"""Kernel discovery: decorator forms and aliases, legacy kernels, helpers in the same and in local modules,
call sites, classes; the import-alias table."""

from __future__ import annotations

import ast
import textwrap

import pytest
from nki_studio.model.imports import ImportAliases
from nki_studio.model.kernels import ModuleLoader, discover


def _kernels(src: str) -> list[str]:
    return [k.qualname for k in discover(textwrap.dedent(src), "/nonexistent/m.py").kernels]


@pytest.mark.parametrize(
    "src",
    [
        "import nki\n@nki.jit\ndef k(x): pass\n",
        "import nki\n@nki.jit(show_compiler_tb=True)\ndef k(x): pass\n",
        "from nki import jit\n@jit\ndef k(x): pass\n",
        "import nki as n\n@n.jit()\ndef k(x): pass\n",
        "import neuronxcc.nki as nki\n@nki.jit\ndef k(x): pass\n",
        "from neuronxcc import nki\n@nki.baremetal\ndef k(x): pass\n",
        "from torch_neuronx import nki_jit\n@nki_jit\ndef k(x): pass\n",
        "import nki\ndef k(x): pass\nkernel = nki.jit(k)\n",
    ],
)
def test_decorator_forms(src: str) -> None:
    assert _kernels(src) == ["k"]


def test_not_kernels() -> None:
    assert (
        _kernels(
            "import functools\n@functools.cache\ndef k(x): pass\ndef jit(f): return f\n@jit\ndef g(): pass\n"
        )
        == []
    )


def test_legacy_flag() -> None:
    d = discover("import neuronxcc.nki as nki\n@nki.jit\ndef k(x): pass\n", "/x/m.py")
    assert d.kernels[0].kernel_legacy
    d = discover("import nki\n@nki.jit\ndef k(x): pass\n", "/x/m.py")
    assert not d.kernels[0].kernel_legacy


def test_helpers_classes_and_call_sites() -> None:
    src = textwrap.dedent("""
        import nki
        import nki.language as nl

        class Cfg(nl.NKIObject):
            def width(self):
                return helper_c(2)

        def helper_a(x, n):
            return helper_b(n)

        def helper_b(n):
            return n * 2

        def helper_c(n):
            return n

        def unused(x):
            return x

        @nki.jit
        def kernel(x):
            cfg = Cfg()
            def body(i):
                return i
            nl.fori_loop(0, 4, body)
            return helper_a(x, 64)
    """)
    d = discover(src, "/nonexistent/m.py")
    names = {f.qualname for f in d.reachable}
    assert names == {"kernel", "kernel.body", "helper_a", "helper_b", "Cfg.width", "helper_c"}
    sites = [(s.caller.qualname, s.callee.qualname) for s in d.call_sites]
    assert ("kernel", "helper_a") in sites and ("helper_a", "helper_b") in sites
    call = next(s.call for s in d.call_sites if s.callee.qualname == "helper_a")
    assert isinstance(call.args[1], ast.Constant) and call.args[1].value == 64
    assert [c.name for _, c in d.classes] == ["Cfg"]


def test_local_module_helpers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("def tile(n):\n    return inner(n)\n\ndef inner(n):\n    return n\n")
    (pkg / "other.py").write_text("def far(n):\n    return n\n")
    main = pkg / "k.py"
    main.write_text(
        "import nki\nfrom .util import tile\nimport pkg.other as o\n\n@nki.jit\ndef k(x):\n"
        "    return tile(o.far(3))\n"
    )
    d = discover(main.read_text(), str(main), loader=ModuleLoader())
    assert {
        (f.qualname, f.path.endswith("util.py") or f.path.endswith("other.py"))
        for f in d.reachable
        if f.module is not d.module
    } == {("tile", True), ("inner", True), ("far", True)}
    assert d.in_this_module()[0].qualname == "k"


def test_aliases() -> None:
    tree = ast.parse(
        "import nki.language as L\nfrom nki import isa\nfrom nki.language import affine_range as ar\n"
        "import numpy\nimport neuronxcc.nki.language as old\n"
    )
    a = ImportAliases.from_tree(tree)

    def expr(s: str) -> ast.expr:
        return ast.parse(s, mode="eval").body

    assert a.resolve(expr("L.exp")) == "nki.language.exp"
    assert a.resolve(expr("isa.nc_matmul")) == "nki.isa.nc_matmul"
    assert a.resolve(expr("ar")) == "nki.language.affine_range"
    assert a.resolve(expr("old.arange")) == "neuronxcc.nki.language.arange"
    assert a.canonical(expr("old.arange")) == "nki.language.arange"
    assert a.library_of(expr("numpy.exp")) == "numpy"
    assert a.resolve(expr("x.exp")) is None
    assert a.locals_for("nki.language") == ["L", "old"]
    assert [r.local for r in a.uses_legacy()] == ["old"]


_HELPER_MODULE = """
import numpy as np
import nki
import nki.language as nl
from nki.isa import tensor_copy
from nki.collectives import all_reduce
from neuronxcc.nki import language as legacy_nl

DTYPE = nl.bfloat16


def alloc_tile(n):
    return nl.ndarray((nl.tile_size.pmax, n), dtype=DTYPE, buffer=nl.sbuf)


def copy_tile(dst, src):
    tensor_copy(dst=dst, src=src)


def reduce_all(dst, src):
    all_reduce(dst=dst, src=src)


def legacy_exp(t):
    return legacy_nl.exp(t)


def host_inputs(n):
    return np.zeros((nl.tile_size.pmax, n), dtype=np.float32), nl.float32


def run(kernel, a):
    return nki.jit(kernel)(a)
"""


def test_helper_module_alone_calls_of_kernel_only_apis_make_kernel_code() -> None:
    """A helper opened on its own is kernel code when it calls nki.language / nki.isa / nki.collectives
    functions (any spelling); attribute reads such as dtypes or tile sizes and calls of nki.* do not count."""
    d = discover(textwrap.dedent(_HELPER_MODULE), "/nonexistent/helpers.py")
    assert d.kernels == []
    assert [f.qualname for f in d.reachable] == ["alloc_tile", "copy_tile", "reduce_all", "legacy_exp"]


def test_helper_module_alone_is_linted_against_the_subset_rules() -> None:
    from nki_studio.model.targets import NkiVersion, Target
    from nki_studio.nkilint.api import lint_source
    from nki_studio.nkilint.config import LintConfig

    src = textwrap.dedent("""
        import nki.language as nl


        def tiles(n):
            try:
                return nl.ndarray((128, n), dtype=nl.float32, buffer=nl.sbuf)
            except ValueError:
                return None


        def host(n):
            try:
                return [nl.float32] * n
            except ValueError:
                return None
    """)
    found = lint_source(
        src, "/nonexistent/helpers.py", LintConfig(target=Target(nki_version=NkiVersion(0, 6)))
    )
    assert [(f.code, f.span.line) for f in found if f.code == "NKI101"] == [("NKI101", 6)]
