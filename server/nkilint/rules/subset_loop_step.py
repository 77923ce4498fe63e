"""NKI126: the ``step`` of ``nl.fori_loop`` / ``nl.dynamic_range`` must be a compile-time positive int."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V02, kinds, literal_value, own_nodes

_STEP_POSITION = {"nki.language.fori_loop": 3, "nki.language.dynamic_range": 2}


def _step(call: ast.Call, api: str) -> ast.expr | None:
    pos = _STEP_POSITION[api]
    if len(call.args) > pos:
        return call.args[pos]
    return next((kw.value for kw in call.keywords if kw.arg == "step"), None)


def _literal_int(node: ast.expr) -> int | float | None:
    value = literal_value(node)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@rule(
    code="NKI126",
    name="dynamic-loop-step",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V02,
    summary="`nl.fori_loop`/`nl.dynamic_range` with a `step` that is not a compile-time positive int.",
    bad="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x)\n\n    nl.fori_loop(n, 0, body, -1)\n    return out\n",
    good="import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, n):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n    def body(i):\n"
    "        nisa.dma_copy(dst=out, src=x)\n\n    nl.fori_loop(0, n, body, 1)\n    return out\n",
    sources="python-subset.md §3 ([DYN]: step must be a compile-time positive int; a register step raises "
    "AssertionError), nki-0.7.md §2.2 (loops only count up)",
    scope_note="Reported when the step is a literal <= 0 or non-integer, or a register; other expressions are "
    "unknown to the linter and not reported.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Dynamic loops count up by a step fixed at compile time: the dynamic-loops deep dive states that `step`
    must be a compile-time positive integer (a register step raises `AssertionError`), and the 0.6 migration
    rules repeat that loops only count up."""
    loops = {id(call): api for api in _STEP_POSITION for call in ctx.kernel_calls_to(api)}
    if not loops:
        return
    for func in ctx.kernel_code():
        for node in own_nodes(ctx, func):
            api = loops.get(id(node))
            if api is None or not isinstance(node, ast.Call):
                continue
            step = _step(node, api)
            if step is None:
                continue
            value = _literal_int(step)
            if value is not None and (not isinstance(value, int) or value <= 0):
                yield ctx.report(
                    step,
                    f"loop step {ctx.text(step)} must be a positive integer; dynamic "
                    "loops only count up (swap the bounds and index from the end)",
                )
            elif kinds(ctx, func).of(step) is Kind.REGISTER:
                yield ctx.report(
                    step,
                    f"loop step `{ctx.text(step)}` is a runtime register; the step must "
                    "be a compile-time positive int",
                )
