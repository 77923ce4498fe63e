"""Helpers shared by rule modules: version constants, kernel-code walks, name kinds, a factory for
"this construct may not appear in kernel code" rules, and loop-to-function rewrite support."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

from nki_studio.core.findings import Finding, Severity, Span, TextEdit
from nki_studio.model.imports import is_legacy
from nki_studio.model.kernels import FunctionInfo
from nki_studio.model.kinds import FunctionKinds, Kind, binding_nodes, classify, value_kind
from nki_studio.model.targets import NkiVersion
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, rule

V02, V03, V04, V06, V07 = (NkiVersion(0, m) for m in (2, 3, 4, 6, 7))


# Device loops whose body function receives a register: canonical API -> position of the body (keyword body_fun).
_LOOP_BODY_ARGUMENT = {"nki.language.fori_loop": 2, "nki.language.while_loop": 1}


def loop_body_api(ctx: LintContext, func: FunctionInfo) -> str | None:
    """The canonical device loop (``nl.fori_loop``/``nl.while_loop``) ``func`` is passed to as the body, if any
    (its first parameter is then the loop's register). The loop call must see ``func`` under that name: a call
    in the function defining it, in a function nested there, or anywhere for a module-level function."""
    memo: dict[str, list[tuple[str, FunctionInfo | None]]] | None = ctx.memo.get("loop_bodies")
    if memo is None:
        memo = {}
        for api, position in _LOOP_BODY_ARGUMENT.items():
            for call in ctx.kernel_calls_to(api):
                body = (
                    call.args[position]
                    if len(call.args) > position
                    else next((kw.value for kw in call.keywords if kw.arg == "body_fun"), None)
                )
                if isinstance(body, ast.Name):
                    memo.setdefault(body.id, []).append((api, enclosing_function(ctx, call)))
        ctx.memo["loop_bodies"] = memo
    for api, caller in memo.get(func.node.name, ()):
        if named_in_scope(func, caller):
            return api
    return None


_IF_ELSE_CALLBACKS = ((1, "then_fn"), (2, "else_fn"))  # nl.if_else's callback arguments: position, keyword


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def runtime_if_else_callback(ctx: LintContext, func: FunctionInfo) -> bool:
    """Whether ``func`` is passed by name as a callback of an ``nl.if_else`` whose condition is definitely a
    device value (an NkiScalar/register, or arithmetic or a comparison of one). Tracing calls both callbacks
    of such a call (a Python bool/int condition calls only the selected one)."""
    memo: dict[str, list[FunctionInfo]] | None = ctx.memo.get("runtime_if_else_callbacks")
    if memo is None:
        memo = {}
        for call in ctx.kernel_calls_to("nki.language.if_else"):
            cond = _argument(call, 0, "cond")
            caller = enclosing_function(ctx, call)
            if (
                cond is None
                or caller is None
                or value_kind(cond, ctx.aliases, kinds(ctx, caller)) is not Kind.REGISTER
            ):
                continue
            for position, keyword in _IF_ELSE_CALLBACKS:
                fn = _argument(call, position, keyword)
                if isinstance(fn, ast.Name):
                    memo.setdefault(fn.id, []).append(caller)
        ctx.memo["runtime_if_else_callbacks"] = memo
    return any(named_in_scope(func, caller) for caller in memo.get(func.node.name, ()))


def named_in_scope(func: FunctionInfo, caller: FunctionInfo | None) -> bool:
    """Whether code of ``caller`` sees ``func`` under its name: ``func`` is module-level, or defined in
    ``caller`` or in a function enclosing it."""
    if func.parent is None:
        return True
    scope = caller
    while scope is not None:
        if scope.node is func.parent.node:
            return True
        scope = scope.parent
    return False


# Where registers come from (model/kinds.py): no call to one of these in kernel code, no register anywhere.
_REGISTER_SOURCES = (
    "nki.isa.register_alloc",
    "nki.isa.scalar_load",
    "nki.language.dynamic_range",
    *_LOOP_BODY_ARGUMENT,
)


def may_hold_registers(ctx: LintContext) -> bool:
    """Whether this file's kernel code can hold a runtime register at all (a cheap pre-check for rules)."""
    return any(ctx.kernel_calls_to(api) for api in _REGISTER_SOURCES)


def kinds(ctx: LintContext, func: FunctionInfo) -> FunctionKinds:
    """Definite tensor/register/grid names of a kernel-code function (computed once per file); the first
    parameter of a device-loop body is its register."""
    memo: dict[int, FunctionKinds] = ctx.memo.setdefault("kinds", {})
    if id(func.node) not in memo:
        params = func.node.args.args
        registers = frozenset({params[0].arg}) if params and loop_body_api(ctx, func) else frozenset()
        groups = func.module.own_by_type.get(id(func.node))
        nodes = binding_nodes(groups) if groups is not None else None
        memo[id(func.node)] = classify(
            func.node,
            ctx.aliases,
            nodes=own_nodes(ctx, func) if nodes is None else nodes,
            register_params=registers,
        )
    return memo[id(func.node)]


def own_nodes(ctx: LintContext, func: FunctionInfo) -> list[ast.AST]:
    """Nodes of a function in source order, not inside a nested def (those have their own scope); computed
    once per module by kernel discovery."""
    return func.module.own_nodes.get(id(func.node), [])


def may_own(func: FunctionInfo, types: Iterable[type[ast.AST]]) -> bool:
    """Whether ``func``'s own nodes can include one of ``types``: False only when discovery's grouping by type
    (:func:`own_nodes`) has none of them, so a rule skips the function before costlier work on it."""
    groups = func.module.own_by_type.get(id(func.node))
    return groups is None or any(t in groups for t in types)


def own_of_type(func: FunctionInfo, kind: type[ast.AST]) -> list[ast.AST]:
    """The nodes of exact type ``kind`` among a function's own nodes, in source order (kernel discovery groups
    own nodes by type, so this is a lookup, not a pass over every node)."""
    return func.module.own_by_type.get(id(func.node), {}).get(kind, [])


def own_calls(ctx: LintContext, func: FunctionInfo) -> list[ast.Call]:
    """The calls among a function's own nodes, in source order (:func:`own_of_type`)."""
    return own_of_type(func, ast.Call)  # type: ignore[return-value]


def construct_rule(
    *,
    code: str,
    name: str,
    node_types: tuple[type[ast.AST], ...],
    message: str,
    severity: Severity,
    basis: Basis,
    summary: str,
    bad: str | Example,
    good: str | Example,
    max_version: NkiVersion | None = V06,
    min_version: NkiVersion | None = V02,
    sources: str = "",
    scope_note: str = "",
    why: str = "",
    accept: Callable[[LintContext, ast.AST], bool] | None = None,
) -> None:
    """Register a rule reporting every node of ``node_types`` in kernel code (``accept`` may veto a node)."""

    def check(ctx: LintContext) -> Iterable[Finding]:
        for node in ctx.kernel_nodes_of(node_types):
            if accept is None or accept(ctx, node):
                where = ctx.head_span(node) if isinstance(node, ast.stmt) else ctx.span(node)
                yield ctx.report(where, message)

    check.__doc__ = why
    rule(
        code=code,
        name=name,
        severity=severity,
        summary=summary,
        basis=basis,
        bad=bad,
        good=good,
        min_version=min_version,
        max_version=max_version,
        sources=sources,
        scope_note=scope_note,
    )(check)


def indent_of(line: str) -> str:
    """Leading whitespace of a line."""
    return line[: len(line) - len(line.lstrip())]


def names_loaded_after(func_node: ast.AST, stmt: ast.stmt) -> set[str]:
    """Names read anywhere in ``func_node`` after ``stmt`` ends (by position)."""
    end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    out = set()
    for node in ast.walk(func_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if (node.lineno, node.col_offset) > end:
                out.add(node.id)
    return out


def names_stored_in(stmts: Iterable[ast.stmt]) -> set[str]:
    """Names bound anywhere in the statements."""
    out = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                out.add(node.id)
    return out


def body_escapes(stmts: Iterable[ast.stmt]) -> bool:
    """True if moving the statements into a function changes control flow (break/continue/return/yield)
    or scoping (global/nonlocal)."""
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await)):
                return True
            if isinstance(node, (ast.Break, ast.Continue)) and not _inside_inner_loop(stmt, node):
                return True
    return False


