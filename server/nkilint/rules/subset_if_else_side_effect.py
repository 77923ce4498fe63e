"""NKI133: Python side effects in an ``nl.if_else`` callback under a runtime condition, which tracing calls
whichever branch the device takes."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.python_state import python_state_changes
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07, runtime_if_else_callback


@rule(
    code="NKI133",
    name="if-else-callback-side-effect",
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    min_version=V07,
    summary="A callback of `nl.if_else` with a runtime (NkiScalar) condition changes Python state (appends to "
    "an outer list, increments an outer counter, prints): tracing calls both callbacks, so it happens "
    "whichever branch the device takes.",
    bad=kernel_example(
        "x, flag",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=flag_sb, src=flag)
taken = []

def copy():
    nisa.dma_copy(dst=out, src=x)
    taken.append("copy")

nl.if_else(nisa.scalar_load(flag_sb) > 0, copy)
return out
""",
    ),
    good=kernel_example(
        "x, flag",
        """
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=flag_sb, src=flag)

def copy():
    nisa.dma_copy(dst=out, src=x)

nl.if_else(nisa.scalar_load(flag_sb) > 0, copy)
return out
""",
    ),
    sources='the `latest` nki.language.if_else page: "A Python bool or int condition is resolved at compile '
    'time. Only the selected callback is called, and no conditional control flow is emitted." (S); a '
    "runtime condition emits a branch, so tracing calls both callbacks and both run their Python (I, from "
    "that contrast)",
    scope_note="NKI 0.7 and later (tracing; `nl.if_else` is on the newest docs pages only). Reported in a "
    "function passed by name as `then_fn`/`else_fn` to an `nl.if_else` whose condition is definitely a device "
    "value (a `nisa.scalar_load` result, a register, or arithmetic or a comparison of one); a Python bool/int "
    "condition or one of unknown kind is not reported, nor are lambdas. What counts as changing Python state "
    "is NKI132's list: `print()` (then this rule's, not NKI120's), in-place methods on outer lists/dicts/sets or outer objects' attributes, "
    "assignments to `nonlocal`/`global` names, outer attributes and items of outer containers. Tensor writes "
    "are device work and happen only in the branch taken, so they are not reported.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Under NKI 0.7 the kernel's Python runs once, while it is traced. An `nl.if_else` whose condition is a
    device value compiles to a branch, so the tracer calls `then_fn` and `else_fn` both, and the device later
    runs one of them. Python state a callback changes -- a list of what ran, a counter, a print -- therefore
    changes for both branches, whatever the condition is at run time. Keep such bookkeeping outside the
    callbacks, or keep the state in SBUF/HBM tensors (a `nisa.scalar_store` in the branch)."""
    if not ctx.kernel_calls_to("nki.language.if_else"):
        return
    for func in ctx.kernel_code():
        if not runtime_if_else_callback(ctx, func):
            continue
        for node, change in python_state_changes(ctx, func, "callback"):
            yield ctx.report(
                node,
                f"{change} whichever branch the device takes: tracing calls both callbacks of an nl.if_else "
                "with a runtime condition",
            )
