"""What a rule sees: one parsed file, its kernels, imports, target and config, plus finding helpers.

Positions: ``ast`` column offsets are UTF-8 byte offsets; findings use 1-based code-point columns
(core/findings.py), so every span goes through :meth:`LintContext.span`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, KeysView
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from nki_studio.core.codes import Code
from nki_studio.core.findings import Finding, Fix, Related, Severity, Span, TextEdit
from nki_studio.model.api_version import FileApi, file_api
from nki_studio.model.imports import ImportAliases, to_canonical
from nki_studio.model.kernels import FunctionInfo, KernelDiscovery
from nki_studio.model.syntax import source_lines
from nki_studio.model.targets import LEGACY, Target
from nki_studio.nkilint.config import LintConfig


class LintContext:
    """The input of every rule's ``check``. Built once per file by the engine."""

    def __init__(
        self, path: str, source: str, tree: ast.Module, discovery: KernelDiscovery, config: LintConfig
    ) -> None:
        self.path = path
        self.source = source
        self.lines = source_lines(source)
        self.tree = tree
        self.discovery = discovery
        self.config = config
        self.memo: dict[str, Any] = {}  # per-file results rules share (e.g. name kinds per function)
        self.rule: Code | None = None  # the code of the rule whose check runs (set by the engine)

    @property
    def aliases(self) -> ImportAliases:
        """Import-alias table of this file."""
        return self.discovery.module.aliases

    @property
    def target(self) -> Target:
        """Target generation and NKI version."""
        return self.config.target

    @cached_property
    def api(self) -> FileApi:
        """Which API (legacy ``neuronxcc.nki`` or ``nki``) the file and each of its functions is written for."""
        return file_api(self.discovery)

    def legacy_code(self, func: FunctionInfo) -> bool:
        """Whether ``func`` is checked with the legacy API's meaning: the target is ``legacy``, or no setting
        names the version and the function is legacy code (a legacy kernel of a file importing both APIs)."""
        if self.target.nki_version == LEGACY:
            return True
        return not self.config.version_named_by_user and self.api.is_legacy(func.node)

    @cached_property
    def values(self) -> Any:
        """Compile-time values of the kernel code, computed on first use by the interpreter
        (``nki_studio.model.analysis.interpret``); a kernel with a simulate spec starts from its arguments.

        Imported here, not at the top: a file whose rules never ask for values does not load the interpreter.
        """
        from nki_studio.model.analysis import interpret

        known = {kernel: dict(facts) for kernel, facts in self.config.kernel_args}
        return interpret(self.discovery, self.target, known)

    # --- kernel code -------------------------------------------------------------------------------------

    def kernel_code(self) -> list[FunctionInfo]:
        """Kernels and reachable helpers defined in this file."""
        return self.discovery.in_this_module()

    def kernel_nodes_of(self, types: tuple[type[ast.AST], ...]) -> list[ast.AST]:
        """The nodes of this file's kernel code (each function's node and its own nodes, function by function)
        whose exact type is one of ``types``, in source order within each function: read from kernel
        discovery's grouping by type, not a walk of every node per rule (concrete ``ast`` classes have no
        subclasses)."""
        out: list[ast.AST] = []
        by_type = self.discovery.module.own_by_type
        own = self.discovery.module.own_nodes
        for func in self.discovery.in_this_module():
            if type(func.node) in types:
                out.append(func.node)
            groups = by_type.get(id(func.node), {})
            present = [groups[t] for t in types if t in groups]
            if len(present) == 1:
                out.extend(present[0])
            elif present:  # several of the types in one function: its own nodes keep them in order
                out.extend(node for node in own[id(func.node)] if type(node) in types)
        return out

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """All nodes of the file, walked on first use: only rules behind a cheap exit read every node (discovery's
        traversal keeps the groups the rules filter by instead: a list of every node cost an append per node on
        every lint, for readers that almost never run)."""
        return list(ast.walk(self.tree))

    @cached_property
    def calls(self) -> list[ast.Call]:
        """All call expressions of the file."""
        if self.discovery.module.tree is self.tree:
            return self.discovery.module.calls
        return [n for n in self.nodes if isinstance(n, ast.Call)]

    @cached_property
    def _call_table(self) -> _CallTable:
        """Every per-call index of the file from one pass over :attr:`calls`, each call's fields read once rather
        than once per index (four passes over the 29,000 calls of a 50,000-line module took about 127 ms CPU,
        this one and the kernel-call grouping 93 ms)."""
        raw_of = self._imported_dotted.get
        table = _CallTable()
        call_of, raw_of_call, by_raw = table.call_of, table.raw_of_call, table.by_raw
        by_keyword, by_head = table.by_keyword, table.by_head
        name_kind, subscript_kind = ast.Name, ast.Subscript
        for i, call in enumerate(self.calls):
            func = call.func
            call_of[func] = call
            raw = raw_of(func)
            if raw is not None:
                raw_of_call[call] = raw
                by_raw[raw].append(call)
            for kw in call.keywords:
                if kw.arg is not None:
                    by_keyword[kw.arg].append(i)
            if type(func) is subscript_kind:
                func = func.value
            if type(func) is name_kind:
                by_head[func.id].append(i)
        return table

    def _indexed_calls(self, index: defaultdict[str, list[int]], keys: Iterable[str]) -> list[ast.Call]:
        calls = self.calls
        return [calls[i] for i in sorted({i for key in keys for i in index.get(key, ())})]

    def calls_passing(self, keywords: Iterable[str]) -> list[ast.Call]:
        """Calls of the file passing at least one of ``keywords`` by name, in source order."""
        return self._indexed_calls(self._call_table.by_keyword, keywords)

    def calls_headed_by(self, names: Iterable[str]) -> list[ast.Call]:
        """Calls of the file whose callee is one of the plain ``names``, called directly (``name(...)``) or
        through a subscript (``kernel[2](...)``, a launch), in source order."""
        return self._indexed_calls(self._call_table.by_head, names)

    @cached_property
    def call_of(self) -> dict[ast.AST, ast.Call]:
        """Callee expression -> the call: ``call_of[node]`` is the call when ``node`` is called (keyed by the node,
        which hashes by identity, like :attr:`_imported_dotted`)."""
        return self._call_table.call_of

    @cached_property
    def _imported_dotted(self) -> dict[ast.AST, str]:
        """Name/Attribute node -> the dotted name it stands for through the imports (``aliases.resolve``), for
        every chain headed by an imported name."""
        return self._imported_chains[0]

    @cached_property
    def _imported_chains(self) -> tuple[dict[ast.AST, str], list[tuple[ast.Name | ast.Attribute, str]]]:
        """``_imported_dotted`` and the chains that are read (load context), in source order, from one pass.
        Children first (a node's value precedes it in reverse source order), so each ``a.b.c`` is built once from
        its ``a.b`` instead of re-walked per node. Keyed by the node itself (``ast`` nodes hash by identity), not
        its ``id()``: no integer object made per chain, read or freed (about 100,000 on a 50,000-line module)."""
        binding_of = self.aliases.bindings.get
        raw_of: dict[ast.AST, str] = {}
        raw_of_value = raw_of.get
        loads: list[tuple[ast.Name | ast.Attribute, str]] = []
        name_kind, load = ast.Name, ast.Load
        module = self.discovery.module
        if module.tree is self.tree:
            chains = module.chains
        else:
            chains = [n for n in self.nodes if type(n) is ast.Name or type(n) is ast.Attribute]
        for node in reversed(chains):
            if type(node) is name_kind:
                raw = binding_of(node.id)
                if raw is None:
                    continue  # most names are locals, parameters or builtins
            else:
                base = raw_of_value(node.value)  # type: ignore[union-attr]
                if base is None:
                    continue
                raw = f"{base}.{node.attr}"  # type: ignore[union-attr]
            raw_of[node] = raw
            if type(node.ctx) is load:
                loads.append((node, raw))
        loads.reverse()
        return raw_of, loads

    def resolved(self, node: ast.AST) -> str | None:
        """What ``aliases.resolve(node)`` gives for a name or attribute chain of this file, from the file's table
        of imported chains (a dictionary lookup instead of a walk)."""
        return self._imported_dotted.get(node)

    @cached_property
    def refs(self) -> dict[str, list[tuple[ast.Name | ast.Attribute, str]]]:
        """Imported names read anywhere in the file: resolved dotted name -> [(node, raw dotted name)], keyed by
        the canonical (legacy mapped onto ``nki``) name."""
        by_raw: dict[str, list[tuple[ast.Name | ast.Attribute, str]]] = {}
        for use in self._imported_chains[1]:
            by_raw.setdefault(use[1], []).append(use)
        return _by_canonical(by_raw)

    @cached_property
    def _kernel_calls_by_api(self) -> dict[str, list[ast.Call]]:
        raw_of_call = self._call_table.raw_of_call.get  # keyed by the call: no read of the call node itself
        by_raw: dict[str, list[ast.Call]] = {}
        for call in self.kernel_nodes_of((ast.Call,)):
            raw = raw_of_call(call)
            if raw is not None:
                by_raw.setdefault(raw, []).append(call)  # type: ignore[arg-type]
        return _by_canonical(by_raw)

    @cached_property
    def _calls_by_api(self) -> dict[str, list[ast.Call]]:
        return _by_canonical(self._call_table.by_raw)

    def calls_to(self, name: str) -> list[ast.Call]:
        """Calls anywhere in this file whose callee is the canonical imported name ``name`` (what
        ``aliases.canonical(call.func) == name`` selects), in source order."""
        return self._calls_by_api.get(name, [])

    def kernel_calls_to(self, name: str) -> list[ast.Call]:
        """Calls in this file's kernel code whose callee is the canonical imported name ``name`` (what
        ``aliases.canonical(call.func) == name`` selects), in source order."""
        return self._kernel_calls_by_api.get(name, [])

    def kernel_apis_called(self) -> KeysView[str]:
        """The canonical imported names that this file's kernel code calls."""
        return self._kernel_calls_by_api.keys()

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """id(node) -> parent node, for the whole file."""
        out: dict[int, ast.AST] = {}
        for node in self.nodes:
            for child in ast.iter_child_nodes(node):
                out[id(child)] = node
        return out

    def parent(self, node: ast.AST) -> ast.AST | None:
        """The parent node (None for the module)."""
        return self.parents.get(id(node))

    # --- positions ---------------------------------------------------------------------------------------

    def column(self, lineno: int, byte_offset: int) -> int:
        """1-based code-point column of a UTF-8 byte offset on a 1-based line."""
        if 1 <= lineno <= len(self.lines):
            line = self.lines[lineno - 1]
            if line.isascii():
                return byte_offset + 1
            return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1
        return byte_offset + 1

    def span(self, node: ast.AST) -> Span:
        """The span of a node (statements: their first line only for compound statements is not applied)."""
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_lineno = getattr(node, "end_lineno", None) or lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = col
        return Span(lineno, self.column(lineno, col), end_lineno, self.column(end_lineno, end_col))

    def head_span(self, node: ast.AST) -> Span:
        """Span of a compound statement's first line (``for ...:``, ``while ...:``), for readable diagnostics."""
        full = self.span(node)
        if full.line == full.end_line:
            return full
        line = self.lines[full.line - 1] if full.line <= len(self.lines) else ""
        return Span(full.line, full.column, full.line, len(line.rstrip()) + 1)

    def text(self, node: ast.AST) -> str:
        """The exact source text of a node (like ``ast.get_source_segment``, without re-splitting the file)."""
        lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return ""
        raw = [line.encode("utf-8") for line in self.lines[lineno - 1 : end_lineno]]
        if not raw:
            return ""
        if len(raw) == 1:
            return raw[0][col:end_col].decode("utf-8", errors="replace")
        parts = [raw[0][col:], *raw[1:-1], raw[-1][:end_col]]
        return "\n".join(p.decode("utf-8", errors="replace") for p in parts)

    def replace(self, node: ast.AST, new_text: str) -> TextEdit:
        """An edit replacing a node's source text."""
        return TextEdit(self.span(node), new_text)

    # --- findings ----------------------------------------------------------------------------------------

    def report(
        self,
        where: ast.AST | Span,
        message: str,
        *,
        severity: Severity | None = None,
        fix: Fix | None = None,
        related: tuple[Related, ...] = (),
    ) -> Finding:
        """A finding of the rule being checked (the engine binds :attr:`rule` to the code ``@rule(code=...)``
        registered): name, default severity and deprecated tag come from the catalogue; ``severity``
        overrides the default, e.g. for a rule that is a warning on 0.6 and an error on 0.7."""
        if self.rule is None:
            raise RuntimeError("LintContext.report outside a rule's check (no rule is bound)")
        span = where if isinstance(where, Span) else self.span(where)
        return self.rule.finding(self.path, span, message, severity=severity, fix=fix, related=related)


