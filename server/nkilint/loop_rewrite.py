"""Template fixes that turn a removed dynamic loop into a body function plus ``nl.fori_loop`` /
``nl.while_loop`` (deprecations.md §A, nki-0.7.md §2.2).

The rewrite keeps the body text and its indentation: the loop header is replaced by ``def <name>(<var>):``
at the same indentation, and the loop call is appended after the body. It is offered only when moving the
body into a function cannot change meaning: no break/continue/return/yield/global in it, no ``else:`` clause,
and no name bound in the body is used anywhere else in the enclosing function (it would become local to the
body function).
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Fix, TextEdit
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.ruleutil import (
    body_escapes,
    header_span,
    indent_of,
    line_end,
    names_stored_in,
    nl_alias_for,
)


def _enclosing_function(ctx: LintContext, node: ast.AST) -> ast.AST:
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = ctx.parent(parent)
    return parent if parent is not None else ctx.tree


def _safe_to_move(ctx: LintContext, loop: ast.For | ast.While, loop_var: str) -> bool:
    if loop.orelse or body_escapes(loop.body):
        return False
    stored = names_stored_in(loop.body) - {loop_var}
    if not stored:
        return True
    body_ids = {id(n) for stmt in loop.body for n in ast.walk(stmt)}
    for node in ast.walk(_enclosing_function(ctx, loop)):
        if isinstance(node, ast.Name) and node.id in stored and id(node) not in body_ids:
            return False
    return True


def loop_to_function_fix(
    ctx: LintContext,
    loop: ast.For | ast.While,
    loop_var: str,
    call_template: str,
    title: str,
    returns: str | None = None,
) -> Fix | None:
    """A fix replacing ``loop`` by ``def _<var>_body(<var>): <body>`` followed by the call built from
    ``call_template`` (``{body}`` is replaced by the function name); ``returns`` appends ``return <name>``."""
    header = header_span(ctx, loop)
    if header is None or not _safe_to_move(ctx, loop, loop_var):
        return None
    name = f"_{loop_var}_body"
    indent = indent_of(ctx.lines[loop.lineno - 1])
    body_indent = indent_of(ctx.lines[loop.body[0].lineno - 1])
    last_line = max(s.end_lineno or s.lineno for s in loop.body)
    tail = ""
    if returns is not None:
        tail += f"\n{body_indent}return {returns}"
    tail += f"\n{indent}{call_template.format(body=name)}"
    edits = (TextEdit(header, f"def {name}({loop_var}):"), TextEdit(line_end(ctx, last_line), tail))
    return Fix(title=title, edits=edits)


def _fori_args(ctx: LintContext, call: ast.Call) -> list[str] | None:
    if call.keywords or not 1 <= len(call.args) <= 3 or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    args = [ctx.text(a) for a in call.args]
    return ["0", args[0]] if len(args) == 1 else args


def range_to_fori_fix(ctx: LintContext, loop: ast.For, call: ast.Call) -> Fix | None:
    """A fix turning ``for i in <range-like>(lo, hi, step): body`` (``range``, ``nl.dynamic_range``, the static
    ``nl.*_range`` iterators) into a body function plus ``nl.fori_loop(lo, hi, body, step)``."""
    args = _fori_args(ctx, call)
    nl = nl_alias_for(ctx, call.func)
    if args is None or nl is None or not isinstance(loop.target, ast.Name):
        return None
    step = f", {args[2]}" if len(args) == 3 else ""
    template = f"{nl}.fori_loop({args[0]}, {args[1]}, {{body}}{step})"
    return loop_to_function_fix(
        ctx, loop, loop.target.id, template, "Convert to nl.fori_loop (body becomes a function)"
    )
