"""No import cycle inside a package under ``server/`` (``nki_studio.sim``, ``nki_studio.model``, ...).

The rule: the imports between the modules of one top-level package (its sub-packages included) form no cycle.
Counted, as edges from the importing module to the imported one:

* every import a module runs when it is loaded: module level, also inside a module-level ``if``/``try``;
* every import inside a function, class or method of a module **of the same package**: a sibling imported
  in a function body is how a cycle is usually dodged, so it counts as if it were at the top.

Not counted: imports under ``if TYPE_CHECKING:`` (they never run and only name types for annotations), and a
function-level import of another package (a lazy import for start-up time; ``tests/test_layers.py`` keeps those
pointing down the layers). ``from package import name`` counts as importing the module ``package.name`` when that
is a module, else the package's ``__init__``.

Why: in a cycle, which module finishes loading first depends on who is imported first (names missing from a
half-initialised module), and no module of it can be read, tested or moved without the others. Break one with a
lower module both use (a table, a ``Protocol``, a base class), by passing a function in, or by moving the code
to the module that owns it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server"
PACKAGE = "nki_studio"


def module_name(path: Path) -> str:
    """Dotted module name of a source file under ``server/`` (a package's ``__init__`` names the package)."""
    parts = path.relative_to(SERVER).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import of a module that can run: at any depth, except the body of an ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child):
            for node in child.orelse:
                yield from import_nodes(ast.Module(body=[node], type_ignores=[]))
        else:
            yield from import_nodes(child)


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Module -> {imported module of the same top-level package: line of the first counted import}."""
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        top = name.split(".")[:2]
        edges = graph.setdefault(name, {})
        for node in import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(
                        [*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])]
                    )
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                # only imports inside the package: those of other packages are not part of its cycles (the
                # layer test keeps them one-way), which leaves lazy function-level imports of them uncounted
                if target in modules and target != name and target.split(".")[:2] == top:
                    edges.setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, {}))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def sources() -> dict[str, Path]:
    """Every Python module under ``server/`` by its dotted name."""
    return {module_name(p): p for p in sorted(SERVER.rglob("*.py")) if "__pycache__" not in p.parts}


def describe(component: list[str], graph: dict[str, dict[str, int]], modules: dict[str, Path]) -> str:
    """One cycle as its imports, ``file:line: a imports b``."""
    members = set(component)
    lines = [
        f"  {modules[a].relative_to(ROOT)}:{line}: {a} imports {b}"
        for a in component
        for b, line in sorted(graph[a].items())
        if b in members
    ]
    return f"cycle of {len(component)} modules:\n" + "\n".join(lines)


def test_no_import_cycle_inside_a_package() -> None:
    modules = sources()
    graph = import_graph(modules)
    found = [describe(c, graph, modules) for c in cycles(graph)]
    assert not found, "\n".join(found)


def test_a_cycle_is_found(tmp_path: Path) -> None:
    """Through a function-level import of a sibling too; not through ``TYPE_CHECKING`` or another package."""
    files = {
        "a.py": "from nki_studio.pkg import b\n",
        "b.py": "def f():\n    from nki_studio.pkg.c import g\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from nki_studio.pkg import d\n"
        "from . import a\n",
        "d.py": "import nki_studio.pkg.c\n",
    }
    modules = {}
    for file, text in files.items():
        (tmp_path / file).write_text(text)
        modules[f"nki_studio.pkg.{file[:-3]}"] = tmp_path / file
    graph = import_graph(modules)
    assert graph["nki_studio.pkg.c"] == {"nki_studio.pkg.a": 4}
    assert cycles(graph) == [["nki_studio.pkg.a", "nki_studio.pkg.b", "nki_studio.pkg.c"]]
    (tmp_path / "b.py").write_text("def f():\n    from nki_studio.other import g\n")
    assert cycles(import_graph(modules)) == []
