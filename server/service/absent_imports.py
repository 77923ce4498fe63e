"""The migration proof's stand-ins for modules a kernel's file imports but this machine lacks (``sim.absent``).

A module-level import of a module not installed here (neither on ``sys.path`` nor beside the file or in its
package, and not one the simulator provides: ``neuronxcc``, ``nki``, ``torch_neuronx``) is replaced, on its own
lines (line numbers hold), by names bound to stand-ins, when no name it binds is read by the kernel or by the
file's functions the kernel calls. The file then loads and the kernel runs as it would with the module
installed; a stand-in used anyway fails naming the module (``sim.absent``). Any other import is left as written,
so a kernel that needs the module still reports it missing.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os

from nki_studio.sim.dropin import provided
from nki_studio.sim.packages import package_module

_STAND_IN = "_nki_studio_absent"  # the name the rewritten lines import sim.absent as


def stand_in(text: str, path: str, kernel: str) -> tuple[str, tuple[str, ...]]:
    """``text`` (the source of ``path``) with the module-level imports of absent modules that ``kernel`` does
    not use bound to stand-ins, and those modules' top-level names (empty: ``text`` unchanged)."""
    tree = ast.parse(text)
    used = _names_used(tree, kernel)
    folders = [os.path.dirname(os.path.abspath(path))]
    location = package_module(path)
    if location is not None:
        folders.append(location.root)
    imports = [
        (node, parts)
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and (parts := _bindings(node, folders)) is not None
        and any(isinstance(part, tuple) for part in parts)
    ]
    # a module the kernel reads any name of is needed: none of its imports stands in
    needed = {
        part[1].split(".")[0]
        for _, parts in imports
        for part in parts
        if isinstance(part, tuple) and part[0] in used
    }
    lines = text.splitlines(keepends=True)
    absent: set[str] = set()
    for node, parts in imports:
        tops = {part[1].split(".")[0] for part in parts if isinstance(part, tuple)}
        if tops & needed:
            continue
        statements = [f"import nki_studio.sim.absent as {_STAND_IN}"] + [
            f"{part[0]} = {_STAND_IN}.Absent({part[1]!r})" if isinstance(part, tuple) else part
            for part in parts
        ]
        absent |= tops
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        indent = " " * node.col_offset
        lines[first : last + 1] = [indent + "; ".join(statements) + "\n"] + ["\n"] * (last - first)
    return ("".join(lines), tuple(sorted(absent))) if absent else (text, ())


def _bindings(node: ast.Import | ast.ImportFrom, folders: list[str]) -> list[str | tuple[str, str]] | None:
    """Per name ``node`` binds: an import statement for it (its module is here), or (name, dotted name of
    what it stands for) when its module is absent; None when it cannot be stood in for (a star or relative
    import)."""
    parts: list[str | tuple[str, str]] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if _present(alias.name, folders):
                parts.append(ast.unparse(ast.Import([alias])))
            elif alias.asname:
                parts.append((alias.asname, alias.name))
            else:  # ``import a.b.c`` binds ``a``
                top = alias.name.split(".")[0]
                parts.append((top, top))
        return parts
    if node.level or node.module is None or any(alias.name == "*" for alias in node.names):
        return None
    if _present(node.module, folders):
        return [ast.unparse(node)]
    return [(alias.asname or alias.name, f"{node.module}.{alias.name}") for alias in node.names]


def _present(module: str, folders: list[str]) -> bool:
    """Whether ``module``'s top-level package can be imported when the file loads."""
    top = module.split(".")[0]
    if provided(top):
        return True
    return (
        importlib.machinery.PathFinder.find_spec(top, folders) is not None
        or importlib.util.find_spec(top) is not None
    )


def _names_used(tree: ast.Module, kernel: str) -> set[str]:
    """The names read by ``kernel`` and by the module's functions it calls, transitively."""
    functions = {f.name: f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    seen: set[str] = set()
    pending = [kernel]
    used: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        function = functions[name]
        read = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}  # its decorators too
        used |= read
        pending.extend(read & functions.keys())
    return used
