"""Shared plumbing of the value-based rules (NKI3xx-NKI5xx): where to report, and the call-site trail.

A fact found inside a helper is reported at the helper's line when the helper is in the linted file, with the
call sites as related locations (NKI inlines helpers, so the caller's values are what made it wrong). When the
helper lives in another file, the finding moves to the outermost call site in this file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator

from nki_studio.core.findings import Related, Span
from nki_studio.model.analysis import ModuleFacts
from nki_studio.model.capacity import Peak, peak
from nki_studio.model.tensors import ApiCall, CallChain, KernelFacts
from nki_studio.model.values import Allocation, Const, TensorVal, Value, const_int
from nki_studio.nkilint.context import LintContext


def module_facts(ctx: LintContext) -> ModuleFacts:
    """The interpreter's facts for this file (computed once per lint run and shared by the rules)."""
    facts = ctx.values
    assert isinstance(facts, ModuleFacts)
    return facts


def roots(ctx: LintContext) -> Iterator[KernelFacts]:
    """Every analysed root (kernels and this file's helpers analysed on their own)."""
    yield from module_facts(ctx).roots


def place(
    ctx: LintContext, path: str, span: Span, chain: CallChain
) -> tuple[Span, tuple[Related, ...]] | None:
    """Where to report a fact found at ``path:span`` reached through ``chain``; None if not in this file."""
    same = _same_file(ctx.path, path)
    related = tuple(Related(p, s, "called from here") for p, s in reversed(chain))
    if same:
        return span, related
    for i, (p, s) in enumerate(chain):
        if _same_file(ctx.path, p):
            inner = tuple(Related(q, t, "called from here") for q, t in reversed(chain[i + 1 :]))
            return s, (Related(path, span, "the offending line in the helper"), *inner)
    return None


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    return bool(a) and bool(b) and os.path.abspath(a) == os.path.abspath(b)


def explain(value: Value) -> str:
    """A value with its derivation, e.g. ``256 = TILE*2 (TILE=128)``."""
    return value.explain() if isinstance(value, Const) else "?"


def describe_tensor(t: TensorVal) -> str:
    """``(128, 512) float32 psum`` style summary of a tensor value."""
    if t.shape is None:
        shape = "(?)"
    else:
        dims = [str(const_int(d)) if const_int(d) is not None else "?" for d in t.shape]
        shape = "(" + ", ".join(dims) + ")"
    parts = [shape]
    if t.dtype is not None:
        parts.append(t.dtype.name)
    if t.buffer:
        parts.append(t.buffer)
    return " ".join(parts)


def describe_allocation(a: Allocation) -> str:
    """``name (128, 512) bfloat16, 1 KiB/partition`` for a live-set listing."""
    size = a.min_bytes_per_partition()
    label = a.name or a.api
    text = f"{label} {a.shape_text()} {a.dtype.name if a.dtype else 'dtype unknown'}"
    if size is not None:
        text += f", {'' if a.dtype else 'at least '}{format_bytes(size)}/partition"
    if a.repeat > 1:
        text += f" x{a.repeat} (outlives its loop iteration)"
    return text


def format_count(n: int) -> str:
    """An exact count, or ``about 2^k`` once it has more digits than a reader can use (or ``str`` allows)."""
    return str(n) if n.bit_length() <= 64 else f"about 2^{n.bit_length() - 1}"


def format_bytes(n: int) -> str:
    """Bytes as ``1536 B``, ``12.5 KiB``, or ``about 2^3012 B`` past any float (a shape of hundreds of dims)."""
    if n < 1024:
        return f"{n} B"
    if n.bit_length() > 1000:  # n / 1024 would overflow a float
        return f"about 2^{n.bit_length() - 1} B"
    kib = n / 1024
    return f"{kib:.1f} KiB".replace(".0 KiB", " KiB")


def live_related(ctx: LintContext, live: tuple[Allocation, ...], limit: int = 8) -> tuple[Related, ...]:
    """Related locations for the allocations live at a peak, largest first."""
    out: list[Related] = []
    for alloc in live[:limit]:
        where = place(ctx, alloc.path, alloc.span, alloc.call_chain)
        if where is not None:
            out.append(Related(ctx.path, where[0], f"live: {describe_allocation(alloc)}"))
    return tuple(out)


def live_summary(live: tuple[Allocation, ...], limit: int = 4) -> str:
    """``a (128, 512) float32, 2 KiB/partition; b ...`` for the message text."""
    parts = [describe_allocation(a) for a in live[:limit]]
    if len(live) > limit:
        parts.append(f"and {len(live) - limit} more")
    return "; ".join(parts)


def peak_over(
    ctx: LintContext, root: KernelFacts, buffer: str, weight: Callable[[Allocation], int], limit: int
) -> tuple[Peak, Span, tuple[Related, ...]] | None:
    """The first peak of live ``buffer`` use (summed ``weight``) in ``root`` above ``limit``, with where to report
    it and related locations (live allocations, then the call chain); None when under the limit or elsewhere."""
    top = peak(root.allocations, buffer, weight)
    if top is None or top.amount <= limit:
        return None
    where = place(ctx, top.at.path, top.at.span, top.at.call_chain)
    if where is None:
        return None
    return top, where[0], live_related(ctx, top.live) + where[1]


def api_calls(
    ctx: LintContext, names: Collection[str], namespace: str = "isa"
) -> Iterator[tuple[ApiCall, Span, tuple[Related, ...]]]:
    """Recorded API calls of the given names, each call site once, with where to report them."""
    seen: set[tuple[int, int, int]] = set()
    for root in roots(ctx):
        for call in root.calls:
            if call.namespace != namespace or call.api not in names:
                continue
            where = place(ctx, call.path, call.span, call.call_chain)
            if where is None:
                continue
            key = (where[0].line, where[0].column, hash(call.span))
            if key in seen:
                continue
            seen.add(key)
            yield call, where[0], where[1]


def on_chip_tensor(value: Value | None) -> TensorVal | None:
    """The value as an SBUF/PSUM tensor, or None."""
    if isinstance(value, TensorVal) and value.buffer in ("sbuf", "psum"):
        return value
    return None
