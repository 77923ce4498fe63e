"""Incremental lint for editors: after an edit, re-check only the code the edit can affect.

The module is cut into blocks, one per top-level statement (with its decorators, and with the comment and blank
lines up to the next statement). Top-level function definitions are grouped into components: two functions are
in one component when either names the other, or when one uses a module-level name whose definition names the
other (a class whose methods call a helper, say). Everything else at module level (imports, constants,
classes, ``if __name__`` blocks) is the environment. Each component is checked with the part of the
environment it can depend on (the blocks binding the names it uses, those naming its functions, star imports,
and what those use in turn), and the environment is checked once on its own: the rules run on a tree of those
blocks with their original positions and the file's full text. The findings inside a component's functions are
its own; findings on environment lines are collected from every run, each once.

Each run's findings are cached under the text of every block it checked, so an edit inside one kernel, or to a
constant only it uses, re-checks that kernel's component (and the environment) only; the other findings are
reused, each moved by the lines added or removed above its block. Suppression, severity overrides and ordering
run on the merged findings, as in a full lint: the result equals ``lint_source`` on the same text
(tests/lint/test_incremental.py checks that under random edits).

Parsing is incremental too: the new text is compared with the last version that parsed, and only the blocks
the changed lines touch (with the block before them) are parsed again, as a piece of the file. A block whose
lines only moved keeps its text and is parsed again (alone, small) only if its component has to be checked.
When the changed piece does not parse on its own, the whole file is parsed.
"""

from __future__ import annotations

import ast
import bisect
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from nki_studio.core.file_stamp import Stamp, file_stamp_or_missing
from nki_studio.core.findings import Finding, Fix, Related, Span, TextEdit
from nki_studio.core.gc_pause import gc_paused
from nki_studio.model.imports import ImportAliases
from nki_studio.model.syntax import child_fields
from nki_studio.model.version_signals import uses_in
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.engine import (
    INTERNAL_ERROR,
    SYNTAX_ERROR,
    check,
    discover_safely,
    dispose,
    finish,
    lint_module,
    meta_finding,
    parse,
    syntax_finding,
    with_code_version,
)

log = logging.getLogger("nki_studio.nkilint")

