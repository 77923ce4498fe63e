"""Every public NKI 0.7 name is simulated with its documented parameters, or listed as not implemented (with a
reason) in docs/simulator.md; the shipped stubs declare the same names.

The names: the reference pack (language.md, isa.md, collectives.md via ``tests/intelligence/reference_api.py``)
plus ``nki_0_7_names.json``, extracted from the 0.7 API pages it cites.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from nki_studio.sim import collectives, isa, language, nki_compiler, nki_module
from nki_studio.sim.unimplemented import Unimplemented

ROOT = Path(__file__).resolve().parents[3]
NAMES = json.loads((Path(__file__).with_name("nki_0_7_names.json")).read_text())
SIMULATOR_DOC = ROOT / "docs" / "simulator.md"
STUBS = ROOT / "server" / "stubs" / "nki"
MODULES: dict[str, ModuleType] = {
    "nki": nki_module,
    "nki.language": language,
    "nki.isa": isa,
    "nki.collectives": collectives,
    "nki.compiler": nki_compiler,
}


def _reference_api() -> Any:
    if "reference_api" in sys.modules:  # tests/intelligence loaded it already
        return sys.modules["reference_api"]
    spec = importlib.util.spec_from_file_location(
        "reference_api", ROOT / "tests" / "intelligence" / "reference_api.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_api"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


REF = _reference_api()


def documented() -> dict[str, list[Any] | None]:
    """``"module.name"`` -> documented parameters (None: no signature documented)."""
    out: dict[str, list[Any] | None] = {}
    for module, api in (
        ("nki.language", REF.language_api()),
        ("nki.isa", REF.isa_api()),
        ("nki.collectives", REF.collectives_api()),
    ):
        for name in api.names:
            out[f"{module}.{name}"] = api.signatures.get(name)
        if module == "nki.language":
            for name, params in api.methods.items():
                out[f"nki.language.NkiTensor.{name}"] = params
    for entry in NAMES["names"]:
        params = entry["params"]
        # ``*args``/``**kwargs`` are not parameters a caller names (parse_params would keep their names)
        params = None if params is None else re.sub(r",?\s*\*{1,2}\w+", "", params)
        out[f"{entry['module']}.{entry['name']}"] = None if params is None else REF.parse_params(params)
    return out


def not_implemented() -> dict[str, str]:
    """The table of docs/simulator.md's "Not implemented" section: ``"module.name"`` -> reason."""
    text = SIMULATOR_DOC.read_text()
    section = text.split("## Not implemented", 1)[1].split("\n## ", 1)[0]
    return {m[0]: m[1].strip() for m in re.findall(r"^\| `(nki[\w.]*)` \| (.*?) \|$", section, re.M)}


def resolve(qualified: str) -> Any:
    """The simulator's object for ``module.name`` (a class attribute for ``module.Class.name``), or None."""
    owner, _, name = qualified.rpartition(".")
    if owner in MODULES:
        value = vars(MODULES[owner]).get(name)
        if value is None and hasattr(MODULES[owner], name):  # module __getattr__: a placeholder at best
            value = getattr(MODULES[owner], name)
        return None if isinstance(value, Unimplemented) else value
    parent = resolve(owner)
    if isinstance(parent, type):
        if name in getattr(parent, "__members__", {}) or any(name in vars(k) for k in parent.__mro__):
            return getattr(parent, name, True)
        if name in getattr(parent, "OPTIONS", {}):  # nki.compiler configs: documented options
            return True
        return name in getattr(parent, "__annotations__", {}) or None
    return None


def parameter_problems(name: str, params: list[Any], fn: Any) -> list[str]:
    """The documented parameters, in order, with the same required/optional status; extras only optional."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    actual = [
        p
        for p in sig.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"
    ]
    wanted = [p for p in params if not p.name.startswith("*") and p.name]
    problems = []
    if [p.name for p in actual[: len(wanted)]] != [p.name for p in wanted]:
        problems.append(
            f"{name}: documented ({[p.name for p in wanted]}), simulator ({[p.name for p in actual]})"
        )
        return problems
    for doc, act in zip(wanted, actual, strict=False):
        if doc.has_default != (act.default is not act.empty):
            problems.append(f"{name}({doc.name}): documented {'optional' if doc.has_default else 'required'}")
        if doc.keyword_only != (act.kind is act.KEYWORD_ONLY):
            problems.append(
                f"{name}({doc.name}): documented {'keyword-only' if doc.keyword_only else 'positional'}"
            )
    problems += [
        f"{name}({p.name}): undocumented and required" for p in actual[len(wanted) :] if p.default is p.empty
    ]
    return problems


def test_the_0_7_list_cites_its_sources():
    assert all(entry["source"] in NAMES["sources"] for entry in NAMES["names"])
    assert len({(e["module"], e["name"]) for e in NAMES["names"]}) == len(NAMES["names"])


def test_every_documented_name_is_simulated_or_listed_with_a_reason():
    missing = not_implemented()
    problems = []
    for qualified, params in sorted(documented().items()):
        obj = resolve(qualified)
        if obj is None:
            if not missing.get(qualified):
                problems.append(f"{qualified}: neither simulated nor listed in docs/simulator.md")
            continue
        if qualified in missing:
            problems.append(f"{qualified}: simulated but listed as not implemented")
        if params is not None and callable(obj) and not inspect.isclass(obj):
            problems += parameter_problems(qualified, params, obj)
    assert problems == []


def test_listed_names_really_are_missing():
    """No stale rows: a listed name is absent from the simulator or only a placeholder."""
    assert (
        "| Name | Reason |" in SIMULATOR_DOC.read_text().split("## Not implemented", 1)[1]
    )  # the table is there
    listed = not_implemented()
    assert all(listed.values())
    for qualified in listed:
        assert resolve(qualified) is None, qualified


def _stub_names(module: str) -> dict[str, ast.ClassDef | None]:
    path = STUBS / "__init__.pyi" if module == "nki" else STUBS / module.split(".", 1)[1] / "__init__.pyi"
    out: dict[str, ast.ClassDef | None] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node if isinstance(node, ast.ClassDef) else None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
        elif isinstance(node, ast.Assign):
            out.update({t.id: None for t in node.targets if isinstance(t, ast.Name)})
    return out


def _class_members(node: ast.ClassDef, classes: dict[str, ast.ClassDef | None]) -> set[str]:
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
    for base in node.bases:  # members of stub base classes (NkiTileGrid -> NkiGrid)
        parent = classes.get(base.id) if isinstance(base, ast.Name) else None
        if parent is not None:
            names |= _class_members(parent, classes)
    return names


@pytest.mark.parametrize("entry", NAMES["names"], ids=lambda e: f"{e['module']}.{e['name']}")
def test_the_stubs_declare_every_0_7_name(entry: dict[str, Any]):
    module, name = entry["module"], entry["name"]
    if module in MODULES:
        assert name in _stub_names(module)
        return
    owner, _, cls = module.rpartition(".")
    classes = _stub_names(owner)
    node = classes.get(cls)
    assert node is not None, f"stub class {module}"
    assert name in _class_members(node, classes)


def test_the_check_can_fail():
    params = REF.parse_params("a, b=1, *, c=None")
    assert parameter_problems("f", params, lambda a, b, c=None: None)  # b required
    assert parameter_problems("f", params, lambda a, b=1, c=None: None)  # c positional
    assert parameter_problems("f", params, lambda a, b=1, *, c=None, d: None)  # d required, undocumented
    assert not parameter_problems("f", params, lambda a, b=1, *, c=None, d=0: None)
    assert resolve("nki.language.no_such_name") is None and resolve("nki.language.par_dim") is None
