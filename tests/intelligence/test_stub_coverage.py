"""Every public name the NKI reference documents exists in the shipped stubs, with the documented parameters.

Both sides are parsed: the reference pages by ``reference_api``, the stubs with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import reference_api as ref
from reference_api import Api, Param

STUBS = Path(__file__).resolve().parents[2] / "server" / "stubs" / "nki"


class Stub:
    """Top-level names, function parameters and classes of one ``.pyi``."""

    def __init__(self, path: Path) -> None:
        self.tree = ast.parse(path.read_text(), filename=str(path))
        self.names: set[str] = set()
        self.functions: dict[str, list[Param]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef):
                self.names.add(node.name)
                self.functions[node.name] = params_of(node)
            elif isinstance(node, ast.ClassDef):
                self.names.add(node.name)
                self.classes[node.name] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self.names.add(node.target.id)
            elif isinstance(node, ast.Assign):
                self.names |= {t.id for t in node.targets if isinstance(t, ast.Name)}

    def methods(self, cls: str) -> dict[str, list[Param]]:
        return {n.name: params_of(n)[1:] for n in self.classes[cls].body if isinstance(n, ast.FunctionDef)}

    def members(self, cls: str) -> set[str]:
        return {
            t.id
            for n in self.classes[cls].body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }


def params_of(node: ast.FunctionDef) -> list[Param]:
    a = node.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    out = [Param(p.arg, i >= first_default, False) for i, p in enumerate(positional)]
    out += [Param(p.arg, d is not None, True) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    return out


def stub(module: str) -> Stub:
    return Stub(STUBS / module / "__init__.pyi")


def check_signature(name: str, documented: list[Param], actual: list[Param]) -> list[str]:
    """Documented parameters in order with the same required/optional status; the stub may only add keyword-only
    parameters (0.7 additions) after them."""
    names = [p.name for p in documented]
    head = [p.name for p in actual[: len(documented)]]
    problems = []
    if head != names:
        problems.append(
            f"{name}: documented ({', '.join(names)}), stub ({', '.join(p.name for p in actual)})"
        )
    elif any(d.has_default != a.has_default for d, a in zip(documented, actual, strict=False)):
        problems.append(f"{name}: defaults differ from the documented signature")
    extra = actual[len(documented) :]
    if any(not p.keyword_only for p in extra):
        problems.append(f"{name}: undocumented positional parameters {[p.name for p in extra]}")
    return problems


def check_module(api: Api, module: Stub) -> list[str]:
    problems = [f"missing public name {n!r}" for n in sorted(api.names - module.names)]
    for name, documented in sorted(api.signatures.items()):
        if name in module.functions:
            problems += check_signature(name, documented, module.functions[name])
        elif name in module.classes:
            cls = module.classes[name]
            if any(isinstance(b, ast.Name) and b.id == "Exception" for b in cls.bases):
                continue  # ``Error(Exception)`` documents the base class, not parameters
            init = module.methods(name).get("__init__")
            if init is None:
                problems.append(f"{name}: class has no documented __init__")
            else:
                problems += check_signature(name, documented, init)
        else:
            problems.append(f"missing documented callable {name!r}")
    return problems


def test_reference_pages_are_parsed() -> None:
    """Sanity floor so a parser regression cannot make the coverage tests vacuous."""
    lang, isa, ccl = ref.language_api(), ref.isa_api(), ref.collectives_api()
    assert len(lang.names) > 120 and len(lang.signatures) > 80 and len(lang.methods) >= 12
    assert len(isa.names) > 55 and len(isa.signatures) > 50 and "nc_matmul" in isa.signatures
    assert [p.name for p in isa.signatures["nc_matmul"]][:3] == ["dst", "stationary", "moving"]
    assert len(isa.enums) >= 7 and len(ccl.signatures) >= 10


def test_language_stub_covers_reference() -> None:
    assert check_module(ref.language_api(), stub("language")) == []


def test_tensor_methods_cover_reference() -> None:
    methods = stub("language").methods("NkiTensor")
    problems = []
    for name, documented in ref.language_api().methods.items():
        if name not in methods:
            problems.append(f"NkiTensor.{name} missing")
        else:
            problems += check_signature(f"NkiTensor.{name}", documented, methods[name])
    assert problems == []


def test_isa_stub_covers_reference() -> None:
    assert check_module(ref.isa_api(), stub("isa")) == []


def test_isa_enums_have_documented_members() -> None:
    isa = stub("isa")
    problems = [
        f"{enum}.{m}" for enum, members in ref.isa_api().enums.items() for m in members - isa.members(enum)
    ]
    assert problems == []


def test_collectives_stub_covers_reference() -> None:
    assert check_module(ref.collectives_api(), stub("collectives")) == []


def test_checker_reports_a_wrong_signature() -> None:
    """The comparison itself can fail: a swapped parameter and a missing name are reported."""
    api = Api(names={"f", "g"}, signatures={"f": [Param("dst", False, False), Param("src", False, False)]})
    module = Stub.__new__(Stub)
    module.names, module.classes = {"f"}, {}
    module.functions = {"f": [Param("src", False, False), Param("dst", False, False)]}
    problems = check_module(api, module)
    assert any("missing public name 'g'" in p for p in problems) and any(p.startswith("f:") for p in problems)


@pytest.mark.skipif(
    not ref.SHARED.is_dir(), reason="the team's nki-reference folder is not next to this checkout"
)
def test_vendored_reference_matches_shared_copy() -> None:
    """CI reads the vendored copy; it must not drift from the team's reference."""
    for page in ("language.md", "isa.md", "collectives.md"):
        assert (ref.VENDORED / page).read_text() == (ref.SHARED / page).read_text(), page
