"""Value-returning ISA calls nested in an expression -> their result made first, then read by name.

``attn = scores * nisa.nc_transpose(divisor)`` (nki-samples' SD attention kernels) uses the value of a call that
0.7 no longer returns (deprecations.md: "destination-passing ... allocate ``x`` with ``nl.ndarray``"). The call is
evaluated first, into a result allocated as ``isa_results`` allocates a statement's value, and the expression reads
that name: ``nc_transpose_value = nl.ndarray(...); nisa.nc_transpose(dst=nc_transpose_value, data=divisor); attn =
scores * nc_transpose_value``, on the statement's own line (line numbers stay). Evaluating the call before the rest
of the expression changes nothing the kernel computes as long as it is evaluated exactly once, so calls under a
condition (``a if c else b``, ``and``/``or``), in a comprehension or a lambda stay where they are (listed by
``manual.py``). One call per statement per round (``rewrite`` repeats passes), innermost first (its operands must be names or subscripts of
them, so an outer call's operand is a name only once the inner call is made first).
"""

from __future__ import annotations

import ast

from nki_studio.core.findings import Fix
from nki_studio.core.text_edits import apply_fixes_listed
from nki_studio.migrate import isa_results
from nki_studio.migrate.result import ROUNDS, PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source

_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
_Statement = ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return
# expressions whose parts are not all evaluated exactly once
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def run(src: Source) -> PassResult:
    """Make each nested value-returning call's result before its statement."""
    out = PassResult()
    for stmt, call, made in _hoists(src):
        start, end = src.bounds(stmt)
        call_start, call_end = src.bounds(call)
        name = made.partition(" = ")[0]
        new = f"{made}; {src.text[start:call_start]}{name}{src.text[call_end:end]}"
        leaf = (src.canonical(call.func) or "").rpartition(".")[2]
        out.change(
            src.replace(stmt, new), call.lineno, f"nisa.{leaf} value", "allocation + dst= call before it"
        )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The nested value-returning calls (by ``id``) this pass makes first, over its rounds (``manual.py`` lists the
    others): those of each statement it leaves with none (lines stay, so statements are matched by line; a
    statement with one call left has all of its calls listed)."""
    text = src.text
    for _ in range(ROUNDS):
        edits = run(Source(text)).edits
        if not edits:
            break
        text, _ = apply_fixes_listed(text, [Fix("nested values", (e,)) for e in edits])
    after = Source(text)
    left = {stmt.lineno for stmt in _statements(after) if _nested(after, stmt)}
    return {id(call) for stmt in _statements(src) if stmt.lineno not in left for call in _nested(src, stmt)}


def _statements(src: Source) -> list[_Statement]:
    """The statements a value can be made before (their value not None)."""
    return [s for s in ast.walk(src.tree) if isinstance(s, _STATEMENTS) and s.value is not None]


def _hoists(src: Source) -> list[tuple[_Statement, ast.Call, str]]:
    """Per statement, the first nested value-returning call that can be made first, with the statement making it."""
    nl = src.alias_of(LANGUAGE, "nl")
    found = []
    for stmt in _statements(src):
        for call in _nested(src, stmt):
            # a name nothing else uses: the result is read in this statement only, so statements may share it
            name = isa_results.fresh_name(src, (src.canonical(call.func) or "").rpartition(".")[2])
            made = isa_results.allocated(src, call, name, nl)
            if made is not None:
                found.append((stmt, call, made))
                break
    return found


def _nested(src: Source, stmt: _Statement) -> list[ast.Call]:
    """The ISA calls whose value ``stmt`` uses inside an expression (not as its whole value, which is
    ``isa_results``'), each evaluated exactly once, innermost first."""
    value = stmt.value
    assert value is not None
    whole = value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
    found: list[ast.Call] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, _CONDITIONAL):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)
        if (
            isinstance(node, ast.Call)
            and node is not whole
            and (src.canonical(node.func) or "").rpartition(".")[0] == ISA
            and not any(k.arg == "dst" for k in node.keywords)
        ):
            found.append(node)

    visit(value)
    return found
