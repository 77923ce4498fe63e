"""NKI514: a legacy value-returning ISA call whose result is thrown away."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.legacy_isa import LEGACY_VALUE_CALLS
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, rule
from nki_studio.nkilint.ruleutil import own_nodes

_CALLS = {f"nki.isa.{name}": name for name in LEGACY_VALUE_CALLS}
_HEADER = (
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl\n\n\n"
    "@nki.jit\ndef kernel(a):\n    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)\n"
    "    t = nl.load(a[0:128, 0:512])\n"
)
_BODY = "    {call}\n    nl.store(out[0:128, 0:512], value={use})\n    return out\n"


@rule(
    code="NKI514",
    name="legacy-isa-result-discarded",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    summary="Legacy code calls a value-returning ISA instruction (`nisa.activation(...)`, `nisa.nc_matmul(...)` "
    "...) as a statement: its result tile is thrown away.",
    bad=Example(
        _HEADER + _BODY.format(call="nisa.activation(op=nl.exp, data=t)", use="t"), nki_version="legacy"
    ),
    good=Example(
        _HEADER + _BODY.format(call="e = nisa.activation(op=nl.exp, data=t)", use="e"), nki_version="legacy"
    ),
    sources="isa.md §0.1 (legacy ISA calls return their result and take no dst); v2.26.1 nki.isa.activation "
    "and nki.isa.nc_matmul pages (signatures without dst)",
    scope_note="Legacy `neuronxcc.nki` code only (the target `legacy`, or legacy kernels when no setting names "
    "the version): in the `nki` namespace these calls write `dst=`. Warning: "
    "that the instruction is then dropped or runs for nothing is our inference; either way its output is lost.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """In the legacy API an ISA instruction such as `nisa.activation(op, data)` has no destination argument:
    it returns a new tile. Called as a statement, that tile is never bound, so nothing can read what the
    instruction computed (a leftover of an edit, or a call written as if it worked in place)."""
    for func in ctx.kernel_code():
        if not ctx.legacy_code(func):
            continue
        for node in own_nodes(ctx, func):
            call = node.value if isinstance(node, ast.Expr) else None
            if not isinstance(call, ast.Call) or any(kw.arg == "dst" for kw in call.keywords):
                continue
            name = _CALLS.get(ctx.aliases.canonical(call.func) or "")
            if name is not None:
                yield ctx.report(
                    call,
                    f"nisa.{name}(...) returns its result in the legacy API and this call throws it away; "
                    f"assign it (`t = nisa.{name}(...)`) and use t",
                )
