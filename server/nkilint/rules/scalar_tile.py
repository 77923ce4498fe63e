"""NKI510: the tile of ``nisa.scalar_load``/``nisa.scalar_store`` is not a 1x1 ``nl.int32``/``nl.int64`` tensor in
SBUF or HBM."""

from __future__ import annotations

import math
from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, kernel_example, rule
from nki_studio.nkilint.ruleutil import V07
from nki_studio.nkilint.scalars import (
    SCALAR_DTYPES,
    SCALAR_LOAD,
    SCALAR_STORE,
    TensorFacts,
    argument,
    scalar_facts,
)

# The signed type of the same width for an unsigned one ([SLD]: "use the signed dtype of the same width").
_SIGNED = {"uint32": "int32", "uint64": "int64"}


def _problem(tile: TensorFacts) -> str | None:
    """What is wrong with a scalar tile, as a message part and its remedy; ``None`` when nothing visible is."""
    if tile.dtype is not None and tile.dtype not in SCALAR_DTYPES:
        signed = _SIGNED.get(tile.dtype)
        if signed is not None:
            return f"has the unsigned dtype nl.{tile.dtype}; unsigned dtypes are rejected: use nl.{signed}"
        return (
            f"has dtype nl.{tile.dtype}; scalars are nl.int32 or nl.int64: allocate the tile with one of them"
        )
    if tile.shape is not None and math.prod(tile.shape) != 1:
        shape = "x".join(str(d) for d in tile.shape)
        return f"is {shape}; it must be a 1x1 tensor: allocate a (1, 1) tile or pass a one-element slice"
    if tile.buffer == "psum":
        return "is in PSUM; it must be in SBUF or HBM: allocate it with buffer=nl.sbuf"
    return None


@rule(
    code="NKI510",
    name="scalar-tile",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    min_version=V07,
    summary="`nisa.scalar_load` source or `nisa.scalar_store` destination that is not a 1x1 `nl.int32`/`nl.int64` "
    "tensor in SBUF or HBM (unsigned dtypes included).",
    bad=kernel_example(
        "x, count",
        """
count_sb = nl.ndarray((1, 1), dtype=nl.uint32, buffer=nl.sbuf)
nisa.dma_copy(dst=count_sb, src=count)
n = nisa.scalar_load(count_sb)
return x
""",
    ),
    good=kernel_example(
        "x, count",
        """
count_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
nisa.dma_copy(dst=count_sb, src=count)
n = nisa.scalar_load(count_sb)
return x
""",
    ),
    sources="nki-0.7.md §2.4 ([SLD] `nki.isa.scalar_load`: src a 1x1 tensor in SBUF or HBM with dtype nl.int32 or "
    "nl.int64, unsigned dtypes not accepted; [SST] `nki.isa.scalar_store`: dst likewise)",
    scope_note="NKI 0.7 and later (`scalar_load`/`scalar_store` are 0.7 tracer APIs). Checked for tiles allocated "
    "in kernel code with a literal dtype, buffer or shape (`nl.ndarray` without `buffer=` is SBUF); views and "
    "parameters are not judged. No quick fix: the allocation may feed other uses that need its dtype.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """`nisa.scalar_load` reads one integer from a 1x1 tensor in SBUF or HBM of dtype `nl.int32` or `nl.int64`,
    and `nisa.scalar_store` writes one back to such a tensor. Unsigned dtypes are not accepted (use the signed
    type of the same width), nor floats, tensors of more than one element, or PSUM tiles."""
    facts = scalar_facts(ctx)
    if facts is None:
        return
    for api, position, keyword in ((SCALAR_LOAD, 0, "src"), (SCALAR_STORE, 0, "dst")):
        verb = "source" if keyword == "src" else "destination"
        for call in ctx.kernel_calls_to(api):
            node = argument(call, position, keyword)
            tile = facts.tensor_of(node)
            problem = _problem(tile) if tile is not None else None
            if node is not None and problem is not None:
                yield ctx.report(node, f"{api.rsplit('.', 1)[1]} {verb} `{ctx.text(node)}` {problem}")
