"""Which NKI version a kernel's own code is written for, from the APIs it uses (nki-0.7.md §5).

Only signals that pin a version are used: APIs removed in 0.7 (``nl.dynamic_range``) mean the code is 0.6
code; APIs new in 0.7 (``nisa.scalar_load``, ``nl.tiles`` ...) mean 0.7 code. "An API pins the version" is
inferred from the API's existence per version (the table in nki-0.7.md §5). Callers use this only where no
setting names the version.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from nki_studio.model.imports import ImportAliases
from nki_studio.model.targets import NkiVersion

V06 = NkiVersion(0, 6)
V07 = NkiVersion(0, 7)

# Canonical names that exist only up to 0.6 (removed in 0.7.0: nki-0.7.md §2.2) or only from 0.7 (§2.4-§2.8).
_UP_TO_06 = {
    "nki.language.dynamic_range": "nl.dynamic_range",
    "nki.experimental.while_loop": "nki.experimental",
}
_FROM_07_PREFIXES = ("nki.compiler.",)
_FROM_07 = {
    "nki.isa.scalar_load": "nisa.scalar_load",
    "nki.isa.scalar_store": "nisa.scalar_store",
    "nki.isa.NkiScalar": "nisa.NkiScalar",
    "nki.language.tiles": "nl.tiles",
    "nki.language.blocks": "nl.blocks",
    "nki.language.alloc_tiles": "nl.alloc_tiles",
    "nki.language.alloc_blocks": "nl.alloc_blocks",
    "nki.language.NkiGrid": "nl.NkiGrid",
    "nki.language.NkiTileGrid": "nl.NkiTileGrid",
    "nki.language.NkiBlockGrid": "nl.NkiBlockGrid",
    "nki.language.if_else": "nl.if_else",  # newest docs only; its runtime condition is an NkiScalar (0.7)
    "nki.collectives.all_to_all_v_prepare": "ncc.all_to_all_v_prepare",
    "nki.collectives.all_to_all_v_trigger": "ncc.all_to_all_v_trigger",
    "nki.collectives.all_gather_v_prepare": "ncc.all_gather_v_prepare",
    "nki.collectives.all_gather_v_trigger": "ncc.all_gather_v_trigger",
}


# Last components of the 0.6-only names: text without any of them cannot pin 0.6 (a cheap pre-check).
_UP_TO_06_LEAVES = tuple(sorted({name.rsplit(".", 1)[1] for name in _UP_TO_06}))


def may_pin_old_version(source: str) -> bool:
    """False when ``source`` cannot use a 0.6-only API (none of their names occurs in it), so callers skip the
    scan."""
    return any(leaf in source for leaf in _UP_TO_06_LEAVES)


@dataclass(frozen=True)
class VersionSignal:
    """The first use of an API that pins the NKI version: ``api`` at ``line`` of the scanned source."""

    version: NkiVersion
    api: str
    line: int


def version_signals(source: str) -> tuple[VersionSignal | None, VersionSignal | None]:
    """The first 0.6-only and the first 0.7-only API use in ``source`` (each None when absent, and both
    None when the source does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, None
    return signals_of_uses(uses_in(ast.walk(tree)))


def uses_in(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, int]]:
    """``(canonical name, line)`` of every imported name used among ``nodes`` (all nodes of a module)."""
    nodes = list(nodes)
    aliases = ImportAliases.from_nodes(nodes)
    for node in nodes:
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = aliases.canonical(node)
            if name is not None:
                yield name, node.lineno


def signals_of_uses(uses: Iterable[tuple[str, int]]) -> tuple[VersionSignal | None, VersionSignal | None]:
    """The first 0.6-only and the first 0.7-only API among ``(canonical name, line)`` uses (each None when
    absent); for callers that already resolved the file's names (the linter's references)."""
    old: VersionSignal | None = None
    new: VersionSignal | None = None
    for name, line in uses:
        if name in _UP_TO_06 and (old is None or line < old.line):
            old = VersionSignal(V06, _UP_TO_06[name], line)
        elif (name in _FROM_07 or name.startswith(_FROM_07_PREFIXES)) and (new is None or line < new.line):
            new = VersionSignal(V07, _FROM_07.get(name, name), line)
    return old, new
