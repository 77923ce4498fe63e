"""NKI213: ``NKI_COMPILER_FRONTEND=custom`` (the 0.6 front end) is deprecated in 0.7 and removed next release."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V07

_VAR = "NKI_COMPILER_FRONTEND"
_OLD = (
    "custom",
    "parser",
)  # "parser" is the spelling of AWS's pre-0.7 agent skill (nki-0.7.md §2.1, AMBIGUOUS)


@rule(
    code="NKI213",
    name="compiler-frontend-custom",
    severity=Severity.WARNING,
    basis=Basis.STATED,
    min_version=V07,
    deprecated=True,
    summary="Code sets `NKI_COMPILER_FRONTEND=custom` to keep the NKI 0.6 front end.",
    bad='import os\n\nos.environ["NKI_COMPILER_FRONTEND"] = "custom"\n',
    good='import os\n\nos.environ.pop("NKI_COMPILER_FRONTEND", None)\n',
    sources="nki-0.7.md §2.1 ([ANN]), deprecations.md §A and §H",
    scope_note="NKI 0.7 and later; `parser` is treated like `custom` (the value AWS's 0.6-era agent skill uses).",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Neuron 2.33 keeps the old specialisation front end behind `NKI_COMPILER_FRONTEND=custom` only while
    kernels are migrated; it is deprecated on arrival and removed with the lowering passes in the next release.
    Migrate `dynamic_range`/`while reg:` loops and drop the variable."""
    if _VAR not in ctx.source:
        return  # cheap exit for almost every file
    reported: set[int] = set()  # nodes inside an already reported statement (x = os.environ.setdefault(...))
    for node in ctx.nodes:
        if not isinstance(node, (ast.Assign, ast.Call)) or id(node) in reported:
            continue
        inner = list(ast.walk(node))
        consts = [n.value for n in inner if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if _VAR in consts and any(c.lower() in _OLD for c in consts):
            reported.update(id(n) for n in inner)
            yield ctx.report(
                node,
                f"{_VAR}=custom keeps the deprecated NKI 0.6 front end, removed in the "
                "next Neuron release; migrate the kernel and unset it",
            )