@dataclass
class _CallTable:
    """The per-call indexes of one file (:attr:`LintContext._call_table`); ``by_keyword`` and ``by_head`` hold
    positions in :attr:`LintContext.calls`. Defaultdicts: no empty list made and dropped per key as
    ``setdefault(key, [])`` would."""

    # callee expression -> its call; call -> the raw dotted name of its callee, when that is imported
    call_of: dict[ast.AST, ast.Call] = field(default_factory=dict)
    raw_of_call: dict[ast.AST, str] = field(default_factory=dict)
    by_raw: defaultdict[str, list[ast.Call]] = field(default_factory=lambda: defaultdict(list))
    by_keyword: defaultdict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_head: defaultdict[str, list[int]] = field(default_factory=lambda: defaultdict(list))


def _by_canonical(by_raw: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Lists keyed by raw dotted name, re-keyed by canonical name (each distinct name mapped once, not per node);
    a legacy and a current spelling of one name merge in source order."""
    out: dict[str, list[Any]] = {}
    for raw, items in by_raw.items():
        name = to_canonical(raw)
        if name in out:
            out[name] = sorted([*out[name], *items], key=_position)
        else:
            out[name] = items
    return out


def _position(item: Any) -> tuple[int, int]:
    node = item[0] if isinstance(item, tuple) else item
    return (node.lineno, node.col_offset)
