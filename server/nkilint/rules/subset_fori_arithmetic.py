"""NKI124: Python arithmetic on a ``nl.fori_loop`` loop variable (NKI 0.6; relaxed in 0.7)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V06, loop_body_api, own_nodes


@rule(
    code="NKI124",
    name="fori-variable-arithmetic",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V06,
    max_version=V06,
    summary="Python arithmetic on the loop variable of `nl.fori_loop` (a runtime register in NKI 0.6).",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x.ap([[512, 128], [1, 512]], scalar_offset=i * 2, indirect_dim=0))\n\n"
    "    nl.fori_loop(0, n, body)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x.ap([[1024, 128], [1, 512]], scalar_offset=i, indirect_dim=0))\n\n"
    "    nl.fori_loop(0, n, body)\n    return out\n",
    sources="python-subset.md §3 ([MIG] Rules for migrated loops: S), nki-0.7.md §2.3 (relaxed for NkiScalar)",
    scope_note="NKI 0.6 only: in 0.7 the variable is an NkiScalar when the bounds are ints or NkiScalars, and "
    "`i * 4 + 1` is traced.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """The 0.6 migration rules for `fori_loop`: the loop variable is a read-only `VirtualRegister`; "do not write
    to it or perform Python arithmetic on it. Read it as a runtime offset via `.ap(scalar_offset=...)`". Scale
    the offset through the access pattern (`indirect_dim` and the base shape) instead."""
    for func in ctx.kernel_code():
        params = func.node.args.args
        if not params or loop_body_api(ctx, func) != "nki.language.fori_loop":
            continue
        var = params[0].arg
        for node in own_nodes(ctx, func):
            if isinstance(node, (ast.BinOp, ast.AugAssign)):
                operands = (
                    [node.left, node.right] if isinstance(node, ast.BinOp) else [node.target, node.value]
                )
                if any(isinstance(o, ast.Name) and o.id == var for o in operands):
                    yield ctx.report(
                        node,
                        f"Python arithmetic on fori_loop variable `{var}` (a runtime "
                        "register in NKI 0.6); use it only as .ap(scalar_offset=...)",
                    )
