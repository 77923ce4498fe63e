"""``mask=`` on legacy API calls: the instruction touches only the elements where the predicate holds.

The legacy pages describe ``mask`` as "a compile-time constant predicate that controls whether/how this
instruction is executed" [v2.26.1 NKI API Masking; every nki.language/nki.isa page]. The simulator runs the
call on the whole operands (out-of-bounds positions of index-tile views, which the mask must exclude, are
scratch elements of a copy of the storage, written back without them) and then puts back every element of the operands the mask excludes, so masked-off
outputs keep their old values. Masked-off elements of a *returned* tile are unspecified in the docs; here they
hold whatever the call computed (inferred). Assigned at once into a tensor (``t[...] = nl.exp(x, mask=m)``), the
instruction writes ``t`` itself (``assignment``), so only the elements where the mask holds change there: a mask
that holds nowhere (``mask=(i * 128 < n)`` false for this ``i``) leaves ``t`` as it was.

The trace records each operand the mask covers as the rectangle where it holds, when it holds on one (a
partial tile: ``mask=(i * 128 + i_p < n)`` cuts rows of an affine tile): its exact footprint and bytes as a
strided view of the tensor itself, so the estimate prices it as the equivalent slice, moved by ordinary
descriptors, not element by element like a gather (inferred: the compiler lowers a masked affine access to the
bounded access pattern; AccelOpt's adamw and transpose_matmul measure so). A mask holding on no rectangle (or
nowhere) leaves the operands recorded whole.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from nki_studio.sim import context
from nki_studio.sim.access import touch
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.legacy.index_tiles import predicate_values
from nki_studio.sim.legacy.indexing import affine_view
from nki_studio.sim.tensor import NkiTensor
from nki_studio.sim.tensor_base import Storage, TensorBase

# Storage of a masked call's result tile -> where the mask holds (over the result), until it is assigned.
_results: weakref.WeakKeyDictionary[Storage, np.ndarray] = weakref.WeakKeyDictionary()


def result_mask(value: object) -> np.ndarray | None:
    """Where the mask of the call that returned ``value`` holds (its shape), once; None: not a masked result."""
    if not isinstance(value, NkiTensor):
        return None
    return _results.pop(value.storage, None)


def _positions(t: NkiTensor) -> np.ndarray:
    return t._index if t._index is not None else t._positions(t.shape, t.strides, t.offset)


def _fits(pred: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    try:
        return np.broadcast_to(pred, shape)
    except ValueError:
        return None


def _rectangle(keep: np.ndarray) -> tuple[slice, ...] | None:
    """The slices of the one rectangle where ``keep`` holds; None when it holds everywhere, nowhere or not on
    a rectangle."""
    if keep.all():
        return None
    box = []
    for axis in range(keep.ndim):
        hit = np.flatnonzero(keep.any(axis=tuple(a for a in range(keep.ndim) if a != axis)))
        if not hit.size:
            return None
        box.append(slice(int(hit[0]), int(hit[-1]) + 1))
    rectangle = np.zeros(keep.shape, np.bool_)
    rectangle[tuple(box)] = True
    return tuple(box) if np.array_equal(rectangle, keep) else None


def _recorded_as(pred: np.ndarray, originals: dict[Storage, NkiTensor]) -> Callable[[TensorBase], TensorBase]:
    """How the trace records an operand of a call masked by ``pred``: the rectangle where the mask holds, a view
    of the tensor itself (``originals``: scratch storage -> the view ``_in_bounds`` copied), else unchanged."""

    def narrowed(t: TensorBase) -> TensorBase:
        if not isinstance(t, NkiTensor):
            return t
        keep = _fits(pred, t.shape)
        box = None if keep is None else _rectangle(keep)
        if box is None:
            return t
        if t._index is not None:  # the scratch positions all lie outside the box (the mask excludes them)
            return affine_view(originals.get(t.storage, t), t._index[box])
        shape = tuple(b.stop - b.start for b in box)
        offset = t.offset + sum(b.start * s for b, s in zip(box, t.strides, strict=True))
        return t._derive(shape, t.strides, offset)

    return narrowed


def _in_bounds(
    name: str,
    t: NkiTensor,
    pred: np.ndarray,
    commits: list[Callable[[], None]],
    originals: dict[Storage, NkiTensor],
) -> NkiTensor:
    """``t`` with its out-of-bounds positions (all masked off) pointed at scratch elements past the end of a copy
    of its storage, so nothing the call computes for them lands in the tensor; ``commits`` gets the copy-back,
    ``originals`` the scratch storage's tensor."""
    if t._index is None or not (t._index < 0).any():
        return t
    keep = _fits(pred, t.shape)
    outside = t._index < 0
    if keep is None or (keep & outside).any():
        raise SimulationError(
            f"{name}: the index tiles of a {t.name or 'tensor'} operand reach outside it where the mask= holds "
            "(legacy masks must exclude every out-of-range element)"
        )
    data, st, inside = t._data, t.storage, t._index[~outside]
    extended = np.concatenate([data, np.zeros(int(outside.sum()), data.dtype)])
    index = t._index.copy()
    index[outside] = data.size + np.arange(int(outside.sum()))
    scratch = Storage(extended, t.dtype, t.buffer, t.name, (extended.size,), st.precise, None)
    view = NkiTensor(scratch, t.shape, (), 0, data=extended, dtype=t.dtype, index=index, name=t.name)
    originals[scratch] = t

    def commit() -> None:
        if scratch.dirty:
            data[...] = extended[: data.size]
            st.dirty = True
            if st.written is not None and data is st.data:
                st.written[inside] = True
        touch(t)

    commits.append(commit)
    return view


