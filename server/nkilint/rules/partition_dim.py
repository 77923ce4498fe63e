"""NKI301: partition dimension larger than the target's 128 partitions on an on-chip tensor, view or operand."""

from __future__ import annotations

from collections.abc import Iterator

from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, Example, rule
from nki_studio.nkilint.value_findings import describe_tensor, explain, place, roots

BAD = """import nki
import nki.language as nl
import nki.isa as nisa

TILE = 128


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    buf = nl.ndarray((TILE * 2, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=buf, src=a)
    nisa.dma_copy(dst=out, src=buf[0:128, :])
    return out
"""

GOOD = """import nki
import nki.language as nl
import nki.isa as nisa

TILE = 128


@nki.jit
def kernel(a):
    out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in range(2):
        buf = nl.ndarray((TILE, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=buf, src=a[i * TILE:(i + 1) * TILE, :])
        nisa.dma_copy(dst=out[i * TILE:(i + 1) * TILE, :], src=buf)
    return out
"""


# Legacy code: the partition dim of an access is the size of its partition index tile (nl.arange/nl.mgrid).
LEGACY_BAD = """import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(256)[:, None]
    i_f = nl.arange(512)[None, :]
    tile = nl.load(a[i_p, i_f])
    nl.store(out[i_p, i_f], value=tile)
    return out
"""

LEGACY_GOOD = """import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:512]
    for k in nl.affine_range(2):
        tile = nl.load(a[k * 128 + i_p, i_f])
        nl.store(out[k * 128 + i_p, i_f], value=tile)
    return out
"""


@rule(
    code="NKI301",
    name="partition-dim-too-large",
    severity=Severity.ERROR,
    basis=Basis.STATED,
    summary="An SBUF/PSUM tensor, view or ISA operand spans more partitions than the target has (128).",
    bad=[BAD, Example(LEGACY_BAD, nki_version="legacy")],
    good=[GOOD, Example(LEGACY_GOOD, nki_version="legacy")],
    sources="language.md §5.1 (partition dim at index 0, at most 128); isa.md §0.2 (NKI 0.6 raises a "
    "verification error); hardware.md §1, §5 (tile_size.pmax == 128 on every generation)",
    scope_note="No version or generation exceptions. In legacy `neuronxcc.nki` code the partition dim of an "
    "access `t[i_p, i_f]` is the size of its partition index tile (`nl.arange(n)[:, None]`, `nl.mgrid`), and "
    "a block tensor's `nl.par_dim(n)` is its partition dim.",
)
def check(ctx: LintContext) -> Iterator[Finding]:
    """SBUF and PSUM have 128 partitions on every generation and the partition dim is always index 0 of an
    on-chip tensor. NKI 0.6 rejects a larger tile with a verification error at compile time, which you would
    otherwise only see on a Trainium host. The check follows values through module constants, arithmetic,
    `x.shape` unpacking, asserts and helper arguments (NKI inlines helpers, so the caller's values are used
    per call site) and names the computed value, e.g. `partition dim 256 = TILE*2 (TILE=128) > 128`."""
    pmax = ctx.target.limits.pmax
    seen: set[tuple[int, int, int, int]] = set()
    reported_storage: set[int] = set()
    for root in roots(ctx):
        for event in root.views:
            storage = event.tensor.storage
            if event.what != "allocation" and storage is not None and id(storage) in reported_storage:
                continue  # the allocation itself is already reported
            where = place(ctx, event.path, event.span, event.call_chain)
            if where is None:
                continue
            span, related = where
            key = (span.line, span.column, span.end_line, span.end_column)
            if key in seen:
                continue
            seen.add(key)
            if event.what == "allocation" and storage is not None:
                reported_storage.add(id(storage))
            dim = explain(event.tensor.dim(0))
            message = (
                f"partition dim {dim} > {pmax} partitions of {ctx.target.generation.value} in this "
                f"{event.what} {describe_tensor(event.tensor)}; tile the partition axis into chunks of "
                f"at most {pmax}"
            )
            yield ctx.report(span, message, related=related)
