"""The interpreter's view of a module discovered by ``kernels.py``: top-level functions and classes.

Parsing, import aliases and local-module resolution belong to kernel discovery (``kernels.py``,
``imports.py``; :class:`~nki_studio.model.kernels.ModuleResolver` is the only resolution path); this wrapper
only adds what the interpreter needs on top: code-point columns and one ModuleScope per resolved module.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from nki_studio.model.imports import is_legacy
from nki_studio.model.kernels import ModuleInfo, ModuleResolver
from nki_studio.model.syntax import non_ascii_lines

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(eq=False)
class ModuleScope:
    """A discovered module as the interpreter sees it."""

    info: ModuleInfo
    path: str = ""  # path of the module file (copied: read on every recorded fact)
    functions: dict[str, _FunctionNode] = field(default_factory=dict)  # top-level only
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    legacy: bool = False
    lines: Sequence[str] = field(default_factory=list)
    non_ascii_lines: frozenset[int] = frozenset()

    def column(self, line: int, byte_col: int) -> int:
        """1-based code-point column of an ``ast`` byte offset on ``line``."""
        if line not in self.non_ascii_lines or line - 1 >= len(self.lines):
            return byte_col + 1
        return len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore")) + 1


class ScopeCache:
    """ModuleScopes of one interpretation run, plus the local-module resolver of kernel discovery."""

    def __init__(self, resolver: ModuleResolver) -> None:
        self.resolver = resolver
        self._scopes: dict[int, ModuleScope] = {}
        self.pending_imports: dict[str, dict[str, str | None]] = {}  # module path -> imports not yet resolved
        self.assigned: dict[
            int, set[str]
        ] = {}  # id(statement list owner) -> names it assigns (interpreter cache)

    def scope(self, info: ModuleInfo) -> ModuleScope:
        """The (cached) scope of a discovered module."""
        hit = self._scopes.get(id(info))
        if hit is not None and hit.info is info:
            return hit
        lines = info.lines
        scope = ModuleScope(
            info=info,
            path=info.path,
            functions={
                n.name: n for n in info.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            },
            classes=dict(info.classes),
            legacy=any(is_legacy(t) for t in info.aliases.bindings.values()),
            lines=lines,
            non_ascii_lines=non_ascii_lines(info.source),
        )
        self._scopes[id(info)] = scope
        return scope

    def local_symbol(self, scope: ModuleScope, name: str) -> tuple[ModuleScope, str] | ModuleScope | None:
        """Where an imported name lives when it comes from a local file (function/class, or a whole module);
        the resolver caches the lookup, this only maps its modules onto scopes."""
        try:
            found = self.resolver.imported_symbol(scope.info, name)
        except (OSError, ValueError, RecursionError):
            return None
        if isinstance(found, tuple):
            return (self.scope(found[0]), found[1])
        if found is not None:
            return self.scope(found)
        return None
