"""NKI110: NumPy / torch / math / JAX functions applied to an NKI tensor in kernel code."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.model.imports import LIBRARY_MODULES, library_root
from nki_studio.model.kinds import Kind
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, rule
from nki_studio.nkilint.ruleutil import kinds, own_calls


@rule(
    code="NKI110",
    name="library-call-on-tensor",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="A NumPy/torch/math/JAX function is called on an NKI tensor inside kernel code.",
    bad="import numpy as np\n\nimport nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\n"
    "def kernel(x):\n    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)\n"
    "    nisa.dma_copy(dst=t, src=x)\n    e = np.exp(t)\n"
    "    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=e)\n    return out\n",
    good="import numpy as np\n\nimport nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\n"
    "def kernel(x):\n    n = int(np.prod(x.shape))\n    t = nl.ndarray((128, n // 128), dtype=x.dtype, "
    "buffer=nl.sbuf)\n    nisa.dma_copy(dst=t, src=x)\n"
    "    e = nl.ndarray((128, n // 128), dtype=x.dtype, buffer=nl.sbuf)\n"
    "    nisa.activation(dst=e, op=nl.exp, data=t)\n"
    "    out = nl.ndarray((128, n // 128), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=e)\n    return out\n",
    sources="python-subset.md §6 (library calls; tensor values unknown at specialisation: S [LG] Tensor Values)",
    scope_note="Only tensors the linter is sure of (allocated or computed in the function) are checked; NumPy on "
    "shapes and Python numbers is fine.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Tensor contents are never available while the kernel is specialised or traced: "any NKI
    meta-programming expression that needs to touch tensor contents directly is a kernel operation" (language
    guide). Host libraries therefore cannot compute on NKI tensors; use `nki.language`/`nki.isa`. Applies to
    every version (the 0.7 tracer has no tensor values either)."""
    if not any(t.split(".")[0] in LIBRARY_MODULES for t in ctx.aliases.bindings.values()):
        return  # no host library imported: nothing to check
    if not any(library_root(name) is not None for name in ctx.kernel_apis_called()):
        return  # kernel code calls none (a library's names keep their spelling as canonical names)
    for func in ctx.kernel_code():
        calls = [
            (node, lib)
            for node in own_calls(ctx, func)
            if (lib := library_root(ctx.resolved(node.func))) is not None
        ]
        if not calls:  # the name kinds cost more than this scan: only for functions that call a library
            continue
        k = kinds(ctx, func)
        if Kind.TENSOR not in k.kinds.values():
            continue
        for node, lib in calls:
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                if k.of(arg) is Kind.TENSOR:
                    yield ctx.report(
                        node,
                        f"{ast.unparse(node.func)}() is a {lib} function applied "
                        f"to NKI tensor `{ctx.text(arg)}`; tensor values exist only "
                        "on the device: use nki.language / nki.isa operations",
                    )
                    break
