"""Write ``nki_studio.model.nki_api`` from the typed stubs, so the stubs are the one declaration of the NKI API.

``python -m nki_studio.model.nki_api_generate`` (run by ``bash scripts/generate.sh``) reads
``server/stubs/nki/**.pyi`` with ``ast`` and renders the tables the value interpreter, the lint rules and the
simulator use: the positional parameters of every ``nki.language`` function, the element-wise, reduction and
operator-constant names (by the stub's section headings), the calls whose stub result is a tensor, a grid, a
register or another value, and the tensor view methods. ``tests/intelligence/test_nki_api_generated.py`` fails while the
committed module differs from what this renders.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1]
STUBS = SERVER / "stubs" / "nki"
OUT = SERVER / "model" / "nki_api.py"

# Stub section heading (``# ----- unary math``) -> the generated tuple of its function names, with why we need it.
SECTIONS: dict[str, tuple[str, str]] = {
    "unary math": ("LANGUAGE_UNARY_MATH", "element-wise functions of one tile (x, dtype=None)"),
    "activations": ("LANGUAGE_ACTIVATIONS", "element-wise activation functions of one tile (x, dtype=None)"),
    "binary math": ("LANGUAGE_BINARY", "element-wise functions of two operands (x, y, dtype=None)"),
    "reductions": ("LANGUAGE_REDUCTIONS", "reductions over free axes (x, axis, dtype=None[, keepdims])"),
    "normalisation and dropout": (
        "LANGUAGE_SHAPE_KEEPING",
        "whole-tile helpers whose result keeps x's shape",
    ),
    "operator constants": ("LANGUAGE_OPERATOR_CONSTANTS", "values passed as op=, never called"),
}
LINE_LENGTH = 110  # pyproject.toml [tool.ruff]
_HEADING = re.compile(r"^# -{10,} (.+)$")
TENSOR_TYPES = frozenset({"ndarray", "NkiTensor"})
GRID_TYPES = frozenset({"NkiTileGrid", "NkiBlockGrid"})
REGISTER_TYPES = frozenset({"VirtualRegister", "NkiScalar"})
# Results of the nki.isa calls that are queries, not instructions: registers, scalars, the target's version.
VALUE_TYPES = REGISTER_TYPES | {"nc_version", "int"}


def _tree(module: str) -> tuple[ast.Module, list[str]]:
    path = STUBS / module / "__init__.pyi"
    text = path.read_text(encoding="utf-8")
    return ast.parse(text, str(path)), text.splitlines()


def _positional(node: ast.FunctionDef) -> tuple[str, ...]:
    return tuple(a.arg for a in (*node.args.posonlyargs, *node.args.args))


def _result(node: ast.FunctionDef) -> str:
    return ast.unparse(node.returns) if node.returns is not None else ""


def _calls(tree: ast.Module) -> dict[str, tuple[tuple[str, ...], str]]:
    """Public callables of a stub -> (positional parameters, result annotation); a lower-case class is an API
    function in class form (``nl.ndarray(shape, dtype)``): its constructor's parameters, its own type."""
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = _positional(node), _result(node)
        elif isinstance(node, ast.ClassDef) and node.name.islower():
            init = next(
                (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
            )
            if init is not None:
                out[node.name] = _positional(init)[1:], node.name
    return out


def _sections(tree: ast.Module, lines: list[str]) -> dict[str, list[str]]:
    """Section heading -> the top-level names declared under it, in stub order."""
    headings = [(i + 1, m.group(1)) for i, line in enumerate(lines) if (m := _HEADING.match(line))]
    out: dict[str, list[str]] = {}
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        under = [title for line, title in headings if line < node.lineno]
        if names and under:
            out.setdefault(under[-1], []).extend(names)
    return out


def _view_methods(tree: ast.Module) -> dict[str, tuple[tuple[str, ...], str]]:
    """Public ``NkiTensor`` methods, properties aside -> (positional parameters after ``self``, result)."""
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "NkiTensor")
    return {
        n.name: (_positional(n)[1:], _result(n))
        for n in cls.body
        if isinstance(n, ast.FunctionDef) and not n.name.startswith("_") and not n.decorator_list
    }


def _q(name: str) -> str:
    return f'"{name}"'  # the formatter's quotes, so ``ruff format`` leaves the module as rendered


def _tuple(names: tuple[str, ...]) -> str:
    return "(" + ", ".join(map(_q, names)) + ("," if len(names) == 1 else "") + ")"


def _entry(name: str, params: tuple[str, ...]) -> str:
    """One ``name: (params...)`` line, or one parameter a line when that passes the line length (as ruff would)."""
    line = f"    {_q(name)}: {_tuple(params)},"
    if len(line) <= LINE_LENGTH:
        return line
    return "\n".join([f"    {_q(name)}: (", *(f"        {_q(p)}," for p in params), "    ),"])


def render() -> str:
    """The text of ``nki_api.py``."""
    language, language_lines = _tree("language")
    isa, _ = _tree("isa")
    calls = _calls(language)
    sections = _sections(language, language_lines)
    missing = sorted(set(SECTIONS) - set(sections))
    if missing:
        raise SystemExit(f"stub section headings missing from nki/language/__init__.pyi: {missing}")
    out = [
        '"""The public NKI API as the typed stubs declare it (``server/stubs/nki/``): parameter lists, names by',
        "role and result kinds for the value interpreter, the lint rules and the simulator.",
        "",
        "Generated by ``python -m nki_studio.model.nki_api_generate`` (``bash scripts/generate.sh``); do not edit:",
        "change the stubs. ``tests/intelligence/test_nki_api_generated.py`` fails while this module is stale.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# nki.language: the positional parameters of every function (of a lower-case class: its constructor).",
        "LANGUAGE_PARAMS: dict[str, tuple[str, ...]] = {",
        *(_entry(name, params) for name, (params, _) in calls.items()),
        "}",
    ]
    for heading, (constant, why) in SECTIONS.items():
        out += ["", f"# nki.language, stub section {_q(heading)}: {why}.", f"{constant}: tuple[str, ...] = ("]
        out += [f"    {_q(name)}," for name in sections[heading]]
        out.append(")")
    results = (
        ("LANGUAGE_TENSOR_RESULTS", calls, TENSOR_TYPES, "nki.language calls whose stub result is a tensor"),
        ("LANGUAGE_GRID_RESULTS", calls, GRID_TYPES, "nki.language calls whose stub result is a 0.7 grid"),
        (
            "ISA_REGISTER_RESULTS",
            _calls(isa),
            REGISTER_TYPES,
            "nki.isa calls whose stub result is a register",
        ),
        (
            "ISA_VALUE_RESULTS",
            _calls(isa),
            VALUE_TYPES,
            "nki.isa calls that return a value in 0.7 too (no dst=)",
        ),
        ("TENSOR_VIEW_METHODS", _view_methods(language), TENSOR_TYPES, "NkiTensor methods returning a view"),
    )
    for constant, table, types, why in results:
        names = sorted(name for name, (_, result) in table.items() if result in types)
        out += ["", f"# {why} ({', '.join(sorted(types))}).", f"{constant} = frozenset(", "    {"]
        out += [f"        {_q(name)}," for name in names]
        out += ["    }", ")"]
    return "\n".join(out) + "\n"


def main() -> int:
    """Rewrite ``server/model/nki_api.py``."""
    OUT.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
