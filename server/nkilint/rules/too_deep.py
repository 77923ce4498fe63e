"""NKI003: code nested deeper than the analyses take; it is cut off there and the rest of the file linted."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kernels import MAX_AST_DEPTH
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule

_DEEP = "[0]" * (MAX_AST_DEPTH + 5)


@rule(
    code="NKI003",
    name="too-deeply-nested",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    summary=f"Code nested more than {MAX_AST_DEPTH} syntax levels deep (a long elif chain, a deep subscript "
    "chain) is too deep to analyse; what lies below that depth is not checked.",
    bad=f"x = [[0]]\ny = x{_DEEP}\n",
    good="x = [[0]]\ny = x[0][0]\n",
    sources="nkilint engine (the analyses recurse under Python's recursion limit)",
    scope_note="One finding on the outermost statement of the function (or module) holding the deep code; "
    "the rest of the file is linted as usual. Imported helper modules are cut the same way, silently.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Report each statement that ``build_module`` cut at the depth limit, once."""
    for stmt in ctx.discovery.module.too_deep:
        yield ctx.report(
            stmt,
            f"too deeply nested to analyse here (more than {MAX_AST_DEPTH} syntax levels): the code below that "
            "depth is not checked; split it up (e.g. a dict lookup instead of a long elif chain)",
        )
