"""Import-alias table: which local names of a module mean ``nki``, ``nki.language``, ``numpy`` ...

Rules recognise ``nl.affine_range`` or ``nisa.nc_matmul`` whatever the user called the module
(``import nki.language as L``, ``from nki import isa``, ``from nki.language import affine_range``). The table maps
every module-level local name bound by an import to the dotted name it stands for; :meth:`ImportAliases.resolve`
turns an expression such as ``L.affine_range`` into ``"nki.language.affine_range"``.

Legacy ``neuronxcc.nki`` names resolve to their literal dotted path (``neuronxcc.nki.language.x``);
:meth:`ImportAliases.canonical` maps them onto the ``nki`` namespace for rules that treat both alike.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

LEGACY_PREFIX = "neuronxcc.nki"

# Top-level families a rule may ask about; the value is the canonical dotted module.
NKI = "nki"
LANGUAGE = "nki.language"
ISA = "nki.isa"
COLLECTIVES = "nki.collectives"
LIBRARY_MODULES = ("numpy", "torch", "math", "jax", "scipy")


def to_canonical(dotted: str) -> str:
    """Map a legacy ``neuronxcc.nki...`` name onto ``nki...``; other names are returned unchanged."""
    if dotted == LEGACY_PREFIX or dotted.startswith(LEGACY_PREFIX + "."):
        return "nki" + dotted[len(LEGACY_PREFIX) :]
    return dotted


# Top-level packages that are never local files: an import of them is never resolved on disk.
_EXTERNAL_ROOTS = frozenset(
    {
        "nki",
        "neuronxcc",
        "numpy",
        "torch",
        "math",
        "jax",
        "torch_neuronx",
        "typing",
        "dataclasses",
        "enum",
        "functools",
        "itertools",
        "os",
        "sys",
        "collections",
        "abc",
    }
)


def is_external(dotted: str) -> bool:
    """True when a dotted import name belongs to NKI, a host library or the standard library (not a local file)."""
    return dotted.split(".")[0] in _EXTERNAL_ROOTS


def library_root(dotted: str | None) -> str | None:
    """``numpy``/``torch``/``math``/... when a resolved dotted name lies in that host library, else None."""
    head = dotted.split(".", 1)[0] if dotted is not None else None
    return head if head in LIBRARY_MODULES else None


def is_legacy(dotted: str) -> bool:
    """True for names in the legacy ``neuronxcc.nki`` namespace."""
    return dotted == LEGACY_PREFIX or dotted.startswith(LEGACY_PREFIX + ".")


def current_import(stmt: ast.Import | ast.ImportFrom) -> str | None:
    """The import statement in the ``nki`` namespace, when every name it binds is legacy (NKI208's fix and
    ``nki-studio migrate``); None otherwise."""
    if isinstance(stmt, ast.Import):
        if not all(is_legacy(a.name) for a in stmt.names):
            return None
        parts = []
        for a in stmt.names:
            new = to_canonical(a.name)
            parts.append(new if a.asname in (None, new) else f"{new} as {a.asname}")
        return "import " + ", ".join(parts)
    if stmt.level or not stmt.module:
        return None
    if stmt.module == "neuronxcc" and all(a.name == "nki" for a in stmt.names):
        return "import nki" + ("" if stmt.names[0].asname in (None, "nki") else f" as {stmt.names[0].asname}")
    if not is_legacy(stmt.module):
        return None
    names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in stmt.names)
    return f"from {to_canonical(stmt.module)} import {names}"


@dataclass
class ImportRecord:
    """One import binding: local name, what it stands for, where (the import statement)."""

    local: str
    target: str  # dotted name, e.g. "nki.language" or "nki.language.affine_range"
    node: ast.stmt


@dataclass
class ImportAliases:
    """Local name -> dotted name for every import of a module (module level and inside functions)."""

    bindings: dict[str, str] = field(default_factory=dict)
    records: list[ImportRecord] = field(default_factory=list)

    @classmethod
    def from_tree(cls, tree: ast.AST) -> ImportAliases:
        """Collect the imports of a parsed module. Later bindings of the same name win, as in Python."""
        return cls.from_nodes(ast.walk(tree))

    @classmethod
    def from_nodes(cls, nodes: Iterable[ast.AST]) -> ImportAliases:
        """Like :meth:`from_tree` over an already computed node list."""
        table = cls()
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        table._bind(alias.asname, alias.name, node)
                    else:
                        # ``import nki.language`` binds ``nki``; attribute access then spells the rest.
                        head = alias.name.split(".")[0]
                        table._bind(head, head, node)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    table._bind(alias.asname or alias.name, f"{node.module}.{alias.name}", node)
        return table

    def _bind(self, local: str, target: str, node: ast.stmt) -> None:
        self.bindings[local] = target
        self.records.append(ImportRecord(local, target, node))

    def resolve(self, node: ast.expr) -> str | None:
        """Dotted name an expression refers to through the imports (``L.exp`` -> ``nki.language.exp``).

        None when the head name is not an imported name (a local variable, a builtin ...).
        """
        # _dotted inlined: this runs for most calls of every rule, and the head is looked up before any join.
        attrs: list[str] = []
        while type(node) is ast.Attribute:
            attrs.append(node.attr)
            node = node.value
        if type(node) is not ast.Name:
            return None
        target = self.bindings.get(node.id)
        if target is None or not attrs:
            return target
        attrs.append(target)
        return ".".join(reversed(attrs))

    def canonical(self, node: ast.expr) -> str | None:
        """Like :meth:`resolve` but with legacy ``neuronxcc.nki`` names mapped onto ``nki``."""
        name = self.resolve(node)
        return None if name is None else to_canonical(name)

    def library_of(self, node: ast.expr) -> str | None:
        """``numpy``/``torch``/``math``/... when the expression names something in that host library."""
        return library_root(self.resolve(node))

    def locals_for(self, module: str) -> list[str]:
        """Local names bound to exactly ``module`` (canonical form), e.g. every alias of ``nki.language``."""
        return [local for local, target in self.bindings.items() if to_canonical(target) == module]

    def uses_legacy(self) -> list[ImportRecord]:
        """Import statements that bind something from the legacy ``neuronxcc.nki`` namespace."""
        return [r for r in self.records if is_legacy(r.target)]
