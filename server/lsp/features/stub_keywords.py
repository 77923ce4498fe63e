"""Keyword-argument completions of NKI calls straight from our stubs, without jedi.

jedi answers these from the same stubs, but its first answer after start waits for its warm-up on the jedi
thread (about a second; longer under load). The parameter lists of the stubs' functions and classes are read
here with ``ast`` (a few milliseconds, once), so ``nisa.tensor_scalar(dst=x, o|`` is answered on the event
loop at once. The answer is what jedi gives (``tests/intelligence/test_stub_keywords.py`` compares the two
over every stub function): the keyword-passable parameters not yet given, that start with the typed prefix,
in name order. Anything this does not resolve (a callee not imported from ``nki``, a method, an installed SDK
whose signatures win over the stubs on jedi's path) returns None and goes to jedi as before.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from nki_studio.lsp.features.nki_jedi import STUBS_DIR, _excerpt, _open_call


@dataclass(frozen=True)
class StubParameter:
    """One ``name=`` completion; the attributes the completion handler reads from a jedi completion."""

    name: str
    module_name: str
    annotation: str
    type: str = "param"

    @property
    def name_with_symbols(self) -> str:
        return f"{self.name}="

    def docstring(self, raw: bool = True) -> str:
        """What jedi gives for a parameter completion: nothing (the call's own docs are on hover)."""
        return ""

    def get_signatures(self) -> list[object]:
        return []


def keyword_completions(text: str, line: int, column: int) -> list[StubParameter] | None:
    """``name=`` completions at 1-based ``line`` / code-point ``column`` when the cursor is inside a call of
    a stub function or class bound by the module's ``nki`` imports; None when this cannot tell (jedi then)."""
    if _sdk_installed():
        return None
    excerpt = _excerpt(text, line, column)
    if excerpt is None:
        return None
    source, ex_line, ex_column = excerpt
    rows = source.split("\n")
    head = "\n".join([*rows[: ex_line - 1], rows[ex_line - 1][:ex_column]])
    if re.search(r"([A-Za-z_][\w.]*)\.(\w*)$", head):
        return None  # an attribute being typed, not a keyword
    call = _open_call(head)
    partial = re.search(r"(\w*)$", head)
    if call is None or partial is None:
        return None
    callee_end, callee = call
    qualified = _qualify(callee, _bindings(tuple(r for r in rows if re.match(r"(import|from)\s", r))))
    if qualified is None:
        return None
    module, _, name = qualified.rpartition(".")
    params = _table().get(module, {}).get(name)
    if params is None:
        return None
    given = set(re.findall(r"\b(\w+)\s*=(?!=)", head[callee_end:]))
    prefix = partial.group(1)
    return [p for p in params if p.name.startswith(prefix) and p.name not in given]


@functools.cache
def _sdk_installed() -> bool:
    """Whether a real ``nki`` package is importable: jedi then reads its signatures, not the stubs'."""
    try:
        return importlib.util.find_spec("nki") is not None
    except (ImportError, ValueError):
        return False


@functools.lru_cache(maxsize=64)
def _bindings(import_rows: tuple[str, ...]) -> dict[str, str]:
    """Local name → the ``nki`` module or API name it is bound to, from the module's import lines."""
    out: dict[str, str] = {}
    for row in import_rows:
        try:
            tree = ast.parse(row.strip())
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "nki" or alias.name.startswith("nki."):
                        if alias.asname:
                            out[alias.asname] = alias.name
                        else:
                            out["nki"] = "nki"
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "nki" or node.module.startswith("nki."):
                    for alias in node.names:
                        out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _qualify(callee: str, bindings: dict[str, str]) -> str | None:
    head, _, rest = callee.partition(".")
    bound = bindings.get(head)
    if bound is None:
        return None
    return f"{bound}.{rest}" if rest else bound


@functools.cache
def _table() -> dict[str, dict[str, list[StubParameter]]]:
    """Per stub module (``nki.isa``...): its functions' and classes' keyword-passable parameters, by name. Only
    the current API's (``nki``): a legacy ``neuronxcc.nki`` call goes to jedi, which follows the legacy stubs'
    re-exports of current names."""
    table: dict[str, dict[str, list[StubParameter]]] = {}
    for path in sorted((STUBS_DIR / "nki").rglob("*.pyi")):
        parts = path.relative_to(STUBS_DIR).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        table[module] = _module_params(module, path)
    return table


def _module_params(module: str, path: Path) -> dict[str, list[StubParameter]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: dict[str, list[StubParameter]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = _params(module, node.args, skip_first=False)
        elif isinstance(node, ast.ClassDef):
            init = next(
                (
                    n
                    for n in node.body
                    if isinstance(n, ast.FunctionDef) and n.name in ("__init__", "__new__")
                ),
                None,
            )
            if init is not None:
                out[node.name] = _params(module, init.args, skip_first=True)
    return out


def _params(module: str, args: ast.arguments, *, skip_first: bool) -> list[StubParameter]:
    named = [*args.args, *args.kwonlyargs]
    if skip_first and args.args and not args.posonlyargs:
        named = named[1:]  # self / cls (a positional-only one is not in ``named``)
    return sorted(
        (
            StubParameter(a.arg, module, ast.unparse(a.annotation) if a.annotation else "")
            for a in named
            if not a.arg.startswith("_")
        ),
        key=lambda p: p.name_with_symbols,  # jedi's order
    )
