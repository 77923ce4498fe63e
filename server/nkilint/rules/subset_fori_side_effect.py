"""NKI132: Python-level side effects in a ``nl.fori_loop`` / ``nl.while_loop`` body, which tracing runs once."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.python_state import python_state_changes
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07, loop_body_api


@rule(
    code="NKI132",
    name="loop-body-side-effect",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    min_version=V07,
    summary="A `nl.fori_loop`/`nl.while_loop` body changes Python state (appends to an outer list, increments "
    "an outer counter, prints): tracing runs the body once, not once per iteration.",
    bad=kernel_example(
        "x, n",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
steps = []

def body(i):
    nisa.dma_copy(dst=out, src=x)
    steps.append(i)

nl.fori_loop(0, n, body)
return out
""",
    ),
    good=kernel_example(
        "x, n",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)

def body(i):
    nisa.dma_copy(dst=out, src=x)

nl.fori_loop(0, n, body)
return out
""",
    ),
    sources="nki-0.7.md §2.1 (loop bodies passed to `fori_loop`/`while_loop` are traced once, one IR region: "
    "S [AGD]; Python side effects therefore happen once at trace time: I), §2.3 ([FORI]: body side effects on "
    "tensors persist)",
    scope_note="NKI 0.7 and later (tracing). A body is a function passed by name to `nl.fori_loop`/"
    "`nl.while_loop`. Reported: `print()`; in-place methods (`append`, `update`, `pop`, ...) on a list, dict "
    "or set the enclosing code created, or on an attribute of an outer object; assignments to names the "
    "body declares `nonlocal`/`global`, to attributes of outer objects and to items of outer Python "
    "containers. Tensor writes (`nisa.*`, views) are device work and persist per iteration, so they are not "
    "reported. In the body, `print()` is this rule's (NKI120 covers the rest of the kernel).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Under NKI 0.7 the kernel is executed by Python once and every NKI call records an operation. A
    `fori_loop`/`while_loop` body becomes one compiled loop region: its Python runs once while it is traced,
    whatever the trip count, and the device repeats only the recorded operations. A list that grows per
    iteration, a counter, or a print inside the body therefore happen once; keep such bookkeeping outside the
    loop, or keep the state in SBUF/HBM tensors."""
    if not any(ctx.kernel_calls_to(api) for api in ("nki.language.fori_loop", "nki.language.while_loop")):
        return
    for func in ctx.kernel_code():
        if loop_body_api(ctx, func) is None:
            continue
        for node, change in python_state_changes(ctx, func, "body"):
            yield ctx.report(node, f"{change} once, while the body is traced, not once per iteration")
