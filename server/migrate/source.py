"""One parsed version of the file being migrated: its text, tree, imports and exact node spans."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from nki_studio.core.findings import Span, TextEdit
from nki_studio.model.imports import ImportAliases

LANGUAGE = "nki.language"
ISA = "nki.isa"


@dataclass
class Source:
    """A module's text and tree (``ast.parse`` raises ``SyntaxError`` for unparsable text)."""

    text: str
    tree: ast.Module = field(init=False)
    lines: list[str] = field(init=False)
    aliases: ImportAliases = field(init=False)
    # Every node in ``ast.walk`` order, walked once: the passes that scan the whole tree read this list (a walk
    # per scan made "does this file need migrating?", asked at every code action, ~30 ms for 136 lines). The
    # tree is never changed in place (rewrites work on copies), so the list stays true.
    nodes: list[ast.AST] = field(init=False)

    def __post_init__(self) -> None:
        self.tree = ast.parse(self.text)
        self.lines = self.text.splitlines()
        self.nodes = list(ast.walk(self.tree))
        self.aliases = ImportAliases.from_nodes(self.nodes)

    def _column(self, lineno: int, byte_col: int) -> int:
        """1-based code-point column of an ``ast`` byte offset."""
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1

    def span(self, node: ast.AST) -> Span:
        """The span of a node (``lineno`` .. ``end_col_offset``)."""
        n: Any = node
        line, end_line, col, end_col = n.lineno, n.end_lineno or n.lineno, n.col_offset, n.end_col_offset or 0
        return Span(line, self._column(line, col), end_line, self._column(end_line, end_col))

    def offset(self, lineno: int, byte_col: int) -> int:
        """Absolute code-point offset in ``text`` of an ``ast`` position."""
        if not hasattr(self, "_starts"):
            starts = [0]
            for line in self.text.splitlines(keepends=True):
                starts.append(starts[-1] + len(line))
            self._starts = starts
        return self._starts[lineno - 1] + self._column(lineno, byte_col) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an absolute code-point offset."""
        self.offset(1, 0)  # the line starts
        line = max(i for i, start in enumerate(self._starts) if start <= offset) + 1
        return line, offset - self._starts[line - 1] + 1

    def bounds(self, node: ast.AST) -> tuple[int, int]:
        """Absolute (start, end) code-point offsets of a node."""
        n: Any = node
        return self.offset(n.lineno, n.col_offset), self.offset(n.end_lineno, n.end_col_offset)

    def text_of(self, node: ast.AST) -> str:
        """The exact source text of a node."""
        start, end = self.bounds(node)
        return self.text[start:end]

    def replace(self, node: ast.AST, new_text: str) -> TextEdit:
        """An edit replacing a node's source text."""
        return TextEdit(self.span(node), new_text)

    def delete_lines(self, stmt: ast.stmt) -> TextEdit | None:
        """An edit deleting a statement's whole lines; None when another statement shares them."""
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        before = self.lines[first - 1][: self._column(first, stmt.col_offset) - 1]
        after = self.lines[last - 1].encode("utf-8")[stmt.end_col_offset or 0 :].decode("utf-8", "ignore")
        if before.strip() or (after.strip() and not after.strip().startswith("#")):
            return None
        return TextEdit(Span(first, 1, last + 1, 1), "")

    def keyword_cut(self, call: ast.Call, keyword: ast.keyword) -> tuple[int, int] | None:
        """Absolute (start, end) of the text deleting ``keyword`` from ``call`` (from the end of the operand before
        it, so the comma goes too); None when no operand precedes it."""
        operands = [*call.args, *(k.value for k in call.keywords if k is not keyword)]
        start = self.bounds(keyword)[0]
        before = [end for o in operands if (end := self.bounds(o)[1]) <= start]
        return (max(before), self.bounds(keyword)[1]) if before else None

    def canonical(self, node: ast.expr) -> str | None:
        """What an expression names through the imports, legacy names mapped onto ``nki`` (``nl.arange`` ->
        ``nki.language.arange``)."""
        return self.aliases.canonical(node)

    def calls_to(self, module: str) -> Iterator[tuple[ast.Call, str]]:
        """Each call of a function of ``module`` (canonical) with the function's name."""
        for node in self.nodes:
            if isinstance(node, ast.Call):
                name = self.canonical(node.func)
                if name is not None and name.rsplit(".", 1)[0] == module:
                    yield node, name.rsplit(".", 1)[1]

    def alias_of(self, module: str, fallback: str) -> str:
        """How the file spells ``module`` (its first alias), or ``fallback``."""
        names = self.aliases.locals_for(module)
        return names[0] if names else fallback


def functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function definition of a tree."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