# The tokenizer's line breaks (str.splitlines also breaks at form feeds and other separators, which would put
# block texts out of step with ast line numbers).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Block:
    """One top-level statement (or several sharing a line) and the lines up to the next one."""

    __slots__ = ("_at", "_stmts", "end", "function", "start", "text")

    def __init__(
        self,
        start: int,
        end: int,
        text: str,
        stmts: tuple[ast.stmt, ...],
        at: int | None = None,
        function: str | None = None,
    ) -> None:
        self.start = (
            start  # first line, 1-based (decorators included; the file's first block starts at line 1)
        )
        self.end = end  # last line
        self.text = text
        self._stmts = stmts  # positioned for a block starting at ``_at``
        self._at = start if at is None else at
        if at is None and len(stmts) == 1 and isinstance(stmts[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = stmts[0].name
        self.function = function  # the function's name when the block is one top-level ``def``

    def moved(self, lines: int) -> Block:
        """The same block ``lines`` lines further down (its statements are repositioned when asked for)."""
        return Block(self.start + lines, self.end + lines, self.text, self._stmts, self._at, self.function)

    def stmts(self) -> tuple[ast.stmt, ...]:
        """The block's statements with their positions in the file."""
        if self._at != self.start:
            tree = ast.parse(self.text)  # a block is whole statements, so it parses alone
            ast.increment_lineno(tree, self.start - 1)
            self._stmts, self._at = tuple(tree.body), self.start
        return self._stmts


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", ())
    return min([stmt.lineno, *(int(d.lineno) for d in decorators)])


def split_blocks(stmts: Sequence[ast.stmt], lines: Sequence[str], offset: int = 0) -> list[Block]:
    """The blocks of ``lines``, a piece of the file starting after line ``offset``, parsed as ``stmts`` (with
    their positions in the file). The first block starts at the piece's first line, the last ends at its end."""
    groups: list[list[ast.stmt]] = []
    last_end = 0
    for stmt in stmts:
        if groups and _first_line(stmt) <= last_end:  # ``a = 1; b = 2``
            groups[-1].append(stmt)
        else:
            groups.append([stmt])
        last_end = max(last_end, stmt.end_lineno or stmt.lineno)
    blocks = []
    for i, group in enumerate(groups):
        start = offset + 1 if i == 0 else _first_line(group[0])
        end = _first_line(groups[i + 1][0]) - 1 if i + 1 < len(groups) else offset + len(lines)
        blocks.append(Block(start, end, "\n".join(lines[start - 1 - offset : end - offset]), tuple(group)))
    return blocks


@dataclass(frozen=True)
class ParseFailure:
    """The parser's error for the piece of the file after line ``line_offset``."""

    error: Exception
    line_offset: int


def reparse(
    old_lines: Sequence[str], old_blocks: Sequence[Block], lines: Sequence[str]
) -> list[Block] | ParseFailure | None:
    """The blocks of ``lines`` from those of an earlier version, parsing only the blocks the changed lines touch
    and the block before them. When that piece does not parse alone, the rest of the file from the piece on is
    parsed; if that fails too, its error comes back, positioned in the file (everything above the piece is
    whole statements, so the parser reports what it reports for the whole file). None: parse the whole file."""
    n_old, n_new = len(old_lines), len(lines)
    if not old_blocks:
        return None
    limit = min(n_old, n_new)
    p = 0  # lines equal at the top
    while p < limit and old_lines[p] == lines[p]:
        p += 1
    if p == n_old == n_new:
        return list(old_blocks)
    q = 0  # lines equal at the bottom, not overlapping the top
    while q < limit - p and old_lines[n_old - 1 - q] == lines[n_new - 1 - q]:
        q += 1
    starts = [b.start for b in old_blocks]
    first = max(bisect.bisect_right(starts, max(p, 1)) - 1, 0)  # holds the last unchanged line above
    last = max(bisect.bisect_right(starts, min(max(n_old - q, p, 1), n_old)) - 1, first)
    delta = n_new - n_old
    start, end = old_blocks[first].start, old_blocks[last].end + delta
    after = [b.moved(delta) for b in old_blocks[last + 1 :]]
    if end < start:
        return None
    for piece, rest in ((lines[start - 1 : end], after), (lines[start - 1 :], [])):
        try:
            tree = ast.parse("\n".join(piece))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            if rest:
                continue
            return ParseFailure(exc, start - 1) if start > 1 else None
        if not tree.body:
            return None
        for stmt in tree.body:
            ast.increment_lineno(stmt, start - 1)
        return [*old_blocks[:first], *split_blocks(tree.body, piece, start - 1), *rest]
    return None


@dataclass(frozen=True)
class _Names:
    used: frozenset[str]  # every identifier the block mentions
    bound: frozenset[str]  # names the block binds (conservatively: anywhere in it)
    star: bool  # ``from x import *``: it may bind any name


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` as a list, without the generator overhead (names are scanned for every block)."""
    out: list[ast.AST] = []
    for name in child_fields(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _names(block: Block) -> _Names:
    """What a block mentions and binds. For a function only the globals it may read count as used (a superset:
    names read anywhere in it, less those its own scope assigns), so a kernel's local ``x`` does not tie it to
    a module-level ``x``."""
    used: set[str] = set()
    bound: set[str] = set()
    star = False
    local: set[str] = set()
    declared: set[str] = set()
    todo: list[tuple[ast.AST, bool]] = []  # (node, in the function's own scope)
    for stmt in block.stmts():
        if block.function is not None and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(stmt.name)
            local.update(
                a.arg
                for a in (
                    *stmt.args.posonlyargs,
                    *stmt.args.args,
                    *stmt.args.kwonlyargs,
                    stmt.args.vararg,
                    stmt.args.kwarg,
                )
                if a is not None
            )
            todo += [(n, True) for n in stmt.body]
            todo += [(n, False) for n in (*stmt.decorator_list, *_children(stmt.args))]
            if stmt.returns is not None:
                todo.append((stmt.returns, False))
        else:
            todo.append((stmt, False))
    while todo:
        node, own = todo.pop()
        kind = type(node)
        if kind is ast.Name:
            used.add(node.id)  # type: ignore[attr-defined]
            if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                (local if own else bound).add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            names = [(a.asname or a.name).split(".")[0] for a in node.names]  # type: ignore[attr-defined]
            (local if own else bound).update(names)
            star = star or any(a.name == "*" for a in node.names)  # type: ignore[attr-defined]
        elif kind is ast.Global or kind is ast.Nonlocal:
            used.update(node.names)  # type: ignore[attr-defined]
            declared.update(node.names)  # type: ignore[attr-defined]
        elif isinstance(node, _SCOPES):
            if own and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                local.add(node.name)
            elif not own and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            todo += [(child, False) for child in _children(node)]
            continue
        todo += [(child, own) for child in _children(node)]
    if block.function is not None:
        used -= local - declared
    return _Names(frozenset(used), frozenset(bound), star)


class Layout:
    """How the blocks of one version depend on each other, by the names they mention."""

    def __init__(self, blocks: Sequence[Block], names: Sequence[_Names]) -> None:
        self.blocks, self.names = blocks, names
        self.functions: dict[str, list[int]] = {}  # function name -> its blocks
        self.binders: dict[str, list[int]] = {}  # name -> environment blocks binding it
        self.users: dict[str, list[int]] = {}  # function name -> environment blocks naming it
        self.environment = [i for i, b in enumerate(blocks) if b.function is None]
        self.star = [i for i in self.environment if names[i].star]
        for i, b in enumerate(blocks):
            if b.function is not None:
                self.functions.setdefault(b.function, []).append(i)
        for i in self.environment:
            for name in names[i].bound:
                self.binders.setdefault(name, []).append(i)
            for name in names[i].used:
                if name in self.functions:
                    self.users.setdefault(name, []).append(i)
        self._behind: dict[int, frozenset[int]] = {}

    def components(self) -> list[list[int]]:
        """The function blocks grouped into components (each sorted; components in source order)."""
        parent = {i: i for f in self.functions.values() for i in f}

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i in list(parent):
            linked = {root(i)}
            for name in self.names[i].used:
                linked.update(root(j) for j in self.functions.get(name, ()))
                for env in self.binders.get(name, ()):
                    linked.update(root(j) for j in self._functions_behind(env))
            first = min(linked)
            for r in linked:
                parent[r] = first
        for same_name in self.functions.values():  # a redefinition replaces the earlier def
            first = min(root(i) for i in same_name)
            for i in same_name:
                parent[root(i)] = first
        groups: dict[int, list[int]] = {}
        for i in sorted(parent):
            groups.setdefault(root(i), []).append(i)
        return sorted(groups.values())

    def environment_of(self, group: Sequence[int]) -> list[int]:
        """The environment blocks a component can depend on: those binding a name it uses, those naming one of
        its functions (``k = nki.jit(f)``), star imports, and, transitively, what those use."""
        todo = list(self.star)
        for i in group:
            for name in self.names[i].used:
                todo += self.binders.get(name, ())
            todo += self.users.get(self.blocks[i].function or "", ())
        seen: set[int] = set()
        while todo:
            b = todo.pop()
            if b in seen:
                continue
            seen.add(b)
            for name in self.names[b].used:
                todo += self.binders.get(name, ())
        return sorted(seen)

    def _functions_behind(self, env: int) -> frozenset[int]:
        """Function blocks an environment block reaches: those it names, and those behind the module-level names
        it uses (a class whose method calls a helper ties the helper to every function using the class)."""
        found = self._behind.get(env)
        if found is not None:
            return found
        out: set[int] = set()
        seen = {env}
        todo = [env]
        while todo:
            b = todo.pop()
            for name in self.names[b].used:
                out.update(self.functions.get(name, ()))
                for other in self.binders.get(name, ()):
                    if other not in seen:
                        seen.add(other)
                        todo.append(other)
        self._behind[env] = frozenset(out)
        return self._behind[env]


@dataclass(frozen=True)
class _Entry:
    """One component's findings as computed, with the positions of the blocks they were computed on."""

    findings: tuple[Finding, ...]
    starts: tuple[int, ...]  # first line of each block checked, in source order
    ends: tuple[int, ...]
    files: tuple[tuple[str, Stamp], ...]  # local modules the analysis read, with their file stamps

    def fresh(self) -> bool:
        """Whether every local module read is unchanged on disk."""
        return all(file_stamp_or_missing(path) == stamp for path, stamp in self.files)

    def moved_to(self, starts: Sequence[int], path: str) -> list[Finding]:
        """The findings with every position in block ``k`` moved by ``starts[k] - self.starts[k]``."""
        deltas = [new - old for new, old in zip(starts, self.starts, strict=True)]
        if not any(deltas):
            return list(self.findings)

        def line(n: int) -> int:
            k = block_at(self.starts, self.ends, n)
            return n if k is None else n + deltas[k]

        def span(s: Span) -> Span:
            return Span(line(s.line), s.column, line(s.end_line), s.end_column)

        def moved(f: Finding) -> Finding:
            fix = f.fix and Fix(f.fix.title, tuple(TextEdit(span(e.span), e.new_text) for e in f.fix.edits))
            related = tuple(
                r if r.path != path else Related(r.path, span(r.span), r.message) for r in f.related
            )
            return replace(f, span=span(f.span), fix=fix, related=related)

        return [moved(f) for f in self.findings]


def block_at(starts: Sequence[int], ends: Sequence[int], line: int) -> int | None:
    """Index of the block (sorted, disjoint ``[starts[k], ends[k]]``) holding ``line``, or None."""
    k = bisect.bisect_right(starts, line) - 1
    return k if k >= 0 and line <= ends[k] else None


def _consistent(findings: list[Finding], environment: list[Block]) -> bool:
    """Whether no two findings of one rule at one place of module-level code say different things (every group
    that checks that code must agree on it; elsewhere one place may rightly get several findings, e.g. a helper
    line from two call sites)."""
    starts = [b.start for b in environment]
    ends = [b.end for b in environment]
    seen: dict[tuple[str, Span], Finding] = {}
    for f in findings:
        if block_at(starts, ends, f.span.line) is None:
            continue
        other = seen.setdefault((f.code, f.span), f)
        if other is not f and other != f:
            return False
    return True


class _Positioned:
    """Every node of the file at its place, for the version decision, built only when it reads them (a text that
    can hold a legacy import or a 0.6-only API): placing them re-parses every block an edit moved, and walks the
    whole module, which an edit that inserts a line would otherwise pay on every keystroke."""

    def __init__(self, blocks: Sequence[Block]) -> None:
        self._blocks = blocks
        self._nodes: list[ast.AST] | None = None

    def nodes(self) -> list[ast.AST]:
        """The nodes, statement by statement in file order (``ast.walk`` within each)."""
        if self._nodes is None:
            self._nodes = [n for b in self._blocks for st in b.stmts() for n in ast.walk(st)]
        return self._nodes

    def uses(self) -> Iterator[tuple[str, int]]:
        """``(canonical name, line)`` of the imported names used (``version_signals.uses_in``), on iteration."""
        yield from uses_in(self.nodes())

    def aliases(self) -> ImportAliases:
        """The file's imports."""
        return ImportAliases.from_nodes(self.nodes())


class IncrementalLinter:
    """Lints successive versions of one document, re-checking only the components an edit touched.

    ``lint`` gives the same findings as ``api.lint_source(text, path, config)``; it never raises. Thread-safe
    (one run at a time).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._config: LintConfig | None = None
        self._entries: dict[tuple[str, ...], _Entry] = {}
        self._names: dict[str, _Names] = {}
        self._lines: list[str] = []  # the last version that parsed, and its blocks
        self._blocks: list[Block] = []
        self._lock = threading.Lock()
        self.last_checked = 0  # components checked (not reused) by the last run: for tests and the debug log

    def forget(self) -> None:
        """Drop every cached result (local modules changed on disk, say)."""
        with self._lock:
            self._entries.clear()

    def lint(self, text: str, config: LintConfig) -> list[Finding]:
        """All findings for ``text``, as ``lint_source`` reports them."""
        text = text.removeprefix("\ufeff")
        with self._lock, gc_paused():
            try:
                return self._lint(text, config)
            except Exception as exc:  # last line of defence, as in lint_source
                log.exception("incremental lint failed on %s", self.path)
                self._entries.clear()
                return [meta_finding(INTERNAL_ERROR, self.path, Span(1, 1, 1, 1), f"internal error: {exc}")]

    def _lint(self, text: str, config: LintConfig) -> list[Finding]:
        lines = _LINE_BREAK.split(text)
        reparsed = reparse(self._lines, self._blocks, lines)
        blocks: list[Block] | Finding
        if reparsed is None:
            tree = parse(text, self.path)
            blocks = tree if isinstance(tree, Finding) else split_blocks(tree.body, lines)
        elif isinstance(reparsed, ParseFailure):
            blocks = syntax_finding(reparsed.error, self.path, reparsed.line_offset)
        else:
            blocks = reparsed
        if isinstance(blocks, Finding):  # keep the cache: the next version that parses reuses it
            return [blocks] if config.enabled(SYNTAX_ERROR, self.path) else []
        self._lines, self._blocks = lines, blocks
        # The version is the whole file's (its code may name it), decided once for every component.
        positioned = _Positioned(blocks)
        config = with_code_version(config, text, positioned.uses(), positioned.aliases)
        if config != self._config:
            self._entries.clear()
            self._config = config
        names = [self._block_names(b) for b in blocks]
        self._names = {b.text: n for b, n in zip(blocks, names, strict=True)}
        layout = Layout(blocks, names)
        runs = [layout.environment] if layout.environment else []
        runs += [sorted(layout.environment_of(group) + group) for group in layout.components()]
        entries: dict[tuple[str, ...], _Entry] = {}
        raw: list[Finding] = []
        self.last_checked = 0
        for checked in runs:
            key = tuple(blocks[i].text for i in checked)
            entry = entries.get(key) or self._entries.get(key)
            if entry is None or not entry.fresh():
                entry = self._check(text, [blocks[i] for i in checked], config)
                self.last_checked += 1
            entries[key] = entry
            raw += entry.moved_to([blocks[i].start for i in checked], self.path)
        self._entries = entries
        if not _consistent(raw, [blocks[i] for i in layout.environment]):
            # A rule summed something over every kernel into a finding on module-level code (NKI208 once did):
            # the groups disagree about it, so only the whole file can say. Logged, to be fixed in the rule.
            log.warning(
                "%s: module-level findings differ between kernel groups; linted the whole file", self.path
            )
            tree = ast.Module(body=[s for b in blocks for s in b.stmts()], type_ignores=[])
            return lint_module(text, self.path, config, tree=tree)
        return finish(raw, text, self.path, config)

    def _block_names(self, block: Block) -> _Names:
        found = self._names.get(block.text)
        return found if found is not None else _names(block)

    def _check(self, text: str, blocks: list[Block], config: LintConfig) -> _Entry:
        """Check the blocks (the environment and one component) as one module. Findings on lines of other
        blocks belong to other components and are dropped; internal errors are always kept."""
        tree = ast.Module(body=[s for b in blocks for s in b.stmts()], type_ignores=[])
        found = discover_safely(text, self.path, tree)
        files: tuple[tuple[str, Stamp], ...] = ()
        if isinstance(found, Finding):
            findings = [found]
        else:
            ctx = LintContext(self.path, text, tree, found, config)
            findings = check(ctx)
            files = tuple((p, file_stamp_or_missing(p)) for p in sorted(found.resolver.files))
            dispose(ctx)
        starts = tuple(b.start for b in blocks)
        ends = tuple(b.end for b in blocks)
        kept = tuple(
            f for f in findings if f.code == INTERNAL_ERROR or block_at(starts, ends, f.span.line) is not None
        )
        return _Entry(kept, starts, ends, files)
