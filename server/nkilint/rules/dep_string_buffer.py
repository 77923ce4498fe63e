"""NKI210: string buffer names (``buffer='sbuf'``) are rejected since NKI 0.3."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import V03, nl_alias_for

_BUFFERS = {"sbuf", "psum", "hbm", "private_hbm", "shared_hbm"}


@rule(
    code="NKI210",
    name="string-buffer",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V03,
    deprecated=True,
    fixable=True,
    summary="A buffer given as a string (`buffer='sbuf'`) instead of `nl.sbuf` / `nl.psum` / `nl.shared_hbm`.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    '    out = nl.ndarray(x.shape, dtype=x.dtype, buffer="shared_hbm")\n    return out\n',
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="deprecations.md §B (string buffers: error since 0.3.0), language.md §1",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Since 0.3.0 buffers must be memory-region objects (`nl.sbuf`, `nl.psum`, `nl.hbm`, `nl.private_hbm`,
    `nl.shared_hbm`); the string names are rejected. The quick fix substitutes the object."""
    for node in ctx.calls_passing(("buffer",)):
        strings = [
            kw
            for kw in node.keywords
            if kw.arg == "buffer" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
        ]
        if not strings:  # checked before the callee, which costs more to resolve
            continue
        name = ctx.aliases.canonical(node.func)
        if name is None or not name.startswith("nki.language."):
            continue
        for kw in strings:
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):  # narrows for mypy
                value = kw.value.value
                nl = nl_alias_for(ctx, node.func)
                fix = None
                if value in _BUFFERS and nl is not None:
                    fix = Fix(f"Replace with {nl}.{value}", (ctx.replace(kw.value, f"{nl}.{value}"),))
                yield ctx.report(
                    kw.value,
                    f"buffer={kw.value.value!r} is a string; since NKI 0.3 buffers "
                    f"are objects such as nl.{value if value in _BUFFERS else 'sbuf'}",
                    fix=fix,
                )
