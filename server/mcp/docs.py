"""Documentation for agents: rule pages generated from the code catalogue (the same text as
``docs/rules/NKI###.md``) and the NKI API reference the editor stubs carry (``nki_studio/stubs``: signature,
docstring, engine, limits, version notes). The ``explain`` tool and the resources read both from here."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from nki_studio.core.codes import catalogue
from nki_studio.migrate.hints import migration_hint
from nki_studio.model.targets import LEGACY_API_LABEL
from nki_studio.nkilint.rule import all_rules
from nki_studio.nkilint.rule_docs import render_code_page, render_index, render_page

STUBS = Path(__file__).resolve().parents[1] / "stubs"
MODULES = ("nki", "nki.language", "nki.isa", "nki.collectives", "nki.compiler")
# The legacy API (``neuronxcc.nki``, its own stubs): names it shares with the current one are re-exported there, so
# a legacy lookup falls back to ``MODULES``.
LEGACY_MODULES = ("neuronxcc.nki", "neuronxcc.nki.language", "neuronxcc.nki.isa", "neuronxcc.nki.compiler")
ALIASES = {"nl": "nki.language", "nisa": "nki.isa", "ncc": "nki.collectives"}
LEGACY_ALIASES = {
    "nl": "neuronxcc.nki.language",
    "nisa": "neuronxcc.nki.isa",
    "ncc": "neuronxcc.nki.compiler",
}
_CODE = re.compile(r"NKI\d{3}", re.I)


def rule_codes() -> list[str]:
    """Every code that has a page."""
    rules = all_rules()
    return [c.code for c in catalogue().values() if c.code in rules or c.page is not None]


def rule_page(code: str) -> str | None:
    """The Markdown page of a diagnostic code (None when it has none)."""
    code = code.upper()
    rules = all_rules()
    if code in rules:
        return render_page(rules[code])
    declared = catalogue().get(code)
    if declared is not None and declared.page is not None:
        return render_code_page(declared, declared.page)
    return None


def rule_index() -> str:
    """The index of every code (docs/rules/README.md)."""
    return render_index(all_rules())


def is_rule_code(name: str) -> bool:
    """Whether ``name`` looks like a diagnostic code (NKI + three digits)."""
    return bool(_CODE.fullmatch(name.strip()))


@dataclass(frozen=True)
class ApiEntry:
    """One documented name of a stub module."""

    qualname: str  # e.g. nki.isa.nc_matmul, nki.language.NkiTensor.reshape
    signature: str
    doc: str

    def markdown(self) -> str:
        """The entry as Markdown: a code block with the signature, then the docstring; a legacy entry is
        labelled, with what ``nki-studio migrate`` does with it when NKI 0.7 removed it."""
        module, _, leaf = self.qualname.removeprefix("neuronxcc.nki").removeprefix(".").rpartition(".")
        legacy = self.qualname.startswith("neuronxcc.")
        hint = migration_hint(module, leaf) if legacy else None
        return (
            f"### `{self.qualname}`\n\n"
            + (f"**{LEGACY_API_LABEL}**\n\n" if legacy else "")
            + f"```python\n{self.signature}\n```\n\n{self.doc or '(no docstring)'}\n"
            + (f"\nMigration to NKI 0.7 (`nki-studio migrate`): {hint}\n" if hint else "")
        )


def _signature(node: ast.AST) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        return f"def {node.name}({ast.unparse(node.args)}){returns}"
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        return f"class {node.name}({bases})" if bases else f"class {node.name}"
    if isinstance(node, ast.AnnAssign):
        return ast.unparse(node)
    return ""


def _walk(body: list[ast.stmt], prefix: str) -> list[ApiEntry]:
    out: list[ApiEntry] = []
    for i, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name.startswith("_"):
                continue
            out.append(ApiEntry(f"{prefix}.{node.name}", _signature(node), ast.get_docstring(node) or ""))
            if isinstance(node, ast.ClassDef):
                out += _walk(node.body, f"{prefix}.{node.name}")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            nxt = body[i + 1] if i + 1 < len(body) else None
            doc = (
                nxt.value.value
                if isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
                else ""
            )
            if not node.target.id.startswith("_"):
                out.append(ApiEntry(f"{prefix}.{node.target.id}", _signature(node), doc.strip()))
    return out


@functools.cache
def api_entries(module: str) -> tuple[str, tuple[ApiEntry, ...]]:
    """(module docstring, entries) of one stub module (``nki.isa``)."""
    path = STUBS.joinpath(*module.split("."), "__init__.pyi")
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return ast.get_docstring(tree) or "", tuple(_walk(tree.body, module))


def api_reference(module: str) -> str:
    """The Markdown reference of one stub module: its docstring and every entry."""
    doc, entries = api_entries(module)
    return f"# `{module}`\n\n{doc}\n\n" + "\n".join(e.markdown() for e in entries)


def canonical(name: str, *, legacy: bool = False) -> str:
    """``nisa.nc_matmul`` → ``nki.isa.nc_matmul`` (aliases as kernels import them); with ``legacy`` (or a
    ``neuronxcc.`` name), the legacy API's ``neuronxcc.nki.isa.nc_matmul``."""
    name = name.strip()
    head, dot, rest = name.partition(".")
    if legacy:
        if head in LEGACY_ALIASES:
            return LEGACY_ALIASES[head] + dot + rest
        return f"neuronxcc.{name}" if head == "nki" else name
    return ALIASES[head] + dot + rest if head in ALIASES else name


def find_api(name: str, *, legacy: bool = False) -> list[ApiEntry]:
    """Entries named ``name``: a full or alias-qualified name (exact), else every entry with that last
    component (``nc_matmul`` → ``nki.isa.nc_matmul``). ``legacy`` (implied by a ``neuronxcc.`` name) looks in the
    legacy API first, then in what it shares with the current one."""
    legacy = legacy or name.strip().startswith("neuronxcc.")
    full = canonical(name, legacy=legacy)
    for modules in (LEGACY_MODULES, MODULES) if legacy else (MODULES,):
        every = [e for m in modules for e in api_entries(m)[1]]
        exact = [e for e in every if e.qualname == full]
        if exact:
            return exact
        last = full.rsplit(".", 1)[-1]
        named = [e for e in every if e.qualname.rsplit(".", 1)[-1] == last]
        if named:
            return named
    return []


def close_names(name: str, limit: int = 8) -> list[str]:
    """Documented names that resemble ``name`` (for a "did you mean")."""
    import difflib

    every = [e.qualname for m in MODULES for e in api_entries(m)[1]]
    last = {q.rsplit(".", 1)[-1]: q for q in every}
    hits = difflib.get_close_matches(canonical(name).rsplit(".", 1)[-1], list(last), n=limit)
    return [last[h] for h in hits]
