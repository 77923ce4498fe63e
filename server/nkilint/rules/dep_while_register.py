"""NKI203: ``while <register>:`` is deprecated (0.6) and removed (0.7): use ``nl.while_loop``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.loop_rewrite import loop_to_function_fix
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V06, V07, kinds, may_own, own_nodes


@rule(
    code="NKI203",
    name="while-register-removed",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V06,
    deprecated=True,
    fixable=True,
    summary="`while <VirtualRegister>:` loops: deprecated in NKI 0.6, removed in 0.7; use `nl.while_loop`.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, flag_sb):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    reg = nisa.register_alloc()\n"
    "    nisa.register_load(reg, flag_sb)\n    while reg:\n        nisa.dma_copy(dst=out, src=x)\n"
    "        nisa.register_load(reg, flag_sb)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, flag_sb):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    reg = nisa.register_alloc()\n"
    "    nisa.register_load(reg, flag_sb)\n\n    def again(r):\n        nisa.dma_copy(dst=out, src=x)\n"
    "        nisa.register_load(r, flag_sb)\n        return r\n\n    nl.while_loop(reg, again)\n"
    "    return out\n",
    sources="deprecations.md §A and §H, nki-0.7.md §2.2",
    scope_note="Warning (deprecated) on NKI 0.6, error on 0.7 and later. The register is recognised when it "
    "comes from `nisa.register_alloc()` (or `nisa.scalar_load`) in the same function.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The register-conditioned `while` of the 0.2-0.6 parser was deprecated in 0.6.0 and removed in 0.7.0
    (under the tracer `bool(register)` raises TypeError). `nl.while_loop(reg, body)` runs `body(reg)` while the
    register is non-zero; the body returns the next condition register. The quick fix performs that conversion
    when it is safe."""
    removed = ctx.target.nki_version >= V07
    severity = Severity.ERROR if removed else None
    what = "removed in NKI 0.7" if removed else "deprecated since NKI 0.6 (removed in 0.7)"
    for func in ctx.kernel_code():
        if not may_own(func, (ast.While,)):
            continue  # no while loop: the name kinds are not needed
        k = kinds(ctx, func)
        if Kind.REGISTER not in k.kinds.values():
            continue
        for node in own_nodes(ctx, func):
            if not (
                isinstance(node, ast.While)
                and isinstance(node.test, ast.Name)
                and k.of(node.test) is Kind.REGISTER
            ):
                continue
            reg = node.test.id
            nl = ctx.aliases.locals_for("nki.language")
            fix = None
            if nl:
                fix = loop_to_function_fix(
                    ctx,
                    node,
                    reg,
                    f"{nl[0]}.while_loop({reg}, {{body}})",
                    "Convert to nl.while_loop (body becomes a function)",
                    returns=reg,
                )
            yield ctx.report(
                ctx.head_span(node),
                f"`while {reg}:` on a register is {what}; use "
                f"nl.while_loop({reg}, body) where body returns the "
                "next condition register",
                severity=severity,
                fix=fix,
            )
