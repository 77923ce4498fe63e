"""NKI128: a float (``n / 2``, ``4.0``, ``float(...)``) as a loop bound; loops take integer bounds."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity, Span, TextEdit
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import enclosing_function, loop_bound_args, loop_calls, own_nodes

_KEEPS_FLOAT = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _is_float(node: ast.expr, floats: set[str]) -> bool:
    """Whether Python evaluates ``node`` to a float: a float literal, a true division, ``float()``, a name
    only ever assigned floats, or arithmetic keeping one of those a float."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, float)
    if isinstance(node, ast.Name):
        return node.id in floats
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Div):
            return True
        return isinstance(node.op, _KEEPS_FLOAT) and (
            _is_float(node.left, floats) or _is_float(node.right, floats)
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_float(node.operand, floats)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"


def _float_names(func: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]) -> set[str]:
    """Local names every assignment of which (in source order) is a float expression; parameters excluded."""
    verdict: dict[str, bool] = {}
    floats: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
            targets, value = [node.target] if not isinstance(node, ast.With) else [], None
        else:
            continue
        for target in targets:
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                is_float = isinstance(target, ast.Name) and value is not None and _is_float(value, floats)
                verdict[name] = verdict.get(name, True) and is_float
                if verdict[name]:
                    floats.add(name)
                else:
                    floats.discard(name)
    params = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    return floats - params


def _fix(ctx: LintContext, bound: ast.expr, floats: set[str]) -> Fix | None:
    """``4.0`` -> ``4``; ``n / 2`` (one true division, nothing else float) -> ``n // 2``."""
    if isinstance(bound, ast.Constant) and isinstance(bound.value, float) and bound.value.is_integer():
        return Fix("Use an integer literal", (ctx.replace(bound, str(int(bound.value))),))
    divisions = [n for n in ast.walk(bound) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
    if len(divisions) != 1 or any(
        (isinstance(n, ast.Constant) and isinstance(n.value, float))
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "float")
        or (isinstance(n, ast.Name) and n.id in floats)
        for n in ast.walk(bound)
    ):
        return None
    div = divisions[0]
    line = div.left.end_lineno
    if line is None or line != div.right.lineno or div.left.end_col_offset is None:
        return None
    raw = ctx.lines[line - 1].encode("utf-8")
    start = div.left.end_col_offset
    slash = raw[start : div.right.col_offset].find(b"/")
    if slash < 0:
        return None
    col = ctx.column(line, start + slash)
    edit = TextEdit(Span(line, col, line, col + 1), "//")
    return Fix("Use floor division (//): the same value wherever the division is exact", (edit,))


@rule(
    code="NKI128",
    name="float-loop-bound",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    fixable=True,
    summary="A float (`n / 2`, `4.0`, `float(...)`) as a bound of `range`, the `nl` iterators, `nl.fori_loop` or "
    "`nl.dynamic_range`.",
    bad=kernel_example(
        "x",
        """
out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
n = x.shape[0]
for i in range(n / 128):
    nisa.dma_copy(dst=out, src=x[i * 128:(i + 1) * 128, 0:512])
return out
""",
    ),
    good=kernel_example(
        "x",
        """
out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
n = x.shape[0]
for i in range(n // 128):
    nisa.dma_copy(dst=out, src=x[i * 128:(i + 1) * 128, 0:512])
return out
""",
    ),
    sources="language.md §9 and nki-0.7.md §2.2 (static iterators are Python `range`, which takes ints), "
    "nki-0.7.md §2.3 ([FORI]: bounds are int, VirtualRegister or NkiScalar), language.md §9 (dynamic_range: "
    "ints or VirtualRegisters)",
    scope_note="Every version. Reported when the bound is a float by Python's rules: a float literal, a true "
    "division `/`, `float(...)`, or a local name only ever assigned such a value. The quick fix rewrites an "
    "integral float literal to an int and a single `/` in the bound to `//` (the same value wherever the "
    "division is exact; where it is not, the loop never ran, and rounding up needs `(n + d - 1) // d`).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`range` and the static `nl` iterators (which behave as `range` in 0.7) raise `TypeError` for a float
    bound, and the device loops take ints, registers or NkiScalars only. In Python 3 `/` always gives a float,
    even for `512 / 128`, so a trip count computed with `/` fails when the kernel is built. Use `//`."""
    # Names some kernel-code assignment gives a float directly: only bounds naming one need the per-function pass.
    maybe = {
        t.id
        for node in ctx.kernel_nodes_of((ast.Assign,))
        if isinstance(node, ast.Assign) and _is_float(node.value, set())
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    floats_of: dict[int, set[str]] = {}
    for call, kind in loop_calls(ctx):
        for bound in loop_bound_args(call, kind):
            floats: set[str] = set()
            if maybe and any(isinstance(n, ast.Name) and n.id in maybe for n in ast.walk(bound)):
                func = enclosing_function(ctx, call)
                if func is not None:
                    if id(func.node) not in floats_of:
                        floats_of[id(func.node)] = _float_names(func.node, own_nodes(ctx, func))
                    floats = floats_of[id(func.node)]
            if _is_float(bound, floats):
                yield ctx.report(
                    bound,
                    f"loop bound `{ctx.text(bound)}` is a float; loops take integer bounds (a float raises "
                    "TypeError when the kernel is built); use `//` or int()",
                    fix=_fix(ctx, bound, floats),
                )
