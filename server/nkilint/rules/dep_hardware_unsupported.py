"""NKI212: ``nl`` operations documented as not working on hardware (``divide``, ``fmod``, ``mod``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, nl_alias_for, resolved_refs

_OPS = {
    "nki.language.divide": "is not supported on hardware; use nl.multiply(x, nl.reciprocal(y))",
    "nki.language.fmod": "works in simulation only (known issue since 0.3.0); no hardware op",
    "nki.language.mod": "works in simulation only (known issue since 0.3.0); no hardware op",
}


def _divide_fix(ctx: LintContext, call: ast.Call) -> Fix | None:
    nl = nl_alias_for(ctx, call.func)
    if nl is None or len(call.args) != 2 or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    extra = "".join(f", {ctx.text(kw)}" for kw in call.keywords)
    x, y = (ctx.text(a) for a in call.args)
    return Fix(
        "Rewrite as multiply by reciprocal",
        (ctx.replace(call, f"{nl}.multiply({x}, {nl}.reciprocal({y}){extra})"),),
    )


@rule(
    code="NKI212",
    name="hardware-unsupported-op",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V02,
    fixable=True,
    summary="`nl.divide`, `nl.fmod` or `nl.mod`: documented as not working on the device.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(a, b):\n"
    "    ta = nl.load(a)\n    tb = nl.load(b)\n    q = nl.divide(ta, tb)\n"
    "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n    nl.store(out, q)\n"
    "    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(a, b):\n"
    "    ta = nl.load(a)\n    tb = nl.load(b)\n    q = nl.multiply(ta, nl.reciprocal(tb))\n"
    "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n    nl.store(out, q)\n"
    "    return out\n",
    sources="deprecations.md §B (nl.divide never supported on hardware; fmod/mod simulation only), language.md §8",
    scope_note="Warning: these run in `nki.simulate` (and our simulator) but fail when compiled for the device.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The `nl` API list marks `divide` as not supported, and `fmod`/`mod` work in simulation only (known issue
    since 0.3.0). A kernel that simulates fine therefore fails to compile. `divide` is rewritten as a multiply by
    the reciprocal."""
    for node, name in resolved_refs(ctx, _OPS):
        call = ctx.call_of.get(node)
        fix = (
            _divide_fix(ctx, call)
            if name.endswith("divide") and isinstance(call, ast.Call) and call.func is node
            else None
        )
        yield ctx.report(node, f"nl.{name.rsplit('.', 1)[1]} {_OPS[name]}", fix=fix)