def masked_call(
    name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], mask: object
) -> Any:
    """Call ``fn`` as the legacy API does with ``mask=``: only the elements where ``mask`` holds change."""
    pred = predicate_values(mask)
    commits: list[Callable[[], None]] = []
    originals: dict[Storage, NkiTensor] = {}
    args = tuple(
        _in_bounds(name, a, pred, commits, originals) if isinstance(a, NkiTensor) else a for a in args
    )
    kwargs = {
        k: _in_bounds(name, v, pred, commits, originals) if isinstance(v, NkiTensor) else v
        for k, v in kwargs.items()
    }
    saved: list[tuple[NkiTensor, np.ndarray, np.ndarray, np.ndarray]] = []
    for t in (*args, *kwargs.values()):
        if isinstance(t, NkiTensor):
            keep = _fits(pred, t.shape)
            if keep is not None and not keep.all():
                pos = _positions(t)
                saved.append((t, pos, keep, t._data[pos].copy()))
    ctx = context.current_or_none()
    recorder = ctx.recorder if ctx is not None else None
    if recorder is None:
        result = fn(*args, **kwargs)
    else:
        outer, recorder.recorded_as = recorder.recorded_as, _recorded_as(pred, originals)
        try:
            result = fn(*args, **kwargs)
        finally:
            recorder.recorded_as = outer
    for t, pos, keep, old in saved:
        off = pos[~keep]
        back = ~np.isin(off, pos[keep])  # an element also reached where the mask holds keeps its new value
        t._data[off[back]] = old[~keep][back]
    for commit in commits:
        commit()
    if isinstance(result, NkiTensor):
        keep = _fits(pred, result.shape)
        if keep is not None and not keep.all():
            _results[result.storage] = keep
    return result


def with_mask(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking the legacy ``mask=`` keyword (and running unmasked without it)."""

    def call(*args: Any, mask: object = None, **kwargs: Any) -> Any:
        try:
            if mask is None:
                return fn(*args, **kwargs)
            return masked_call(name, fn, args, kwargs, mask)
        except SimulationError as exc:
            if not exc.message.startswith("out-of-bounds access"):
                raise
            raise SimulationError(
                f"{name}: an nl.arange/nl.mgrid index (or a slice) reaches outside the tensor ({exc.message}); "
                "legacy code limits it with mask=(index < size); in NKI 0.7 use a bounded slice, "
                "t[p0:min(P, p0 + 128)]",
                location=exc.location,
            ) from None

    call.__name__ = call.__qualname__ = getattr(fn, "__name__", name)
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call