def _inside_inner_loop(root: ast.stmt, target: ast.AST) -> bool:
    """Whether ``target`` (a break/continue) belongs to a loop nested within ``root``."""
    for node in ast.walk(root):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            for inner in node.body:
                if any(n is target for n in ast.walk(inner)):
                    return True
    return False


# Node types :func:`truth_tested` can return something for (callers skip every other node cheaply).
TRUTH_TESTING = frozenset({ast.If, ast.While, ast.IfExp, ast.UnaryOp, ast.BoolOp, ast.comprehension})


def truth_tested(node: ast.AST) -> list[ast.expr]:
    """Expressions whose Python truth value ``node`` evaluates (if/while/ternary/assert tests, not/and/or
    operands, bool()/int()/range() arguments are handled by callers)."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        return [node.test]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [node.operand]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.comprehension):
        return list(node.ifs)
    return []


def bracket_lnc_kernels(ctx: LintContext) -> set[str]:
    """Names of this file's kernels whose ``kernel[...]`` launch bracket is an LNC degree (the ``nki`` API).
    On legacy code the bracket is an SPMD launch grid of any rank (``kernel[4, 2](src)`` in the
    ``nki.language.spmd_dim``/``nki.language.nc`` API pages, whose examples import ``neuronxcc.nki.language``;
    nki-samples' spmd_tensor_addition tutorial at 0898a77), so legacy kernels are left out."""
    return {k.node.name for k in ctx.discovery.kernels if not ctx.legacy_code(k)}


def resolved_refs(
    ctx: LintContext, names: Iterable[str], *, legacy: bool = False
) -> Iterator[tuple[ast.Name | ast.Attribute, str]]:
    """Every load of an NKI name in the whole file, as (node, canonical name), for the given canonical names.

    Legacy ``neuronxcc.nki`` spellings are skipped unless ``legacy`` (legacy code is NKI208's business)."""
    refs = ctx.refs
    for name in names:
        for node, raw in refs.get(name, ()):
            if legacy or not is_legacy(raw):
                yield node, name


def remove_keyword(ctx: LintContext, call: ast.Call, kw: ast.keyword) -> TextEdit:
    """An edit deleting one keyword argument of a call together with its separating comma."""
    items: list[ast.AST] = [*call.args, *call.keywords]
    items.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    i = next(j for j, n in enumerate(items) if n is kw)
    if i > 0:
        prev = ctx.span(items[i - 1])
        return TextEdit(Span(prev.end_line, prev.end_column, *_end(ctx, kw)), "")
    if len(items) > 1:
        nxt = ctx.span(items[1])
        start = ctx.span(kw)
        return TextEdit(Span(start.line, start.column, nxt.line, nxt.column), "")
    return ctx.replace(kw, "")


def _end(ctx: LintContext, node: ast.AST) -> tuple[int, int]:
    s = ctx.span(node)
    return s.end_line, s.end_column


def line_end(ctx: LintContext, lineno: int) -> Span:
    """An empty span at the end of a line (to append text)."""
    col = len(ctx.lines[lineno - 1]) + 1 if lineno <= len(ctx.lines) else 1
    return Span(lineno, col, lineno, col)


def header_span(ctx: LintContext, stmt: ast.For | ast.While) -> Span | None:
    """Span of a loop header ``for ... :`` / ``while ...:`` up to and including the colon; None when the body
    starts on the header line (one-line loops are not rewritten)."""
    if stmt.body[0].lineno == stmt.lineno:
        return None
    last: ast.expr = stmt.iter if isinstance(stmt, ast.For) else stmt.test
    end_line = last.end_lineno or last.lineno
    line = ctx.lines[end_line - 1]
    byte_end = last.end_col_offset or 0
    tail = line.encode("utf-8")[byte_end:].decode("utf-8", errors="ignore")
    colon = tail.find(":")
    if colon < 0:
        return None
    start = ctx.span(stmt)
    end_col = ctx.column(end_line, byte_end) + colon + 1
    return Span(start.line, start.column, end_line, end_col)


def nl_alias_for(ctx: LintContext, func: ast.expr) -> str | None:
    """How this file spells ``nki.language`` next to a call of one of its functions (``nl`` in
    ``nl.dynamic_range``), or any module alias of ``nki.language``."""
    if isinstance(func, ast.Attribute) and ctx.aliases.canonical(func.value) == "nki.language":
        return ctx.text(func.value)
    aliases = ctx.aliases.locals_for("nki.language")
    return aliases[0] if aliases else None


# Loop constructs and the keywords of their bound parameters, in order (lower/start, upper/stop); the step is
# checked by NKI126 for the device loops. ``range`` is the builtin; the static ``nl`` iterators behave as it
# (language.md §9, nki-0.7.md §2.2).
_DEVICE_LOOPS = {
    "nki.language.fori_loop": ("lower", "upper"),
    "nki.language.dynamic_range": ("start", "stop"),
}
PYTHON_RANGES = frozenset(
    {"nki.language.affine_range", "nki.language.sequential_range", "nki.language.static_range"}
)


def loop_calls(ctx: LintContext) -> list[tuple[ast.Call, str]]:
    """Every loop call of this file's kernel code with its kind: ``"range"`` for the builtin, else the canonical
    name of the ``nl`` loop (static iterator, ``fori_loop``, ``dynamic_range``); in source order, from the shared
    call index (no name resolution per call)."""
    memo: list[tuple[ast.Call, str]] | None = ctx.memo.get("loop_calls")
    if memo is None:
        found = [(c, api) for api in (*PYTHON_RANGES, *_DEVICE_LOOPS) for c in ctx.kernel_calls_to(api)]
        if ctx.calls_headed_by(("range",)):  # else no pass over kernel code's calls
            found += [
                (c, "range")
                for c in ctx.kernel_nodes_of((ast.Call,))
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "range"
            ]
        memo = sorted(found, key=lambda e: (e[0].lineno, e[0].col_offset))
        ctx.memo["loop_calls"] = memo
    return memo


def enclosing_function(ctx: LintContext, node: ast.AST) -> FunctionInfo | None:
    """The kernel-code function whose own code holds ``node`` (a node of kernel code): the innermost one whose
    lines contain it (by position, so no parent map of the whole file is built)."""
    functions: list[FunctionInfo] | None = ctx.memo.get("functions_by_start")
    if functions is None:
        functions = sorted(ctx.kernel_code(), key=lambda f: (f.node.lineno, f.node.col_offset))
        ctx.memo["functions_by_start"] = functions
    where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    best: FunctionInfo | None = None
    for func in functions:
        start = (func.node.lineno, func.node.col_offset)
        if start > where:
            break
        if where <= (func.node.end_lineno or func.node.lineno, func.node.end_col_offset or 0):
            best = func  # later starts that still contain it are nested deeper
    return best


def loop_bound_args(call: ast.Call, kind: str) -> list[ast.expr]:
    """The bound arguments of a loop call of ``kind`` (as :func:`loop_calls` gives it): every argument of a Python range
    (start, stop, step), the lower/upper bounds of a device loop."""
    if kind not in _DEVICE_LOOPS:
        return [a for a in call.args if not isinstance(a, ast.Starred)]
    keywords = _DEVICE_LOOPS[kind]
    out = [a for a in call.args[:2] if not isinstance(a, ast.Starred)]
    out += [kw.value for kw in call.keywords if kw.arg in keywords[len(call.args[:2]) :]]
    return out


NOT_LITERAL = object()  # what ``literal_value`` gives for an expression that is not a literal


def literal_value(node: ast.expr) -> object:
    """A literal's value, a negated number (``-3``) included; ``NOT_LITERAL`` for anything else (``None`` is a
    literal value)."""
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        value = node.operand.value
        return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else NOT_LITERAL
    return node.value if isinstance(node, ast.Constant) else NOT_LITERAL
