"""Which kernels a corpus script or test file exercises, read from its source (``legacy_sim_corpus.py``'s
per-kernel figure).

A kernel is a function decorated with an NKI entry point (``jit``, ``trace``, ``baremetal``, ``nki_jit``,
``benchmark``, ``profile``). A file exercises the kernels it names (a call, ``baremetal(k)``, ``k[grid](...)``),
defined in it or imported from a file of the corpus (``from module import k``, also ``*``: a sibling module of a
tutorial, ``nki_samples.*`` under ``src``, or the SDK's bundled copy of the tutorials,
``neuronxcc.nki.docs.examples.<tutorial>.<module>``), and through a plain function of that file the kernels it
names (the tutorials' ``nki_tensor_add`` launching ``nki_tensor_add_kernel_`` on a grid). Read statically, so a
script that cannot run here still names its kernels.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

_ENTRY_POINTS = {"jit", "trace", "baremetal", "nki_jit", "benchmark", "profile"}
_SDK_EXAMPLES = "neuronxcc.nki.docs.examples."  # the SDK shipped the tutorials under this package


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


@cache
def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _is_kernel(function: ast.FunctionDef) -> bool:
    return any(_decorator_name(d) in _ENTRY_POINTS for d in function.decorator_list)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _module_file(module: str, script: Path, src: Path) -> Path | None:
    if module.startswith(_SDK_EXAMPLES):
        candidate = src / "nki_samples" / "tutorials" / Path(*module.removeprefix(_SDK_EXAMPLES).split("."))
    elif module.startswith("nki_samples."):
        candidate = src / Path(*module.split("."))
    else:
        candidate = script.parent / module
    return candidate.with_suffix(".py") if candidate.with_suffix(".py").exists() else None


def _bindings(script: Path, src: Path) -> dict[str, tuple[Path, str]]:
    """Name in ``script`` -> (file, function) of the corpus's functions it can refer to."""
    bound = {name: (script, name) for name in _functions(script)}
    for node in ast.walk(ast.parse(script.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
            continue
        module = _module_file(node.module, script, src)
        if module is None:
            continue
        for alias in node.names:
            if alias.name == "*":
                bound.update({name: (module, name) for name in _functions(module)})
            elif alias.name in _functions(module):
                bound[alias.asname or alias.name] = (module, alias.name)
    return bound


def kernels(script: Path, src: Path) -> tuple[str, ...]:
    """The kernels ``script`` exercises, as ``path/relative/to/the/corpus.py::function``, sorted."""
    bound = _bindings(script, src)
    found: set[tuple[Path, str]] = set()
    for name in _names(ast.parse(script.read_text())) & bound.keys():
        path, function = bound[name]
        node = _functions(path)[function]
        if _is_kernel(node):
            found.add((path, function))
        elif (
            path != script
        ):  # a plain function of a kernel file: the kernels it launches (its own or imported)
            launched = _bindings(path, src)
            for used in _names(node) & launched.keys():
                where, kernel = launched[used]
                if _is_kernel(_functions(where)[kernel]):
                    found.add((where, kernel))
    return tuple(sorted(f"{path.relative_to(src.parent)}::{function}" for path, function in found))
