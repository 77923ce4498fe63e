"""NKI505: a kernel returns a tensor that is not allocated in ``nl.shared_hbm``."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Related, Severity
from nki_studio.model.targets import NkiVersion
from nki_studio.model.values import Seq, TensorVal, Value
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.value_findings import place, roots

BAD = kernel_example(
    "a",
    """
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.hbm)
nisa.dma_copy(dst=out, src=a)
return out
""",
)

GOOD = BAD.replace("buffer=nl.hbm", "buffer=nl.shared_hbm")


def _returned(value: Value) -> Iterator[TensorVal]:
    if isinstance(value, TensorVal):
        yield value
    elif isinstance(value, Seq) and value.exact:
        for item in value.items:
            yield from _returned(item)


@rule(
    code="NKI505",
    name="output-not-shared-hbm",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="Kernel outputs must be allocated in nl.shared_hbm; an output in nl.hbm / nl.private_hbm does "
    "not compile since NKI 0.3.0.",
    bad=BAD,
    good=GOOD,
    min_version=NkiVersion(0, 3),
    sources="language.md §1 (kernel outputs must be allocated in nl.shared_hbm, [MIG] 0.3.0)",
    scope_note="NKI 0.3 and later; legacy neuronxcc.nki kernels are not checked. Tensors returned from "
    "SBUF/PSUM are not reported: jit functions composed into other kernels return tiles.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """Since NKI 0.3.0 kernel outputs must live in `nl.shared_hbm` (visible to both cores under LNC=2); an output
    allocated in `nl.hbm`/`nl.private_hbm` or on chip fails to compile."""
    seen: set[int] = set()
    for root in roots(ctx):
        if not root.is_kernel or root.legacy:
            continue
        for value in root.returns:
            for tensor in _returned(value):
                alloc = tensor.storage
                # On-chip returns come from jit functions composed into other kernels (nki-library does
                # this); only an HBM output outside shared_hbm is certainly a kernel output in the wrong place.
                if alloc is None or alloc.buffer != "private_hbm" or id(alloc) in seen:
                    continue
                seen.add(id(alloc))
                where = place(ctx, alloc.path, alloc.span, alloc.call_chain)
                if where is None:
                    continue
                message = (
                    f"'{root.name}' returns {alloc.name or 'a tensor'} allocated in {alloc.buffer}; "
                    f"kernel outputs must be allocated with buffer=nl.shared_hbm"
                )
                yield ctx.report(
                    where[0],
                    message,
                    related=(Related(root.path, root.span, "the kernel"), *where[1]),
                )
